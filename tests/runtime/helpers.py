"""Helpers shared by the runtime tests."""

from __future__ import annotations

import json
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "envs"


def trace_lines(path: Path) -> list[dict]:
    """Every complete line of a trace, decoded (header first)."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            pass  # a cut-off last line
    return out


def process_tag(trace: Path) -> str:
    return trace_lines(trace)[0]["extra"]["process_tag"]
