"""The companion: one chat turn or one ask, from the person's message to validated events.

It owns the order of things — conversation and messages written before the first token,
emotion chosen before generating, retrieval, briefing, the reasoner stream through the
filter, citation policing, policy lint, telemetry — and yields typed events. Blocking work
(DuckDB, embeddings) runs in threads so an event loop (the TUI's) never stalls.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import conversations as conv
from .details import find_details, unsupported
from .emotions import TONE, classifier_for
from .errors import ModelError, SadieError
from .events import (
    Checking,
    CitationsEvent,
    CitationView,
    Context,
    Done,
    EmotionEvent,
    ErrorEvent,
    Event,
    Meta,
    Replace,
    Status,
    Thinking,
    Token,
    Waiting,
)
from .grounding import needs_pass, own_citations, repair, settle
from .personas import Persona, get_persona
from .policies import guardrail_block, lint, load_policies
from .prompt import Attached, Briefing, Excerpt, build_briefing
from .reasoners.base import paced
from .reasoners.offline import OfflineReasoner
from .reasoners.ollama import OllamaReasoner, probe
from .reply_guard import ReplyGuard
from .retrieval import RetrievalResult, retrieve
from .stream_filter import StreamFilter
from .telemetry import record_turn
from .titles import make_title

if TYPE_CHECKING:
    from ..config import Settings
    from .memory import Memory

THINKING_EVERY = 0.25
WAITING_EVERY = 1.0
SAVE_EVERY = 1.0
PROBE_TTL = 20.0


@dataclass(frozen=True)
class ModelStatus:
    online: bool
    model: str
    host: str
    detail: str
    fix: str | None = None


def excerpts_of(result: RetrievalResult) -> list[Excerpt]:
    return [
        Excerpt(c.episode_id, c.occurred_at.strftime("%Y-%m-%d"), c.title, c.text)
        for c in result.chunks
    ]


class Companion:
    """The engine facade for chat and ask; one per open memory."""

    def __init__(
        self,
        memory: Memory,
        settings: Settings,
        *,
        reasoner: Any = None,
        wait_for_embedder: bool = True,
    ) -> None:
        """``wait_for_embedder=False`` (the TUI): while the embedding model is still loading,
        retrieve with the keyword and graph channels instead of waiting ~5 s for torch."""
        self.memory = memory
        self.wait_for_embedder = wait_for_embedder
        self.settings = settings
        self._reasoner = reasoner
        self._emotions = classifier_for(memory.embedder)
        self._probe: tuple[float, ModelStatus] | None = None

    def warm(self) -> None:
        """Load the embedding model and the emotion prototypes (blocking; run it in a thread)."""
        self.memory.embedder.warm()
        self._emotions.warm()

    # -- the model -------------------------------------------------------------------------
    @property
    def mode(self) -> str:
        import os

        return os.environ.get("SADIE_REASONER", "auto").lower()

    async def check_model(self, *, fresh: bool = False) -> ModelStatus:
        s = self.settings
        if self._reasoner is not None:
            return ModelStatus(not self._reasoner.offline, self._reasoner.model, s.ollama_host, "")
        if self.mode == "offline":
            return ModelStatus(False, OfflineReasoner.model, s.ollama_host, "offline by choice")
        now = time.monotonic()
        if not fresh and self._probe and now - self._probe[0] < PROBE_TTL:
            return self._probe[1]
        online, detail, fix = await probe(s.ollama_host, s.model)
        status = ModelStatus(online, s.model, s.ollama_host, detail, fix)
        self._probe = (now, status)
        return status

    async def _pick_reasoner(self) -> tuple[Any, str | None]:
        """The reasoner for this turn, and a notice when falling back to offline."""
        if self._reasoner is not None:
            return self._reasoner, None
        s = self.settings
        ollama = OllamaReasoner(
            s.ollama_host,
            s.model,
            connect_timeout=s.connect_timeout,
            read_timeout=s.read_timeout,
            first_token_timeout=s.first_token_timeout,
            reply_tokens=s.reply_tokens,
        )
        if self.mode == "ollama":
            return ollama, None
        if self.mode == "offline":
            return OfflineReasoner(), None
        status = await self.check_model()
        if status.online:
            return ollama, None
        notice = status.detail + (f" ({status.fix})" if status.fix else "") + "; answering offline"
        return OfflineReasoner(status.detail), notice

    # -- shared pieces --------------------------------------------------------------------
    def _persona(self, name: str | None, default: str) -> Persona:
        from ..paths import config_dir

        return get_persona(name or default, config_dir() / "personas")

    def _policies(self) -> tuple[Any, list[str]]:
        policy_set = load_policies(self.memory.home / "policies.toml")
        return policy_set.for_scope("chat"), list(policy_set.errors)

    def _attached(self, conversation_id: str) -> list[Attached]:
        from .chips import list_chips, resolve

        items: list[Attached] = []
        for chip in list_chips(self.memory.db, conversation_id):
            try:
                content = resolve(self.memory.db, chip)
            except SadieError:
                continue
            excerpt = None
            if content.episode_id:
                excerpt = Excerpt(
                    content.episode_id, content.date or "", content.title, content.text
                )
            items.append(Attached(chip.kind, content.title, content.text, excerpt))
        return items

    async def ask(self, question: str, *, persona: str | None = None) -> Any:
        from .ask import run_ask

        return await run_ask(self, question, persona)

    # -- chat -------------------------------------------------------------------------------
    async def chat(
        self,
        message: str,
        *,
        conversation_id: str | None = None,
        persona: str | None = None,
        new: bool = False,
    ) -> AsyncIterator[Event]:
        started = time.perf_counter()
        db = self.memory.db
        message = message.strip()
        if not message:
            yield ErrorEvent("the message is empty", code="usage")
            return
        chosen = self._persona(persona, self.settings.chat_persona)
        if conversation_id and not new:
            conversation = await asyncio.to_thread(conv.get_conversation, db, conversation_id)
        else:
            conversation = await asyncio.to_thread(
                conv.create_conversation, db, make_title(message), persona=chosen.name
            )
        cid = conversation.id
        history_rows = await asyncio.to_thread(conv.recent_messages, db, cid, 10_000)
        history = [(m.role, m.content) for m in history_rows if m.role in ("user", "assistant")]
        previous = next((c for r, c in reversed(history) if r == "user"), None)

        reasoner, notice = await self._pick_reasoner()
        # The classifier may run the embedding model: keep it off the event loop.
        choice = await asyncio.to_thread(
            self._emotions.choose, message, allow_load=self.wait_for_embedder
        )
        emotion = choice.value
        user_id = await asyncio.to_thread(
            conv.add_message, db, cid, "user", message, "complete", emotion=emotion
        )
        reply_id = await asyncio.to_thread(
            conv.add_message,
            db,
            cid,
            "assistant",
            "",
            "streaming",
            emotion=emotion,
            model=reasoner.model,
            metadata={"persona": chosen.name},
        )
        yield Meta(
            cid,
            reasoner.model,
            chosen.name,
            reasoner.offline,
            reply_id,
            user_id,
            conversation.title,
        )
        yield EmotionEvent(emotion)
        if notice:
            yield Status(notice)

        shown_text = ""
        status = "streaming"
        try:
            use_vector = self.memory.embedder.loaded or self.wait_for_embedder
            if not use_vector:
                yield Status(
                    "the embedding model is still loading: searching by keywords and names"
                )
            result = await asyncio.to_thread(
                retrieve, self.memory, message, chosen, previous=previous, use_vector=use_vector
            )
            attached = await asyncio.to_thread(self._attached, cid)
            policies, policy_errors = self._policies()
            for err in policy_errors:
                yield Status(f"policy ignored: {err}")
            empty = await asyncio.to_thread(self.memory.is_empty)
            soul = await asyncio.to_thread(self.memory.soul)
            briefing = build_briefing(
                message=message,
                excerpts=excerpts_of(result),
                beliefs=result.beliefs,
                observations=result.observations,
                observation_weight_high=chosen.observation_weight > 1.0,
                attached=attached,
                history=history,
                soul=soul,
                guardrails=guardrail_block(policies),
                voice=chosen.voice,
                tone=TONE.get(emotion, ""),
                memory_empty=empty,
            )
            yield Context(
                chunks=len(result.chunks),
                messages=briefing.history_used,
                messages_dropped=briefing.history_dropped,
                chips=len(attached),
                retrieval_ms=round(result.elapsed_ms, 1),
                vector=result.vector_used,
            )
            filt = StreamFilter()
            guard = ReplyGuard(briefing.instructions(), max_chars=self.settings.reply_max_chars)
            gen_started = time.perf_counter()
            think_started: float | None = None
            last_think = 0.0
            last_save = time.perf_counter()
            pieces = 0
            stream = paced(reasoner.stream(briefing, message), WAITING_EVERY)
            async with aclosing(stream) as pieces_in:
                async for piece in pieces_in:
                    now = time.perf_counter()
                    if piece is None:
                        if not pieces and think_started is None:
                            yield Waiting(round(now - gen_started))
                        continue
                    if piece.kind == "thinking":
                        visible = ""
                        thinking = True
                    else:
                        pieces += 1
                        visible = guard.feed(filt.feed(piece.text))
                        thinking = filt.thinking
                    if thinking and not shown_text:
                        think_started = think_started or now
                        if now - last_think >= THINKING_EVERY:
                            last_think = now
                            yield Thinking(round(now - think_started, 1))
                    if visible:
                        shown_text += visible
                        yield Token(visible)
                        if now - last_save >= SAVE_EVERY:
                            last_save = now
                            await asyncio.to_thread(
                                conv.update_message, db, reply_id, content=shown_text
                            )
                    if guard.stopped:
                        break  # closes the model's stream: a loop or a runaway reply
            if not guard.stopped:
                rest = guard.feed(filt.finish()) + guard.finish()
                if rest:
                    shown_text += rest
                    yield Token(rest)
            gen_seconds = max(1e-6, time.perf_counter() - gen_started)
            cut = guard.stopped or (
                "tokens" if getattr(reasoner, "last_done_reason", "") == "length" else None
            )

            grounded = own_citations(shown_text, filt.tail, filt.diverted, briefing.shown)
            if needs_pass(reasoner, grounded):
                yield Checking()
                await repair(
                    reasoner, briefing, grounded, timeout=self.settings.citation_pass_timeout
                )
            settle(briefing, grounded)
            policed = grounded.policed
            views = citation_views(policed, result, attached)
            found = found_views(grounded, result, attached)

            final_text = grounded.text
            final_emotion = emotion
            outcome = lint(final_text, policies)
            reason = "citations list" if grounded.list_removed else ""
            if outcome.changed:
                final_text = outcome.text
                reason = (
                    f"policy {outcome.blocked_by.name}" if outcome.blocked_by else "policy rewrite"
                )
                if outcome.blocked_by is not None:
                    final_emotion = "serious"
                    views = ()
                    found = ()
            spans = [] if outcome.blocked_by else unsupported(final_text, briefing_sources(briefing))
            yield CitationsEvent(
                views,
                unsupported=tuple(sp.as_json() for sp in spans),
                repaired=grounded.repaired,
                tail=grounded.tail,
                found=found,
                note=grounded.pass_reason,
            )
            if final_text != shown_text:
                yield Replace(final_text, reason)
            if outcome.blocked_by is not None and final_emotion != emotion:
                yield EmotionEvent(final_emotion)
            status = "blocked" if outcome.blocked_by is not None else "complete"
            latency = (time.perf_counter() - started) * 1000
            tokens = getattr(reasoner, "last_eval_count", 0) or pieces
            metadata = {
                "persona": chosen.name,
                "prompt_version": briefing.version,
                "chunks_considered": len(result.chunks),
                "messages_in_context": briefing.history_used,
                "messages_dropped": briefing.history_dropped,
                "chips": len(attached),
                "retrieval_ms": round(result.elapsed_ms, 1),
                "tokens": tokens,
                "tokens_per_s": tokens_per_second(reasoner, tokens, gen_seconds),
                "offline": reasoner.offline,
                "dropped_citations": len(policed.dropped),
                "streamed_text": shown_text if final_text != shown_text else None,
                "tail": grounded.tail,
                "repaired": grounded.repaired,
                "citation_pass": grounded.pass_reason or ("ok" if grounded.repaired else None),
                "unsupported": [sp.as_json() for sp in spans],
                "found_by_sadie": [v.as_json() for v in found],
                "cut": cut,
                "echoes_hidden": len(guard.dropped),
            }
            if outcome.blocked_by is not None:
                metadata["blocked_by"] = outcome.blocked_by.name
            await asyncio.to_thread(
                self._finish_turn,
                cid,
                reply_id,
                final_text,
                status,
                final_emotion,
                views,
                latency,
                metadata,
                outcome,
                message,
                chosen,
                reasoner,
                result,
                briefing,
                policed,
            )
            yield Done(
                reply_id,
                round(latency, 1),
                len(result.chunks),
                status,
                tokens,
                metadata["tokens_per_s"],
                final_emotion,
                cut=cut or "",
            )
        except asyncio.CancelledError:
            status = "interrupted"
            self._save_partial(reply_id, shown_text, "interrupted")
            raise
        except GeneratorExit:
            status = "interrupted"
            self._save_partial(reply_id, shown_text, "interrupted")
            raise
        except ModelError as exc:
            status = "error"
            self._save_partial(reply_id, shown_text, "error", exc.one_line())
            yield ErrorEvent(
                exc.message, code=getattr(exc, "code", "model"), fix=exc.fix, message_id=reply_id
            )
        except SadieError as exc:
            status = "error"
            self._save_partial(reply_id, shown_text, "error", exc.one_line())
            yield ErrorEvent(exc.message, code="storage", fix=exc.fix, message_id=reply_id)

    def _save_partial(
        self, reply_id: str, text: str, status: str, error: str | None = None
    ) -> None:
        try:
            meta = {"error": error} if error else None
            conv.update_message(
                self.memory.db, reply_id, content=text, status=status, metadata=meta
            )
        except SadieError:
            pass  # the database itself failed; the error already reached the person

    def _finish_turn(
        self,
        cid: str,
        reply_id: str,
        final_text: str,
        status: str,
        emotion: str,
        views: tuple[CitationView, ...],
        latency: float,
        metadata: dict[str, Any],
        outcome: Any,
        message: str,
        persona: Persona,
        reasoner: Any,
        result: RetrievalResult,
        briefing: Briefing,
        policed: Any,
    ) -> None:
        db = self.memory.db
        conv.update_message(
            db,
            reply_id,
            content=final_text,
            status=status,
            emotion=emotion,
            citations=[{**v.__dict__, "label": v.label} for v in views],
            latency_ms=latency,
            metadata=metadata,
        )
        state: dict[str, Any] = {"emotion": emotion}
        if conv.count_messages(db, cid) <= 2:
            state["summary"] = conv.summary_from_first_exchange(message, final_text)
        conv.set_state(db, cid, **state)
        for hit in outcome.hits:
            db.execute(
                "INSERT INTO policy_events (id, conversation_id, message_id, policy, action, match)"
                " VALUES (uuid(), ?, ?, ?, ?, ?)",
                [cid, reply_id, hit.policy, hit.action, hit.match[:500]],
            )
        record_turn(
            db,
            kind="chat",
            query=message,
            model=reasoner.model,
            persona=persona.name,
            prompt_version=briefing.version,
            grounding=grounding_score(
                policed, len(metadata["unsupported"]), count_details(final_text)
            ),
            abstained=False,
            latency_ms=latency,
            conversation_id=cid,
            message_id=reply_id,
            chunks=result.chunks,
            cited_chunk_ids=cited_chunk_ids(result, views),
            tail=metadata["tail"],
            repaired=metadata["repaired"],
            citation_pass=metadata["citation_pass"],
            unsupported=len(metadata["unsupported"]),
            cut=metadata["cut"],
        )


def citation_views(
    policed: Any, result: RetrievalResult, attached: Sequence[Attached] = ()
) -> tuple[CitationView, ...]:
    """The validated citations with the title and date of the episode each one names."""
    titles = _titles(result, attached)
    return tuple(
        CitationView(
            c.episode_id, c.quote, c.support, c.claimed, *titles.get(c.episode_id.lower(), ("", ""))
        )
        for c in policed.citations
    )


def _titles(
    result: RetrievalResult, attached: Sequence[Attached] = ()
) -> dict[str, tuple[str, str]]:
    titles = {
        c.episode_id.lower(): (c.title, c.occurred_at.strftime("%Y-%m-%d")) for c in result.chunks
    }
    for item in attached:
        if item.excerpt is not None:
            key = item.excerpt.episode_id.lower()
            titles.setdefault(key, (item.excerpt.title, item.excerpt.date))
    return titles


def cited_chunk_ids(result: RetrievalResult, views: Sequence[CitationView]) -> list[int]:
    """Retrieved chunks whose episode a surviving citation names (telemetry's ``cited``)."""
    cited = {v.episode_id.lower() for v in views}
    return [c.chunk_id for c in result.chunks if c.episode_id.lower() in cited]


def grounding_score(policed: Any, unsupported: int = 0, details: int = 0) -> float:
    """Weighted share of the model's citations that survived — verbatim 1, paraphrase 0.6,
    inference 0.3, dropped 0; 0 when the model cited nothing — times the share of the
    reply's checkable details (numbers, times, dates, amounts, names) found in a source."""
    weights = {"verbatim": 1.0, "paraphrase": 0.6, "inference": 0.3}
    total = len(policed.citations) + len(policed.dropped)
    if total == 0:
        return 0.0
    score = sum(weights.get(c.support, 0.0) for c in policed.citations) / total
    if details > 0:
        score *= 1 - min(unsupported, details) / details
    return round(score, 3)


def found_views(
    grounded: Any, result: RetrievalResult, attached: Sequence[Attached] = ()
) -> tuple[CitationView, ...]:
    """sadie's own sentence matches, labelled ``found by sadie`` (never the model's)."""
    titles = _titles(result, attached)
    return tuple(
        CitationView(
            m.episode_id,
            m.quote,
            "verbatim" if m.verbatim else "paraphrase",
            "",
            *titles.get(m.episode_id.lower(), ("", "")),
            origin="sadie",
        )
        for m in grounded.found or ()
    )


def briefing_sources(briefing: Briefing) -> list[str]:
    """Everything the model was told: excerpts with their headers, beliefs, observations,
    chips, the soul summary, recent messages and the person's own message."""
    return [m["content"] for m in briefing.messages]


def tokens_per_second(reasoner: Any, tokens: int, seconds: float) -> float:
    """The model's own rate (``eval_count / eval_duration``) when it reports one; else the
    pieces over the whole generation (which counts the wait for the first token)."""
    count = getattr(reasoner, "last_eval_count", 0)
    eval_seconds = getattr(reasoner, "last_eval_seconds", 0.0)
    if count and eval_seconds > 0:
        return round(count / eval_seconds, 1)
    return round(tokens / max(seconds, 1e-6), 1)


def count_details(text: str) -> int:
    return len(find_details(text))
