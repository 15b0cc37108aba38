"""Printing grading results: a criteria table for ``grade``, glyphs and evidence lines shared with ``validate``."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from rich.table import Table
from rich.text import Text

from stripebench_tui.core.events import ERROR, FAIL, PASS, PENDING
from stripebench_tui.core.sanitize import sanitize
from stripebench_tui.grading.evaluate import Reported

GLYPHS = {PASS: "✓", FAIL: "✗", PENDING: "…", ERROR: "!"}
STYLES = {PASS: "green", FAIL: "red", PENDING: "yellow", ERROR: "magenta"}
EVIDENCE_CHARS = 300


def evidence_line(evidence: dict[str, Any], limit: int = EVIDENCE_CHARS) -> str:
    """The evidence on one line: the summary first, then the other fields as key=value (app text sanitized)."""
    summary = str(evidence.get("summary", ""))
    rest = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False, default=str)}" for k, v in evidence.items() if k != "summary")
    text = sanitize(" — ".join(p for p in (summary, rest) if p)).replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def status_text(status: str) -> Text:
    """A status as glyph and word, coloured (never parsed as markup)."""
    return Text(f"{GLYPHS.get(status, '?')} {status}", style=STYLES.get(status, ""))


def criteria_table(results: Iterable[Reported], title: str = "") -> Table:
    """One row per criterion: status, weight, name and evidence."""
    table = Table(title=title or None, title_justify="left", expand=False)
    table.add_column("status", no_wrap=True)
    table.add_column("weight", justify="right")
    table.add_column("criterion")
    table.add_column("evidence")
    for r in results:
        table.add_row(status_text(r.status), f"{r.criterion.weight:g}", Text(sanitize(r.criterion.name)),
                      Text(evidence_line(r.evidence())))
    return table


__all__ = ["GLYPHS", "criteria_table", "evidence_line", "status_text"]
