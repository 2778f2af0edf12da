"""A search: the chunks retrieval picks for a query, with every channel's score, logged as a
turn (``sadie search``, ``GET /v1/search``, the MCP ``search_memory`` tool)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from ..errors import StorageError
from ..retrieval import retrieve
from ..retrieval.report import Search, search_report
from ..telemetry import record_turn
from .steps import persona_for

if TYPE_CHECKING:
    from ...config import Settings
    from ..memory import Memory


def search(
    memory: Memory, settings: Settings, query: str, persona: str | None, k: int | None
) -> Search:
    """The search's report; on a read-only memory, or when the telemetry write fails, a
    notice says it could not be logged (the search stands)."""
    chosen = persona_for(persona, settings.ask_persona)
    result = retrieve(memory, query, chosen, k=k)
    turn_id, unwritten = None, "the memory is open read-only"
    if not memory.db.read_only:
        try:
            turn_id = record_turn(
                memory.db,
                kind="search",
                query=query,
                model=None,
                persona=chosen.name,
                prompt_version=None,
                grounding=None,
                abstained=None,
                latency_ms=result.elapsed_ms,
                chunks=result.chunks,
            )
        except StorageError as exc:  # the file refused the write: the search stands
            unwritten = exc.message
    report = search_report(result, chosen.name, turn_id)
    if turn_id is None:
        notice = f"this search could not be written to telemetry: {unwritten}"
        report = replace(report, notices=(*report.notices, notice))
    return report
