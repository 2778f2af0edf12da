"""Policies: the person's own rules for what sadie may say.

This module owns the ``policies.toml`` format (parsing and validation), the
guardrail block that tells the model the rules before it replies, and the lint
that enforces them on the finished reply (spec: "Policies as a guardrail block").
It is pure: no UI imports, no I/O beyond reading the one file it is given.

The file lives in the user's home folder::

    [[policy]]
    name = "no-diagnoses"
    action = "block"          # rewrite | block | warn
    pattern = "(?i)you (have|suffer from) (depression|adhd)"
    message = "sadie does not diagnose"   # block: the note shown instead
    scope = "chat"            # optional, default "chat"
    description = "..."       # optional, told to the model

    [[policy]]
    name = "gentle-words"
    action = "rewrite"
    pattern = "(?i)\\\\blazy\\\\b"
    replacement = "tired"

Actions:

- ``rewrite``: every match is replaced by ``replacement``. The replacement is
  literal text: ``\\1`` or ``\\g<name>`` are inserted as written, never read as
  back-references, so user text cannot crash the substitution.
- ``block``: if the (rewritten) reply matches, the whole reply is replaced by a
  short note naming the rule and its ``message``.
- ``warn``: matches are recorded as hits; the reply is left alone.

Bad rules never take the good ones down: each problem becomes one line in
``PolicySet.errors`` naming the file and the rule (by name, or ``policy #3``
when unnamed), and the remaining rules still apply. A file that is not valid
TOML yields no rules and one error naming the file and the line.

A rule whose pattern matches empty text is rejected (it would fire on every
reply), and zero-width matches never count as hits.

Patterns are the person's own text, so they run on the maintained ``regex`` engine
(``re``-compatible syntax) with a time budget: a rule that takes more than
:data:`RULE_BUDGET` seconds on a reply is skipped and named in
``LintResult.skipped``; the other rules still apply and the reply is kept. Callers run
:func:`lint` in a worker thread (``regex`` releases the GIL while it matches), so even
that budget never stalls an event loop.
"""

from __future__ import annotations

import re
import time
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import regex

ACTIONS = ("rewrite", "block", "warn")
DEFAULT_SCOPE = "chat"
#: Scopes that make a rule apply everywhere.
ALL_SCOPES = frozenset({"all", "*"})

_KNOWN_KEYS = frozenset(
    {"name", "action", "pattern", "message", "replacement", "scope", "description"}
)
_INLINE_FLAGS = re.compile(r"^\(\?([aiLmsux]+)\)")
#: Seconds one rule may spend on one reply before it is skipped.
RULE_BUDGET = 0.25


@dataclass(frozen=True)
class Policy:
    name: str
    action: str
    pattern: regex.Pattern[str]
    message: str = ""
    replacement: str = ""
    scope: str = DEFAULT_SCOPE
    description: str = ""

    def applies_to(self, scope: str) -> bool:
        return self.scope == scope or self.scope in ALL_SCOPES


@dataclass(frozen=True)
class PolicySet:
    policies: tuple[Policy, ...] = ()
    errors: tuple[str, ...] = ()

    def for_scope(self, scope: str) -> tuple[Policy, ...]:
        """The rules that apply in ``scope`` (``"chat"``, ``"ask"``, …), in file order."""
        return tuple(p for p in self.policies if p.applies_to(scope))


@dataclass(frozen=True)
class PolicyHit:
    policy: str
    action: str
    match: str


@dataclass(frozen=True)
class LintResult:
    text: str
    blocked_by: Policy | None
    hits: tuple[PolicyHit, ...]
    changed: bool
    #: Names of the rules that ran out of time on this reply (see :func:`skip_notice`).
    skipped: tuple[str, ...] = ()


# --------------------------------------------------------------------------- loading


def load_policies(path: Path) -> PolicySet:
    """Read and validate ``path``. A missing file is an empty set with no error."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return PolicySet()
    except OSError as exc:
        reason = exc.strerror or exc.__class__.__name__
        return PolicySet(errors=(f"{path}: cannot read the file: {reason}",))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return PolicySet(errors=(f"{path}: not UTF-8 text, so no policies were loaded",))
    return parse_policies(text, source=str(path))


def parse_policies(text: str, source: str = "policies.toml") -> PolicySet:
    """Parse the text of a policies file; invalid rules become errors, the rest apply."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        reason = _one_line(str(exc))
        error = f"{source}: not valid TOML, so no policies were loaded: {reason}"
        return PolicySet(errors=(error,))

    errors: list[str] = []
    for key in doc:
        if key != "policy":
            errors.append(f"{source}: unknown top-level key {key!r} (ignored; use [[policy]])")
    raw = doc.get("policy", [])
    if not isinstance(raw, list):
        errors.append(f"{source}: 'policy' must be a list of [[policy]] tables")
        return PolicySet(errors=tuple(errors))

    policies: list[Policy] = []
    seen: set[str] = set()
    for position, entry in enumerate(raw, start=1):
        policy = _parse_one(entry, position, source, errors)
        if policy is None:
            continue
        if policy.name in seen:
            errors.append(
                f"{source}: policy {policy.name!r}: duplicate name "
                f"(policy #{position} ignored; the first one applies)"
            )
            continue
        seen.add(policy.name)
        policies.append(policy)
    return PolicySet(policies=tuple(policies), errors=tuple(errors))


