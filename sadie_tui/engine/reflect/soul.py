"""``sadie soul suggest``: a drafted update of the soul summary from what the person accepted,
what sadie holds as active, and their recent notes — shown as a diff to accept or discard,
never written on its own (``save`` writes it, when the person says so).

The draft is the model's, written freely (no schema): a summary is prose. Its reasoning, if
any, is dropped by the stream filter like a reply's.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ModelNoAnswer, NeedsModel, StorageError
from ..prompt import Briefing, strip_front_matter
from ..reasoners.offline import offline_reason
from ..reply.stream_filter import StreamFilter
from ..store import beliefs as belief_store
from ..store import reflection as reflection_store

if TYPE_CHECKING:
    from ..context import TurnContext

MAX_BELIEFS = 24
RECENT_NOTES = 6
NOTE_CHARS = 600
SOUL_FILE = "soul.md"

ASK = (
    "Below is a person's soul summary: a few paragraphs about who they are, which a companion "
    "reads before every conversation. Then what has been learned about them since, and their "
    "latest notes. Rewrite the summary so it stays true: keep what still holds, in the same "
    "voice and about the same length, change what the beliefs and notes show has changed, add "
    "what matters. Do not invent anything. Write only the new summary."
)


@dataclass(frozen=True)
class SoulSuggestion:
    """The current summary, the drafted one, and the unified diff between them."""

    current: str
    proposed: str
    diff: str
    model: str


def diff(current: str, proposed: str) -> str:
    return "".join(
        difflib.unified_diff(
            current.strip().splitlines(keepends=True),
            proposed.strip().splitlines(keepends=True),
            fromfile="soul.md",
            tofile="soul.md (suggested)",
        )
    )


def _context(ctx: TurnContext) -> str:
    db = ctx.memory.db
    held = [
        b
        for b in belief_store.list_beliefs(db)
        if b.status in ("accepted", "active") and b.origin == "derived"
    ][:MAX_BELIEFS]
    lines = ["Beliefs (accepted by the person first, then proposed):"]
    lines += [f"- [{b.status}] {b.statement}" for b in held] or ["- (none yet)"]
    notes = reflection_store.episodes_to_read(db, everything=True)[-RECENT_NOTES:]
    lines.append("\nLatest notes:")
    for n in notes:
        text = " ".join(n.text.split())[:NOTE_CHARS]
        lines.append(f"- ({n.date}) {n.title}: {text}")
    return "\n".join(lines)


async def suggest(ctx: TurnContext) -> SoulSuggestion:
    """Draft an update of the soul summary with the turn's model."""
    # lazy: context loads only when suggest runs, off the start-up path
    from ..context import pick_reasoner

    choice = await pick_reasoner(ctx)
    reasoner = choice.reasoner
    if reasoner.offline:
        raise NeedsModel("sadie soul suggest", offline_reason(reasoner))
    current = strip_front_matter(ctx.memory.soul()).strip()
    user = f"Soul summary:\n{current or '(none yet)'}\n\n{_context(ctx)}"
    messages = [{"role": "system", "content": ASK}, {"role": "user", "content": user}]
    briefing = Briefing(system=ASK, messages=messages, excerpts=[], shown={})
    shown = StreamFilter()
    parts: list[str] = []
    async for piece in reasoner.stream(briefing, messages=messages):
        if piece.kind == "content":
            parts.append(shown.feed(piece.text))
    parts.append(shown.finish())
    proposed = "".join(parts).strip()
    if not proposed:
        raise ModelNoAnswer("the model drafted nothing", fix="run it again, or try another model")
    return SoulSuggestion(current, proposed, diff(current, proposed), reasoner.model)


def save(home: Path, text: str) -> Path:
    """Write ``text`` as the soul summary (``soul.md`` in the home, sealed for an encrypted
    memory), atomically, private."""
    # lazy: the store's file helpers load only when save runs, off the start-up path
    from ..store import soul_file
    from ..store.keycard import home_files_key

    try:
        return soul_file.write(home, text, home_files_key(home))
    except OSError as exc:
        raise StorageError(
            f"cannot write the soul summary in {home}: {exc.strerror or exc}"
        ) from exc
