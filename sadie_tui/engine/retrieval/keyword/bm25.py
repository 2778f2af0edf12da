"""Okapi BM25 over chunk tokens with ``bm25s`` (Lucene's variant), plus the best-passage score.

``bm25s`` builds the score matrix; ``Postings`` holds it and scores queries with numpy alone,
so a process that only searches never imports bm25s (which brings scipy: ~25 MB resident and
~0.3 s). ``Bm25.passage_scores`` scores the best two-sentence passage of a text with the
corpus's statistics, so a chunk whose one sentence answers the question is not drowned by its
other fifteen. ``top_rows`` picks the best positive scores of a score vector.
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ...jsonvalue import JSONObject
from .tokens import STOPWORDS, WORD_OR_BREAK, fold, sentences, stem, stems, tokenize

if TYPE_CHECKING:
    import bm25s

K1 = 1.2
B = 0.75
PASSAGE_SENTENCES = 2


# bm25s's file names, so an index saved by either reads the same.
DATA, INDICES, INDPTR = "data.csc.index.npy", "indices.csc.index.npy", "indptr.csc.index.npy"
VOCAB, PARAMS = "vocab.index.json", "params.index.json"


def array_bytes(array: np.ndarray) -> bytes:
    """``array`` in numpy's ``.npy`` format."""
    out = io.BytesIO()
    np.save(out, array, allow_pickle=False)
    return out.getvalue()


def load_array(data: bytes) -> np.ndarray:
    array: np.ndarray = np.load(io.BytesIO(data), allow_pickle=False)
    return array


@dataclass
class Postings:
    """bm25s's precomputed score matrix (CSC: column ``t`` lists the rows holding token ``t``
    and their BM25 weight) with its vocabulary; the query side of ``bm25s.BM25``."""

    vocab_dict: dict[str, int]
    data: np.ndarray  # float32 weight of each (token, row) entry
    indices: np.ndarray  # the row of each entry
    indptr: np.ndarray  # column ``t`` is entries indptr[t]:indptr[t + 1]
    num_docs: int
    params: JSONObject  # bm25s's own (k1, b, method, dtypes, version), kept for its loader

    @classmethod
    def from_bm25s(cls, retriever: bm25s.BM25) -> Postings:
        scores = retriever.scores
        params: JSONObject = {
            "k1": retriever.k1,
            "b": retriever.b,
            "delta": retriever.delta,
            "method": retriever.method,
            "idf_method": retriever.idf_method,
            "dtype": retriever.dtype,
            "int_dtype": retriever.int_dtype,
            "num_docs": int(scores["num_docs"]),
            "backend": retriever.backend,
        }
        return cls(
            dict(retriever.vocab_dict),
            np.asarray(scores["data"]),
            np.asarray(scores["indices"]),
            np.asarray(scores["indptr"]),
            int(scores["num_docs"]),
            params,
        )

    @classmethod
    def load(cls, folder: Path) -> Postings:
        """What ``save`` (or ``bm25s.BM25.save``) wrote in ``folder``."""
        names = (DATA, INDICES, INDPTR, VOCAB, PARAMS)
        return cls.from_files({name: (folder / name).read_bytes() for name in names})

    @classmethod
    def from_files(cls, files: Mapping[str, bytes]) -> Postings:
        """The postings from their files' bytes (a folder's, or a sealed index's)."""
        params = json.loads(files[PARAMS].decode("utf-8"))
        vocab = json.loads(files[VOCAB].decode("utf-8"))
        if not isinstance(params, dict) or not isinstance(vocab, dict):
            raise ValueError("the BM25 parameters or vocabulary are not JSON objects")
        num_docs = params.get("num_docs")
        if isinstance(num_docs, bool) or not isinstance(num_docs, (int, float, str)):
            raise ValueError("the BM25 parameters do not say how many documents there are")
        return cls(
            {str(token): int(i) for token, i in vocab.items()},
            load_array(files[DATA]),
            load_array(files[INDICES]),
            load_array(files[INDPTR]),
            int(num_docs),
            params,
        )

    def save(self, folder: Path) -> None:
        for name, data in self.to_files().items():
            (folder / name).write_bytes(data)

    def to_files(self) -> dict[str, bytes]:
        """The files ``save`` writes, as bytes by name."""
        return {
            DATA: array_bytes(self.data),
            INDICES: array_bytes(self.indices),
            INDPTR: array_bytes(self.indptr),
            VOCAB: json.dumps(self.vocab_dict, ensure_ascii=False).encode("utf-8"),
            PARAMS: json.dumps(self.params, indent=4).encode("utf-8"),
        }

    def get_tokens_ids(self, tokens: Sequence[str]) -> list[int]:
        """The ids of the tokens in the vocabulary, repeats kept (a repeated word counts
        twice, as in bm25s)."""
        return [self.vocab_dict[t] for t in tokens if t in self.vocab_dict]

    def get_scores_from_ids(self, ids: Sequence[int]) -> np.ndarray:
        """The summed weight of the token columns for every row (bm25s's computation)."""
        scores = np.zeros(self.num_docs, dtype=np.float32)
        if not len(ids):
            return scores
        token_ids = np.asarray(ids, dtype=np.int64)
        if int(token_ids.max()) >= len(self.indptr) - 1:
            raise ValueError("a token id is outside the score matrix")
        for start, end in zip(self.indptr[token_ids], self.indptr[token_ids + 1], strict=True):
            np.add.at(scores, self.indices[start:end], self.data[start:end])
        return scores


