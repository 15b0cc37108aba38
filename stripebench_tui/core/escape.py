"""Recorded text made inert for the files we write: a CSV cell, Markdown text. One function per sink, reused.

Names and outputs in a trace or a batch come from anyone (a folder's name, a model's name, a published grader's
test names, a tool's output), so each sink gets them through its own neutraliser:

- a **terminal**: ``core.sanitize.sanitize`` (escape sequences and controls removed);
- a **Rich/Textual** widget: ``tui.text.plain`` (a ``Text``, never markup);
- **HTML**: Jinja2 with autoescape (``formats.report_html``, ``batch.html``);
- a **CSV cell**: ``csv_cell`` here — the OWASP rule against formula injection: a cell a spreadsheet would read
  as a formula (it starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return, also after leading
  spaces) gets a single quote in front, which spreadsheets show as text; the rest of the cell is kept as it was;
- **Markdown**: ``markdown_text`` here — sanitised, on one line, HTML's ``& < >`` as entities (so no renderer
  builds an element from it, whatever its dialect) and Markdown's own marks backslash-escaped (no emphasis, link,
  code span or table column made by a name).

Pure text handling: no Rich, no Textual, no Jinja2.
"""

from __future__ import annotations

import html
import re

from stripebench_tui.core.sanitize import sanitize

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_LEADING_SPACE = " \t\r\n\x0b\x0c"
_MARKDOWN_MARKS = re.compile(r"([\\`*_\[\]|#~])")


def csv_cell(value: object) -> str:
    """``value`` as a CSV cell no spreadsheet evaluates: ``'`` in front when it would start a formula."""
    text = "" if value is None else str(value)
    if text.startswith(FORMULA_START) or text.lstrip(_LEADING_SPACE).startswith(FORMULA_START):
        return "'" + text
    return text


def markdown_text(value: object) -> str:
    """``value`` as inline Markdown text (a table cell, a heading): one line, no HTML, no Markdown marks."""
    line = " ".join(sanitize(str(value), max_line=None).split())  # the caller cuts: a report says what it left out
    return html.escape(_MARKDOWN_MARKS.sub(r"\\\1", line), quote=False)


__all__ = ["FORMULA_START", "csv_cell", "markdown_text"]
