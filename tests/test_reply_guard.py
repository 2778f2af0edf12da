"""The reply guard: echoed headers and instructions never shown, loops cut after the second
copy, a length cap — whatever the cut points of the stream. The texts are what real small
models (SmolLM2-135M, Gemma-3-270M) wrote on the demo memory."""

from __future__ import annotations

import asyncio

from hypothesis import given, settings
from hypothesis import strategies as st

from sadie_tui.engine.prompt import CITATION_RULES, OPINION_RULE, STANDING
from sadie_tui.engine.reasoners.base import Piece, paced
from sadie_tui.engine.reply.guard import ReplyGuard

INSTRUCTIONS = [STANDING, CITATION_RULES, OPINION_RULE]
HEADER = "episode 3f7f7a68-0b1c-4d2e-9f00-1234567890ab (2026-03-14) Warden retro"


def run(text: str, cuts: list[int] | None = None, **kw) -> tuple[str, ReplyGuard]:
    guard = ReplyGuard(INSTRUCTIONS, **kw)
    pieces = []
    at = 0
    for cut in sorted(cuts or range(3, len(text), 3)):
        pieces.append(text[at:cut])
        at = cut
    pieces.append(text[at:])
    out = "".join(guard.feed(p) for p in pieces)
    if not guard.stopped:
        out += guard.finish()
    return out, guard


# Gemma-3-270M (base model) on "When was my niece Ife born?": the briefing's header lines
# and the standing instructions came back, then the answer.
GEMMA_ECHO = (
    f"{HEADER}\n"
    "Shipped the auth refactor this week.\n"
    "If you want to add your own view beyond what the notes say, put it after a line reading "
    "OPINION: (before the citations marker), so it stays separate from what the notes support.\n"
    "After your reply, on a line of its own, write @@CITATIONS@@ and then a JSON array of the "
    "excerpts your reply rests on, like this:\n"
    "Ife was born in July."
)


def test_echoed_header_and_instructions_are_dropped():
    out, guard = run(GEMMA_ECHO)
    assert HEADER not in out
    assert "OPINION" not in out and "JSON array" not in out
    assert out == "Shipped the auth refactor this week.\nIfe was born in July."
    assert HEADER in guard.dropped[0] and "JSON array" in guard.dropped[-1]


def test_a_line_of_short_instruction_sentences_is_an_echo_whole_or_from_any_sentence():
    # Gemma-3-270M on "Who is Priya?" with the friend persona wrote its voice line back:
    # sentences each shorter than MIN_ECHO, so none of them counted as an echo alone.
    voice = "Be warm and brief. Ask one question back. No lists unless asked."
    for echo in (voice, "ask one question back. No lists  unless asked."):
        guard = ReplyGuard([*INSTRUCTIONS, voice])
        out = "".join(guard.feed(p) for p in (echo[:9], echo[9:] + "\n", "Priya is your sister."))
        out += guard.finish()
        assert out == "Priya is your sister.", echo
        assert guard.dropped == [echo]
    # its sentences alone are ordinary text
    for text in ("Be warm and brief.", "Ask one question back.", "No lists unless asked."):
        guard = ReplyGuard([*INSTRUCTIONS, voice])
        assert guard.feed(text + " Then more.") + guard.finish() == text + " Then more."


def test_the_briefings_headings_are_echoes_and_a_short_start_ends_an_echoing_reply():
    from sadie_tui.engine.prompt import build_briefing

    briefing = build_briefing(
        message="Who is Priya?", excerpts=[], soul="Maya is 34.", voice="Talk like a close friend."
    )
    # Gemma-3-270M wrote the soul heading back, then the summary under it
    guard = ReplyGuard(briefing.instructions())
    out = guard.feed("Who this person is (their soul summary):\nMaya is 34.") + guard.finish()
    assert out == "Maya is 34."
    # ... and after a run of echoes the token cap ended it inside another: that start goes
    guard = ReplyGuard(briefing.instructions())
    echoes = "Never invent events, people, dates or quotes.\n"
    out = guard.feed(echoes * 3 + "Talk like a close") + guard.finish()
    assert out == "" and len(guard.dropped) == 4
    # with no echo before it, the same few words are the reply's own
    guard = ReplyGuard(briefing.instructions())
    assert guard.feed("Talk like a close") + guard.finish() == "Talk like a close"