@dataclass
class Bm25:
    retriever: Postings | None  # None when nothing is indexed
    idf: np.ndarray  # float32[vocabulary], BM25 idf by token id
    passage_length: float  # mean tokens in a passage of PASSAGE_SENTENCES sentences
    size: int  # documents indexed

    def scores(self, tokens: Sequence[str]) -> np.ndarray:
        """BM25 score of every row for the query tokens (zeros when none is indexed)."""
        if self.retriever is None or not tokens:
            return np.zeros(self.size, dtype=np.float32)
        ids = self.retriever.get_tokens_ids(list(tokens))
        if not ids:
            return np.zeros(self.size, dtype=np.float32)
        return np.asarray(self.retriever.get_scores_from_ids(ids), dtype=np.float32)

    def passage_scores(self, texts: Sequence[str], tokens: Sequence[str]) -> np.ndarray:
        """BM25 of each text's best run of PASSAGE_SENTENCES sentences, with corpus idf."""
        out = np.zeros(len(texts), dtype=np.float64)
        if self.retriever is None or not tokens:
            return out
        vocab = self.retriever.vocab_dict
        weights = {t: float(self.idf[vocab[t]]) for t in set(tokens) if t in vocab}
        if weights:
            avg = self.passage_length or 1.0
            for i, text in enumerate(texts):
                out[i] = best_passage(text, weights, avg)
        return out


def build_bm25(texts: Sequence[str]) -> Bm25:
    """The BM25 index of ``texts`` (row ``i`` is text ``i``)."""
    # lazy: bm25s (scipy) loads when an index is built or read, not at start-up
    import bm25s

    n = len(texts)
    corpus = [tokenize(t) for t in texts]
    sentence_count = sum(max(1, len(sentences(t))) for t in texts)
    tokens_total = sum(len(c) for c in corpus)
    per_sentence = tokens_total / sentence_count if sentence_count else 0.0
    retriever = None
    idf = np.zeros(0, np.float32)
    if any(corpus):
        built = bm25s.BM25(k1=K1, b=B, method="lucene")
        built.index(corpus, show_progress=False)
        retriever = Postings.from_bm25s(built)
        idf = _idf(retriever, n)
    return Bm25(retriever, idf, per_sentence * PASSAGE_SENTENCES, n)


def _idf(retriever: Postings, n: int) -> np.ndarray:
    """Lucene idf per token id, from the document frequencies in the score matrix."""
    indptr = np.asarray(retriever.indptr)
    df = np.diff(indptr).astype(np.float64)
    return np.log(1 + (n - df + 0.5) / (df + 0.5)).astype(np.float32)


def best_passage(
    text: str, weights: Mapping[str, float], avg_length: float, span: int = PASSAGE_SENTENCES
) -> float:
    """BM25 (idf from ``weights``) of the best run of ``span`` consecutive sentences.

    One pass over the text's words and sentence breaks (the breaks ``sentences`` splits at);
    sentences without a content word do not count."""
    lengths: list[int] = []
    hits: list[dict[str, int]] = []
    length, bag = 0, {}  # type: tuple[int, dict[str, int]]  # the current sentence's
    known = stems
    for token in WORD_OR_BREAK.findall(fold(text)):
        if token.isspace():
            if length:
                lengths.append(length)
                hits.append(bag)
                length, bag = 0, {}
            continue
        if token in STOPWORDS:
            continue
        length += 1
        word_stem = known.get(token) or stem(token)
        if word_stem in weights:
            bag[word_stem] = bag.get(word_stem, 0) + 1
    if length:
        lengths.append(length)
        hits.append(bag)
    span = max(1, min(span, len(lengths)))
    best = 0.0
    for j in range(len(lengths) - span + 1):
        window = hits[j : j + span]
        if not any(window):
            continue
        counts: dict[str, int] = {}
        for sentence in window:
            for t, c in sentence.items():
                counts[t] = counts.get(t, 0) + c
        norm = K1 * (1 - B + B * sum(lengths[j : j + span]) / avg_length)
        score = sum(weights[t] * c * (K1 + 1) / (c + norm) for t, c in counts.items())
        best = max(best, score)
    return best


def top_rows(
    scores: np.ndarray, limit: int, mask: np.ndarray | None = None
) -> list[tuple[int, float]]:
    """(row, score) of the best ``limit`` positive scores (within ``mask``), best first."""
    if limit <= 0 or scores.size == 0:
        return []
    values = scores if mask is None else np.where(mask, scores, 0.0)
    if values.size > limit:
        part = np.argpartition(-values, limit - 1)[:limit]
    else:
        part = np.arange(values.size)
    part = part[values[part] > 0]
    order = part[np.lexsort((part, -values[part]))]
    return [(int(r), float(values[r])) for r in order]
