"""Decoding and checking one trace line: JSON object, known type, fields of the right types.

``events.event_from_dict`` checks the common fields; this adds the payload
checks a reader needs so that a damaged trace fails with a reason naming the
field instead of surfacing later as a crash in a pane.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from stripebench_tui.core.events import (
    EVENT_TYPES,
    SCHEMA,
    SCHEMA_MAJOR,
    SCHEMA_NAME,
    Event,
    EventError,
    Header,
    event_from_dict,
)
from stripebench_tui.core.json_depth import TooDeep, loads


class LineError(ValueError):
    """One line of a trace is unusable; the message is the reason (no path or line number)."""


class NewerSchemaError(LineError):
    """The header names a newer schema major than this build reads."""


def _checker(annotation: object) -> tuple[tuple[type, ...], bool]:
    """(accepted types, None allowed) for a dataclass field annotation written as a string."""
    parts = [p.strip() for p in str(annotation).split("|")]
    nullable = "None" in parts
    types: list[type] = []
    for p in parts:
        base = p.split("[", 1)[0]
        accepted: dict[str, list[type]] = {
            "str": [str],
            "int": [int],
            "float": [int, float],
            "bool": [bool],
            "dict": [dict],
            "list": [list],
        }
        types += accepted.get(base, [])
    return tuple(types), nullable


_FIELD_CHECKS: dict[type[Event], list[tuple[str, tuple[type, ...], bool]]] = {}


def _checks_for(cls: type[Event]) -> list[tuple[str, tuple[type, ...], bool]]:
    checks = _FIELD_CHECKS.get(cls)
    if checks is None:
        checks = []
        for f in dataclasses.fields(cls):
            if f.name in ("seq", "t", "turn"):
                continue
            types, nullable = _checker(f.type)
            if types:
                checks.append((f.name, types, nullable))
        _FIELD_CHECKS[cls] = checks
    return checks


def check_payload(d: dict[str, Any], cls: type[Event]) -> None:
    """Raise LineError if a payload field present in ``d`` has the wrong JSON type."""
    for name, types, nullable in _checks_for(cls):
        if name not in d:
            continue
        value = d[name]
        if value is None:
            if nullable:
                continue
            raise LineError(f"{cls.type} field {name!r} must not be null")
        # bool is a subclass of int: accept it only where a bool is expected.
        if isinstance(value, bool) and bool not in types:
            raise LineError(f"{cls.type} field {name!r} has the wrong type (bool)")
        if not isinstance(value, types):
            raise LineError(f"{cls.type} field {name!r} has the wrong type ({type(value).__name__})")


def decode_json(raw: bytes) -> Any:
    """The JSON value of one line, or LineError."""
    try:
        return loads(raw)  # decoded as UTF-8: json.loads(bytes) would guess UTF-16/32 from the first bytes
    except UnicodeDecodeError:
        raise LineError("not UTF-8 text") from None
    except TooDeep as exc:
        raise LineError(str(exc)) from None
    except json.JSONDecodeError as exc:
        raise LineError(f"not JSON ({exc.msg} at column {exc.colno})") from None


_NAMES: dict[type[Event], frozenset[str]] = {}


def parse_event(raw: bytes, *, drop_output: bool = False) -> Event:
    """The typed event on a (non-header) line, or LineError.

    ``drop_output`` replaces a tool result's output by its size (``output_bytes``), as
    ``Reducer(keep_output=False)`` would, without building the big string into the event.
    """
    d = decode_json(raw)
    if not isinstance(d, dict):
        raise LineError(f"expected a JSON object, found {type(d).__name__}")
    kind = d.get("type")
    if kind == "header":
        raise LineError("a second header line")
    cls = EVENT_TYPES.get(kind)  # type: ignore[arg-type]
    if cls is None:
        try:
            event_from_dict(d)  # raises with the reason
        except EventError as exc:
            raise LineError(str(exc)) from None
        raise LineError(f"unknown event type {kind!r}")  # pragma: no cover
    # The common-field checks of events.event_from_dict, inlined: this runs once per line of huge traces.
    for key, want in (("seq", int), ("t", (int, float)), ("turn", int)):
        value = d.get(key)
        if value is None or isinstance(value, bool) or not isinstance(value, want):
            raise LineError(f"{kind} event lacks {key!r}" if key not in d else f"{kind} event has a non-numeric {key!r}")
    if d["turn"] < 0:  # turn 0 is the set-up, then the agent's turns from 1: a turn before it means nothing
        raise LineError(f"{kind} event has a negative turn ({d['turn']})")
    check_payload(d, cls)
    names = _NAMES.get(cls)
    if names is None:
        names = _NAMES[cls] = frozenset(f.name for f in dataclasses.fields(cls))
    if drop_output and kind == "tool_result" and d.get("output"):
        if d.get("output_bytes") is None:
            d["output_bytes"] = len(d["output"].encode("utf-8", "replace"))
        d["output"] = ""
    return cls(**{k: v for k, v in d.items() if k in names and k != "type"})


def parse_header(raw: bytes) -> Header:
    """The header on line 1, or LineError (NewerSchemaError for a newer schema major)."""
    try:
        d = decode_json(raw)
    except LineError as exc:
        raise LineError(f"not a stripebench trace: the first line is {exc}") from None
    if not isinstance(d, dict):
        raise LineError("not a stripebench trace: the first line is not a JSON object")
    if d.get("type") != "header":
        kind = d.get("type")
        what = f"a {kind} event" if isinstance(kind, str) else "not a header"
        raise LineError(f"the first line is {what}; a trace starts with its header")
    schema = d.get("schema")
    if not isinstance(schema, str):
        raise LineError("the header has no schema")
    name, _, major_text = schema.rpartition("/")
    if name != SCHEMA_NAME or not major_text.isdigit():
        raise LineError(f"not a stripebench trace (schema {schema!r})")
    major = int(major_text)
    if major > SCHEMA_MAJOR:
        raise NewerSchemaError(f"written by a newer stripebench (schema {schema}); this one reads {SCHEMA}")
    if major < SCHEMA_MAJOR:
        raise LineError(f"schema {schema} is older than any this stripebench reads ({SCHEMA})")
    ev = event_from_dict(d)
    check_payload(d, Header)
    assert isinstance(ev, Header)
    return ev


__all__ = ["LineError", "NewerSchemaError", "check_payload", "decode_json", "parse_event", "parse_header"]
