"""Grounding that holds when the model ignores the format: the citation pass (structured
outputs, an enum of the shown ids), placeholders rejected, a marker-less citation list,
sadie's own sentence matches, unsupported details, and the revision's shared prefix.

Real parts throughout: the ollama client against the project's Ollama-protocol server, a
DuckDB memory, the real embedder."""

from __future__ import annotations

import asyncio
import json

from sadie_tui.config import load_settings
from sadie_tui.engine import conversations as conv
from sadie_tui.engine.events import Checking, CitationsEvent, Done, Replace, Token, to_json
from sadie_tui.engine.prompt import Excerpt, build_briefing, strip_front_matter
from sadie_tui.engine.reply.check import grounding_score
from sadie_tui.engine.reply.citations import is_placeholder, police, split_trailing_list
from sadie_tui.engine.reply.grounding import (
    candidates,
    match_sentences,
    pass_schema,
    resolve,
    sentences_of,
)
from sadie_tui.engine.session import Session
from tests.support.ollama_server import Reply
from tests.support.turns import episode_of, run_chat

UUID_A = "3f7f7a68-0b1c-4d2e-9f00-1234567890ab"


def shown_ids(body: dict) -> list[str]:
    import re

    system = body["messages"][0]["content"]
    return re.findall(r"^episode ([0-9a-f-]{8,36}) \(", system, re.M)


def handles(schema: dict) -> list[str]:
    """The sentence handles a pass schema allows."""
    return schema["properties"]["s"]["items"]["enum"]


def full_ids(memory) -> list[str]:
    return [r[0] for r in memory.db.fetchall("SELECT id::VARCHAR FROM episodes")]


# -- policing: placeholders -----------------------------------------------------------------


def test_placeholders_and_empty_quotes_are_rejected():
    shown = {UUID_A: ["Shipped the auth refactor this week."]}
    for quote in (
        "<words copied exactly from that excerpt>",
        "exact words from that excerpt",
        "",
        "   ",
        "...",
        "[quote]",
    ):
        assert is_placeholder(quote), quote
        tail = json.dumps([{"episode": UUID_A, "quote": quote, "support": "paraphrase"}])
        policed = police(tail, shown)
        assert policed.citations == (), quote
        assert policed.dropped[0]["reason"] in ("placeholder", "empty quote")
    assert not is_placeholder("Shipped the auth refactor")
    assert not is_placeholder("the excerpt of my life")  # a real word among them


def test_placeholder_id_is_dropped():
    shown = {UUID_A: ["Shipped the auth refactor this week."]}
    tail = json.dumps([{"episode": "<episode uuid>", "quote": "Shipped", "support": "verbatim"}])
    assert police(tail, shown).citations == ()


# -- a citation list with no marker -------------------------------------------------------


def test_trailing_list_variants_are_split():
    item = json.dumps([{"episode": UUID_A, "quote": "Shipped it", "support": "verbatim"}])
    for text in (
        f"You shipped it.\n{item}",
        f"You shipped it.\n\nCitations:\n{item}",
        f"You shipped it.\n**Sources:**\n{item}",
        f"You shipped it.\n@@ citations @@\n{item}",
        f"You shipped it.\n```json\n{item}\n```",
        f'You shipped it.\n{{"citations": {item}}}',
    ):
        split = split_trailing_list(text)
        assert split is not None, text
        assert split[0] == "You shipped it."
        assert json.loads(split[1])


def test_prose_that_ends_in_brackets_is_never_hidden():
    for text in (
        "Your splits were [5:40, 5:38].",
        'She said {"calm"} twice.',
        "Lists: [1, 2, 3]",
        'Data: [{"km": 18}]',  # objects, but nothing citation-like
        "Nothing here []",
    ):
        assert split_trailing_list(text) is None, text


# -- sadie's own matches --------------------------------------------------------------------


