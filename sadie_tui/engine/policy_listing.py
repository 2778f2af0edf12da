"""The policies file as ``sadie policies --json`` prints it: where it is, whether it exists,
each rule in its file's own words (the pattern as text) and what was wrong with the others."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .policies import Policy, PolicySet


@dataclass(frozen=True)
class PolicyText:
    """One rule as written: its pattern's source text, not the compiled regex."""

    name: str
    action: str
    scope: str
    pattern: str
    message: str
    replacement: str
    description: str

    @classmethod
    def of(cls, policy: Policy) -> PolicyText:
        """The rule ``policy`` as its file wrote it."""
        return cls(
            name=policy.name,
            action=policy.action,
            scope=policy.scope,
            pattern=policy.pattern.pattern,
            message=policy.message,
            replacement=policy.replacement,
            description=policy.description,
        )


@dataclass(frozen=True)
class PolicyListing:
    """The file's path, whether it exists, the rules that apply and the errors of the rest."""

    path: str
    exists: bool
    policies: list[PolicyText]
    errors: list[str]

    @classmethod
    def of(cls, path: Path, exists: bool, loaded: PolicySet) -> PolicyListing:
        """The listing of ``loaded``, read from ``path``."""
        return cls(
            path=str(path),
            exists=exists,
            policies=[PolicyText.of(p) for p in loaded.policies],
            errors=list(loaded.errors),
        )
