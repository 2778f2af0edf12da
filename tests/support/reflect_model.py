"""A scripted model for ``sadie reflect``, served by the Ollama-protocol test server: it reads
the request like a model would (the excerpts under their handles, the belief and the items to
judge; a question's answer is read as a proposal over every excerpt it shows) and answers JSON valid against the request's schema, from a script of beliefs and
verdicts. Replies queued on the server still come first, for the answers a test writes by hand.

    model = ReflectModel(beliefs=[Scripted("Ran 18 km", "I run long runs with Ines", ...)])
    with FakeOllama(responder=model) as server: ...
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from tests.support.ollama_server import Reply

_EXCERPT = re.compile(r"^(E\d+) \((\d{4}-\d{2}-\d{2})\) (.*)$", re.M)
_ITEM = re.compile(r"^(R\d+) \(([^)]*)\) (.*)$", re.M)
_BELIEF = re.compile(r"^(B\d+) (.*)$", re.M)


@dataclass(frozen=True)
class Scripted:
    """Propose ``statement`` for an excerpt holding ``trigger``, quoting ``quote`` (which a
    test may make up, to see it dropped)."""

    trigger: str
    statement: str
    quote: str
    kind: str = "habit"
    confidence: float = 0.6


@dataclass(frozen=True)
class Rule:
    """Judge an item holding ``item`` against a belief holding ``belief``: ``verdict``,
    quoting ``quote``."""

    belief: str
    item: str
    verdict: str
    quote: str = ""


@dataclass
class ReflectModel:
    beliefs: list[Scripted] = field(default_factory=list)
    rules: list[Rule] = field(default_factory=list)
    # The salient questions asked of every batch; none (the default): each batch is read
    # directly, one proposing request per batch.
    questions: list[str] = field(default_factory=list)
    delay: float = 0.0  # before each piece of every answer
    proposals: int = 0  # propose requests answered (a question's answer is one)
    judgements: int = 0
    asked: int = 0  # questions requests answered
    many_judgements: int = 0  # of the judgements, those of several beliefs at once

    def __call__(self, body: dict) -> Reply:
        schema = body.get("format") or {}
        props = schema.get("properties", {}) if isinstance(schema, dict) else {}
        user = next(
            (m["content"] for m in reversed(body.get("messages", [])) if m.get("role") == "user"),
            "",
        )
        if "questions" in props:
            self.asked += 1
            text = json.dumps({"questions": self.questions})
        elif "beliefs" in props:
            self.proposals += 1
            text = json.dumps({"beliefs": self.propose(user)})
        elif "items" in props:
            self.judgements += 1
            text = json.dumps({"items": self.judge(user)})
        else:
            text = "I am a scripted model."
        return Reply(content=text, delay=self.delay)

    def propose(self, user: str) -> list[dict]:
        starts = list(_EXCERPT.finditer(user))
        found: list[dict] = []
        for n, m in enumerate(starts):
            end = starts[n + 1].start() if n + 1 < len(starts) else len(user)
            text = user[m.end() : end]
            for s in self.beliefs:
                if s.trigger in text or s.trigger in m.group(3):
                    found.append(
                        {
                            "statement": s.statement,
                            "kind": s.kind,
                            "confidence": s.confidence,
                            "evidence": [{"e": m.group(1), "quote": s.quote}],
                        }
                    )
        return found

    def judge(self, user: str) -> list[dict]:
        """One belief ("Belief: ..."), or several ("Beliefs:" then "B1 ...", one entry per
        belief and item, under "b")."""
        if user.startswith("Beliefs:"):
            many = _BELIEF.findall(user.split("\n\n", 1)[0])
            self.many_judgements += 1
            return [
                {"b": handle, **entry}
                for handle, belief in many
                for entry in self._verdicts(belief, user)
            ]
        return self._verdicts(user.split("\n", 1)[0].removeprefix("Belief: "), user)

    def _verdicts(self, belief: str, user: str) -> list[dict]:
        verdicts = []
        for m in _ITEM.finditer(user):
            verdict, quote = "unrelated", ""
            for rule in self.rules:
                if rule.belief in belief and rule.item in m.group(3):
                    verdict, quote = rule.verdict, rule.quote
                    break
            verdicts.append({"r": m.group(1), "verdict": verdict, "quote": quote})
        return verdicts