def test_match_sentences_quotes_the_excerpt_and_grades_honestly():
    excerpts = [
        Excerpt(
            UUID_A,
            "2026-03-14",
            "Warden retro",
            "Shipped the auth refactor this week. Felt slower than it should have been.",
        )
    ]
    exact = match_sentences("You wrote: Shipped the auth refactor this week.", excerpts)
    assert exact and exact[0].quote == "Shipped the auth refactor this week."
    loose = match_sentences("The auth refactor shipped this week, slower than you hoped.", excerpts)
    assert loose and loose[0].episode_id == UUID_A and not loose[0].verbatim
    assert match_sentences("I like turtles and the sea.", excerpts) == []


def test_grounding_score_counts_unsupported_details():
    tail = json.dumps([{"episode": UUID_A, "quote": "Shipped", "support": "verbatim"}])
    policed = police(tail, {UUID_A: ["Shipped the auth refactor."]})
    assert grounding_score(policed) == 1.0
    assert grounding_score(policed, unsupported=1, details=4) == 0.75
    assert grounding_score(policed, unsupported=0, details=4) == 1.0


def test_soul_front_matter_is_not_briefed():
    soul = "---\ntitle: Maya Okafor\ndate: 2026-11-29\n---\nMaya is 34."
    assert strip_front_matter(soul) == "Maya is 34."
    briefing = build_briefing(message="hi", excerpts=[], soul=soul)
    assert "title: Maya Okafor" not in briefing.system
    assert "Maya is 34." in briefing.system
    assert strip_front_matter("--- not front matter") == "--- not front matter"


def test_the_pass_offers_handles_of_the_shown_sentences_closest_to_the_reply():
    other = "b" * 8 + "-0000-0000-0000-" + "0" * 12
    excerpts = [
        Excerpt(
            UUID_A,
            "2026-03-14",
            "Warden retro",
            "Shipped the auth refactor this week. Felt slower than it should have been.",
        ),
        Excerpt(
            other,
            "2026-03-15",
            "Long run",
            "Bought bread on the way home. Ran 18 km along the Tagus with Ines.",
        ),
    ]
    offered = candidates("You ran 18 km by the Tagus with Ines.", excerpts)
    # Only sentences sharing something with the reply; the closest first, a number counting.
    assert [(c.handle, c.episode_id, c.sentence) for c in offered] == [
        ("S1", other, "Ran 18 km along the Tagus with Ines.")
    ]
    schema = pass_schema(offered)
    assert handles(schema) == ["S1"]
    items = schema["properties"]["s"]
    assert items["minItems"] == 1 and items["maxItems"] == 4
    assert schema["required"] == ["s"]
    # The grammar is small: handles only, no labels, no excerpt text, no ids in it.
    assert len(json.dumps(schema)) < 200
    # The answer is a list of handles; the quote is the offered sentence, cited verbatim.
    (entry,) = resolve({"s": ["S1"]}, offered)
    assert entry == {
        "episode": other,
        "quote": "Ran 18 km along the Tagus with Ines.",
        "support": "verbatim",
    }
    # The earlier shape is still read; what is neither is not.
    (old,) = resolve({"citations": [{"s": "S1", "support": "paraphrase"}]}, offered)
    assert old["quote"] == entry["quote"] and old["support"] == "paraphrase"
    assert resolve({"sentences": ["S1"]}, offered) is None


def test_sentences_of_cuts_long_sentences_at_a_word():
    long = "word " * 100 + "end."
    (only,) = sentences_of(long)
    assert len(only) <= 300 and long.startswith(only) and not only.endswith(" ")
    assert sentences_of("Hi.") == ["Hi."]


def test_a_short_sentence_is_offered_with_the_one_before_it():
    # A receipt's amount is a sentence of its own: too short to quote alone, it was never
    # offered, so the right answer "You spent €148.70" could only cite the items before it.
    receipt = "Zu (pet shop), Alvalade: dog bed, 2 bowls, harness, sensitive-stomach kibble 7 kg. €148.70."
    excerpts = [Excerpt(UUID_A, "2026-11-22", "Dog supplies", receipt)]
    (offered,) = candidates("You spent €148.70 at the pet shop.", excerpts)
    assert offered.sentence == receipt
    # Only to the whole sentence right before it: not to a cut one, not across a heading,
    # and a heading ("Went well") is never joined.
    assert sentences_of("A sentence here. Heading\nShort.", join_short=True) == ["A sentence here."]
    assert sentences_of("Attendees: Maya, Kofi\n\nWent well\nAll good here.", join_short=True) == [
        "Attendees: Maya, Kofi",
        "All good here.",
    ]
    long = "word " * 100 + "end. Short."
    assert not any(s.endswith("Short.") for s in sentences_of(long, join_short=True))
    # What reflection quotes is as it was.
    assert sentences_of(receipt) == [receipt.removesuffix(" €148.70.")]


