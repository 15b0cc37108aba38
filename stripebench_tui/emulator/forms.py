"""Decode Stripe's form encoding: ``a[b][c]=1``, ``a[0]=x``, ``a[]=x`` into nested dicts and lists."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qsl

from stripebench_tui.emulator.errors import invalid

_KEY = re.compile(r"^([^\[\]]+)((?:\[[^\[\]]*\])*)$")
_PART = re.compile(r"\[([^\[\]]*)\]")


def parse_form(text: str) -> dict[str, Any]:
    """Parse a query string or form body into nested params; malformed input raises a 400."""
    try:
        pairs = parse_qsl(text, keep_blank_values=True, strict_parsing=False, errors="strict")
    except (UnicodeDecodeError, ValueError) as exc:
        raise invalid(f"Invalid request body: {exc}") from None
    root: dict[str, Any] = {}
    for key, value in pairs:
        match = _KEY.match(key)
        if not match:
            raise invalid(f"Invalid parameter name: {key!r}")
        parts = [match.group(1), *_PART.findall(match.group(2))]
        _insert(root, parts, value, key)
    return _listify(root)


class _Appendable(dict):
    """A hash built from ``a[]=`` entries; becomes a list once parsing ends."""


def _insert(node: dict[str, Any], parts: list[str], value: str, key: str) -> None:
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if part == "":
            # a[]=x: append a new element; a[][b]=x starts a new element when b is already set on the previous one
            if not isinstance(node, _Appendable):
                raise invalid(f"Invalid array: {key}")
            if last:
                node[str(len(node))] = value
                return
            rest = parts[i + 1]
            prev = node.get(str(len(node) - 1))
            if isinstance(prev, dict) and rest not in prev:
                node = prev
            else:
                node[str(len(node))] = {}
                node = node[str(len(node) - 1)]
            continue
        if last:
            if isinstance(node.get(part), dict):
                raise invalid(f"Invalid hash: {key} is sent both as a value and as a hash", param=key)
            node[part] = value
            return
        nxt = node.get(part)
        if nxt is None:
            nxt = _Appendable() if parts[i + 1] == "" else {}
            node[part] = nxt
        elif not isinstance(nxt, dict):
            raise invalid(f"Invalid hash: {key} is sent both as a value and as a hash", param=key)
        node = nxt


def _listify(node: Any) -> Any:
    """Turn hashes whose keys are all integers (``a[0]``, ``a[1]``) or that came from ``a[]`` into lists."""
    if not isinstance(node, dict):
        return node
    items = {k: _listify(v) for k, v in node.items()}
    if isinstance(node, _Appendable) or (items and all(k.isdigit() for k in items)):
        if not all(k.isdigit() for k in items):
            raise invalid("Invalid array: an array cannot also have named keys")
        return [items[k] for k in sorted(items, key=int)]
    return items
