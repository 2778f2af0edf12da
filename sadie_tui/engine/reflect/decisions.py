"""The person decides: accept (kept, and never retired or contested by sadie afterwards),
reject (never proposed again: the belief stays as the fingerprint a new proposal is matched
against), edit (the words change, the evidence stays, and the belief is theirs: accepted;
the old wording is kept so that a proposal repeating it is recognised).

Only beliefs sadie derived are decided here: one the person wrote in ``beliefs.jsonl`` is
changed in that file. Every decision is a line in the belief's history.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ..errors import UsageError
from ..store import beliefs as store
from ..store.db import Database
from ..store.ids import now
from ..store.vectors import vector_literal
from .beliefs import BeliefDetail
from .evidence import MAX_STATEMENT
from .sameness import fingerprint
from .views import detail, resolve

Encode = Callable[[Sequence[str]], np.ndarray]


def _derived(db: Database, ref: str) -> store.BeliefRow:
    row = store.get_belief(db, resolve(db, ref))
    assert row is not None
    if row.origin != "derived":
        raise UsageError(
            f"“{row.statement}” is one you wrote in beliefs.jsonl",
            fix="change it in that file and ingest it again",
        )
    return row


def accept(db: Database, ref: str, reason: str | None = None) -> BeliefDetail:
    return _decide(db, ref, "accepted", reason)


def reject(db: Database, ref: str, reason: str | None = None) -> BeliefDetail:
    return _decide(db, ref, "rejected", reason)


def _decide(db: Database, ref: str, status: str, reason: str | None) -> BeliefDetail:
    """The person's decision on a derived belief, logged once (deciding again changes
    nothing)."""
    row = _derived(db, ref)
    if row.status != status:
        with db.transaction():
            store.update_belief(db, row.id, at=now(), status=status)
            store.log_change(
                db,
                row.id,
                status,
                reason=reason or "by you",
                before=row.status,
                after=status,
            )
    return detail(db, row.id)


def edit(db: Database, ref: str, statement: str, encode: Encode) -> BeliefDetail:
    row = _derived(db, ref)
    text = " ".join(statement.split())
    if not text:
        raise UsageError("a belief needs words", fix="give the new wording")
    if len(text) > MAX_STATEMENT:
        raise UsageError(f"a belief is at most {MAX_STATEMENT} characters (got {len(text)})")
    if text == row.statement and row.status == "accepted":
        return detail(db, row.id)
    vector = vector_literal(encode([text])[0])
    old = store.embedding_literal(db, row.id)
    with db.transaction():
        if text != row.statement:
            store.add_alias(db, row.id, row.statement, fingerprint(row.statement), old)
        store.update_belief(
            db,
            row.id,
            at=now(),
            status="accepted",
            statement=text,
            fingerprint=fingerprint(text),
            embedding=vector,
        )
        store.log_change(db, row.id, "edited", reason="by you", before=row.statement, after=text)
    return detail(db, row.id)
