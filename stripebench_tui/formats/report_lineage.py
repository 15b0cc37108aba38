"""The fork tree an episode report draws (``formats.lineage``): each branch as the report shows it, its text
cleaned by the report's own redact-and-sanitise function, and where it sits relative to the reported episode."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from stripebench_tui.core.trace import TraceError
from stripebench_tui.formats.bisect_record import read_bisect
from stripebench_tui.formats.lineage import Branch, read_lineage


@dataclass
class ReportBranch:
    """One fork in the report's tree."""

    name: str
    where: str  # the fork's directory, relative to the reported episode's when it can be
    turn: int | None
    outcome: str
    passed: bool | None
    mode: str
    finding: str
    children: list[ReportBranch] = field(default_factory=list)


@dataclass
class ReportLineage:
    """The reported episode's parent (``parent`` "" for an original run) and its forks."""

    parent: str
    parent_turn: int | None
    forks: int
    root_outcome: str
    root_finding: str
    children: list[ReportBranch]
    bisect_turn: int | None = None
    bisect_agent: str = ""


def _where(path: Path, base: Path) -> str:
    target = path.parent if path.name == "trace.jsonl" else path
    try:
        return os.path.relpath(target, base)
    except ValueError:  # another drive
        return str(target)


def report_lineage(trace_path: Path, clean: Callable[[str], str]) -> ReportLineage | None:
    """The tree of the episode at ``trace_path``; None when it has neither a parent nor a fork (nothing to draw) or
    is not a trace of ours (an ATIF import)."""
    try:
        lineage = read_lineage(trace_path)
    except (TraceError, OSError):
        return None
    bisect = read_bisect(trace_path)
    if lineage.parent is None and not lineage.forks and bisect is None:
        return None
    base = Path(trace_path).resolve().parent

    def branch(b: Branch) -> ReportBranch:
        return ReportBranch(clean(b.name), clean(_where(b.path, base)), b.turn, b.outcome, b.passed if b.ended else None,
                            b.mode, clean(b.first_finding), [branch(c) for c in b.children])

    return ReportLineage(clean(str(lineage.parent)) if lineage.parent is not None else "", lineage.parent_turn,
                         lineage.forks, lineage.root.outcome, clean(lineage.root.first_finding),
                         [branch(c) for c in lineage.root.children],
                         bisect.last_passing if bisect is not None else None,
                         clean(bisect.agent) if bisect is not None else "")


__all__ = ["ReportBranch", "ReportLineage", "report_lineage"]