# -- chat: the citation pass ----------------------------------------------------------------


PLANTED = "You finished the Lisbon marathon in 3:15, and Beatriz ran beside you."


def test_chat_without_tail_gets_citations_from_the_pass(server, memory):
    server.queue(Reply(PLANTED))  # prose, no marker; the pass is answered by the schema
    events = run_chat(Session(memory, load_settings()), "How did my marathon go?")
    kinds = [e.type for e in events]
    assert kinds.index("checking") < kinds.index("citations") < kinds.index("done")
    cites = next(e for e in events if isinstance(e, CitationsEvent))
    assert cites.repaired and cites.tail == "missing"
    assert cites.value, "the pass gave policed citations"

    # The pass: streamed (progress shows), the same model, `format` with an enum of short
    # handles, and the briefing's messages byte for byte before the reply and the request.
    draft, cite_pass = server.requests
    assert cite_pass["stream"] is True and cite_pass["model"] == draft["model"]
    offered = handles(cite_pass["format"])
    assert offered and all(h.startswith("S") for h in offered)
    assert cite_pass["messages"][: len(draft["messages"])] == draft["messages"]
    assert cite_pass["messages"][-2] == {"role": "assistant", "content": PLANTED}
    request = cite_pass["messages"][-1]["content"]
    assert request.startswith("Which of these sentences") and "S1. " in request
    for c in cites.value:
        assert c.episode_id in full_ids(memory)
        assert c.backs == PLANTED  # the one sentence of the reply

    # The planted time is in no note: the quote does not establish the sentence, and the
    # person reads that before the reply (the kept text, as `replace` says).
    assert all(c.doubt for c in cites.value)
    kept = next(e for e in events if e.type == "replace").value
    assert kept.startswith("Your notes don't say this directly.") and kept.endswith(PLANTED)

    # The planted time and name are flagged at the right offsets; the known ones are not.
    spans = {(s["text"], s["kind"]) for s in cites.unsupported}
    assert ("3:15", "time") in spans and ("Beatriz", "name") in spans
    assert not any(s["text"] in ("Lisbon",) for s in cites.unsupported)
    for s in cites.unsupported:
        assert kept[s["start"] : s["end"]] == s["text"]

    # Persisted on the message, and in the NDJSON shape.
    row = memory.db.fetchone("SELECT id::VARCHAR FROM messages WHERE role='assistant'")
    stored = conv.get_message(memory.db, row[0]) if hasattr(conv, "get_message") else None
    meta = (
        stored.metadata
        if stored
        else json.loads(
            memory.db.fetchone("SELECT metadata FROM messages WHERE role='assistant'")[0]
        )
    )
    assert meta["repaired"] is True and meta["tail"] == "missing"
    assert {s["text"] for s in meta["unsupported"]} >= {"3:15", "Beatriz"}
    data = to_json(cites)
    assert data["repaired"] is True and data["unsupported"] and data["value"]
    turn = memory.db.fetchone("SELECT tail, repaired, unsupported FROM turns WHERE kind='chat'")
    assert turn[0] == "missing" and turn[1] is True and turn[2] >= 2


def test_pass_failure_leaves_the_reply_and_says_why(server, memory):
    server.queue(Reply(PLANTED), Reply("this is not json at all", stream=False))
    events = run_chat(Session(memory, load_settings()), "How did my marathon go?")
    # (Once, at load 11, this turn had no citations event: the events say why, next time.)
    cites = next((e for e in events if isinstance(e, CitationsEvent)), None)
    assert cites is not None, [to_json(e) for e in events]
    assert not cites.repaired and cites.value == ()
    assert "not JSON" in cites.note
    assert "".join(e.value for e in events if isinstance(e, Token)) == PLANTED
    assert isinstance(events[-1], Done) and events[-1].status == "complete"


