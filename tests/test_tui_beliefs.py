""" "What sadie has learned" in the app, on the typed fake session: beliefs grouped by status,
a belief opened with its quotes (each opening its note like a citation), links and history,
accept / reject / edit with keys and the list updated in place, and the one notice at start
about what was proposed since the person last looked."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input, OptionList

from sadie_tui.engine.episodes import Episode
from sadie_tui.engine.reflect.beliefs import Belief, BeliefDetail, Change, Evidence, Link
from sadie_tui.engine.reflect.report import ReflectReport
from sadie_tui.launch import Launch
from sadie_tui.tui.app import SadieApp
from sadie_tui.tui.commands import system_commands
from sadie_tui.tui.learning import SEEN_FILE, run_summary, unseen
from sadie_tui.tui.screens.beliefs import BeliefScreen, BeliefsScreen
from sadie_tui.tui.screens.dialogs import TextPrompt
from sadie_tui.tui.screens.episode import EpisodeScreen
from tests.support.fake_session import FakeSession, now
from tests.support.tui import wait_until

RUN_EP = "11111111-0b1c-4d2e-9f00-1234567890ab"
SLEEP_EP = "22222222-0b1c-4d2e-9f00-1234567890ab"
RUN_ID = "aaaaaaaa-0000-4000-8000-000000000001"
SLEEP_ID = "bbbbbbbb-0000-4000-8000-000000000002"
KEPT_ID = "cccccccc-0000-4000-8000-000000000003"
STATED_ID = "dddddddd-0000-4000-8000-000000000004"


def _detail(belief: Belief, *evidence: Evidence, links: tuple[Link, ...] = ()) -> BeliefDetail:
    history = (Change(belief.created_at or "", "proposed", "from 1 note", "run1", "fake:1b"),)
    return BeliefDetail(belief, evidence, links, history)


def learned() -> dict[str, BeliefDetail]:
    run = Belief(RUN_ID, "I run with Ines on weekends", "active", "derived", "habit", 0.6, 1,
                 "2026-04-04T09:00:00", "2026-04-04T09:00:00")  # fmt: skip
    sleep = Belief(SLEEP_ID, "I sleep well before races", "contested", "derived", "health", 0.4,
                   1, "2026-04-04T09:00:00", "2026-04-04T09:00:00")  # fmt: skip
    kept = Belief(KEPT_ID, "I love pottery", "accepted", "derived", "preference", 0.8, 1,
                  "2026-03-01T09:00:00", "2026-03-02T09:00:00")  # fmt: skip
    stated = Belief(STATED_ID, "Running keeps me sane", "active", "stated", None, 0.8, 1)
    return {
        RUN_ID: _detail(
            run, Evidence(RUN_EP, "Long run", "2026-04-03", "Ran 18 km with Ines", True)
        ),
        SLEEP_ID: _detail(
            sleep,
            Evidence(
                SLEEP_EP,
                "Race night",
                "2026-04-02",
                "Slept badly before the race",
                True,
                "contradicts",
            ),  # fmt: skip
            links=(Link("contradicts", "obs1", "observation", "Slept 5h42m; 3 awakenings."),),
        ),
        KEPT_ID: _detail(kept),
        STATED_ID: _detail(stated),
    }


def _app(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **launch: Any
) -> tuple[SadieApp, FakeSession]:
    monkeypatch.setenv("SADIE_CONFIG", str(tmp_path / "config"))
    fake = FakeSession(
        home=tmp_path,
        learned=learned(),
        episodes={
            RUN_EP: Episode(
                RUN_EP,
                "Long run",
                "2026-04-03",
                "journal",
                "Ran 18 km with Ines along the river. My knee held.",
            ),  # fmt: skip
        },
    )
    started = Launch(home=tmp_path, settings=fake.settings, **launch)
    app = SadieApp(started, session_factory=lambda _: fake, clock=now, warm_embedder=False)
    return app, fake


def _rows(screen: BeliefsScreen) -> list[str]:
    listing = screen.query_one(OptionList)
    return [
        str(listing.get_option_at_index(i).prompt).split("\n")[0]
        for i in range(listing.option_count)
    ]


async def _open_list(pilot) -> BeliefsScreen:  # type: ignore[no-untyped-def]
    app = pilot.app
    await wait_until(pilot, app.memory_ready.is_set)
    titles = {c.title: c.help for c in system_commands(app, app.screen)}
    assert titles["What sadie has learned"].endswith("(f5)")  # in the palette, with its key
    await pilot.press("f5")
    screen = await wait_until(pilot, lambda: isinstance(app.screen, BeliefsScreen) and app.screen)
    await wait_until(pilot, lambda: screen.loaded)
    return screen


@pytest.mark.asyncio
async def test_the_list_groups_beliefs_and_takes_decisions_in_place(tmp_path, monkeypatch) -> None:
    app, fake = _app(tmp_path, monkeypatch)
    async with app.run_test(size=(110, 36)) as pilot:
        screen = await _open_list(pilot)
        assert _rows(screen) == [
            "Proposed and active (2)",
            "I run with Ines on weekends",
            "Running keeps me sane",
            "Contested: evidence on both sides (1)",
            "I sleep well before races",
            "Accepted by you (1)",
            "I love pottery",
        ]
        listing = screen.query_one(OptionList)
        stated = str(listing.get_option_at_index(2).prompt)
        assert "stated by you" in stated and "confidence 0.80" in stated
        assert "habit · confidence 0.60 · 1 quote" in str(listing.get_option_at_index(1).prompt)

        assert screen.highlighted_id() == RUN_ID
        await pilot.press("a")
        await wait_until(pilot, lambda: "Accepted by you (2)" in _rows(screen))
        assert fake.decided == [("accept", RUN_ID)]
        assert screen.highlighted_id() == RUN_ID  # the highlight followed it to its group

        # A belief the person wrote is theirs to change in beliefs.jsonl: one line, no change.
        screen.query_one(OptionList).highlighted = _rows(screen).index("Running keeps me sane")
        await pilot.press("r")
        await wait_until(
            pilot, lambda: any("beliefs.jsonl" in str(n.message) for n in app._notifications)
        )
        assert fake.decided == [("accept", RUN_ID)]

        screen.query_one(OptionList).highlighted = _rows(screen).index("I sleep well before races")
        await pilot.press("r")
        await wait_until(pilot, lambda: "Rejected by you (1)" in _rows(screen))
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, BeliefsScreen))


@pytest.mark.asyncio
async def test_a_belief_opens_with_its_quotes_links_and_history(tmp_path, monkeypatch) -> None:
    app, fake = _app(tmp_path, monkeypatch)
    async with app.run_test(size=(110, 36)) as pilot:
        screen = await _open_list(pilot)
        await pilot.press("enter")
        belief = await wait_until(
            pilot, lambda: isinstance(app.screen, BeliefScreen) and app.screen.detail and app.screen
        )
        text = " ".join(str(s.render()) for s in belief.query("Static"))
        assert "I run with Ines on weekends" in text and "proposed" in text
        quotes = belief.query_one("#belief-evidence", OptionList)
        assert str(quotes.get_option_at_index(0).prompt) == "For it (1)"
        assert "“Ran 18 km with Ines” verbatim" in str(quotes.get_option_at_index(1).prompt)

        # A quote opens its note like a citation, the quoted words highlighted.
        await pilot.press("enter")
        note = await wait_until(pilot, lambda: isinstance(app.screen, EpisodeScreen) and app.screen)
        await wait_until(pilot, lambda: note.query(".-quoted"))
        assert "Ran 18 km with Ines" in str(note.query_one(".-quoted").render())
        await pilot.press("escape")

        # Edit in a small dialog: the belief is redrawn with its new words, and is accepted.
        await wait_until(pilot, lambda: app.screen is belief)
        await pilot.press("e")
        prompt = await wait_until(pilot, lambda: isinstance(app.screen, TextPrompt) and app.screen)
        prompt.query_one(Input).value = "I run long on Saturdays"
        await pilot.press("enter")
        await wait_until(pilot, lambda: belief.detail.belief.statement == "I run long on Saturdays")
        assert fake.decided == [("edit", RUN_ID)] and belief.detail.belief.status == "accepted"
        await pilot.press("escape")
        await wait_until(pilot, lambda: "I run long on Saturdays" in _rows(screen))

        # The contested one shows its counter-evidence and the record that disagrees.
        screen.query_one(OptionList).highlighted = _rows(screen).index("I sleep well before races")
        await pilot.press("enter")
        other = await wait_until(
            pilot,
            lambda: (
                isinstance(app.screen, BeliefScreen)
                and app.screen.detail
                and app.screen.detail.belief.id == SLEEP_ID
                and app.screen
            ),
        )
        await wait_until(pilot, lambda: other.query(".belief-heading"))
        shown = " ".join(str(s.render()) for s in other.query("Static"))
        assert "contradicts observation: Slept 5h42m; 3 awakenings." in shown
        quotes = other.query_one("#belief-evidence", OptionList)
        heading, first = (str(quotes.get_option_at_index(i).prompt) for i in (0, 1))
        assert heading == "Against it (1)" and first.startswith("2026-04-02 Race night")


@pytest.mark.asyncio
async def test_the_start_says_once_what_was_proposed_since_last_looked(
    tmp_path, monkeypatch
) -> None:
    (tmp_path / SEEN_FILE).write_text(json.dumps({"seen_at": "2026-04-01T00:00:00"}))
    app, _ = _app(tmp_path, monkeypatch)
    async with app.run_test(size=(110, 36)) as pilot:
        await wait_until(
            pilot,
            lambda: any("since you last looked" in str(n.message) for n in app._notifications),
        )
        (said,) = [str(n.message) for n in app._notifications if "last looked" in str(n.message)]
        # The two proposed after that day (active or contested), not the accepted or stated.
        assert said == "sadie proposed 2 beliefs since you last looked — f5 shows them"
        await _open_list(pilot)
    seen = json.loads((tmp_path / SEEN_FILE).read_text())["seen_at"]
    assert seen == now().isoformat(timespec="seconds")
    app, _ = _app(tmp_path, monkeypatch)
    async with app.run_test(size=(110, 36)) as pilot:
        await wait_until(pilot, app.memory_ready.is_set)
        await app.workers.wait_for_complete()
        assert not any("last looked" in str(n.message) for n in app._notifications)


@pytest.mark.asyncio
async def test_a_client_of_another_sadie_leaves_reflection_to_the_holder(
    tmp_path, monkeypatch
) -> None:
    app, fake = _app(tmp_path, monkeypatch, via="another sadie (pid 7)")
    fake.settings = replace(fake.settings, reflect_when_idle=True)
    app.settings = fake.settings
    app.learning.monotonic = lambda: 1e9  # idle for ever
    async with app.run_test(size=(110, 36)) as pilot:
        await wait_until(pilot, app.memory_ready.is_set)
        assert not app.learning.enabled and not app.learning.check()


def test_what_a_run_found_in_one_line() -> None:
    assert run_summary(ReflectReport(repeated=4)) is None
    assert run_summary(ReflectReport(new=1)) == "sadie reflected on your notes: 1 new belief"
    assert run_summary(ReflectReport(new=0, contested=2, retired=1)) == (
        "sadie reflected on your notes: 0 new beliefs, 2 contested, 1 retired"
    )
    beliefs = [d.belief for d in learned().values()]
    assert unseen(beliefs, None) == 2  # never looked: every proposed one still open
    assert unseen(beliefs, now()) == 0
