"""Render an episode report (``formats.report``) as one self-contained HTML file, or as Markdown for an issue.

Jinja2 templates under ``formats/templates/``: the HTML one with autoescape on
(every value is text, never markup), its CSS inline, the chart inline SVG and
screenshots ``data:`` URIs, so the file opens with no network at all. What a
browser must build on opening is kept small: each turn is skipped by style and
layout until it nears the viewport (``content-visibility: auto``), and the rest
of a long output is in one data block (a gzipped JSON list in base64: the
parser only scans it, and it is a tenth of the bytes) that a few lines of
inline script turn into a ``<pre>`` when its ``<details>`` is first opened
(the only script in the file; nothing is fetched). The
Markdown one escapes for Markdown instead (fenced blocks longer than any
backtick run in their content; inline text through ``core.escape.markdown_text``: no HTML, no Markdown marks,
no escape sequences, one line).
"""

from __future__ import annotations

import base64
import gzip
import json
import re
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

import jinja2
import markupsafe

from stripebench_tui import __version__
from stripebench_tui.core.escape import markdown_text
from stripebench_tui.formats.episode_report import Report

if TYPE_CHECKING:
    from stripebench_tui.formats.report_recording import EmbeddedRecording

TEMPLATES = Path(__file__).with_name("templates")
FORMATS = ("html", "md")


def _fence(text: str, lang: str = "") -> str:
    """``text`` as a fenced Markdown code block that its own backticks cannot close."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{text}\n{fence}"


def _cell(text: object) -> str:
    """``text`` safe inside a Markdown table cell (and as inline text): the Markdown sink's one neutraliser."""
    return markdown_text(text)


def _quote(text: object) -> str:
    """``text`` as a Markdown block quote, escaped."""
    return "\n".join("> " + _cell(line) for line in str(text).splitlines() or [""])


_BETWEEN_TAGS = re.compile(r">\n+<")


def _tight(markup: str) -> markupsafe.Markup:
    """Rendered HTML without the line breaks between its tags: each would be a whitespace text node in the DOM.

    Escaped text cannot contain a bare ``>``, so this only touches breaks between tags (a ``<pre>`` holding only
    a line break shows nothing either way: the parser drops a newline that opens a ``<pre>``).
    """
    return markupsafe.Markup(_BETWEEN_TAGS.sub("><", str(markup)))


@cache
def _env(fmt: str) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=fmt == "html",
        undefined=jinja2.StrictUndefined,  # a typo in a template is a bug, not an empty string
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(fence=_fence, cell=_cell, quote=_quote, tight=_tight)
    return env


def render_report(report: Report, fmt: str = "html", recording: EmbeddedRecording | None = None) -> str:
    """The report as text in ``fmt`` ("html" or "md"); the HTML plays ``recording`` (``formats.report_recording``)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown report format {fmt!r}")
    outputs: list[str] = []  # the HTML's long-output bodies, in a JSON block, by index
    index: dict[int, int] = {}
    if fmt == "html":
        for turn in report.turns:
            for call in turn.calls:
                if call.output is not None and call.output.body:
                    index[id(call.output)] = len(outputs)
                    outputs.append(call.output.body)
    return _env(fmt).get_template(f"report.{fmt}.j2").render(
        r=report, version=__version__, outputs=pack_outputs(outputs), output_index=lambda output: index[id(output)],
        rec=recording if fmt == "html" else None,
    )


def pack_outputs(outputs: list[str]) -> str:
    """The HTML report's long-output bodies as one string: a JSON list, gzipped (no timestamp: same input, same file), base64."""
    data = json.dumps(outputs, ensure_ascii=False).encode("utf-8")
    return base64.b64encode(gzip.compress(data, compresslevel=6, mtime=0)).decode("ascii")


def unpack_outputs(packed: str) -> list[str]:
    """``pack_outputs`` undone (what the report's script does in the browser)."""
    return json.loads(gzip.decompress(base64.b64decode(packed)))


__all__ = ["FORMATS", "pack_outputs", "render_report", "unpack_outputs"]
