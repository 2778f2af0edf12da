"""Citation policing: grounding, the spec's grading table, and tail repairs."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sadie_tui.engine.reply.citations import (
    SUPPORT_LABELS,
    Citation,
    PolicedCitations,
    grade,
    normalise,
    parse_tail,
    police,
)

EP1 = "3f7f7a68-0b1c-4d2e-9f00-1234567890ab"
EP2 = "9a1b2c3d-4e5f-4a6b-8c7d-0e1f2a3b4c5d"
EP3 = "9a1b2c3d-ffff-4a6b-8c7d-0e1f2a3b4c5d"  # shares an 8-hex prefix with EP2
TEXT1 = "Shipped the auth refactor this week.\nFelt slower than it should have been."
SHOWN = {
    EP1: [TEXT1],
    EP2: ["Walked to the harbour with Clara.", "Attached: the billing spreadsheet."],
    EP3: ["Dentist on Tuesday."],
}


def tail_of(*entries: dict) -> str:
    return json.dumps(list(entries))


def one(entry: dict, shown=SHOWN) -> PolicedCitations:
    return police(tail_of(entry), shown)


# -- the spec's table ------------------------------------------------------------


@pytest.mark.parametrize(
    ("claimed", "quote", "final", "shown"),
    [
        ("verbatim", "Felt slower than it should have been", "verbatim", None),
        ("verbatim", "It took forever", "paraphrase", None),
        # Found with case folded: shown as the note writes it.
        ("paraphrase", "shipped the auth refactor", "verbatim", "Shipped the auth refactor"),
        ("paraphrase", "the refactor went slowly", "paraphrase", None),
        ("inference", "you were frustrated", "inference", None),
        ("inference", "Felt slower than it should have been", "inference", None),
    ],
)
def test_grading_table(claimed, quote, final, shown):
    assert grade(claimed, quote, [TEXT1]) == final
    result = one({"episode": EP1, "quote": quote, "support": claimed})
    assert result.citations == (Citation(EP1, shown or quote, final, claimed),)
    assert result.dropped == () and result.parse_error is None


def test_support_labels():
    assert SUPPORT_LABELS == ("verbatim", "paraphrase", "inference")


@pytest.mark.parametrize("claimed", [None, "", "strong", "VERBATIM-ish", 3])
def test_unknown_or_missing_label_is_a_paraphrase_claim(claimed):
    found = {"episode": EP1, "quote": "auth refactor", "support": claimed}
    missing = {"episode": EP1, "quote": "no such words", "support": claimed}
    for entry, final in ((found, "verbatim"), (missing, "paraphrase")):
        if claimed is None:
            entry = {k: v for k, v in entry.items() if k != "support"}
        [citation] = one(entry).citations
        assert citation.support == final


def test_label_case_and_spacing_ignored():
    [c] = one({"episode": EP1, "quote": "anything at all", "support": " Inference "}).citations
    assert c.support == "inference" and c.claimed == "inference"


def test_empty_quote_is_never_found_and_grounds_nothing():
    assert grade("verbatim", "", [TEXT1]) == "paraphrase"
    assert grade("verbatim", "  “…”  ", [TEXT1]) == "paraphrase"
    # An empty quote is no evidence: the citation is dropped, not kept as a paraphrase.
    result = one({"episode": EP1, "support": "verbatim"})
    assert result.citations == () and result.dropped[0]["reason"] == "empty quote"


def test_quote_found_in_any_text_of_the_episode():
    [c] = one({"episode": EP2, "quote": "billing spreadsheet", "support": "paraphrase"}).citations
    assert c.support == "verbatim"


def test_quote_from_another_episode_is_not_verbatim():
    [c] = one({"episode": EP2, "quote": "auth refactor", "support": "verbatim"}).citations
    assert c.support == "paraphrase"


def test_whitespace_and_case_differences_still_verbatim():
    quote = "  FELT   slower\nthan it\tshould  "
    assert grade("verbatim", quote, [TEXT1]) == "verbatim"
    assert grade("verbatim", "week. felt slower", [TEXT1]) == "verbatim"  # across the line


@pytest.mark.parametrize(
    "quote",
    [
        '"Felt slower than it should have been."',
        "'Felt slower'",
        "“Felt slower”",
        "\u2018Felt slower\u2019",
        "...Felt slower than",
        "…felt slower…",
        '"...Felt slower..."',
    ],
)
def test_surrounding_quotes_and_ellipses_are_stripped(quote):
    assert grade("verbatim", quote, [TEXT1]) == "verbatim"
    [c] = one({"episode": EP1, "quote": quote, "support": "verbatim"}).citations
    assert c.support == "verbatim"
    assert not c.quote.startswith(('"', "'", "\u201c", "\u2018", ".", "\u2026"))


def test_elided_middle_is_not_verbatim():
    assert grade("verbatim", "Felt slower ... been", [TEXT1]) == "paraphrase"


def test_normalise():
    assert normalise("  A\n\tB   c ") == "a b c"
    assert normalise("Straße") == "strasse"
    assert normalise("") == ""


# -- grounding --------------------------------------------------------------------


def test_fabricated_episode_dropped():
    entry = {"episode": "00000000-0000-4000-8000-000000000000", "quote": "x", "support": "verbatim"}
    result = one(entry)
    assert result.citations == ()
    assert result.dropped == ({**entry, "reason": "unknown episode"},)
    assert result.parse_error is None


@pytest.mark.parametrize(
    "cited",
    [
        EP1.upper(),
        f"  {EP1}  ",
        "{" + EP1 + "}",
        f"episode {EP1}",
        f"Episode: {EP1}",
        "3f7f7a68",
        "3F7F7A68-0b1c",
        "3f7f7a68-...",
        "3f7f7a68…",
        EP1.replace("-", ""),
    ],
)
def test_id_variants_resolve_to_the_shown_id(cited):
    [c] = one({"episode": cited, "quote": "auth refactor", "support": "verbatim"}).citations
    assert c.episode_id == EP1
    assert c.support == "verbatim"


@pytest.mark.parametrize(
    ("cited", "reason"),
    [
        ("9a1b2c3d", "ambiguous episode"),  # prefix of EP2 and EP3
        ("3f7f7a6", "unknown episode"),  # fewer than 8 hex digits
        ("3f7f", "unknown episode"),
        ("3f7f7a68-0b1c-4d2e-9f00-1234567890ac", "unknown episode"),
        ("episode", "unknown episode"),
        ("", "unknown episode"),
        ("Warden retro", "unknown episode"),
    ],
)
def test_unresolvable_ids_dropped(cited, reason):
    result = one({"episode": cited, "quote": "x", "support": "verbatim"})
    assert result.citations == ()
    assert [d["reason"] for d in result.dropped] == [reason]


def test_longer_prefix_disambiguates():
    [c] = one({"episode": "9a1b2c3d-4e", "quote": "Clara", "support": "verbatim"}).citations
    assert c.episode_id == EP2


def test_shown_keys_are_matched_case_insensitively():
    shown = {EP1.upper(): [TEXT1]}
    [c] = police(tail_of({"episode": EP1, "quote": "auth", "support": "verbatim"}), shown).citations
    assert c.episode_id == EP1.upper()


def test_nothing_shown_drops_everything():
    result = police(tail_of({"episode": EP1, "quote": "auth", "support": "verbatim"}), {})
    assert result.citations == () and len(result.dropped) == 1


# -- entries ------------------------------------------------------------------------


def test_malformed_entries_dropped_others_kept():
    tail = json.dumps(
        [
            {"quote": "no episode"},
            {"episode": 42, "quote": "x"},
            {"episode": EP1, "quote": ["not", "a", "string"]},
            "just a string",
            7,
            {"episode": EP1, "quote": "auth refactor", "support": "verbatim"},
        ]
    )
    result = police(tail, SHOWN)
    assert [c.episode_id for c in result.citations] == [EP1]
    assert [d["reason"] for d in result.dropped] == ["malformed entry"] * 5
    assert result.dropped[3] == {"entry": "just a string", "reason": "malformed entry"}
    assert result.parse_error is None


def test_null_quote_is_an_empty_quote():
    result = one({"episode": EP1, "quote": None, "support": "inference"})
    assert result.citations == () and result.dropped[0]["reason"] == "empty quote"


def test_duplicates_collapse_to_one():
    tail = tail_of(
        {"episode": EP1, "quote": "Felt slower", "support": "inference"},
        {"episode": EP1, "quote": "  felt   SLOWER ", "support": "verbatim"},
        {"episode": EP1.upper(), "quote": "“Felt slower”", "support": "paraphrase"},
        {"episode": EP2, "quote": "Felt slower", "support": "inference"},
    )
    result = police(tail, SHOWN)
    assert [(c.episode_id, c.support) for c in result.citations] == [
        (EP1, "verbatim"),  # the strongest label of the duplicates, first position
        (EP2, "inference"),
    ]
    assert [d["reason"] for d in result.dropped] == ["duplicate", "duplicate"]


def test_episode_id_key_accepted():
    [c] = police(json.dumps([{"episode_id": EP1, "quote": "auth"}]), SHOWN).citations
    assert c.episode_id == EP1 and c.support == "verbatim" and c.claimed == ""


# -- parsing and repairs ------------------------------------------------------------

GOOD = f'[{{"episode": "{EP1}", "quote": "auth refactor", "support": "verbatim"}}]'


def good_result(tail: str) -> None:
    result = police(tail, SHOWN)
    assert result.parse_error is None, result.parse_error
    assert [(c.episode_id, c.quote, c.support) for c in result.citations] == [
        (EP1, "auth refactor", "verbatim")
    ]


@pytest.mark.parametrize(
    "tail",
    [
        GOOD,
        f"\n{GOOD}\n",
        f"```json\n{GOOD}\n```",
        f"```\n{GOOD}\n```",
        f"\n```json\n{GOOD}\n```\nHope this helps!",
        f"```json\n{GOOD}",  # fence never closed
        f"Here are the citations: {GOOD}",
        f": {GOOD}",
        f"{GOOD}\nThese support the answer.",
        GOOD.replace('"', "'"),
        GOOD.replace("}]", "},]"),
        GOOD.replace('"verbatim"}', '"verbatim",}'),
        GOOD[1:-1],  # a single object
        GOOD.replace('"episode"', '"episode_id"'),
        "\n".join([":", "```json", GOOD.replace('"', "'").replace("}]", "} ,\n]"), "```"]),
        f'{{"citations": {GOOD}}}',
        "{'citations': " + GOOD.replace('"', "'").replace("}]", "},],") + "}",
    ],
)
def test_repairs(tail):
    good_result(tail)


def test_single_quoted_strings_with_inner_double_quotes():
    tail = f"[{{'episode': '{EP1}', 'quote': 'the \"auth\" refactor', 'support': 'paraphrase'}}]"
    [c] = police(tail, SHOWN).citations
    assert c.quote == 'the "auth" refactor' and c.support == "paraphrase"


def test_raw_newline_inside_a_string_is_accepted():
    tail = f'[{{"episode": "{EP1}", "quote": "this week.\nFelt slower", "support": "verbatim"}}]'
    [c] = police(tail, SHOWN).citations
    assert c.support == "verbatim"


def test_truncated_json_keeps_complete_objects():
    complete = f'{{"episode": "{EP1}", "quote": "auth refactor", "support": "verbatim"}}'
    cut = f'{{"episode": "{EP2}", "quote": "Walked to the har'
    result = police(f"[{complete}, {cut}", SHOWN)
    assert result.parse_error is None
    assert [c.episode_id for c in result.citations] == [EP1]


def test_truncated_with_nested_objects_and_brackets_in_strings():
    complete = f'{{"episode": "{EP1}", "quote": "auth [sic] }} refactor", "meta": {{"a": 1}}}}'
    result = police(f'[{complete}, {{"episode": ', SHOWN)
    assert [c.quote for c in result.citations] == ["auth [sic] } refactor"]


def test_truncated_before_any_object_completes():
    result = police(f'[{{"episode": "{EP1}", "quote": "auth', SHOWN)
    assert result.citations == ()
    assert result.parse_error


@pytest.mark.parametrize(
    "tail", ["none", "N/A", "I could not find any sources.", "[[[[", "{{{", "}{][", "@@"]
)
def test_garbage_sets_parse_error(tail):
    result = police(tail, SHOWN)
    assert result.citations == () and result.parse_error
    entries, error = parse_tail(tail)
    assert entries == [] and error


@pytest.mark.parametrize("tail", ['"just a string"', "42", "null", "true"])
def test_non_list_json_sets_parse_error(tail):
    result = police(tail, SHOWN)
    assert result.citations == () and result.parse_error


@pytest.mark.parametrize("tail", ["", "   \n  ", "[]", "\n[]\n", "```json\n[]\n```"])
def test_empty_tail_no_citations_no_error(tail):
    assert police(tail, SHOWN) == PolicedCitations((), (), None)


def test_parse_tail_returns_dict_entries():
    entries, error = parse_tail(f"```json\n[{{'episode_id': '{EP1}', 'quote': 'x'}}, 3,]\n```")
    assert error is None
    assert entries == [{"episode_id": EP1, "quote": "x"}]


def test_deeply_nested_json_does_not_raise():
    result = police("[" * 100_000, SHOWN)
    assert result.citations == () and result.parse_error


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from([*"[]{}\"',:\\ \nabc9-", EP1, "episode", "```"]), max_size=60).map(
        "".join
    )
)
def test_never_raises(tail):
    result = police(tail, SHOWN)
    assert isinstance(result, PolicedCitations)
    for c in result.citations:
        assert c.episode_id in SHOWN and c.support in SUPPORT_LABELS


# -- hypothesis: grading ignores spacing and case -------------------------------------

WORD = st.text(alphabet="abcdefgXYZéßİ", min_size=1, max_size=8)
SPACE = st.text(alphabet=" \t\n\r", min_size=1, max_size=3)


@st.composite
def respaced(draw, words):
    """The words joined by arbitrary whitespace, with arbitrary case changes."""
    out = [draw(st.text(alphabet=" \t\n", max_size=2))]
    for i, word in enumerate(words):
        if i:
            out.append(draw(SPACE))
        out.append(draw(st.sampled_from([word, word.upper(), word.lower(), word.swapcase()])))
    out.append(draw(st.text(alphabet=" \t\n", max_size=2)))
    return "".join(out)


@settings(max_examples=300, deadline=None)
@given(data=st.data(), words=st.lists(WORD, min_size=1, max_size=12))
def test_grading_invariant_under_respacing_and_case(data, words):
    text = " ".join(words)
    start = data.draw(st.integers(0, len(words) - 1))
    end = data.draw(st.integers(start + 1, len(words)))
    quote = " ".join(words[start:end])
    other = " ".join(data.draw(st.lists(WORD, min_size=1, max_size=4)))
    texts = [data.draw(respaced(words))]
    for claimed in ("verbatim", "paraphrase", "inference", "bogus"):
        for q in (quote, other):
            expected = grade(claimed, q, texts)
            assert grade(claimed, data.draw(respaced(q.split(" "))), texts) == expected
    assert grade("verbatim", data.draw(respaced(words[start:end])), [text]) == "verbatim"
    assert grade("paraphrase", quote, [text]) == "verbatim"
