"""Render an episode report (``formats.report``) as one self-contained HTML file, or as Markdown for an issue.

Jinja2 templates under ``formats/templates/``: the HTML one with autoescape on
(every value is text, never markup), its CSS inline, the chart inline SVG and
screenshots ``data:`` URIs, so the file opens with no network at all. The
Markdown one escapes for Markdown instead (fenced blocks longer than any
backtick run in their content, table cells without pipes or newlines).
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

import jinja2

from stripebench_tui.formats.report import Report

TEMPLATES = Path(__file__).with_name("templates")
FORMATS = ("html", "md")


def _fence(text: str, lang: str = "") -> str:
    """``text`` as a fenced Markdown code block that its own backticks cannot close."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{text}\n{fence}"


def _cell(text: object) -> str:
    """``text`` safe inside a Markdown table cell (and as inline text)."""
    s = " ".join(str(text).split())
    s = re.sub(r"([\\`*_\[\]<>|#])", r"\\\1", s)
    return s


def _quote(text: object) -> str:
    """``text`` as a Markdown block quote, escaped."""
    return "\n".join("> " + _cell(line) for line in str(text).splitlines() or [""])


@lru_cache(maxsize=None)
def _env(fmt: str) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=fmt == "html",
        undefined=jinja2.StrictUndefined,  # a typo in a template is a bug, not an empty string
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(fence=_fence, cell=_cell, quote=_quote)
    return env


def render_report(report: Report, fmt: str = "html") -> str:
    """The report as text in ``fmt`` ("html" or "md")."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown report format {fmt!r}")
    from stripebench_tui import __version__

    return _env(fmt).get_template(f"report.{fmt}.j2").render(r=report, version=__version__)


__all__ = ["FORMATS", "render_report"]
