"""Refusals as values: every one carries a stable code, rules name their rule id."""

from __future__ import annotations


class DomainError(Exception):
    """Base of every refusal the domain raises; nothing changes when one is raised."""

    def __init__(self, code: str, detail: str, rule: str | None = None) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail
        self.rule = rule


class InvalidInput(DomainError):
    """The request itself is malformed for this game (unknown card, missing field, ...)."""


class RuleViolation(DomainError):
    """The request is well formed but the rules refuse it; `rule` names the rule."""
