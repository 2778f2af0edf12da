"""The beliefs as the faces read them: the list, and one belief with everything behind it."""

from __future__ import annotations

from datetime import datetime

from ..errors import UsageError
from ..store import beliefs as store
from ..store.db import Database
from ..store.ids import resolve_prefix
from .beliefs import ORIGINS, STATUSES, Belief, BeliefDetail, Change, Evidence, Link


def _iso(value: datetime | None) -> str | None:
    return value.isoformat(timespec="seconds") if value is not None else None


def belief_of(row: store.BeliefRow) -> Belief:
    return Belief(
        row.id,
        row.statement,
        row.status,
        row.origin,
        row.kind,
        round(row.confidence, 2),
        row.evidence,
        _iso(row.created_at),
        _iso(row.updated_at),
    )


def list_beliefs(
    db: Database, *, status: str | None = None, origin: str | None = None
) -> list[Belief]:
    """Every belief (or those of one ``status`` / ``origin``), accepted first, then active,
    contested, retired and rejected, most confident first."""
    if status is not None and status not in STATUSES:
        raise UsageError(f"no belief status {status!r}", fix="one of " + ", ".join(STATUSES))
    if origin is not None and origin not in ORIGINS:
        raise UsageError(f"no belief origin {origin!r}", fix="one of " + ", ".join(ORIGINS))
    return [belief_of(r) for r in store.list_beliefs(db, status=status, origin=origin)]


def resolve(db: Database, ref: str) -> str:
    """The full id of the belief ``ref`` names (the id or a unique prefix of it)."""
    return resolve_prefix(db, "beliefs", ref, "belief")


def detail(db: Database, ref: str) -> BeliefDetail:
    """One belief with its evidence (checked quotes, or a stated belief's listed notes), its
    links and its history."""
    belief_id = resolve(db, ref)
    row = store.get_belief(db, belief_id)
    assert row is not None  # resolve found it
    evidence = [
        Evidence(e.episode_id, e.title, e.date, e.quote, e.verbatim, e.stance, e.run_id)
        for e in store.evidence_of(db, [belief_id])
    ]
    if row.origin == "stated":
        quoted = {e.episode_id for e in evidence}
        evidence = [
            *(
                Evidence(eid, title, date)
                for eid, title, date in store.stated_evidence(db, belief_id)
                if eid not in quoted
            ),
            *evidence,
        ]
    links = [
        Link(link.kind, link.target_id, link.target_kind, link.text, link.quote)
        for link in store.links_of(db, belief_id)
    ]
    changes = [
        Change(_iso(c.at) or "", c.action, c.reason, c.run_id, c.model, c.before, c.after)
        for c in store.changes_of(db, belief_id)
    ]
    return BeliefDetail(belief_of(row), tuple(evidence), tuple(links), tuple(changes))