def test_pass_error_status_is_a_reason_not_a_failure(server, memory):
    server.queue(Reply(PLANTED), Reply(status=500, error_message="format not supported"))
    events = run_chat(Session(memory, load_settings()), "How did my marathon go?")
    cites = next(e for e in events if isinstance(e, CitationsEvent))
    assert cites.value == () and "format not supported" in cites.note
    assert events[-1].type == "done"


def test_pass_timeout_is_bounded(server, memory, monkeypatch, tmp_path):
    cfg = tmp_path / "cfg"
    cfg.mkdir()
    (cfg / "config.toml").write_text("citation_pass_timeout = 0.5\n")
    monkeypatch.setenv("SADIE_CONFIG", str(cfg))
    server.queue(Reply(PLANTED), Reply("{}", stream=False, stall_after=0, stall_seconds=10))
    events = run_chat(Session(memory, load_settings()), "How did my marathon go?")
    cites = next(e for e in events if isinstance(e, CitationsEvent))
    assert cites.value == () and "within" in cites.note
    assert events[-1].type == "done"


def test_sadie_matches_when_the_pass_gives_nothing(server, memory):
    ep, text = episode_of(memory, "Race day")
    sentence = "Finished the Lisbon marathon in 3:58."
    assert sentence in text
    server.queue(Reply(sentence + " What a day."), Reply('{"citations": []}', stream=False))
    events = run_chat(Session(memory, load_settings()), "How did my marathon go?")
    cites = next(e for e in events if isinstance(e, CitationsEvent))
    assert cites.value == ()  # never presented as the model's citations
    assert cites.found and cites.found[0].episode_id == ep
    assert cites.found[0].label == "found by sadie" and cites.found[0].support == "verbatim"
    assert cites.unsupported == ()


def test_a_usable_tail_needs_no_pass(server, memory):
    ep, text = episode_of(memory, "Race day")
    quote = "Finished the Lisbon marathon in 3:58"
    tail = json.dumps([{"episode": ep, "quote": quote, "support": "verbatim"}])
    server.queue(Reply(f"You finished in 3:58.\n@@CITATIONS@@\n{tail}"))
    events = run_chat(Session(memory, load_settings()), "How did my marathon go?")
    assert not any(isinstance(e, Checking) for e in events)
    assert len(server.requests) == 1
    cites = next(e for e in events if isinstance(e, CitationsEvent))
    assert cites.tail == "ok" and not cites.repaired and cites.unsupported == ()


def test_marker_less_list_is_hidden_and_policed(server, memory):
    ep, _ = episode_of(memory, "Race day")
    listed = json.dumps(
        [{"episode": ep, "quote": "Cried at the finish line", "support": "verbatim"}]
    )
    server.queue(Reply(f"You cried at the finish.\nCitations:\n{listed}"))
    events = run_chat(Session(memory, load_settings()), "How did my marathon go?")
    cites = next(e for e in events if isinstance(e, CitationsEvent))
    assert cites.tail == "ok" and cites.value[0].support == "verbatim"
    replace = next(e for e in events if isinstance(e, Replace))
    assert replace.value == "You cried at the finish." and replace.reason == "citations list"
    row = memory.db.fetchone("SELECT content FROM messages WHERE role='assistant'")
    assert row[0] == "You cried at the finish."
    assert len(server.requests) == 1


def test_copied_placeholder_triggers_the_pass(server, memory):
    placeholder = json.dumps(
        [
            {
                "episode": "<episode uuid>",
                "quote": "<words copied exactly from that excerpt>",
                "support": "verbatim",
            }
        ]
    )
    server.queue(Reply(f"You ran.\n@@CITATIONS@@\n{placeholder}"))
    events = run_chat(Session(memory, load_settings()), "How did my marathon go?")
    cites = next(e for e in events if isinstance(e, CitationsEvent))
    assert cites.tail == "unusable" and cites.repaired and cites.value


