"""Conversation titles from the first message."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sadie_tui.engine.titles import DEFAULT_TITLE, make_title


def test_short_message_unchanged():
    assert make_title("How was my week?") == "How was my week?"


def test_whitespace_collapsed():
    assert make_title("  what did I\n\nwrite\tabout   Ana?  ") == "what did I write about Ana?"


def test_control_characters_removed():
    assert make_title("hello\x00 wor\x1bld\x07") == "hello world"
    assert make_title("abc\u202edef") == "abcdef"  # bidi override


@pytest.mark.parametrize("text", ["", "   ", "\n\t \r\n", "\x00\x01", None])
def test_empty_gives_default(text):
    assert make_title(text) == DEFAULT_TITLE  # type: ignore[arg-type]


def test_cut_at_word_boundary_with_ellipsis():
    text = "Tell me everything I wrote about the garden project during the spring of last year"
    title = make_title(text)
    assert title == "Tell me everything I wrote about the garden project during…"
    assert len(title) <= 60


def test_exact_limit_not_cut():
    text = "a" * 59 + "b"
    assert make_title(text) == text


def test_word_ending_exactly_at_budget_is_kept():
    # budget is 9 characters ("…" takes the tenth); "abcd efgh" is exactly 9.
    assert make_title("abcd efgh ijkl", limit=10) == "abcd efgh…"


def test_trailing_punctuation_dropped_before_ellipsis():
    assert make_title("first, second: third fourth", limit=15) == "first, second…"
    assert make_title("one two, three four five", limit=12) == "one two…"


def test_first_word_too_long_is_hard_cut():
    title = make_title("x" * 100, limit=20)
    assert title == "x" * 19 + "…"
    assert make_title("supercalifragilistic expialidocious", limit=10) == "supercali…"


def test_cjk_without_spaces_is_hard_cut():
    text = "我昨天在公园里散步然后去了图书馆看书" * 3
    title = make_title(text, limit=10)
    assert title == text[:9] + "…"


def test_cjk_short_unchanged():
    assert make_title("今天的日记") == "今天的日记"


def test_emoji_not_split():
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"  # one glyph, five code points
    title = make_title("ab" + family + "cdefgh", limit=5)
    assert len(title) <= 5
    assert not title[:-1].endswith("\u200d")
    assert title == "ab…"


def test_combining_mark_not_split():
    text = "cafe\u0301" + "x" * 10  # "café" with a combining acute accent
    assert make_title(text, limit=5) == "caf…"


def test_emoji_short_unchanged():
    assert make_title("🎉 big news 🎉") == "🎉 big news 🎉"


def test_tiny_limits():
    assert make_title("hello world", limit=1) == "…"
    assert make_title("hello world", limit=2) == "h…"
    assert make_title("", limit=5) == "New…"
    with pytest.raises(ValueError):
        make_title("x", limit=0)


def test_only_punctuation_before_cut():
    title = make_title("!!!!!!!!!!!!!!!!!!!!", limit=8)
    assert title == "!!!!!!!…"


@given(st.text(), st.integers(min_value=1, max_value=120))
def test_properties(text, limit):
    title = make_title(text, limit)
    assert 0 < len(title) <= limit
    assert title == title.strip()
    assert not title[-1].isspace()
    assert "\n" not in title and "\t" not in title
    assert not any(ord(ch) < 32 or ch == "\x7f" for ch in title)


_VISIBLE = st.characters(whitelist_categories=("L", "N", "P", "S", "Zs"))


@given(st.text(_VISIBLE, min_size=1, max_size=60), st.sampled_from(["", " ", "\n", "\t  "]))
def test_short_messages_unchanged_after_collapse(text, pad):
    collapsed = " ".join(text.split())
    if collapsed:
        assert make_title(pad + text.replace(" ", " " + pad) + pad) == collapsed


@given(
    st.lists(
        st.sampled_from(["alpha", "be", "gamma,", "δέλτα", "日本語", "🎉", "x" * 30]),
        min_size=1,
        max_size=30,
    ),
    st.integers(min_value=2, max_value=80),
)
def test_cut_is_a_prefix_at_a_word_boundary(words, limit):
    text = " ".join(words)
    title = make_title(text, limit)
    assert len(title) <= limit
    if len(text) <= limit:
        assert title == text
    else:
        assert title.endswith("…")
        head = title[:-1]
        assert text.startswith(head)
