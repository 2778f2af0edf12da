"""The catalogue of indexed chunks: row order, episodes, dates and episode details.

Row ``i`` is chunk ``chunk_ids[i]``; rows are in episode, then ordinal order, so an episode's
chunks are consecutive and ``episode_starts`` marks where each begins. With it the pipeline
finds a chunk's neighbours, scores whole episodes, tests a time window and labels results
without asking the database.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import numpy as np

from .tokens import tokenize

EPOCH = datetime(1970, 1, 1)


def to_seconds(when: datetime) -> float:
    """Naive datetime as seconds since 1970 (the same reading as DuckDB's ``epoch()``)."""
    return (when - EPOCH).total_seconds()


@dataclass(frozen=True)
class EpisodeInfo:
    """What a result shows of its episode, without a join."""

    episode_id: str
    title: str
    kind: str
    salience: float


_NO_EPISODE = EpisodeInfo("", "", "", 0.5)


@dataclass
class Catalogue:
    chunk_ids: np.ndarray  # int64[n]
    episode: np.ndarray  # int32[n], 0..episodes-1
    when: np.ndarray  # float64[n], the episode's occurred_at in epoch seconds
    # Per episode code: its id, title, kind and salience.
    episode_ids: list[str] = field(default_factory=list)
    titles: list[str] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    salience: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def __post_init__(self) -> None:
        self._order = np.argsort(self.chunk_ids, kind="stable")
        n = len(self.chunk_ids)
        starts = (
            np.flatnonzero(np.r_[True, self.episode[1:] != self.episode[:-1]])
            if n
            else np.zeros(0, dtype=np.int64)
        )
        self.episode_starts = np.asarray(starts, dtype=np.int64)
        self._episodes: list[EpisodeInfo] | None = None  # by episode code, made on first use
        self._title_tokens: dict[int, frozenset[str]] = {}  # by episode code, made on first use

    @property
    def size(self) -> int:
        return len(self.chunk_ids)

    def rows_of(self, ids: Sequence[int] | np.ndarray) -> np.ndarray:
        """Row of each chunk id (-1 for ids not in the index)."""
        ids_arr = np.asarray(ids, dtype=np.int64)
        if self.size == 0 or ids_arr.size == 0:
            return np.full(ids_arr.shape, -1, dtype=np.int64)
        pos = np.searchsorted(self.chunk_ids, ids_arr, sorter=self._order)
        pos = np.minimum(pos, self.size - 1)
        rows = self._order[pos]
        return np.where(self.chunk_ids[rows] == ids_arr, rows, -1)

    def neighbour_rows(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(next row, previous row) in the same episode, -1 where there is none."""
        rows = np.asarray(rows, dtype=np.int64)
        nxt = rows + 1
        prv = rows - 1
        ok_next = (rows >= 0) & (nxt < self.size)
        ok_next[ok_next] = self.episode[nxt[ok_next]] == self.episode[rows[ok_next]]
        ok_prev = (rows >= 0) & (prv >= 0)
        ok_prev[ok_prev] = self.episode[prv[ok_prev]] == self.episode[rows[ok_prev]]
        return np.where(ok_next, nxt, -1), np.where(ok_prev, prv, -1)

    def occurred_at(self, row: int) -> datetime:
        return EPOCH + timedelta(seconds=float(self.when[row]))

    def episode_of(self, row: int) -> EpisodeInfo:
        code = int(self.episode[row])
        if code >= len(self.episode_ids):
            return _NO_EPISODE
        if self._episodes is None:
            details = zip(
                self.episode_ids, self.titles, self.kinds, self.salience.tolist(), strict=True
            )
            self._episodes = [EpisodeInfo(*d) for d in details]
        return self._episodes[code]

    def title_tokens(self, code: int) -> frozenset[str]:
        """The tokens of episode ``code``'s title (``tokenize``), made once each."""
        found = self._title_tokens.get(code)
        if found is None:
            title = self.titles[code] if code < len(self.titles) else ""
            found = self._title_tokens[code] = frozenset(tokenize(title))
        return found

    def episode_max(self, scores: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        """Each row's best score within its episode (how much the whole episode is about it):
        of every row, or of ``rows`` only (then only their episodes are looked at)."""
        if self.size == 0:
            return np.zeros(0, dtype=np.float32)
        if rows is None:
            return np.asarray(np.maximum.reduceat(scores, self.episode_starts)[self.episode])
        episodes, where = np.unique(self.episode[rows], return_inverse=True)
        ends = np.r_[self.episode_starts[1:], self.size]
        best = [scores[self.episode_starts[e] : ends[e]].max() for e in episodes]
        return np.asarray(best, dtype=scores.dtype)[where]


def build_catalogue(
    chunk_ids: np.ndarray,
    episodes: Iterable[str] | None = None,
    when: Iterable[float] | None = None,
    info: Mapping[str, tuple[str, str, float]] | None = None,
) -> Catalogue:
    """A catalogue of chunks given in episode/ordinal order (one episode each when not given);
    ``info`` maps an episode id to its (title, kind, salience)."""
    n = len(chunk_ids)
    episode_keys = list(episodes) if episodes is not None else [str(i) for i in range(n)]
    codes: dict[str, int] = {}
    episode = np.array([codes.setdefault(e, len(codes)) for e in episode_keys], dtype=np.int32)
    times = np.fromiter(when, dtype=np.float64) if when is not None else np.zeros(n)
    details = [(info or {}).get(e, ("", "", 0.5)) for e in codes]
    return Catalogue(
        chunk_ids,
        episode,
        times,
        episode_ids=list(codes),
        titles=[d[0] for d in details],
        kinds=[d[1] for d in details],
        salience=np.array([d[2] for d in details], dtype=np.float64),
    )
