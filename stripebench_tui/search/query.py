"""The query language of ``stripebench search``: what to look for in a folder of episodes.

A query is terms separated by spaces (quote a value with spaces: ``request:'POST /v1/refunds'``):

* ``finding:KIND`` — a detector fired (``finding:400-as-success``);
* ``request:'METHOD PATH'`` or ``request:PATH`` — a Stripe request (``*`` matches anything: ``request:'POST
  /v1/checkout/*'``), optionally followed by ``status:4xx`` / ``status:402``;
* ``tool:NAME`` — a tool call (``tool:browser_type``; ``*`` allowed);
* ``verdict:STATUS`` — a grader verdict turned to pass, fail, error…, optionally followed by ``criterion:NAME``;
* anything else (or ``text:WORDS``) — text in a tool's output, case-insensitive.

Each term is a clause; an episode matches when every clause has a hit in it, and each hit is one turn.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

from stripebench_tui.errors import UserError

KINDS = ("finding", "request", "tool", "verdict", "text")
QUALIFIERS = {"status": "request", "criterion": "verdict"}
STATUS = re.compile(r"^([1-5])(xx|\d\d)$")
MAX_TERM_CHARS = 256  # of one term's value: an eval name, a path, a sentence of output
MAX_WILDCARDS = 16  # of one pattern (request:'POST /v1/checkout/*' has one)


@dataclass(frozen=True)
class Clause:
    kind: str  # one of KINDS
    value: str  # the pattern (a detector, METHOD PATH, a tool, a verdict status, or text)
    qualifiers: dict[str, str] = field(default_factory=dict)  # status for a request, criterion for a verdict

    def __str__(self) -> str:
        extra = "".join(f" {k}:{v}" for k, v in self.qualifiers.items())
        return f"{self.kind}:{self.value!r}{extra}"


def parse(query: str) -> list[Clause]:
    """The clauses of ``query``; UserError (one line) when it does not parse."""
    try:
        tokens = shlex.split(query)
    except ValueError as exc:
        raise UserError(f"the query does not parse: {exc} (quote a value with spaces: request:'POST /v1/refunds')") from None
    if not tokens:
        raise UserError("an empty query; e.g. finding:400-as-success, request:'POST /v1/refunds' status:4xx, "
                        "tool:browser_type, verdict:fail criterion:paid, or words of a tool's output")
    clauses: list[Clause] = []
    words: list[str] = []
    for token in tokens:
        key, sep, value = token.partition(":")
        key = key.lower()
        if not sep or (key not in KINDS and key not in QUALIFIERS):
            words.append(token)
            continue
        if not value:
            raise UserError(f"{key}: needs a value (e.g. {key}:{_EXAMPLE[key]})")
        if key in QUALIFIERS:
            owner = QUALIFIERS[key]
            if not clauses or clauses[-1].kind != owner or key in clauses[-1].qualifiers:
                raise UserError(f"{key}:{value} qualifies a {owner}: term and must follow one "
                                f"(e.g. {owner}:{_EXAMPLE[owner]} {key}:{_EXAMPLE[key]})")
            if key == "status" and not STATUS.match(value.lower()):
                raise UserError(f"status:{value} is not a status; use e.g. status:4xx or status:402")
            last = clauses.pop()
            clauses.append(Clause(last.kind, last.value, {**last.qualifiers, key: value.lower()}))
        elif key == "text":
            words.append(value)
        else:
            clauses.append(Clause(key, value if key == "request" else value.lower()))
    if words:
        clauses.append(Clause("text", " ".join(words).lower()))
    for clause in clauses:
        _check_size(clause)
    return clauses


def _check_size(clause: Clause) -> None:
    """UserError for a term too long or too wild to search quickly (the index's trigrams and SQLite's GLOB both
    slow down with the pattern's length; SQLite refuses a pattern of thousands of wildcards outright)."""
    for value in (clause.value, *clause.qualifiers.values()):
        if len(value) > MAX_TERM_CHARS:
            raise UserError(f"a search term of {len(value):,} characters is longer than the {MAX_TERM_CHARS} allowed; "
                            "search for a shorter part of it")
        if clause.kind != "text" and sum(value.count(c) for c in "*?[") > MAX_WILDCARDS:
            raise UserError(f"{clause.kind}:{value[:40]}… has more than {MAX_WILDCARDS} wildcards (* ? [); "
                            "one * stands for any run of characters")


_EXAMPLE = {"finding": "400-as-success", "request": "'POST /v1/refunds'", "tool": "browser_type", "verdict": "fail",
            "text": "word", "status": "4xx", "criterion": "paid"}


def status_matches(pattern: str, status: int) -> bool:
    """``4xx`` matches 400–499; ``402`` matches 402."""
    found = STATUS.match(pattern)
    if found is None:
        return False
    return str(status).startswith(found.group(1)) if found.group(2) == "xx" else str(status) == pattern


__all__ = ["Clause", "KINDS", "MAX_TERM_CHARS", "MAX_WILDCARDS", "parse", "status_matches"]