def _parse_one(entry: object, position: int, source: str, errors: list[str]) -> Policy | None:
    if not isinstance(entry, dict):
        errors.append(f"{source}: policy #{position}: must be a [[policy]] table")
        return None

    raw_name = entry.get("name")
    named = isinstance(raw_name, str) and raw_name.strip() != ""
    name = raw_name.strip() if isinstance(raw_name, str) and named else f"policy #{position}"
    label = f"{source}: policy {name!r}" if named else f"{source}: policy #{position}"
    ok = True

    def fail(reason: str) -> None:
        nonlocal ok
        ok = False
        errors.append(f"{label}: {reason}")

    if "name" in entry and not named:
        fail("'name' must be non-empty text")

    for key in sorted(set(entry) - _KNOWN_KEYS):
        errors.append(f"{label}: unknown key {key!r} (ignored)")

    strings: dict[str, str] = {}
    for key in ("action", "pattern", "message", "replacement", "scope", "description"):
        value = entry.get(key)
        if value is None:
            continue
        if not isinstance(value, str):
            fail(f"{key!r} must be text, not {type(value).__name__}")
            continue
        strings[key] = value

    action = strings.get("action", "").strip().lower()
    if "action" not in entry:
        fail("missing 'action' (expected rewrite, block or warn)")
    elif "action" in strings and action not in ACTIONS:
        fail(f"unknown action {strings['action']!r} (expected rewrite, block or warn)")

    compiled: regex.Pattern[str] | None = None
    if "pattern" not in entry:
        fail("missing 'pattern'")
    elif "pattern" in strings:
        source_pattern = strings["pattern"]
        if source_pattern == "":
            fail("'pattern' is empty")
        else:
            compiled = _compile(source_pattern, fail)

    if action == "rewrite" and "replacement" not in entry:
        fail("action 'rewrite' needs a 'replacement'")

    scope = strings.get("scope", DEFAULT_SCOPE).strip().lower()
    if "scope" in strings and not scope:
        fail("'scope' is empty")

    if not ok or compiled is None:
        return None
    return Policy(
        name=name,
        action=action,
        pattern=compiled,
        message=strings.get("message", "").strip(),
        replacement=strings.get("replacement", ""),
        scope=scope,
        description=strings.get("description", "").strip(),
    )


def _compile(source: str, fail: Callable[[str], None]) -> regex.Pattern[str] | None:
    """The rule's pattern compiled by the engine lint() runs it on, or ``None`` after a
    field-level error."""
    try:
        compiled = regex.compile(source)
        empty = compiled.search("", timeout=RULE_BUDGET) is not None
    except regex.error as exc:
        fail(f"invalid pattern {source!r}: {_one_line(str(exc))}")
        return None
    except TimeoutError:
        fail(f"pattern {source!r} took more than {RULE_BUDGET:g} s on empty text")
        return None
    if empty:
        fail(f"pattern {source!r} matches empty text, so it would fire on every reply")
        return None
    return compiled


def _one_line(text: str) -> str:
    return " ".join(text.split())


# --------------------------------------------------------------------------- the prompt


def guardrail_block(policies: Sequence[Policy]) -> str:
    """The rules in plain words for the system prompt; ``""`` when there are none.

    Written for a small local model: one short imperative line per rule, the
    strictest rules first (file order within an action), for example::

        Rules for this conversation (they are enforced after you reply):
        - Never write text matching /you (have|adhd)/ (ignoring case). Rule "no-diagnoses":
          sadie does not diagnose. A reply that breaks this rule is withheld.
        - Avoid text matching /\\blazy\\b/. Rule "gentle-words": it will be replaced
          with "tired".
        - Be careful with text matching /money/. Rule "money": it is recorded.
        (Text between slashes is a regular expression.)
    """
    rules = [p for p in policies if p.action in ACTIONS]
    if not rules:
        return ""
    order = {"block": 0, "rewrite": 1, "warn": 2}
    rules.sort(key=lambda p: order[p.action])  # stable: file order within an action
    lines = ["Rules for this conversation (they are enforced after you reply):"]
    lines.extend("- " + _describe(policy) for policy in rules)
    lines.append("(Text between slashes is a regular expression.)")
    return "\n".join(lines)


