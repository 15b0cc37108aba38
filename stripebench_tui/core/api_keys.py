"""Stripe API keys as a request carries them: the key in an ``Authorization`` header, and its kind.

A key's kind (``sk_test``, ``rk_live``…) is all a trace or a grader's record may keep of it: enough to tell a
secret key from a restricted or a publishable one, nothing that could be used.
"""

from __future__ import annotations

import base64
import re

_KIND = re.compile(r"(?:sk|rk|pk)_(?:test|live)(?=_)")


def api_key(authorization: str) -> str:
    """The API key in a Bearer or Basic (``key:``) Authorization header; "" when there is none."""
    scheme, _, value = authorization.strip().partition(" ")
    if scheme.lower() == "basic":
        try:
            return base64.b64decode(value.strip()).decode().partition(":")[0]
        except (ValueError, UnicodeDecodeError):
            return ""
    return value.strip() if scheme.lower() == "bearer" else ""


def key_kind(key: str) -> str:
    """``rk_test``, ``sk_live``… for a Stripe key; ``none`` for no key, ``other`` for one of another shape."""
    if not key:
        return "none"
    found = _KIND.match(key)
    return found.group(0) if found else "other"


__all__ = ["api_key", "key_kind"]
