"""Secret redaction applied to every event before it reaches a trace file.

Stripe keys (``sk_``/``rk_``/``pk_`` test and live), webhook signing secrets
(``whsec_``), model providers' keys (Anthropic ``sk-ant-…``, OpenAI ``sk-proj-…``
and ``sk-…``, xAI ``xai-…``), Authorization/Bearer/``x-api-key`` values, the value
of an ``…_API_KEY=``/``…_TOKEN=``/``…_SECRET=``/``…_PASSWORD=`` assignment, and any
value the caller registers are replaced wherever they occur: in strings nested
anywhere in dicts and lists, and in dict keys. The prefix of a key is kept
(``sk_test_[REDACTED]``, ``sk-ant-[REDACTED]``) so a reader can still tell which
kind of key was used.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from stripebench_tui.core.json_value import JSONValue

REDACTED = "[REDACTED]"
MIN_SECRET_LENGTH = 4  # shorter registered values would mangle ordinary text

_STRIPE_KEY = re.compile(r"(?<![A-Za-z0-9])((?:sk|rk|pk)_(?:test|live)_)[A-Za-z0-9]{6,}")
_WEBHOOK_SECRET = re.compile(r"(?<![A-Za-z0-9])(whsec_)[A-Za-z0-9+/=_-]{6,}")
# Model providers: Anthropic sk-ant-api03-…, OpenAI sk-proj-…/sk-svcacct-…/sk-…, xAI xai-…
_PROVIDER_KEY = re.compile(
    r"(?<![A-Za-z0-9_-])(sk-(?:ant-(?:[a-z]+\d*-)?|proj-|svcacct-|admin-)?|xai-)[A-Za-z0-9_-]{16,}"
)
# "Authorization: Bearer xyz", "authorization=Basic xyz", '"Authorization": "xyz"' (JSON-ish text), "x-api-key: xyz"
_AUTH_HEADER = re.compile(
    r"""(?i)((?:authorization|x-api-key|api-key)["']?\s*[:=]\s*["']?)(?:(bearer|basic|token)\s+)?[^\s"',;]+"""
)
_BEARER = re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]{6,}")
# NAME=value where NAME says it holds a credential (the output of `env`, a .env file); a value already
# redacted by a shape above keeps its prefix.
_ASSIGNMENT = re.compile(
    r"(?<![A-Za-z0-9_])([A-Z][A-Z0-9_]*(?:API_?KEY|TOKEN|SECRET|SECRET_KEY|ACCESS_KEY|PRIVATE_KEY|PASSWORD|PASSWD)"
    r"=['\"]?)"
    r"(?![^\s'\"]*\[REDACTED\])[^\s'\"]{4,}"
)
# Text without any of these (in any case) holds none of the shapes above: tested as substrings of the lowered
# text, which is many times faster than one case-insensitive regex alternation over a long tool output.
_QUICK_TOKENS = ("sk_", "rk_", "pk_", "whsec_", "bearer", "authorization", "api-key", "sk-", "xai-")
_QUICK_ASSIGNMENT = re.compile(r"KEY|TOKEN|SECRET|PASSW")
_SENSITIVE_KEYS = {"authorization", "proxy-authorization", "stripe_api_key", "api_key", "secret_key", "x-api-key",
                   "api-key", "anthropic_api_key", "openai_api_key", "xai_api_key"}


def _auth_repl(m: re.Match[str]) -> str:
    scheme = m.group(2)
    return f"{m.group(1)}{scheme + ' ' if scheme else ''}{REDACTED}"


class Redactor:
    """Replaces secrets in strings and nested JSON-like values."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._values: list[str] = []
        self._literal: re.Pattern[str] | None = None
        for value in secrets:
            self.add_secret(value)

    def add_secret(self, value: str) -> None:
        """Register one more literal value to redact (ignored if shorter than MIN_SECRET_LENGTH)."""
        if not isinstance(value, str) or len(value) < MIN_SECRET_LENGTH or value in self._values:
            return
        self._values.append(value)
        # Longest first so a secret that contains another is replaced whole.
        ordered = sorted(self._values, key=len, reverse=True)
        self._literal = re.compile("|".join(re.escape(v) for v in ordered))

    def text(self, s: str) -> str:
        """``s`` with every known kind of secret replaced."""
        if self._literal is not None:
            s = self._literal.sub(REDACTED, s)
        lowered = s.lower()
        if not any(token in lowered for token in _QUICK_TOKENS):
            return _ASSIGNMENT.sub(lambda m: m.group(1) + REDACTED, s) if _QUICK_ASSIGNMENT.search(s) else s
        s = _STRIPE_KEY.sub(lambda m: m.group(1) + REDACTED, s)
        s = _WEBHOOK_SECRET.sub(lambda m: m.group(1) + REDACTED, s)
        s = _PROVIDER_KEY.sub(lambda m: m.group(1) + REDACTED, s)
        s = _AUTH_HEADER.sub(_auth_repl, s)
        s = _BEARER.sub(lambda m: m.group(1) + REDACTED, s)
        s = _ASSIGNMENT.sub(lambda m: m.group(1) + REDACTED, s)
        return s

    def data(self, raw: bytes) -> bytes:
        """``raw`` (a log line) with secrets replaced; bytes that are not UTF-8 pass through unchanged."""
        return self.text(raw.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")

    def value(self, v: object) -> Any:
        """A copy of ``v`` (str, dict, list, tuple or scalar) with secrets replaced everywhere."""
        if isinstance(v, str):
            return self.text(v)
        if isinstance(v, dict):
            out: dict[Any, Any] = {}
            for k, item in v.items():
                key = self.text(k) if isinstance(k, str) else k
                if isinstance(k, str) and k.lower() in _SENSITIVE_KEYS and isinstance(item, str) and item:
                    out[key] = REDACTED
                else:
                    out[key] = self.value(item)
            return out
        if isinstance(v, (list, tuple)):
            return [self.value(item) for item in v]
        return v


# name@host.tld: what a presenter hides of an address (the domain stays, so "a•••@example.com" still reads as an email)
_EMAIL = re.compile(r"(?<![\w.+-])([A-Za-z0-9])[A-Za-z0-9._%+-]*@([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)")


def mask_emails(text: str) -> str:
    """``text`` with each email address's local part masked (for showing an episode to an audience)."""
    return _EMAIL.sub(lambda m: f"{m.group(1)}•••@{m.group(2)}", text) if "@" in text else text


def redact(value: JSONValue, secrets: Iterable[str] = ()) -> Any:
    """One-shot form of ``Redactor(secrets).value(value)``."""
    return Redactor(secrets).value(value)


__all__ = ["MIN_SECRET_LENGTH", "REDACTED", "Redactor", "mask_emails", "redact"]