def _describe(policy: Policy) -> str:
    shown = _show_pattern(policy.pattern)
    rule = f"Rule {_quote(policy.name)}"
    if policy.action == "block":
        line = f"Never write text matching {shown}. {rule}"
        line += f": {_sentence(policy.message)}" if policy.message else "."
        line += " A reply that breaks this rule is withheld."
    elif policy.action == "rewrite":
        if policy.replacement:
            outcome = f"it will be replaced with {_quote(policy.replacement)}."
        else:
            outcome = "it will be removed."
        line = f"Avoid text matching {shown}. {rule}: {outcome}"
    else:
        line = f"Be careful with text matching {shown}. {rule}: it is recorded."
    why = _sentence(policy.description)
    return f"{line} {why}" if why else line


def _show_pattern(pattern: regex.Pattern[str]) -> str:
    text = pattern.pattern
    m = _INLINE_FLAGS.match(text)
    if m:
        text = text[m.end() :]
    note = " (ignoring case)" if pattern.flags & regex.IGNORECASE else ""
    return f"/{_one_line(text)}/{note}"


def _sentence(text: str) -> str:
    text = _one_line(text)
    if text and text[-1] not in ".!?":
        text += "."
    return text


def _quote(text: str) -> str:
    return '"' + _one_line(text).replace('"', "'") + '"'


# --------------------------------------------------------------------------- the lint


def lint(text: str, policies: Sequence[Policy], budget: float = RULE_BUDGET) -> LintResult:
    """Enforce ``policies`` on a finished reply.

    Rewrites are applied first, in file order, each on the output of the one
    before (the replacement is inserted literally). Then block and warn rules are
    checked, in file order, against the rewritten text: the first block rule that
    matches replaces the whole text with :func:`block_note`; warn matches are
    only recorded. Each rule that fires contributes one hit holding its first
    (non-empty) match. A rule that takes more than ``budget`` seconds is skipped
    (its rewrite undone) and named in ``skipped``.
    """
    hits: list[PolicyHit] = []
    skipped: list[str] = []
    current = text
    for policy in policies:
        if policy.action != "rewrite":
            continue
        deadline = time.monotonic() + budget
        try:
            first = _first_match(policy.pattern, current, deadline)
            if first is None:
                continue
            rewritten = policy.pattern.sub(
                _literal(policy.replacement), current, timeout=_left(deadline)
            )
        except TimeoutError:
            skipped.append(policy.name)
            continue
        hits.append(PolicyHit(policy.name, policy.action, first))
        current = rewritten

    blocked_by: Policy | None = None
    for policy in policies:
        if policy.action not in ("block", "warn"):
            continue
        try:
            first = _first_match(policy.pattern, current, time.monotonic() + budget)
        except TimeoutError:
            skipped.append(policy.name)
            continue
        if first is None:
            continue
        hits.append(PolicyHit(policy.name, policy.action, first))
        if policy.action == "block" and blocked_by is None:
            blocked_by = policy

    if blocked_by is not None:
        current = block_note(blocked_by)
    return LintResult(
        text=current,
        blocked_by=blocked_by,
        hits=tuple(hits),
        changed=current != text,
        skipped=tuple(skipped),
    )


def skip_notice(name: str, budget: float = RULE_BUDGET) -> str:
    """The one line that tells the person a rule was skipped on this reply."""
    return (
        f"policy {_quote(name)} skipped: its pattern took more than {budget:g} s on this reply "
        "(simplify it in policies.toml)"
    )


def block_note(policy: Policy) -> str:
    """The short note shown instead of a blocked reply, naming the rule."""
    note = f"This reply was withheld by the policy {_quote(policy.name)}"
    if policy.message:
        return f"{note}: {_sentence(policy.message)}"
    return note + "."


def _left(deadline: float) -> float:
    """Seconds left before ``deadline``; out of time is a TimeoutError, as from ``regex``."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("regex timed out")
    return left


def _first_match(pattern: regex.Pattern[str], text: str, deadline: float) -> str | None:
    for m in pattern.finditer(text, timeout=_left(deadline)):
        if m.end() > m.start():
            return m.group(0)
        _left(deadline)  # many zero-width matches count against the budget too
    return None


def _literal(replacement: str) -> Callable[[regex.Match[str]], str]:
    """A ``sub`` callback inserting ``replacement`` verbatim (no ``\\1`` expansion).

    Zero-width matches are left alone, so a lookahead cannot sprinkle the
    replacement between characters.
    """

    def substitute(m: regex.Match[str]) -> str:
        return replacement if m.end() > m.start() else m.group(0)

    return substitute