def test_a_header_line_anywhere_is_dropped_whole():
    out, _ = run(f"You shipped it.\n{HEADER}\nAnd then you rested.")
    assert out == "You shipped it.\nAnd then you rested."
    out, _ = run(f"You shipped it.\n> {HEADER}\nAnd then you rested.")
    assert "3f7f7a68" not in out


def test_text_that_only_starts_like_an_echo_is_shown():
    for text in (
        "Episodes like this one matter to you.",
        "epic run today, you wrote.",
        "You are doing well: the notes show steady training.",
        "If you want, we can look at March next.",
        "After your reply to Kofi, you felt better.",
    ):
        out, guard = run(text)
        assert out == text, text
        assert not guard.dropped


# SmolLM2-135M looped on "How have I been sleeping lately?" until it ran out of tokens.
SMOL_LOOP = "You have been sleeping about five hours a night, which is not enough for you.\n" * 9


def test_a_loop_is_cut_after_the_second_copy():
    out, guard = run(SMOL_LOOP)
    assert out.count("five hours a night") == 2
    assert guard.stopped == "repetition"


def test_a_sentence_loop_within_one_line_is_cut():
    sentence = "Your knee hurt after the long run by the river. "
    out, guard = run("It was hard. " + sentence * 5)
    assert out.count("Your knee hurt") == 2 and guard.stopped == "repetition"


def test_short_repeats_are_not_a_loop():
    text = "Yes.\nYes.\nYes.\nYes.\nYou ran."
    out, guard = run(text)
    assert out == text and guard.stopped is None


def test_the_length_cap_stops_on_a_word_boundary():
    text = " ".join(f"word{i}" for i in range(200))
    out, guard = run(text, max_chars=100)
    assert len(out) <= 100 and guard.stopped == "length"
    assert text.startswith(out) and not out.endswith("wor")


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=len(GEMMA_ECHO) - 1), max_size=40))
def test_cut_points_never_change_the_result(cuts):
    assert run(GEMMA_ECHO, sorted(set(cuts)))[0] == run(GEMMA_ECHO)[0]


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab .\nEepisode1-")), max_size=300), st.data())
def test_ordinary_text_comes_out_whole(text, data):
    """With no instruction, header or loop in it, the guard shows all of the text (less
    whitespace at its edges), whatever the cut points."""
    cuts = data.draw(st.lists(st.integers(min_value=1, max_value=max(1, len(text))), max_size=20))
    out, guard = run(text, sorted(set(cuts)))
    if guard.stopped is None and not guard.dropped:
        assert out.strip() == text.strip()
        assert text.lstrip().startswith(out)


def test_a_long_whitespace_run_is_linear():
    # Holding is bounded: a 60k run of " \n" must not make the guard quadratic.
    guard = ReplyGuard(INSTRUCTIONS)
    out = "".join(guard.feed(" \n") for _ in range(30_000)) + guard.feed("Done.") + guard.finish()
    assert out.strip() == "Done."


def test_paced_ticks_while_the_first_piece_is_slow():
    async def slow():
        await asyncio.sleep(0.25)
        yield Piece("content", "hi")

    async def go():
        return [p async for p in paced(slow(), 0.05)]

    got = asyncio.run(go())
    assert got[-1] == Piece("content", "hi")
    assert got.count(None) >= 1


# Gemma-3-270M on "How long did the marathon take me?" (the bench): a looped record line, then
# the briefing's header echoed with one hex digit of the id missing.
GEMMA_MANGLED = (
    "It was a bit of a blur, but it was definitely more difficult.\n\n"
    "Run the marathon, 1:03:47. Half split 1:49:25.\n\n"
    "episode e1b7d7e7-6c69-5a1f-8c56-544d6f15b06 (2026-07-17) Lisbon Marathon — official result\n"
    "You finished."
)


def test_a_header_with_a_mangled_id_is_dropped_too():
    out, guard = run(GEMMA_MANGLED)
    assert "e1b7d7e7" not in out and "official result" not in out
    assert out.endswith("You finished.")
    # Gemma-3-270M again, a digit short in the first group this time
    out, _ = run(
        "Priya is more confident than she thinks.\n\n"
        "episode 153947a-b2e0-5f6c-8d9f-3a6e2284980b (2026-06-08) P.A. Priya is more confident\n"
        "You finished."
    )
    assert out == "Priya is more confident than she thinks.\n\nYou finished."
    for text in (
        "episode 12 of the podcast was good.",
        "Episode three: the return.",
        "Episode decade-by-decade, you wrote.",
    ):
        assert run(text)[0] == text
