"""The stream filter: thinking stripped, citations diverted, nothing flashes, any cut."""

from __future__ import annotations

import random
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sadie_tui.engine.reply.stream_filter import CITATIONS_MARKER, StreamFilter


@dataclass
class Run:
    outputs: list[str]
    final: str
    visible: str
    tail: str
    saw_thinking: bool
    snapshots: list[str]

    @property
    def shown(self) -> str:
        return "".join(self.outputs) + self.final


def run(text: str, cuts: list[int] | None = None) -> Run:
    points = sorted({c for c in (cuts or []) if 0 < c < len(text)})
    pieces, start = [], 0
    for c in [*points, len(text)]:
        pieces.append(text[start:c])
        start = c
    f = StreamFilter()
    outputs, snapshots = [], []
    for piece in pieces:
        outputs.append(f.feed(piece))
        snapshots.append(f.visible)
    final = f.finish()
    return Run(outputs, final, f.visible, f.tail, f.saw_thinking, snapshots)


def every_cut(text: str) -> list[int]:
    return list(range(1, len(text)))


def check_all_cuts(text: str, visible: str, tail: str) -> None:
    """Uncut, cut at every character, and a few random cuttings all agree."""
    rng = random.Random(text)
    cuttings = [[], every_cut(text)] + [
        rng.sample(range(1, max(2, len(text))), k=min(len(text) // 3, 12)) for _ in range(5)
    ]
    for cuts in cuttings:
        r = run(text, cuts)
        assert r.shown == visible, (cuts, r.outputs)
        assert r.visible == visible
        assert r.tail == tail
        for snap in r.snapshots:
            assert visible.startswith(snap)


# -- explicit examples, one per rule -----------------------------------------


def test_marker_constant():
    assert CITATIONS_MARKER == "@@CITATIONS@@"


def test_plain_text_passes_through():
    check_all_cuts("Hello, world.", "Hello, world.", "")


def test_marker_split_across_pieces_never_flashes():
    r = run("Shipped it.\n@@CITA" + "TIONS@@\n[]", cuts=[len("Shipped it.\n@@CITA")])
    assert r.outputs == ["Shipped it.", ""]
    assert r.shown == "Shipped it."
    assert r.tail == "\n[]"


def test_think_tag_split_across_pieces():
    r = run("Hi <thi" + "nk>secret</think> there", cuts=[len("Hi <thi")])
    assert r.outputs[0] == "Hi"
    assert "<thi" not in "".join(r.outputs)
    assert r.shown == "Hi  there"
    assert r.saw_thinking


def test_think_block_dropped_with_leading_whitespace():
    check_all_cuts("<think>\nLet me check.\n</think>\n\nYou shipped it.", "You shipped it.", "")


def test_unclosed_think_drops_the_rest():
    text = "Before. <think>half-finished reasoning @@CITATIONS@@ [] and more"
    check_all_cuts(text, "Before.", "")
    f = StreamFilter()
    f.feed("Before. <think>half")
    assert f.thinking
    assert f.finish() == ""


def test_thinking_flag_tracks_the_block():
    f = StreamFilter()
    assert not f.thinking and not f.saw_thinking
    f.feed("<think>hm")
    assert f.thinking
    f.feed("m</thi")
    assert f.thinking
    f.feed("nk>ok")
    assert not f.thinking and f.saw_thinking
    assert f.finish() == ""
    assert f.visible == "ok"


def test_lone_closer_dropped_with_following_whitespace():
    check_all_cuts("</think>\n\nThe answer.", "The answer.", "")
    check_all_cuts("Hmm</think>  \n answer", "Hmmanswer", "")
    assert run("</think>\n\nok").saw_thinking


def test_lone_closer_then_marker_line():
    check_all_cuts("Answer</think>\nCITATIONS:\n[1]", "Answer", "\n[1]")


def test_two_think_blocks():
    text = "<think>a</think>One <think>b</think>two."
    check_all_cuts(text, "One two.", "")


def test_less_than_is_visible_at_once():
    r = run("a < b", cuts=[4])
    assert r.outputs == ["a <", " b"]  # "<" then a space cannot start a tag
    r = run("a <", cuts=[2])
    assert r.outputs == ["a", ""]  # a trailing "<" (and space) waits ...
    assert r.final == " <"  # ... and is plain text when the stream ends
    check_all_cuts("a < b, x<y and <br", "a < b, x<y and <br", "")


def test_email_double_at_is_not_a_marker():
    check_all_cuts("Write to email@@home today.", "Write to email@@home today.", "")


def test_marker_at_start_of_reply():
    check_all_cuts('@@CITATIONS@@\n[{"episode": "x"}]', "", '\n[{"episode": "x"}]')


def test_empty_reply():
    r = run("")
    assert r.shown == "" and r.tail == "" and not r.saw_thinking
    f = StreamFilter()
    assert f.feed("") == ""
    assert f.finish() == ""


def test_reply_only_thinking():
    check_all_cuts("<think>just reasoning</think>", "", "")
    check_all_cuts("<think>just reasoning</think>\n\n  ", "", "")
    check_all_cuts("<think>never closed", "", "")


def test_whitespace_before_marker_dropped_inside_preserved():
    text = "Line one.\n\n  Line  two.\n\n\n@@CITATIONS@@ []"
    check_all_cuts(text, "Line one.\n\n  Line  two.", " []")


def test_trailing_whitespace_dropped_at_finish():
    check_all_cuts("Done.\n\n", "Done.", "")


def test_whitespace_around_think_block_kept_when_text_follows():
    check_all_cuts("Sure.<think>x</think>\n\nYou wrote it.", "Sure.\n\nYou wrote it.", "")


@pytest.mark.parametrize(
    ("marker", "tail"),
    [
        ("@@CITATIONS@@", " [1]"),
        ("@@CITATIONS", " [1]"),
        ("@@citations@@", " [1]"),
        ("@@Citations", " [1]"),
        ("CITATIONS@@", " [1]"),
        ("\nCITATIONS:", " [1]"),
        ("\n  CITATIONS:", " [1]"),
        ("\nCITATIONS\n", "[1]"),
        ("\nCITATIONS \t\r\n", "[1]"),
    ],
)
def test_accepted_marker_forms(marker, tail):
    text = f"The answer.{marker}{tail}"
    check_all_cuts(text, "The answer.", tail)


def test_line_consisting_of_citations_at_end_of_stream():
    check_all_cuts("The answer.\nCITATIONS", "The answer.", "")
    check_all_cuts("CITATIONS", "", "")


@pytest.mark.parametrize(
    "text",
    [
        "The CITATIONS: are here",  # not at the start of a line
        "The answer.\nCITATIONS are listed below",
        "The answer.\nCitations: none",  # line forms are uppercase only
        "citations@@ in lowercase",  # CITATIONS@@ is uppercase only
        "A CITATION and CITY",
        "@ home, @@ work, @@cit",
    ],
)
def test_lookalikes_stay_visible(text):
    check_all_cuts(text, text, "")


def test_tail_keeps_everything_after_marker_raw():
    text = "Hi\n@@CITATIONS@@\n<think>x</think> @@CITATIONS@@ [ ]  \n"
    check_all_cuts(text, "Hi", "\n<think>x</think> @@CITATIONS@@ [ ]  \n")


def test_feed_after_finish_is_ignored():
    f = StreamFilter()
    assert f.feed("hello") == "hello"
    assert f.finish() == ""
    assert f.feed(" more") == ""
    assert f.finish() == ""
    assert f.visible == "hello"


def test_common_pieces_are_shown_immediately():
    f = StreamFilter()
    assert f.feed("Hello") == "Hello"
    assert f.feed(" wor") == " wor"
    assert f.feed("ld") == "ld"
    assert f.feed(" <b") == " <b"


# -- property tests over a grammar ---------------------------------------------

# Prose atoms are chosen so that no concatenation of them forms a tag or marker
# (no ">", no "S"/"s"-initial words after "CITATION"), yet they exercise every
# held-back prefix: "<", "</thin", "@", "@@", "@@citation", "C", "CITATION",
# a line starting "CITATIONS …".
LINE_LOOKALIKE = "\nCITATIONS are many"
WORDS = [
    "hello",
    "world",
    "Cat",
    "CITY",
    "CITATION",
    "citation",
    "Clara",
    "thin",
    "/thin",
    "<",
    "< b",
    "a<b",
    "email@@home",
    "@",
    "@@",
    "x@",
    "@@citation",
    "C",
    "I",
    LINE_LOOKALIKE,
    "(1)",
    "naïve",
    "—",
    '"quoted"',
    "[1]",
    "{x}",
    ":",
]
SPACES = [" ", "  ", "\n", "\n\n", "\t", "\r\n"]
THINK_INNER = WORDS + SPACES + ["@@CITATIONS@@", "<think>", "</thin", "CITATIONS:\n"]
MARKERS = [
    ("@@CITATIONS@@", True),
    ("@@CITATIONS", True),
    ("@@citations@@", True),
    ("CITATIONS@@", False),
    ("\nCITATIONS:", False),
    ("\n  CITATIONS:", False),
    ("\nCITATIONS\n", False),
    ("\nCITATIONS \r\n", False),
]
TAILS = [
    "",
    "\n[]",
    ' [{"episode": "3f7f7a68", "quote": "a < b", "support": "verbatim"}]',
    "\n```json\n[{'episode': 'x',}]\n```\n",
    "[<think>not thinking</think> @@CITATIONS@@ CITATIONS:\n]",
]


@st.composite
def replies(draw):
    """(atoms, expected visible, expected tail) for a generated reply."""
    # Expected visible text, built alongside: think blocks vanish, a lone
    # closer takes the whitespace after it, the edges are stripped.
    atoms: list[str] = []
    shown: list[str] = []
    skip = False
    for _ in range(draw(st.integers(0, 25))):
        kind = draw(st.sampled_from(["word", "word", "word", "space", "space", "think", "lone"]))
        if kind == "think":
            inner = "".join(draw(st.lists(st.sampled_from(THINK_INNER), max_size=5)))
            atoms.append(f"<think>{inner}</think>")
            skip = False
            continue
        if kind == "lone":
            atoms.append("</think>")
            skip = True
            continue
        text = draw(st.sampled_from(WORDS if kind == "word" else SPACES))
        if skip and text == LINE_LOOKALIKE:
            # With its line break eaten by a lone closer it would join a
            # preceding "@@" into a real marker.
            text = "hello"
        atoms.append(text)
        if skip:
            text = text.lstrip()
            skip = not text
        shown.append(text)
    visible = "".join(shown).strip()

    raw = "".join(atoms)
    ending = draw(st.sampled_from(["none", "marker", "unclosed"]))
    tail = ""
    if ending == "marker":
        sep = draw(st.sampled_from([" ", "\n", "\n\n", "  \n"]))
        marker, _ = draw(st.sampled_from(MARKERS))
        tail = draw(st.sampled_from(TAILS))
        raw += sep + marker + tail
    elif ending == "unclosed":
        inner = "".join(draw(st.lists(st.sampled_from(THINK_INNER), max_size=6)))
        raw += "<think>" + inner
    return raw, visible, tail


@settings(max_examples=400, deadline=None)
@given(data=st.data(), reply=replies())
def test_any_cutting_gives_the_same_result(data, reply):
    raw, visible, tail = reply
    cuts = data.draw(st.lists(st.integers(0, len(raw)), max_size=40))
    whole = run(raw)
    r = run(raw, cuts)
    # (1) cutting never changes what is shown
    assert r.shown == whole.shown == visible
    assert r.visible == visible
    # (2) the screen only ever grows towards the final text; no fragments
    for snap in r.snapshots:
        assert visible.startswith(snap)
    for out in [*r.outputs, r.final]:
        assert visible.find(out) >= 0
    for fragment in ("<think", "</think", "@@CITATIONS", "CITATIONS@@"):
        assert fragment not in visible
    # (3) the tail is exactly what follows the marker
    assert r.tail == whole.tail == tail


@settings(max_examples=150, deadline=None)
@given(reply=replies())
def test_one_character_at_a_time(reply):
    raw, visible, tail = reply
    r = run(raw, every_cut(raw))
    assert r.shown == visible
    assert r.tail == tail
    for snap in r.snapshots:
        assert visible.startswith(snap)


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet="<>/thinkCITAONS@: \n\tx", max_size=60), data=st.data())
def test_arbitrary_text_is_cut_invariant(text, data):
    cuts = data.draw(st.lists(st.integers(0, len(text)), max_size=30))
    whole, r = run(text), run(text, cuts)
    assert r.shown == whole.shown
    assert r.tail == whole.tail
    assert r.saw_thinking == whole.saw_thinking
    for snap in r.snapshots:
        assert whole.visible.startswith(snap)
