"""The LoCoMo benchmark: each conversation becomes a scratch memory, its questions are retrieved.

Method (the retrieval issue's, so that figures compare): each session is an episode dated by
its ``session_N_date_time`` and titled "Session N — A and B"; its turns are the episode text,
one line per turn (``[D1:3] Caroline: text…``), chunked by the product's own chunker.
Questions of categories 1–4 with evidence are scored (5 is adversarial). recall@k is the share
of a question's evidence ids found in the top k chunks; nDCG@10 uses binary relevance (a chunk
is relevant when it holds an evidence id), the ideal DCG counting every relevant chunk in the
memory. Malformed evidence ids count as misses. Everything happens in a temporary home that is
deleted afterwards; the person's memory is never opened.

``one_memory``: every conversation is ingested into one memory (a haystack six times larger,
closer to a year of one person's notes) and each question is retrieved against all of it. The
dialogue ids repeat across conversations (each has a ``D1:3``), so chunk and evidence ids are
prefixed by their conversation (``26/D1:3``) and no conversation is credited with another's.
"""

from __future__ import annotations

import json
import math
import re
import shutil
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from ..engine.errors import ConfigError, NotFoundError
from ..engine.memory import Memory
from ..engine.personas import Persona, get_persona
from ..engine.retrieval import graph, keyword
from ..engine.retrieval.pipeline import Candidates, fetch_vectors, gather, prepare_query, rank
from ..engine.retrieval.timewords import MONTHS
from ..engine.store.episodes import chunk_texts

if TYPE_CHECKING:
    from ..engine.ingest.embedder import Embedder

CHANNELS = ("vector", "keyword", "graph", "fused")
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
KS = (5, 10)

