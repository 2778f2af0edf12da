"""The demo memory's own questions: does retrieval find the notes a person would ask about?

Each question (``tests/data/demo_questions.jsonl``: ``question``, ``kind``, ``episodes``,
``answer``) names the files under ``data/demo/`` that hold its answer, as paths relative to that
folder (a record as ``records/runs.jsonl#31``, its line). File paths, because episode rows are
rebuilt with every ingest and the demo can be built from wherever the package is installed:
a stored episode's source is absolute, so it matches a label when it ends with ``/label``.

Retrieval is the one ``sadie search`` and chat use (``retrieval.retrieve``, the persona's own
rules), run once per question with k=10; recall@k is the share of a question's labelled
episodes found among the episodes of its first k chunks (k counts chunks, so two chunks of one
episode take two places). The clock is pinned to the demo's present, the day after its last
note, so that "in March" and "last" mean the same thing whenever the figures are measured.
Nothing is written to the demo memory (no telemetry rows): it is opened read-only.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, ClassVar

from pydantic import ConfigDict, Field

from ..engine.errors import ConfigError, NotFoundError
from ..engine.memory import Memory
from ..engine.personas import get_persona
from ..engine.retrieval import retrieve
from ..engine.store.episodes import episode_sources
from ..engine.store.stats import memory_counts
from ..paths import config_dir, project_root

if TYPE_CHECKING:
    from ..engine.ingest.embedder import Embedder

KINDS = ("time", "recency", "who", "feeling", "number")
KS = (5, 10)  # RecallBlock's fields
DEPTH = max(KS)
QUESTIONS_FILE = Path("tests") / "data" / "demo_questions.jsonl"


@dataclass(frozen=True)
class DemoQuestion:
    question: str
    kind: str
    episodes: tuple[str, ...]  # paths relative to data/demo/, "records/x.jsonl#N" for a record
    answer: str


def default_questions() -> Path:
    """The checkout's question file; a wheel does not ship ``tests/``, hence ``--questions``."""
    return project_root() / QUESTIONS_FILE


