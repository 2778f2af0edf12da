"""A right answer survives a model on a CPU (issue: real models at real speed).

The project's Ollama-protocol server paces its replies like qwen2.5-coder:1.5b on a 2-core
CPU (``CpuModel``: prompt reading per token not shared with the previous request, free
writing at 8 tokens/s, writing under a schema at 1 token/s, real ``prompt_eval_*``/``eval_*``
figures), scaled so a reported second takes 10 ms. The cases are the ones a person met:
the citation pass cut at its cap and a revision that answers with a refusal; a pass that
names an unrelated sentence; a pass still writing past a round number."""

from __future__ import annotations

import asyncio
import json

import pytest

from sadie_tui.config import load_settings
from sadie_tui.engine.events import Checking, CitationsEvent
from sadie_tui.engine.reasoners import rates as rates_module
from sadie_tui.engine.reasoners.rates import RATES_FILE, Rates
from sadie_tui.engine.session import Session
from sadie_tui.engine.turns.ask import ABSTAIN
from tests.support.ollama_server import CpuModel, FakeOllama, Reply
from tests.support.turns import run_chat

DRAFT = "You finished the Lisbon marathon in 3:58."
REFUSAL = (
    "I'm sorry, but I cannot provide the requested information without additional context "
    "or citations."
)
PASS = json.dumps({"s": ["S1"]})


@pytest.fixture
def cpu_server(monkeypatch: pytest.MonkeyPatch, tmp_home):
    with FakeOllama(cpu=CpuModel(scale=0.01)) as srv:
        monkeypatch.setenv("OLLAMA_HOST", srv.url)
        yield srv


def _config(tmp_path, monkeypatch, text: str) -> None:
    cfg = tmp_path / "cfg"
    cfg.mkdir(exist_ok=True)
    (cfg / "config.toml").write_text(text)
    monkeypatch.setenv("SADIE_CONFIG", str(cfg))


def test_a_right_draft_survives_a_cut_pass_and_is_never_revised_into_a_refusal(
    cpu_server, memory, tmp_path, monkeypatch
):
    # The pass's JSON at 1 token/s takes longer than the cap (0.05 s here: 5 s reported).
    _config(tmp_path, monkeypatch, "citation_pass_timeout = 0.05\n")
    cpu_server.queue(Reply(DRAFT), Reply(PASS * 3), Reply(REFUSAL))
    result = asyncio.run(Session(memory, load_settings()).ask("How long did the marathon take?"))
    assert not result.abstained and result.answer == DRAFT != ABSTAIN
    stages = {s.name: s for s in result.stages}
    assert "cap" in stages["citation_pass"].note
    assert "revise" not in stages  # nothing in the draft is unsupported
    assert "3:58" in result.grounding["evidence"]
    assert result.found_by_sadie  # sadie's own match stands in for the lost citations
    assert len(cpu_server.requests) == 2  # the refusal was never asked for


def test_a_refusal_never_replaces_a_draft_with_support(cpu_server, memory):
    # One detail is unsupported (Beatriz), so the draft is revised; the revision declines.
    draft = "You finished the Lisbon marathon in 3:58, with Beatriz beside you."
    cpu_server.queue(Reply(draft), Reply(PASS), Reply(REFUSAL), Reply(PASS))
    result = asyncio.run(Session(memory, load_settings()).ask("How long did the marathon take?"))
    assert result.answer == draft and not result.abstained
    assert [s.note for s in result.stages if s.name == "revise"][0].startswith("draft kept")
    assert {s["text"] for s in result.grounding["unsupported"]} == {"Beatriz"}


def test_a_pass_naming_an_unrelated_sentence_does_not_sink_a_right_answer(cpu_server, memory):
    # Like "I scored 91 in speaking…" cited with "I'm going to have to live with inglesa.":
    # the pass's only choice shares nothing with the reply and is dropped; the detail the
    # excerpt holds (3:58) is evidence, so the answer stands and is not sent back.
    cpu_server.queue(
        Reply(DRAFT), Reply(json.dumps({"s": ["S3"]}))
    )
    result = asyncio.run(Session(memory, load_settings()).ask("How long did the marathon take?"))
    # With four passages (issue 33) the handle may now name a sentence of another shown note:
    # then the draft may be revised, but only into a better supported right answer.
    assert not result.abstained and "3:58" in result.answer
    assert result.grounding["score"] >= 0.9 and not result.grounding["doubt"]


def test_a_pass_still_writing_is_not_cut_at_a_round_number(
    cpu_server, memory, tmp_path, monkeypatch
):
    # Each piece comes well within the stall budget though the whole takes longer than the
    # budget for the first token: the pass runs to its end, and Checking ticks meanwhile.
    monkeypatch.setattr(rates_module, "READ_FLOOR", 0.05)
    monkeypatch.setattr(rates_module, "STALL_FLOOR", 0.5)
    monkeypatch.setattr(rates_module, "READ_SLACK", 0.0)
    cpu_server.queue(Reply(DRAFT), Reply(list(PASS), delay=0.0))
    events = run_chat(Session(memory, load_settings()), "How long did the marathon take?")
    cites = next(e for e in events if isinstance(e, CitationsEvent))
    assert cites.repaired, cites.note
    assert [e for e in events if isinstance(e, Checking)]