_SESSION = re.compile(r"^session_(\d+)$")
# A dialogue id, optionally namespaced by its conversation (``26/D1:3``, the one-memory run).
_DIA_ID = re.compile(r"^(?:[^\s/\[\]]+/)?D\d+:\d+$")
_TAG = re.compile(r"\[(D\d+:\d+)\]")
_WHEN = re.compile(
    r"(?P<h>\d{1,2}):(?P<m>\d{2})\s*(?P<ampm>[ap]m)\s+on\s+(?P<d>\d{1,2})\s+(?P<mon>[A-Za-z]+),?"
    r"\s+(?P<y>\d{4})",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Session:
    number: int
    title: str
    occurred_at: datetime
    text: str


@dataclass(frozen=True)
class Question:
    text: str
    category: int
    evidence: tuple[str, ...]


@dataclass(frozen=True)
class Conversation:
    id: str
    speakers: tuple[str, str]
    sessions: tuple[Session, ...]
    questions: tuple[Question, ...]


def parse_session_date(value: str) -> datetime | None:
    """``"1:56 pm on 8 May, 2023"`` → 2023-05-08 13:56; None when unreadable."""
    m = _WHEN.search(value or "")
    if not m:
        return None
    month = MONTHS.get(m["mon"].lower())
    if month is None:
        return None
    hour = int(m["h"]) % 12 + (12 if m["ampm"].lower() == "pm" else 0)
    try:
        return datetime(int(m["y"]), month, int(m["d"]), hour, int(m["m"]))
    except ValueError:
        return None


def parse_conversation(data: Mapping[str, object], conv_id: str) -> Conversation:
    """One LoCoMo sample (either the flat form or ``{"conversation": {...}, "qa": [...]}``)."""
    body = data.get("conversation", data)
    if not isinstance(body, Mapping):
        raise ConfigError(f"LoCoMo {conv_id}: 'conversation' is not an object")
    a, b = str(body.get("speaker_a", "A")), str(body.get("speaker_b", "B"))
    sessions: list[Session] = []
    numbers = sorted(int(m[1]) for key in body if (m := _SESSION.match(str(key))))
    last = datetime(2000, 1, 1)
    for n in numbers:
        turns = body.get(f"session_{n}") or []
        if not isinstance(turns, list) or not turns:
            continue
        when = parse_session_date(str(body.get(f"session_{n}_date_time", "")))
        # An unreadable date keeps the order: one day after the previous session.
        when = when or last + timedelta(days=1)
        last = when
        lines = [
            f"[{t.get('dia_id', '')}] {t.get('speaker', '')}: {' '.join(str(t.get('text', '')).split())}"
            for t in turns
            if isinstance(t, Mapping)
        ]
        sessions.append(Session(n, f"Session {n} — {a} and {b}", when, "\n".join(lines)))
    qa = data.get("qa", body.get("qa", []))
    questions = [
        Question(str(q.get("question", "")), int(q.get("category", 0)), tuple(map(str, ev)))
        for q in (qa if isinstance(qa, list) else [])
        if isinstance(q, Mapping)
        and int(q.get("category", 0) or 0) in CATEGORIES
        and (ev := q.get("evidence"))
    ]
    cid = str(data.get("sample_id") or conv_id)
    return Conversation(cid, (a, b), tuple(sessions), tuple(questions))


def load_conversations(path: Path, ids: Iterable[str] | None = None) -> list[Conversation]:
    """A LoCoMo json file (one sample or a list of them) or a folder of such files."""
    path = Path(path)
    if not path.exists():
        raise NotFoundError(f"no LoCoMo data at {path}")
    files = sorted(path.glob("*.json")) if path.is_dir() else [path]
    if not files:
        raise NotFoundError(f"no .json files in {path}")
    out: list[Conversation] = []
    for file in files:
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ConfigError(f"{file}: not a LoCoMo json file ({exc})") from exc
        samples = data if isinstance(data, list) else [data]
        for i, sample in enumerate(samples):
            if not isinstance(sample, Mapping):
                raise ConfigError(f"{file}: sample {i} is not an object")
            default = file.stem if len(samples) == 1 else f"{file.stem}-{i}"
            out.append(parse_conversation(sample, default))
    wanted = {s.strip() for s in ids if s.strip()} if ids is not None else None
    if wanted:
        out = [c for c in out if c.id in wanted]
        missing = wanted - {c.id for c in out}
        if missing:
            raise NotFoundError(f"no LoCoMo conversation {', '.join(sorted(missing))} in {path}")
    return out


def write_sessions(conv: Conversation, folder: Path) -> list[Path]:
    """Each session as a Markdown file with front matter, ready for the product's ingest."""
    folder.mkdir(parents=True, exist_ok=True)
    paths: list[Path] = []
    for s in conv.sessions:
        front = (
            "---\n"
            f"title: {json.dumps(s.title, ensure_ascii=False)}\n"
            f"date: {s.occurred_at.isoformat()}\n"
            "kind: conversation\n"
            "---\n"
        )
        p = folder / f"session-{s.number:03d}.md"
        p.write_text(front + s.text + "\n", encoding="utf-8")
        paths.append(p)
    return paths


def namespaced(conv: Conversation) -> Conversation:
    """The conversation with its questions' evidence ids prefixed by its own id (``D1:3`` →
    ``26/D1:3``), as ``ingest_conversations(namespace=True)`` prefixes its chunks' ids: every
    LoCoMo conversation has a ``D1:3``, and in one memory none may credit another's chunk. The
    text is left alone (so it chunks as in its own memory); a malformed id stays a miss."""
    questions = tuple(
        replace(q, evidence=tuple(f"{conv.id}/{e}" for e in q.evidence)) for q in conv.questions
    )
    return replace(conv, questions=questions)


# --------------------------------------------------------------------------- metrics


def evidence_in(text: str) -> set[str]:
    return set(_TAG.findall(text))


def recall_at(evidence: Sequence[str], ranked: Sequence[set[str]], k: int) -> float:
    """Share of the evidence ids found in the first ``k`` ranked chunks."""
    if not evidence:
        return 0.0
    found = set().union(*ranked[:k]) if ranked[:k] else set()
    return sum(1 for e in evidence if _DIA_ID.match(e) and e in found) / len(evidence)


def ndcg_at(
    evidence: Sequence[str], ranked: Sequence[set[str]], all_chunks: Iterable[set[str]], k: int = 10
) -> float:
    """Binary nDCG: a chunk is relevant when it holds an evidence id."""
    wanted = {e for e in evidence if _DIA_ID.match(e)}
    ideal_n = sum(1 for ids in all_chunks if ids & wanted)
    if ideal_n == 0:
        return 0.0
    dcg = sum(1 / math.log2(i + 2) for i, ids in enumerate(ranked[:k]) if ids & wanted)
    idcg = sum(1 / math.log2(i + 2) for i in range(min(k, ideal_n)))
    return dcg / idcg


@dataclass
class Tally:
    n: int = 0
    sums: dict[str, float] = field(default_factory=dict)

    def add(self, values: Mapping[str, float]) -> None:
        self.n += 1
        for key, v in values.items():
            self.sums[key] = self.sums.get(key, 0.0) + v

    def means(self) -> dict[str, float]:
        return {k: round(v / self.n, 4) if self.n else 0.0 for k, v in self.sums.items()}


def question_metrics(
    evidence: Sequence[str], ranked: Sequence[set[str]], all_chunks: Sequence[set[str]]
) -> dict[str, float]:
    out = {f"recall@{k}": recall_at(evidence, ranked, k) for k in KS}
    out["ndcg@10"] = ndcg_at(evidence, ranked, all_chunks, 10)
    return out


# --------------------------------------------------------------------------- running


@dataclass
class Report:
    questions: int = 0
    overall: dict[str, Tally] = field(default_factory=dict)
    by_category: dict[str, dict[str, Tally]] = field(default_factory=dict)
    by_conversation: dict[str, dict[str, Tally]] = field(default_factory=dict)
    chunks: dict[str, int] = field(default_factory=dict)  # per conversation
    one_memory: bool = False  # every conversation in one memory (the haystack run)

    def add(
        self,
        conv: str,
        question: Question,
        ranked: Mapping[str, Sequence[set[str]]],
        all_chunks: Sequence[set[str]],
        k: int,
    ) -> None:
        self.questions += 1
        cat = CATEGORIES.get(question.category, str(question.category))
        for channel in CHANNELS:
            m = question_metrics(question.evidence, list(ranked.get(channel, []))[:k], all_chunks)
            self.overall.setdefault(channel, Tally()).add(m)
            self.by_category.setdefault(cat, {}).setdefault(channel, Tally()).add(m)
            self.by_conversation.setdefault(conv, {}).setdefault(channel, Tally()).add(m)

    def result(self) -> LocomoResult:
        """The report's means, frozen (``wire.dump`` prints them)."""
        overall = {ch: self.overall[ch].means() for ch in CHANNELS if ch in self.overall}
        return LocomoResult(
            questions=self.questions,
            overall=overall,
            by_category={
                name: ChannelBlock.of(self.by_category[name])
                for name in CATEGORIES.values()
                if name in self.by_category
            },
            by_conversation={c: ChannelBlock.of(t) for c, t in self.by_conversation.items()},
            chunks=dict(self.chunks),
            one_memory=self.one_memory,
        )


@dataclass(frozen=True)
class ChannelBlock:
    """Each channel's mean metrics over some questions, and how many questions (``add``
    tallies every channel for every question, so none is ever missing)."""

    vector: dict[str, float]
    keyword: dict[str, float]
    graph: dict[str, float]
    fused: dict[str, float]
    questions: int

    @classmethod
    def of(cls, tallies: Mapping[str, Tally]) -> ChannelBlock:
        """The block of one category's or conversation's tallies."""
        means = {ch: tallies[ch].means() if ch in tallies else {} for ch in CHANNELS}
        n = next(iter(tallies.values())).n if tallies else 0
        return cls(means["vector"], means["keyword"], means["graph"], means["fused"], n)

    def by_channel(self) -> dict[str, dict[str, float]]:
        """Channel name → its means, as the overall figures are kept."""
        return {
            "vector": self.vector,
            "keyword": self.keyword,
            "graph": self.graph,
            "fused": self.fused,
        }


@dataclass(frozen=True)
class LocomoResult:
    """``sadie eval locomo --json``: questions, each channel's means overall, by category and
    by conversation, chunks per conversation, and whether they shared one memory."""

    questions: int
    overall: dict[str, dict[str, float]]
    by_category: dict[str, ChannelBlock]
    by_conversation: dict[str, ChannelBlock]
    chunks: dict[str, int]
    one_memory: bool


Progress = Callable[[str], None]


def session_now(conv: Conversation) -> datetime:
    """The conversation's present: the day after its last session (time words resolve to it)."""
    last = max((s.occurred_at for s in conv.sessions), default=datetime(2000, 1, 1))
    return datetime(last.year, last.month, last.day) + timedelta(days=1, hours=12)


def ingest_conversations(
    memory: Memory,
    convs: Sequence[Conversation],
    source: Path,
    report: Report,
    *,
    namespace: bool = False,
) -> dict[int, set[str]]:
    """Ingest the conversations' sessions into ``memory``, one conversation after the other
    (one subfolder of ``source`` each when there are several); chunk id → the dialogue ids its
    text holds, prefixed by the chunk's conversation (``26/D1:3``) when ``namespace``. The
    chunks a conversation's ingest adds are that conversation's (``report.chunks`` counts
    them, a chunk without a turn tag too)."""

    evidence: dict[int, set[str]] = {}
    for conv in convs:
        memory.ingest(write_sessions(conv, source / conv.id if len(convs) > 1 else source))
        prefix = f"{conv.id}/" if namespace else ""
        before = len(evidence)
        for cid, text in chunk_texts(memory.db):
            if int(cid) not in evidence:
                evidence[int(cid)] = {prefix + e for e in evidence_in(text)}
        report.chunks[conv.id] = len(evidence) - before
    return evidence


def question_candidates(
    memory: Memory, question: Question, persona: Persona, now: datetime, k: int
) -> Candidates | None:
    """The product's query preparation and channels for one question (``pipeline.gather``).

    Fusion weights only enter later (``rankings``), except that the graph channel runs only
    for a persona with a graph weight; so one set of candidates serves every weight setting
    with the same graph/no-graph choice (``bench/locomo_loco.py`` relies on it)."""

    prepared = prepare_query(memory, question.text, now=now, previous=None, use_vector=True)
    cands, _window = gather(memory, prepared, persona, k=k, now=now)
    return cands


def rankings(
    memory: Memory,
    cands: Candidates | None,
    persona: Persona,
    evidence: Mapping[int, set[str]],
    k: int,
) -> dict[str, list[set[str]]]:
    """Each channel's top ``k`` and the fused selection (``pipeline.rank``), as the dialogue
    ids of each ranked chunk."""

    ranked: dict[str, list[set[str]]] = {ch: [] for ch in CHANNELS}
    if cands is None:
        return ranked
    chosen, _fused, _final = rank(
        cands, persona, k, vector_used=True, vectors_of=lambda ids: fetch_vectors(memory, ids)
    )
    ranked["fused"] = [evidence[cands.ids[i]] for i in chosen]
    for channel, hits in cands.channel_hits.items():
        ranked[channel] = [evidence[c] for c in hits[:k]]
    return ranked


def score_conversations(
    memory: Memory,
    convs: Sequence[Conversation],
    evidence: Mapping[int, set[str]],
    report: Report,
    *,
    k: int,
    persona: Persona,
) -> None:
    """Score every question of ``convs`` against ``memory`` (each at its conversation's now)."""
    all_chunks = list(evidence.values())
    for conv in convs:
        now = session_now(conv)
        for question in conv.questions:
            cands = question_candidates(memory, question, persona, now, k)
            ranked = rankings(memory, cands, persona, evidence, k)
            report.add(conv.id, question, ranked, all_chunks, k)


def run_memory(
    convs: Sequence[Conversation],
    home: Path,
    report: Report,
    *,
    namespace: bool,
    k: int = 10,
    persona_name: str = "analyst",
    embedder: Embedder | None = None,
) -> None:
    """Ingest ``convs`` into one memory in ``home`` (a scratch folder) and score each question
    against it. ``namespace``: prefix the dialogue ids by conversation, which several in one
    memory need (every conversation has a ``D1:1``)."""

    if namespace:
        convs = [namespaced(c) for c in convs]
    with Memory.open(home, embedder=embedder) as memory:
        evidence = ingest_conversations(
            memory, convs, home / "sessions", report, namespace=namespace
        )
        score_conversations(memory, convs, evidence, report, k=k, persona=get_persona(persona_name))


def scratch_home(label: str) -> Path:
    return Path(tempfile.mkdtemp(prefix=f"sadie-locomo-{label}-"))


def drop_scratch(home: Path) -> None:
    """Forget the scratch memory's cached indexes and delete it."""

    keyword.forget_cached(home)
    graph.forget_cached(str(home))
    shutil.rmtree(home, ignore_errors=True)


def run_locomo(
    path: Path,
    *,
    conversations: Iterable[str] | None = None,
    k: int = 10,
    persona: str = "analyst",
    progress: Progress | None = None,
    embedder: Embedder | None = None,
    one_memory: bool = False,
) -> Report:
    """The whole benchmark, each conversation in its own temporary home (or, ``one_memory``,
    all of them in one), deleted afterwards."""
    convs = load_conversations(path, conversations)
    report = Report()
    notify = progress or (lambda message: None)
    if one_memory:
        report.one_memory = True
        scratch = scratch_home("one")
        try:
            notify(
                f"{len(convs)} conversations in one memory: "
                f"{sum(len(c.sessions) for c in convs)} sessions, "
                f"{sum(len(c.questions) for c in convs)} questions"
            )
            run_memory(
                convs,
                scratch,
                report,
                namespace=True,
                k=k,
                persona_name=persona,
                embedder=embedder,
            )
        finally:
            drop_scratch(scratch)
        return report
    for conv in convs:
        scratch = scratch_home(conv.id)
        try:
            notify(
                f"conversation {conv.id}: {len(conv.sessions)} sessions, "
                f"{len(conv.questions)} questions"
            )
            run_memory(
                [conv],
                scratch,
                report,
                namespace=False,
                k=k,
                persona_name=persona,
                embedder=embedder,
            )
        finally:
            drop_scratch(scratch)
    return report