def load_questions(path: Path) -> list[DemoQuestion]:
    """The questions in ``path``, one JSON object a line; a bad line is named, not skipped,
    because a silently dropped question changes the figures."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise NotFoundError(
            f"no demo questions at {path}",
            fix="pass --questions PATH; the file lives in the source tree's tests/data/",
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the demo questions ({exc})") from exc
    out: list[DemoQuestion] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{path}:{number}: invalid JSON ({exc.msg})") from exc
        episodes = obj.get("episodes") if isinstance(obj, dict) else None
        if (
            not isinstance(obj, dict)
            or not isinstance(obj.get("question"), str)
            or not obj["question"].strip()
            or not isinstance(episodes, list)
            or not episodes
            or not all(isinstance(e, str) and e.strip() for e in episodes)
        ):
            raise ConfigError(
                f"{path}:{number}: a question needs 'question' (text) and 'episodes'"
                " (a non-empty list of paths)"
            )
        out.append(
            DemoQuestion(
                question=obj["question"].strip(),
                kind=str(obj.get("kind") or "other"),
                episodes=tuple(e.strip().lstrip("/") for e in episodes),
                answer=str(obj.get("answer") or ""),
            )
        )
    if not out:
        raise ConfigError(f"{path}: no questions in the file")
    return out


# --------------------------------------------------------------------------- scoring


def matches(source: str, label: str) -> bool:
    """Whether an episode read from ``source`` (absolute, maybe ``#line``) is ``label``."""
    source = source.replace("\\", "/")
    return source == label or source.endswith("/" + label)


def found_at(labels: Sequence[str], ranked: Sequence[str], k: int) -> list[str]:
    """The labels whose episode is among the first ``k`` ranked chunks' sources."""
    top = ranked[:k]
    return [label for label in labels if any(matches(source, label) for source in top)]


def recall_at(labels: Sequence[str], ranked: Sequence[str], k: int) -> float:
    """Share of ``labels`` found in the first ``k`` chunks (``ranked``: one source a chunk)."""
    if not labels:
        return 0.0
    return len(found_at(labels, ranked, k)) / len(labels)


@dataclass
class Scored:
    question: DemoQuestion
    ranked: list[str]  # each chunk's episode source, best first
    recall: dict[int, float]

    def missing(self, k: int = DEPTH) -> list[str]:
        hits = set(found_at(self.question.episodes, self.ranked, k))
        return [label for label in self.question.episodes if label not in hits]


def score(question: DemoQuestion, ranked: Sequence[str]) -> Scored:
    ranked = list(ranked)
    return Scored(question, ranked, {k: recall_at(question.episodes, ranked, k) for k in KS})


@dataclass(frozen=True)
class RecallBlock:
    """Recall@5 and recall@10 over some questions, as ``{"questions", "recall@5",
    "recall@10"}`` (the keys of ``KS``)."""

    __pydantic_config__: ClassVar[ConfigDict] = ConfigDict(serialize_by_alias=True)

    questions: int
    recall_at_5: Annotated[float, Field(alias="recall@5")]
    recall_at_10: Annotated[float, Field(alias="recall@10")]

    @classmethod
    def of(cls, items: Sequence[Scored]) -> RecallBlock:
        """The mean recalls of ``items`` (to four places), 0.0 for none."""
        n = len(items)
        mean = {k: round(sum(s.recall[k] for s in items) / n, 4) if n else 0.0 for k in KS}
        return cls(n, mean[5], mean[10])


@dataclass(frozen=True)
class Miss:
    """A question whose notes were not all found at ``DEPTH``: what was wanted, what came."""

    __pydantic_config__: ClassVar[ConfigDict] = ConfigDict(serialize_by_alias=True)

    question: str
    kind: str
    answer: str
    missing: list[str]
    recall: Annotated[float, Field(alias="recall@10")]  # at DEPTH
    retrieved: list[str]


@dataclass(frozen=True)
class DemoResult:
    """``sadie eval demo --json``: the persona, the pinned present (ISO), the question count,
    recall overall and by kind, and the misses."""

    persona: str
    now: str
    questions: int
    overall: RecallBlock
    by_kind: dict[str, RecallBlock]
    misses: list[Miss]


@dataclass
class DemoReport:
    persona: str
    now: datetime
    questions: list[Scored] = field(default_factory=list)

    def result(self) -> DemoResult:
        """The report's figures, frozen (``wire.dump`` prints them)."""
        kinds = [k for k in KINDS if any(s.question.kind == k for s in self.questions)]
        kinds += sorted({s.question.kind for s in self.questions} - set(kinds))
        return DemoResult(
            persona=self.persona,
            now=self.now.isoformat(),
            questions=len(self.questions),
            overall=RecallBlock.of(self.questions),
            by_kind={
                kind: RecallBlock.of([s for s in self.questions if s.question.kind == kind])
                for kind in kinds
            },
            misses=[
                Miss(
                    question=s.question.question,
                    kind=s.question.kind,
                    answer=s.question.answer,
                    missing=s.missing(DEPTH),
                    recall=round(s.recall[DEPTH], 4),
                    retrieved=_labels(s.ranked),
                )
                for s in self.questions
                if s.recall[DEPTH] < 1.0
            ],
        )


def _labels(sources: Iterable[str]) -> list[str]:
    """Sources shortened to what follows ``data/demo/`` (or the last two parts) for reading."""
    out = []
    for source in sources:
        flat = source.replace("\\", "/")
        head, sep, tail = flat.rpartition("/data/demo/")
        out.append(tail if sep else "/".join(flat.split("/")[-2:]))
    return out


# --------------------------------------------------------------------------- running


def demo_now(last: datetime | None) -> datetime:
    """The demo's present: noon of the day after its last note (time words resolve to it)."""
    last = last or datetime.now()
    return datetime(last.year, last.month, last.day) + timedelta(days=1, hours=12)


def run_demo(
    home: Path,
    questions: Sequence[DemoQuestion],
    *,
    persona: str,
    embedder: Embedder | None = None,
) -> DemoReport:
    """Every question retrieved against the (already built) demo memory in ``home``."""

    chosen = get_persona(persona, config_dir() / "personas")
    with Memory.open(home, read_only=True, embedder=embedder) as memory:
        now = demo_now(memory_counts(memory.db).last)
        report = DemoReport(persona=chosen.name, now=now)
        for question in questions:
            result = retrieve(memory, question.question, chosen, k=DEPTH, now=now)
            ids = [c.episode_id for c in result.chunks]
            sources = episode_sources(memory.db, list(dict.fromkeys(ids)))
            report.questions.append(score(question, [sources.get(i, "") for i in ids]))
    return report