# -- degenerate replies, as real models wrote them --------------------------------------------

ECHOED = (
    "Here is what I found.\n"
    "If you want to add your own view beyond what the notes say, put it after a line reading "
    "OPINION: (before the citations marker), so it stays separate from what the notes support.\n"
    "After your reply, on a line of its own, write @@CITATIONS@@ and then a JSON array of the "
    "excerpts your reply rests on, like this:\n"
    "You ran with Ines."
)


def test_echoed_headers_and_instructions_never_show(server, memory):
    ep, _ = episode_of(memory, "Race day")
    header = f"episode {ep} (2026-10-11) Race day\n"
    server.queue(Reply(header + ECHOED))
    events = run_chat(Session(memory, load_settings()), "How did my marathon go?")
    shown = "".join(e.value for e in events if isinstance(e, Token))
    assert "episode " + ep not in shown
    assert "OPINION" not in shown and "JSON array" not in shown
    assert "@@" not in shown
    # The marker inside the echoed citation rule diverts the rest: what shows is the answer
    # before it, and the echoed start of that sentence is not shown either.
    assert shown == "Here is what I found."
    cites = next(e for e in events if isinstance(e, CitationsEvent))
    assert cites.tail == "unusable"  # the rule's own example, copied: placeholders


def test_a_loop_is_cut_after_the_second_copy(server, memory):
    para = "You have been training hard for the marathon and it shows in your notes.\n\n"
    server.queue(Reply(para * 6))
    events = run_chat(Session(memory, load_settings()), "How is training?")
    shown = "".join(e.value for e in events if isinstance(e, Token))
    assert shown.count("training hard") == 2
    done = events[-1]
    assert isinstance(done, Done) and done.cut == "repetition"
    meta = json.loads(memory.db.fetchone("SELECT metadata FROM messages WHERE role='assistant'")[0])
    assert meta["cut"] == "repetition"


def test_a_runaway_reply_stops_at_the_cap(server, memory, monkeypatch, tmp_path):
    cfg = tmp_path / "cfg"
    cfg.mkdir()
    (cfg / "config.toml").write_text("reply_max_chars = 300\nreply_tokens = 77\n")
    monkeypatch.setenv("SADIE_CONFIG", str(cfg))
    words = " ".join(f"word{i}" for i in range(400))
    server.queue(Reply(words))
    events = run_chat(Session(memory, load_settings()), "Tell me everything")
    shown = "".join(e.value for e in events if isinstance(e, Token))
    assert len(shown) <= 300
    assert events[-1].type == "done" and events[-1].cut == "length"
    assert server.requests[0]["options"]["num_predict"] == 77


def test_token_cap_is_reported_as_cut(server, memory):
    server.queue(Reply("You ran a lot this year and", done_reason="length"))
    events = run_chat(Session(memory, load_settings()), "Tell me everything")
    assert events[-1].type == "done" and events[-1].cut == "tokens"


def test_tokens_per_second_is_the_models_own(server, memory):
    server.queue(Reply(["One ", "two ", "three."], delay=0.2))
    events = run_chat(Session(memory, load_settings()), "count")
    done = events[-1]
    # The server reports eval_count 3 over its own eval_duration (>= 12 ms a token): the rate
    # comes from those, not from the wall time that includes the wait for the first token.
    assert done.tokens == 3
    assert done.tokens_per_s > 3 / 1.0


# -- ask ------------------------------------------------------------------------------------


def test_ask_without_tail_is_repaired_and_flags_details(server, memory):
    # The draft and its revision both plant a time and a name: the revision is no better
    # supported, so the draft stays, with its pass citations and its details flagged.
    passed = '{"s": ["S1"]}'
    server.queue(Reply(PLANTED), Reply(passed), Reply(PLANTED))
    result = asyncio.run(Session(memory, load_settings()).ask("How did my marathon go?"))
    assert not result.abstained
    assert result.grounding["repaired"] is True and result.grounding["tail"] == "missing"
    spans = result.grounding["unsupported"]
    assert {("3:15", "time"), ("Beatriz", "name")} <= {(s["text"], s["kind"]) for s in spans}
    for s in spans:
        assert result.answer[s["start"] : s["end"]] == s["text"]
    data = result.as_json()
    assert data["grounding"]["unsupported"] == spans
    names = [s.name for s in result.stages]
    assert "citation_pass" in names
    cite_pass = server.format_requests[0]
    assert handles(cite_pass["format"])


