"""Replacing a recorded episode's values (paths, ports, URLs) by a new episode's, each in one pass."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from stripebench_tui.core.json_value import JSONValue


def replacer(mapping: list[tuple[str, str]] | dict[str, str]) -> Callable[[str], str]:
    """A function replacing every ``old`` by its ``new`` in one pass, longest match first.

    One pass matters: replacing one pair after another rewrites what an earlier pair wrote whenever a new value
    contains an old one (``/ep/workspace`` → ``/ep2/workspace``, then ``/ep`` → ``/ep2`` would give ``/ep22``).
    """
    pairs = dict(mapping)
    pairs.pop("", None)
    if not pairs:
        return lambda text: text
    pattern = re.compile("|".join(re.escape(old) for old in sorted(pairs, key=len, reverse=True)))
    return lambda text: pattern.sub(lambda m: pairs[m.group(0)], text)


def substitute(value: JSONValue, rewrite: Callable[[str], str]) -> Any:
    """``rewrite`` applied to every string inside ``value`` (dicts and lists walked, keys kept)."""
    if isinstance(value, str):
        return rewrite(value)
    if isinstance(value, dict):
        return {k: substitute(v, rewrite) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, rewrite) for v in value]
    return value


__all__ = ["replacer", "substitute"]
