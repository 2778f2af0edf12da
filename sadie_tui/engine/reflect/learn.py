"""What one reflection run knows about the beliefs, and what it changes: a new belief, a
duplicate folded into the belief it repeats, a verdict turned into evidence, a link, a
contested or retired belief — each with a line in the belief's history (which run, which
model, why).

Changes are kept in memory at once (so the next belief of the batch sees them) and written
by ``commit`` in the batch's one transaction: a run killed mid-batch leaves nothing of it.

The person's word wins: a belief they wrote (``stated``), accepted or rejected is never
retired, contested or reworded by sadie; a candidate that repeats a rejected belief is
dropped, and one that repeats a retired belief does not bring it back.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING

import numpy as np

from ..reply.citations import normalise
from ..store import beliefs as store
from ..store.ids import new_id, now
from ..store.vectors import vector_literal
from .evidence import Candidate, Quote, check_quote
from .judge import MUTABLE, RELATED_BELIEF, Verdict
from .sameness import SAME, conflict, fingerprint, merges_alone

if TYPE_CHECKING:
    from ..reply.closeness import Encode
    from ..store.db import Database

# What a contradiction costs a belief's confidence: a record (a device's, a service's) weighs
# above a note of the person's own (the skeptic's rule).
AGAINST_RECORD = 0.5
AGAINST_NOTE = 0.8
FOR_RECORD = 0.05


@dataclass
class State:
    """One belief as the run sees it."""

    statement: str
    status: str
    origin: str
    confidence: float
    episodes: set[str]
    latest: str  # YYYY-MM-DD of its newest supporting episode ("" when none)

    @property
    def mutable(self) -> bool:
        return self.origin == "derived" and self.status in MUTABLE


@dataclass
class Wordings:
    """Every belief's wordings with unit vectors (``store.beliefs.Known``), growing as the run
    adds beliefs."""

    ids: list[str]
    fingerprints: list[str]
    statements: list[str]
    statuses: list[str]
    vectors: np.ndarray

    def add(self, belief_id: str, statement: str, status: str, vector: np.ndarray) -> None:
        self.ids.append(belief_id)
        self.fingerprints.append(fingerprint(statement))
        self.statements.append(statement)
        self.statuses.append(status)
        self.vectors = np.vstack([self.vectors, vector[None, :]])

    def similarity(self, a: str, b: str) -> float:
        """The cosine of two beliefs' current wordings (0 when either is unknown)."""
        rows: dict[str, int] = {}
        for row, known in enumerate(self.ids):
            if known in (a, b):
                rows.setdefault(known, row)
        if len(rows) < 2:
            return 0.0
        return float(self.vectors[rows[a]] @ self.vectors[rows[b]])

    def status(self, belief_id: str, status: str) -> None:
        for row, known in enumerate(self.ids):
            if known == belief_id:
                self.statuses[row] = status


