"""Decode Stripe's form encoding: ``a[b][c]=1``, ``a[0]=x``, ``a[]=x`` into nested dicts and lists."""

from __future__ import annotations

import re
from typing import Any

from stripebench_emulator.model.errors import invalid

_KEY = re.compile(r"^([^\[\]]+)((?:\[[^\[\]]*\])*)$")
_PART = re.compile(r"\[([^\[\]]*)\]")
_ESCAPES = re.compile(r"(?:%[0-9A-Fa-f]{2})+")  # a run of %XX escapes: the bytes of one or more characters
# Brackets one name may nest. The deepest parameter stripe-python declares for any endpoint takes 7
# (``line_items[0][price_data][product_data][metadata][k]`` is 5); deeper is refused before anything is built, which
# also bounds the recursion below, in the compiled build (the C stack) as in plain Python.
MAX_DEPTH = 16


def parse_form(text: str) -> dict[str, Any]:
    """Parse a query string or form body into nested params; malformed input raises a 400."""
    if not text:
        return {}
    flat = _flat(text)
    if flat is not None:
        return flat
    try:
        pairs = _pairs(text)
    except (UnicodeDecodeError, ValueError) as exc:
        raise invalid(f"Invalid request body: {exc}") from None
    root: dict[str, Any] = {}
    nested = False
    for key, value in pairs:
        if key and "[" not in key and "]" not in key:  # a plain name (most of them): no regex, no walk
            if isinstance(root.get(key), dict):
                raise invalid(f"Invalid hash: {key} is sent both as a value and as a hash", param=key)
            root[key] = value
            continue
        if key.count("[") > MAX_DEPTH:
            top = key.partition("[")[0][:100]
            raise invalid(f"Invalid parameter: {top} is nested more than {MAX_DEPTH} levels deep "
                          f"({key.count('[')} brackets); no Stripe parameter goes deeper than {MAX_DEPTH}", param=top)
        match = _KEY.match(key)
        if not match:
            raise invalid(f"Invalid parameter name: {key!r}")
        parts = [match.group(1), *_PART.findall(match.group(2))]
        _insert(root, parts, value, key)
        nested = True
    if not nested:
        return root
    # the top level is always a hash of names (``0=x`` is a parameter named 0, which no endpoint takes), never a list
    return {key: _listify(value) for key, value in root.items()}


def _flat(text: str) -> dict[str, str] | None:
    """The usual form, plain names only, in one pass; None for anything else (brackets, an empty name, bad
    escapes), which the general parser below then takes from the start."""
    root: dict[str, str] = {}
    try:
        for piece in text.split("&"):
            if not piece:
                continue
            name, _, value = piece.partition("=")
            name = _decode(name)
            if not name or "[" in name or "]" in name:
                return None
            root[name] = _decode(value)
    except (UnicodeDecodeError, ValueError):
        return None
    return root


def _pairs(text: str) -> list[tuple[str, str]]:
    """``parse_qsl(text, keep_blank_values=True, errors="strict")``, without its per-pair overhead."""
    pairs = []
    for piece in text.split("&") if text else ():
        if not piece:
            continue
        name, _, value = piece.partition("=")
        pairs.append((_decode(name), _decode(value)))
    return pairs


def _decode(part: str) -> str:
    """One name or value as form encoding means it (``+`` a space, ``%XX`` a UTF-8 byte); most need nothing.

    What ``urllib.parse.unquote(part.replace("+", " "), errors="strict")`` gives, in one regex pass: each run of
    escapes is one UTF-8 byte string (so a character is never split), a ``%`` not followed by two hex digits stays
    as it is, and bytes that are not UTF-8 raise ``UnicodeDecodeError``."""
    if "+" in part:
        part = part.replace("+", " ")
    if "%" in part:
        return _ESCAPES.sub(_unescape, part)
    return part


def _unescape(run: re.Match[str]) -> str:
    return bytes.fromhex(run.group().replace("%", "")).decode()


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


def _listify(node: object) -> Any:
    """Turn hashes whose keys are all integers (``a[0]``, ``a[1]``) or that came from ``a[]`` into lists."""
    if not isinstance(node, dict):
        return node
    items = {k: _listify(v) for k, v in node.items()}
    if isinstance(node, _Appendable) or (items and all(k.isdigit() for k in items)):
        if not all(k.isdigit() for k in items):
            raise invalid("Invalid array: an array cannot also have named keys")
        return [items[k] for k in sorted(items, key=int)]
    return items
