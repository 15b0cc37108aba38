"""The score tables a benchmark README prints (``stripebench scorecard --readme``), read so each cell can be checked.

A table counts when it sits under a heading that names a category (``## Backend``, ``## Full-stack``, ``## Gym``)
and has a model column, a column whose header says "average" and one whose header says "turn". Cells are kept as
printed; their values (``73%`` → 73, ``18 - 71`` → (18, 71)) are read where they can be, else left None, which the
comparison then flags. Markdown is parsed with markdown-it (CommonMark plus tables), not with regular expressions
over lines.
"""

from __future__ import annotations

import re

from markdown_it import MarkdownIt
from markdown_it.token import Token

from stripebench_tui.batch.scorecard import CATEGORY_ORDER, PrintedRow

_PERCENT = re.compile(r"(\d+)\s*%")
_RANGE = re.compile(r"(\d+)\s*(?:-|–|—|to)\s*(\d+)")
_SINGLE = re.compile(r"(\d+)")


def category_of_heading(text: str) -> str | None:
    """The category a heading names (``Full stack`` → ``full-stack``), else None."""
    name = re.sub(r"[\s_]+", "-", text.strip().lower())
    return name if name in CATEGORY_ORDER else None


def read_average(cell: str) -> int | None:
    found = _PERCENT.fullmatch(cell.strip())
    return int(found.group(1)) if found else None


def read_turns(cell: str) -> tuple[int, int] | None:
    text = cell.strip()
    found = _RANGE.fullmatch(text)
    if found:
        return int(found.group(1)), int(found.group(2))
    single = _SINGLE.fullmatch(text)
    return (int(single.group(1)),) * 2 if single else None


def _rows(tokens: list[Token], start: int) -> tuple[list[list[str]], int]:
    """The rows of the table opening at ``tokens[start]`` (header first), and the index after it."""
    rows: list[list[str]] = []
    i = start
    while tokens[i].type != "table_close":
        token = tokens[i]
        if token.type == "tr_open":
            rows.append([])
        elif token.type == "inline" and rows:
            rows[-1].append(token.content)
        i += 1
    return rows, i + 1


def printed_rows(markdown: str) -> list[PrintedRow]:
    """Every model row of the category tables in ``markdown``, in the order printed."""
    tokens = MarkdownIt("commonmark").enable("table").parse(markdown)
    out: list[PrintedRow] = []
    category: str | None = None
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.type == "heading_open":
            category = category_of_heading(tokens[i + 1].content)
        elif token.type == "table_open":
            rows, i = _rows(tokens, i)
            if category is None or not rows:
                continue
            header = [h.lower() for h in rows[0]]
            model = next((n for n, h in enumerate(header) if "model" in h), 0)
            average = next((n for n, h in enumerate(header) if "average" in h), None)
            turns = next((n for n, h in enumerate(header) if "turn" in h), None)
            if average is None or turns is None:
                continue
            for row in rows[1:]:
                if len(row) <= max(model, average, turns) or not row[model].strip():
                    continue
                out.append(PrintedRow(category, row[model].strip(), row[average].strip(), row[turns].strip(),
                                      read_average(row[average]), read_turns(row[turns])))
            continue
        i += 1
    return out


__all__ = ["category_of_heading", "printed_rows", "read_average", "read_turns"]