def test_a_stalled_pass_is_cut_by_its_stall_budget_not_the_cap(cpu_server, memory, monkeypatch):
    monkeypatch.setattr(rates_module, "STALL_FLOOR", 0.2)
    cpu_server.queue(Reply(DRAFT), Reply(PASS, stall_after=3, stall_seconds=30))
    comp = Session(memory, load_settings())
    comp.context.rates.record("qwen3:1.7b", eval_tokens=100, eval_seconds=1.0, structured=True)
    events = run_chat(comp, "How long did the marathon take?")
    cites = next(e for e in events if isinstance(e, CitationsEvent))
    assert not cites.repaired and "stopped writing" in cites.note
    assert events[-1].type == "done"


def test_rates_are_measured_from_the_done_lines_and_kept_beside_the_memory(cpu_server, memory):
    cpu_server.queue(Reply(DRAFT + " " + "And more words. " * 10), Reply(PASS))
    comp = Session(memory, load_settings())
    run_chat(comp, "How long did the marathon take?")
    rate = comp.context.rates.get("qwen3:1.7b")
    assert rate.eval_tps == pytest.approx(8.0, rel=0.05)  # as the done line reported
    assert rate.prompt_tps == pytest.approx(30.0, rel=0.05)
    saved = json.loads((memory.home / RATES_FILE).read_text())
    assert saved["qwen3:1.7b"]["eval_tps"] == rate.eval_tps
    assert Rates(memory.home / RATES_FILE).get("qwen3:1.7b").num_ctx == rate.num_ctx > 0


def test_the_second_request_reads_only_what_is_new(cpu_server, memory):
    # The pass repeats the briefing byte for byte: the server reads only the reply and the
    # request after it (its prompt cache), and num_ctx is the same for both requests.
    cpu_server.queue(Reply(DRAFT), Reply(PASS))
    run_chat(Session(memory, load_settings()), "How long did the marathon take?")
    draft, cite_pass = cpu_server.requests
    assert draft["options"]["num_ctx"] == cite_pass["options"]["num_ctx"]
    assert draft.get("keep_alive") == cite_pass.get("keep_alive") == "30m"


def test_budgets_come_from_the_measured_rates():
    rates = Rates()
    unknown = rates.budget("m", prompt_chars=3200, cap=300)
    rates.record("m", prompt_tokens=1000, prompt_seconds=10, eval_tokens=80, eval_seconds=10)
    rates.record("m", eval_tokens=40, eval_seconds=10, structured=True)
    known = rates.budget("m", prompt_chars=3200, structured=True, cap=300)
    assert known.first < unknown.first  # 100 tokens/s read, not the guess of 20
    assert known.stall == pytest.approx(max(rates_module.STALL_FLOOR, 25 / 4.0))
    assert rates.budget("m", prompt_chars=10**9, cap=300).first_wait() == 300


def test_think_is_sent_only_when_set(cpu_server, memory, tmp_path, monkeypatch):
    cpu_server.queue(Reply(DRAFT), Reply(PASS))
    run_chat(Session(memory, load_settings()), "How long did the marathon take?")
    assert "think" not in cpu_server.requests[0]  # auto: the model's own default
    _config(tmp_path, monkeypatch, 'think = "off"\n')
    cpu_server.queue(Reply(DRAFT), Reply(PASS))
    run_chat(Session(memory, load_settings()), "How long did the marathon take?")
    draft, cite_pass = cpu_server.requests[-2:]
    assert draft["think"] is False and cite_pass["think"] is False


def test_a_revision_that_fails_keeps_the_draft(cpu_server, memory):
    draft = "You finished the Lisbon marathon in 3:58, with Beatriz beside you."
    cpu_server.queue(Reply(draft), Reply(PASS), Reply(status=500, error_message="model crashed"))
    result = asyncio.run(Session(memory, load_settings()).ask("How long did the marathon take?"))
    assert result.answer == draft and not result.offline and not result.abstained
    (revise,) = [s for s in result.stages if s.name == "revise"]
    assert revise.note.startswith("draft kept (") and "crashed" in revise.note


def test_a_cached_prompt_does_not_shrink_the_reading_budget():
    # The bridge counts cached tokens as read: 3,000 "read" in 10 s. The budget still gives
    # an uncached prompt the time its writing speed implies reading takes.
    rates = Rates()
    rates.record("m", prompt_tokens=3000, prompt_seconds=10, eval_tokens=50, eval_seconds=10)
    assert rates.get("m").prompt_tps == 300
    budget = rates.budget("m", prompt_chars=11200, cap=600)  # ~3,500 tokens
    assert budget.first >= rates_module.READ_FLOOR + 2 * 3500 / (20 * 5.0)
