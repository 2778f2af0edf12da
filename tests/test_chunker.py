"""The chunker: at most 1600 characters, paragraph → sentence → word boundaries, never empty."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from sadie_tui.engine.ingest.chunker import MAX_CHARS, chunk_text


def _letters(text: str) -> str:
    """Everything but whitespace, in order: what no split may lose, add or reorder."""
    return "".join(text.split())


def _check(text: str, limit: int = MAX_CHARS) -> list[str]:
    chunks = chunk_text(text, limit)
    assert all(chunks), "an empty chunk"
    assert all(len(c) <= limit for c in chunks), [len(c) for c in chunks]
    assert all(c == c.strip() for c in chunks), "a chunk with leading/trailing whitespace"
    assert _letters("".join(chunks)) == _letters(text)
    assert chunk_text(text, limit) == chunks, "not deterministic"
    return chunks


def test_limit_is_1600() -> None:
    assert MAX_CHARS == 1600


def test_short_text_is_one_chunk_and_empty_text_none() -> None:
    assert chunk_text("Ran 8 km by the river.") == ["Ran 8 km by the river."]
    assert chunk_text("") == []
    assert chunk_text("   \n\n \t  \n") == []


def test_paragraphs_are_packed_and_rejoined_with_a_blank_line() -> None:
    paras = [f"Paragraph {i}. " + "word " * 60 for i in range(12)]  # ~330 chars each
    text = "\n\n".join(p.strip() for p in paras)
    chunks = _check(text)
    assert len(chunks) > 1
    # Every chunk boundary falls between paragraphs: each chunk is whole paragraphs.
    for chunk in chunks:
        for piece in chunk.split("\n\n"):
            assert piece in {p.strip() for p in paras}
    assert "\n\n".join(chunks) == text


def test_a_long_paragraph_splits_at_sentences() -> None:
    sentences = [f"Sentence number {i} is about the long walk by the river." for i in range(60)]
    text = " ".join(sentences)  # one paragraph, ~3400 chars
    chunks = _check(text)
    assert len(chunks) >= 3
    for chunk in chunks:
        assert chunk.startswith("Sentence number")
        assert chunk.endswith(".")


def test_a_long_sentence_splits_at_words() -> None:
    text = " ".join(f"word{i}" for i in range(800))  # no sentence end, ~5500 chars
    chunks = _check(text)
    assert len(chunks) >= 4
    words = {f"word{i}" for i in range(800)}
    for chunk in chunks:
        assert set(chunk.split()) <= words  # no word was cut


def test_a_giant_word_is_hard_cut() -> None:
    giant = "x" * 4000
    chunks = _check(f"before {giant} after")
    assert any(len(c) == MAX_CHARS and set(c) == {"x"} for c in chunks)
    assert chunks[0] == "before"
    assert chunks[-1].endswith("after")


def test_small_limit_edges() -> None:
    assert _check("abcdefgh", 3) == ["abc", "def", "gh"]
    assert _check("a b c d e", 3) == ["a b", "c d", "e"]
    _check("One. Two. Three.\n\nFour five six seven.", 5)


def test_mixed_scripts_and_punctuation() -> None:
    text = ("今日は走った。とても楽しかった！" * 80) + "\n\n" + ("Voilà… c'est fini? Oui! " * 80)
    _check(text)


_text = st.lists(
    st.sampled_from(list("abcdefghij XYZ.,!?…\n\t\r\u00a0é日") + ["\n\n", ". ", "  ", "x" * 700]),
    max_size=3000,
).map("".join)


@settings(max_examples=150, deadline=None)
@given(_text)
def test_property_random_text(text: str) -> None:
    _check(text)


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=3000), st.integers(min_value=1, max_value=400))
def test_property_any_unicode_any_limit(text: str, limit: int) -> None:
    _check(text, limit)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(
            st.text(alphabet="abcdefghijklmnop", min_size=1, max_size=30), min_size=1, max_size=80
        ).map(" ".join),
        min_size=1,
        max_size=20,
    )
)
def test_property_paragraphs_that_fit_are_never_split(paragraphs: list[str]) -> None:
    text = "\n\n".join(paragraphs)
    chunks = _check(text)
    for para in paragraphs:
        if len(para) <= MAX_CHARS:
            assert any(para in chunk.split("\n\n") for chunk in chunks)