@dataclass
class Learner:
    db: Database
    run_id: str
    model: str
    encode: Encode | None
    wordings: Wordings
    beliefs: dict[str, State]
    quotes: set[tuple[str, str, str]]
    quoted: dict[str, set[str]]  # belief → episodes it has a quote of (for or against it)
    counts: Counter[str] = field(default_factory=Counter)
    new_ids: list[str] = field(default_factory=list)
    ops: list[Callable[[Database], None]] = field(default_factory=list)

    @classmethod
    def of(cls, db: Database, run_id: str, model: str, encode: Encode | None) -> Learner:
        known = store.known_wordings(db)
        wordings = Wordings(
            list(known.ids),
            [
                f or fingerprint(s)
                for f, s in zip(known.fingerprints, known.statements, strict=True)
            ],
            list(known.statements),
            list(known.statuses),
            known.vectors,
        )
        states = {
            row[0]: State(row[1], row[2], row[3], row[4], set(row[5]), row[6] or "")
            for row in store.belief_states(db)
        }
        stored = store.evidence_quotes(db)
        quotes = {(b, e, normalise(q)) for b, e, q in stored}
        quoted: dict[str, set[str]] = {}
        for b, e, _ in stored:
            quoted.setdefault(b, set()).add(e)
        return cls(db, run_id, model, encode, wordings, states, quotes, quoted)

    # -- the batch's writes -------------------------------------------------------------------
    def commit_ops(self) -> list[Callable[[Database], None]]:
        """The batch's writes, in order, handed over for its transaction."""
        ops, self.ops = self.ops, []
        return ops

    def _log(
        self, belief_id: str, action: str, reason: str, before: str = "", after: str = ""
    ) -> None:
        self.ops.append(
            partial(
                store.log_change,
                belief_id=belief_id,
                action=action,
                reason=reason,
                run_id=self.run_id,
                model=self.model,
                before=before or None,
                after=after or None,
                at=now(),
            )
        )

    # -- one belief per idea --------------------------------------------------------------------
    def match(self, statement: str, vector: np.ndarray) -> str | None:
        """The belief this wording repeats without asking the model: the same fingerprint, or
        so close and no conflict (``sameness.merges_alone``)."""
        if not self.wordings.ids:
            return None
        print_ = fingerprint(statement)
        for row, known in enumerate(self.wordings.fingerprints):
            if known == print_:
                return self.wordings.ids[row]
        scores = self.wordings.vectors @ vector
        row = int(np.argmax(scores))
        if merges_alone(float(scores[row]), statement, self.wordings.statements[row]):
            return self.wordings.ids[row]
        return None

    def rejected_near(self, statement: str, vector: np.ndarray) -> bool:
        """Whether this wording may be one the person rejected in other words (``SAME`` close
        and no conflict): a rejected belief is never proposed again."""
        for row in np.flatnonzero(self.wordings.vectors @ vector >= SAME):
            if self.wordings.statuses[row] == "rejected" and not conflict(
                statement, self.wordings.statements[row]
            ):
                return True
        return False

    def absorb(self, belief_id: str, candidate: Candidate, dates: Mapping[str, str]) -> None:
        """``candidate`` repeats ``belief_id``: its new quotes join that belief (a rejected or
        retired one stays as it is, and the candidate is dropped)."""
        state = self.beliefs[belief_id]
        if state.status == "rejected":
            self.counts["rejected before"] += 1
            return
        if state.status == "retired":
            self.counts["retired before"] += 1
            return
        added = [q for q in candidate.evidence if self.add_quote(belief_id, q, "supports", dates)]
        if not added:
            self.counts["repeated"] += 1
            return
        self.counts["merged"] += 1
        before = f"{state.confidence:.2f}"
        if state.mutable:
            n = max(1, len(state.episodes) - len({q.episode_id for q in added}))
            state.confidence = round(
                (state.confidence * n + candidate.confidence * len(added)) / (n + len(added)), 2
            )
            self.ops.append(
                partial(
                    store.update_belief,
                    belief_id=belief_id,
                    at=now(),
                    confidence=state.confidence,
                )
            )
        self._log(
            belief_id,
            "evidence",
            f"proposed again as “{candidate.statement}” with {len(added)} new quote(s)",
            before,
            f"{state.confidence:.2f}",
        )

    def create(self, candidate: Candidate, vector: np.ndarray, dates: Mapping[str, str]) -> str:
        """A new derived belief with its checked quotes."""
        belief_id = new_id()
        at = now()
        episodes = sorted({q.episode_id for q in candidate.evidence})
        self.beliefs[belief_id] = State(
            candidate.statement,
            "active",
            "derived",
            candidate.confidence,
            set(episodes),
            max((dates.get(e, "") for e in episodes), default=""),
        )
        self.wordings.add(belief_id, candidate.statement, "active", vector)
        self.ops.append(
            partial(
                store.insert_derived,
                id=belief_id,
                statement=candidate.statement,
                kind=candidate.kind,
                confidence=candidate.confidence,
                evidence=episodes,
                fingerprint=fingerprint(candidate.statement),
                embedding=vector_literal(vector),
                at=at,
            )
        )
        for quote in candidate.evidence:
            self.add_quote(belief_id, quote, "supports", dates)
        self._log(belief_id, "proposed", f"from {len(episodes)} note(s)", after=candidate.statement)
        self.new_ids.append(belief_id)
        self.counts["new"] += 1
        return belief_id

    def add_quote(
        self, belief_id: str, quote: Quote, stance: str, dates: Mapping[str, str]
    ) -> bool:
        """One checked quote for or against a belief, unless it has it already."""
        key = (belief_id, quote.episode_id, normalise(quote.quote))
        if key in self.quotes:
            return False
        self.quotes.add(key)
        self.quoted.setdefault(belief_id, set()).add(quote.episode_id)
        if stance == "supports":
            state = self.beliefs[belief_id]
            state.episodes.add(quote.episode_id)
            state.latest = max(state.latest, dates.get(quote.episode_id, ""))
        self.ops.append(
            partial(
                store.add_evidence,
                belief_id=belief_id,
                episode_id=quote.episode_id,
                quote=quote.quote,
                verbatim=quote.verbatim,
                stance=stance,
                run_id=self.run_id,
                at=now(),
            )
        )
        return True

    # -- verdicts -------------------------------------------------------------------------------
    def apply(
        self,
        belief_id: str,
        verdicts: Sequence[Verdict],
        successors: Mapping[str, Sequence[str]],
    ) -> None:
        """The model's verdicts on what might disagree with ``belief_id``. ``successors``: the
        beliefs this batch created, by the episodes they rest on (a note that replaces a belief
        names its successor through them)."""
        for v in verdicts:
            item = v.item
            if v.verdict in ("unrelated", "same"):
                continue
            if item.kind == "belief":
                self._against_belief(belief_id, item.id, v)
            elif item.kind == "record":
                self._record(belief_id, v)
            else:
                self._note(belief_id, v, successors)

    def _note(
        self,
        belief_id: str,
        v: Verdict,
        successors: Mapping[str, Sequence[str]],
    ) -> None:
        # A verdict stands on the note's own words, quoted word for word (a paraphrase is not
        # enough here: a small model "quotes" the belief itself, and its nearest sentence in
        # the note is then no evidence of anything); and counter-evidence cannot be the
        # belief's own words.
        checked = check_quote(v.quote, v.item.text, None)
        state = self.beliefs[belief_id]
        if isinstance(checked, str):
            self.counts["verdicts without the note's words"] += 1
            return
        if v.verdict != "supports" and self._says_the_same(state.statement, checked.quote):
            self.counts["verdicts quoting the belief itself"] += 1
            return
        quote = Quote(v.item.id, checked.quote, checked.verbatim)
        dates = {v.item.id: v.item.date}
        if v.verdict == "supports":
            if self.add_quote(belief_id, quote, "supports", dates):
                self.counts["evidence added"] += 1
                self._log(belief_id, "evidence", f"backed by {_named(v)}")
            return
        if v.item.date < state.latest:
            # An older note says otherwise: the belief is the newer state, not contested by
            # its past. A belief resting on that note and close to this one is what it
            # replaces ("I love cooking for everyone" → "not any more").
            for older in self._resting_on(v.item.id):
                alike = self.wordings.similarity(belief_id, older) >= RELATED_BELIEF
                if older != belief_id and alike and self.beliefs[older].mutable:
                    self._retire(older, belief_id, f"replaced by the newer “{state.statement}”")
                    return
            self.counts["older notes"] += 1
            return
        newer = v.item.date > state.latest
        if v.verdict == "replaces" and newer and state.mutable:
            for successor in successors.get(v.item.id, ()):
                alike = self.wordings.similarity(belief_id, successor) >= RELATED_BELIEF
                if successor != belief_id and alike:
                    self.add_quote(belief_id, quote, "contradicts", dates)
                    self._retire(belief_id, successor, f"replaced by a newer note, {_named(v)}")
                    return
        if self.add_quote(belief_id, quote, "contradicts", dates):
            self._contest(belief_id, AGAINST_NOTE, f"contradicted by {_named(v)}")

    def _says_the_same(self, statement: str, quote: str) -> bool:
        """Whether ``quote`` is the belief's own claim: its fingerprint, or close enough to be
        the same idea (``SAME``) with no conflict between them (``sameness``: measured on the
        pairs of bench/belief_merge.py, where the conflict rule caught the opposites this
        close). "I practise twenty minutes every morning" is no evidence against "I practice
        twenty minutes every morning" (0.88); "Ines has stopped running with me" is against
        "I run with Ines on weekends" (0.62)."""
        if fingerprint(statement) == fingerprint(quote):
            return True
        if self.encode is None or conflict(statement, quote):
            return False
        vectors = np.asarray(self.encode([statement, quote]), dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1)
        if not norms.all():
            return False
        return float(vectors[0] @ vectors[1] / (norms[0] * norms[1])) >= SAME

    def _resting_on(self, episode_id: str) -> list[str]:
        """The beliefs with a supporting quote of ``episode_id``."""
        return [b for b, state in self.beliefs.items() if episode_id in state.episodes]

    def _record(self, belief_id: str, v: Verdict) -> None:
        state = self.beliefs[belief_id]
        if v.verdict == "supports":
            if state.mutable and state.confidence < 0.95:
                state.confidence = round(min(0.95, state.confidence + FOR_RECORD), 2)
                self.ops.append(
                    partial(
                        store.update_belief,
                        belief_id=belief_id,
                        at=now(),
                        confidence=state.confidence,
                    )
                )
                self._log(belief_id, "supported", f"a record agrees: {v.item.title} {v.item.date}")
            return
        self._link(belief_id, "contradicts", v.item.id, "observation", v.quote or v.item.text)
        self._contest(
            belief_id,
            AGAINST_RECORD,
            f"contradicted by a record ({v.item.title}, {v.item.date}): “{v.item.text}”;"
            " records outweigh self-report",
        )

    def _against_belief(self, belief_id: str, other: str, v: Verdict) -> None:
        if other not in self.beliefs or other == belief_id:
            return
        if v.verdict == "supports":
            return
        mine, theirs = self.beliefs[belief_id], self.beliefs[other]
        # Two beliefs from notes of different dates that cannot both hold: the newer is the
        # person's state now, and replaces the older (the person's own word still wins: one
        # they wrote or decided on is never retired). From the same day: both contested.
        if v.verdict == "replaces" or mine.latest != theirs.latest:
            older, newer = (
                (other, belief_id) if mine.latest >= theirs.latest else (belief_id, other)
            )
            if self.beliefs[older].mutable:
                self._retire(older, newer, f"replaced by “{self.beliefs[newer].statement}”")
                return
        self._link(belief_id, "contradicts", other, "belief", None)
        self._link(other, "contradicts", belief_id, "belief", None)
        self._contest(belief_id, AGAINST_NOTE, f"disagrees with “{self.beliefs[other].statement}”")
        self._contest(other, AGAINST_NOTE, f"disagrees with “{self.beliefs[belief_id].statement}”")

    def _link(
        self, belief_id: str, kind: str, target: str, target_kind: str, quote: str | None
    ) -> None:
        self.ops.append(
            partial(
                store.add_link,
                belief_id=belief_id,
                kind=kind,
                target_id=target,
                target_kind=target_kind,
                quote=quote,
                run_id=self.run_id,
                at=now(),
            )
        )

    def _contest(self, belief_id: str, factor: float, reason: str) -> None:
        state = self.beliefs[belief_id]
        if not state.mutable:
            return
        before = state.status
        state.confidence = round(max(0.05, state.confidence * factor), 2)
        state.status = "contested"
        self.wordings.status(belief_id, "contested")
        self.ops.append(
            partial(
                store.update_belief,
                belief_id=belief_id,
                at=now(),
                status="contested",
                confidence=state.confidence,
            )
        )
        if before != "contested":
            self.counts["contested"] += 1
        self._log(belief_id, "contested", reason, before, "contested")

    def _retire(self, belief_id: str, successor: str, reason: str) -> None:
        state = self.beliefs[belief_id]
        before = state.status
        state.status = "retired"
        self.wordings.status(belief_id, "retired")
        self.ops.append(
            partial(store.update_belief, belief_id=belief_id, at=now(), status="retired")
        )
        self._link(belief_id, "replaced_by", successor, "belief", None)
        self._link(successor, "supersedes", belief_id, "belief", None)
        self.counts["retired"] += 1
        self._log(belief_id, "retired", reason, before, "retired")


def _named(v: Verdict) -> str:
    return f"{' '.join(v.item.title.split()) or 'a note'} ({v.item.date}): “{v.quote.strip()}”"
