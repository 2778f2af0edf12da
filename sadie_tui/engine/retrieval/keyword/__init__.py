"""The keyword channel: Okapi BM25 over chunk text, persisted beside the database.

``tokens`` (words, stop words, stems), ``bm25`` (scores and the best-passage score),
``catalogue`` (rows, episodes, dates), ``index`` (the three together with the embeddings copy)
``persist`` (on disk, cached, rebuilt when stale) and ``manifest`` (a damaged index found).
The names below are the package's API.
"""

from .bm25 import K1, PASSAGE_SENTENCES, B, Bm25, best_passage, top_rows
from .catalogue import EPOCH, Catalogue, EpisodeInfo, to_seconds
from .index import KeywordIndex, build_index
from .persist import (
    FORMAT,
    INDEX_DIR,
    forget_cached,
    index_dir,
    keep_current,
    keyword_index,
    rebuild_keyword_index,
    take_notices,
)
from .tokens import QUESTION_FRAME, STOPWORDS, query_concepts, query_tokens, sentences, tokenize

__all__ = [
    "B",
    "EPOCH",
    "FORMAT",
    "INDEX_DIR",
    "K1",
    "PASSAGE_SENTENCES",
    "QUESTION_FRAME",
    "STOPWORDS",
    "Bm25",
    "Catalogue",
    "EpisodeInfo",
    "KeywordIndex",
    "best_passage",
    "build_index",
    "forget_cached",
    "index_dir",
    "keep_current",
    "keyword_index",
    "query_concepts",
    "query_tokens",
    "rebuild_keyword_index",
    "sentences",
    "take_notices",
    "to_seconds",
    "tokenize",
    "top_rows",
]