def test_ask_revision_shares_the_briefing_prefix(server, memory):
    # A draft with a detail no excerpt holds is sent back once — on the same messages, with
    # the draft and the note naming the detail after them.
    server.queue(
        Reply("You ran it in 3:15.\n@@CITATIONS@@\n[]"),
        Reply('{"s": ["S1"]}', stream=False),
    )
    asyncio.run(Session(memory, load_settings()).ask("How did my marathon go?"))
    draft, _, revision = server.requests[:3]
    assert revision["messages"][: len(draft["messages"])] == draft["messages"]
    assert revision["messages"][-2]["role"] == "assistant"
    assert "3:15" in revision["messages"][-1]["content"]


def test_a_draft_without_unsupported_details_is_not_revised(server, memory):
    ep, text = episode_of(memory, "Race day")
    server.queue(Reply("You finished the Lisbon marathon in 3:58.\n@@CITATIONS@@\n[]"))
    result = asyncio.run(Session(memory, load_settings()).ask("How did my marathon go?"))
    assert "revise" not in [s.name for s in result.stages]
    assert not result.abstained and "3:58" in result.answer


def test_a_citation_unrelated_to_the_reply_does_not_ground_it(server, memory):
    # A verbatim quote that shares nothing with the reply backs none of it: dropped, so an
    # answer about Everest still abstains.
    ep, text = episode_of(memory, "Long run by the river")
    unrelated = json.dumps(
        [{"episode": ep, "quote": "Ran 18 km along the Tagus with Ines.", "support": "verbatim"}]
    )
    server.queue(Reply(f"You climbed Everest.\n@@CITATIONS@@\n{unrelated}"))
    result = asyncio.run(Session(memory, load_settings()).ask("Did I climb Everest?"))
    assert result.abstained
    assert "unrelated to the reply" in result.grounding["dropped_reasons"]


def test_a_long_sentence_is_listed_short_but_cited_whole():
    long = "Ran 18 km along the Tagus with Ines " + "and then some more words " * 12 + "at dusk."
    excerpts = [Excerpt(UUID_A, "2026-03-15", "Long run", long)]
    (offered,) = candidates("You ran 18 km by the Tagus.", excerpts)
    from sadie_tui.engine.reply.grounding import pass_messages

    briefing = build_briefing(message="q", excerpts=excerpts)
    request = pass_messages(briefing, "You ran 18 km by the Tagus.", [offered])[-1]["content"]
    listed = next(line for line in request.splitlines() if line.startswith("S1. "))
    assert len(listed) < 160 and listed.endswith(" …")
    (entry,) = resolve({"s": ["S1"]}, [offered])
    assert entry["quote"] == offered.sentence and entry["episode"] == UUID_A


def test_the_persons_own_name_in_a_backed_sentence_is_not_flagged(server, memory):
    # The soul summary opens with their name; a model writes "Maya" for "you". A backed
    # sentence's details must be in its note, the message or that name: a planted name
    # beside it still is flagged.
    ep, _ = episode_of(memory, "Race day")
    reply = "Maya finished the Lisbon marathon in 3:58 with Beatriz."
    cite = json.dumps(
        [{"episode": ep, "quote": "Finished the Lisbon marathon in 3:58.", "support": "verbatim"}]
    )
    server.queue(Reply(f"{reply}\n@@CITATIONS@@\n{cite}"))
    events = run_chat(Session(memory, load_settings()), "How did my marathon go?")
    cites = next(e for e in events if isinstance(e, CitationsEvent))
    assert [s["text"] for s in cites.unsupported] == ["Beatriz"]
    assert cites.value[0].unbacked == ("Beatriz",)
