"""Helpers of the engine-level turn tests: run a chat turn to its list of events, and find
an ingested episode's id and first chunk by title."""

from __future__ import annotations

import asyncio
from typing import Any

from sadie_tui.engine.requests import ChatTurn


def run_chat(comp: Any, message: str, **kw: Any) -> list:
    async def go() -> list:
        return [e async for e in comp.chat(ChatTurn(message, **kw))]

    return asyncio.run(go())


def episode_of(memory: Any, title: str) -> tuple[str, str]:
    row = memory.db.fetchone(
        "SELECT e.id::VARCHAR, c.text FROM episodes e JOIN chunks c ON c.episode_id = e.id"
        " WHERE e.title = ? ORDER BY c.ordinal LIMIT 1",
        [title],
    )
    assert row, title
    return row[0], row[1]
