"""The door cannot drift: every public method and property of ``Session`` is on
``SessionProtocol`` and on ``RemoteSession`` with the same signature; the tests'
``FakeSession`` has what the widget tests use, each with ``Session``'s signature; and none has
a member that ``Session`` lacks. A face typed against the protocol then
never needs ``getattr``, and a widget test on the fake exercises the real door's calls."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from sadie_tui.engine.session import Session, SessionProtocol
from sadie_tui.serve.remote import RemoteSession
from tests.support.fake_session import FakeSession

# Session's own, not the door's: how the in-process session is made, and the database a test
# may read behind it.
IN_PROCESS_ONLY = {"open", "db"}


def _public(cls: type) -> dict[str, Any]:
    """The class's public members as declared (properties as properties), by name."""
    found: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        if klass is object or klass.__module__ in ("typing", "typing_extensions"):
            continue
        for name, value in vars(klass).items():
            if not name.startswith("_") and (callable(value) or isinstance(value, property)):
                found[name] = value
    return found


def _shape(member: Any) -> tuple[Any, ...]:
    """What a caller relies on: property or method, async or not, and each parameter's name,
    kind, default and annotation (as written: the modules use postponed annotations)."""
    if isinstance(member, property):
        assert member.fget is not None
        return ("property", inspect.signature(member.fget).return_annotation)
    params = tuple(
        (p.name, p.kind, p.default, p.annotation)
        for p in inspect.signature(member).parameters.values()
    )
    returns = inspect.signature(member).return_annotation
    return ("async" if inspect.iscoroutinefunction(member) else "sync", params, returns)


DOOR = sorted(set(_public(Session)) - IN_PROCESS_ONLY)


def test_the_door_has_the_expected_members() -> None:
    # A guard on the test itself: it would pass vacuously if _public found nothing.
    assert {"chat", "ask", "personas", "embedder_notice", "embedder_ready"} <= set(DOOR)


DOORS = [SessionProtocol, RemoteSession]
OTHERS = [*DOORS, FakeSession]


@pytest.mark.parametrize("other", DOORS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("name", DOOR)
def test_every_session_member_is_on_the_others_with_its_signature(other: type, name: str) -> None:
    theirs = _public(other)
    assert name in theirs, f"Session.{name} is missing from {other.__name__}"
    assert _shape(theirs[name]) == _shape(_public(Session)[name])


@pytest.mark.parametrize("name", sorted(set(_public(FakeSession)) & set(DOOR)))
def test_the_fake_has_the_signatures_of_what_it_fakes(name: str) -> None:
    # The fake need not fake everything (a widget test that calls what it lacks fails at
    # once), but what it has must be called as the real door is.
    assert _shape(_public(FakeSession)[name]) == _shape(_public(Session)[name])


@pytest.mark.parametrize("other", OTHERS, ids=lambda c: c.__name__)
def test_nothing_on_the_others_that_session_lacks(other: type) -> None:
    # Issue 37: `sadie backup` through the holder (its route, ``engine.privacy.backup``), on
    # the remote session only until it joins the operation table.
    pending = {"backup"} if other.__name__ == "RemoteSession" else set()
    assert set(_public(other)) - set(DOOR) - pending == set()
