"""Stripe's Search Query Language, the subset tasks use: ``email:'a@b.c' AND metadata['k']:'v' OR created>123``.

Clauses: ``field:'value'`` (exact), ``field~'value'`` (substring), ``-field:'value'`` (not), ``field>N`` /
``>=``/``<``/``<=`` on numbers, ``metadata['key']:'value'``, ``field:null``; joined by all-AND or all-OR (Stripe
forbids mixing). Pages use ``page``/``next_page`` tokens, here the offset of the next result.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from typing import Any, cast

from stripebench_emulator.model.context import RequestContext
from stripebench_emulator.model.errors import invalid
from stripebench_emulator.model.params import Int, Param, Str

SEARCH_PARAMS: dict[str, Param] = {"query": Str(required=True, max_length=10000), "limit": Int(min=1, max=100),
                                   "page": Str()}

_CLAUSE = re.compile(r"""\s*(-?)(metadata\[(['"])(?P<key>.+?)\3\]|(?P<field>[a-z_]+))\s*(?P<op>:|~|>=|<=|>|<)\s*"""
                     r"""(?:(['"])(?P<quoted>(?:\\.|(?!\7).)*)\7|(?P<bare>[\w.@+-]+))\s*""")


def parse_query(query: str, fields: set[str]) -> Callable[[dict[str, Any]], bool]:
    """Compile ``query`` into a predicate; unknown fields and bad syntax raise Stripe-style 400s."""
    tokens = re.split(r"\s+(AND|OR)\s+", query.strip())
    clauses, joiners = tokens[0::2], set(tokens[1::2])
    if len(joiners) > 1:
        raise invalid("Query cannot mix AND and OR. Use one or the other.", param="query")
    tests = [_clause(text, fields) for text in clauses]
    if "OR" in joiners:
        return lambda obj: any(t(obj) for t in tests)
    return lambda obj: all(t(obj) for t in tests)


def _clause(text: str, fields: set[str]) -> Callable[[dict[str, Any]], bool]:
    match = _CLAUSE.fullmatch(text)
    if not match:
        raise invalid(f"Invalid query: could not parse '{text}'. Clauses look like field:'value'.", param="query")
    negate, op = match.group(1) == "-", match.group("op")
    raw = match.group("quoted") if match.group("quoted") is not None else match.group("bare")
    value = raw.replace("\\'", "'").replace('\\"', '"')
    key, field = match.group("key"), match.group("field")
    if field is not None and field not in fields:
        raise invalid(f"Field '{field}' is an unsupported search field. Supported: {', '.join(sorted(fields))}.",
                      param="query")

    def lookup(obj: dict[str, Any]) -> Any:
        return (obj.get("metadata") or {}).get(key) if key is not None else obj.get(cast(str, field))

    def test(obj: dict[str, Any]) -> bool:
        actual = lookup(obj)
        if op == ":" and match.group("bare") == "null":
            result = actual is None
        elif op == ":":  # booleans compare as 'true'/'false'
            result = actual is not None and str(actual).lower() == value.lower()
        elif op == "~":
            result = isinstance(actual, str) and value.lower() in actual.lower()
        else:
            try:
                number, bound = float(actual), float(value)
            except (TypeError, ValueError):
                return False
            result = {">": number > bound, "<": number < bound, ">=": number >= bound, "<=": number <= bound}[op]
        return not result if negate else result

    return test


def search_page(ctx: RequestContext, kind: str, params: dict[str, Any], url: str, fields: set[str]) -> dict[str, Any]:
    """A ``search_result`` page of ``kind`` objects matching ``params["query"]``, newest first."""
    predicate = parse_query(params["query"], fields)
    rows = [o for o in ctx.store.scan(kind) if not o.get("deleted") and predicate(o)]
    start = 0
    if params.get("page"):
        if not params["page"].isdigit():
            raise invalid(f"Invalid page: {params['page']}", param="page")
        start = int(params["page"])
    limit = params.get("limit") or 10
    page = [copy.deepcopy(o) for o in rows[start:start + limit]]
    more = start + limit < len(rows)
    return {"object": "search_result", "data": page, "has_more": more, "next_page": str(start + limit) if more else None,
            "url": url}
