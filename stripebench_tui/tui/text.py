"""Making untrusted text (tool output, model text) safe to draw in a terminal."""

from __future__ import annotations

import json
import re

from rich.text import Text

from stripebench_tui.core.sanitize import sanitize


def clean(text: str) -> str:
    """``text`` safe to draw: the shared sanitiser (``core.sanitize``), which the headless printer uses too."""
    return sanitize(text)


def plain(text: str, style: str = "") -> Text:
    """A Rich ``Text`` of untrusted ``text``: never parsed as markup, controls stripped."""
    return Text(clean(text), style=style)


def pretty_json(value: object) -> str:
    """Indented JSON for display (non-JSON values fall back to ``str``)."""
    try:
        return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False, default=str)
    except (TypeError, ValueError):
        return str(value)


def highlight(text: Text, query: str, style: str = "black on yellow") -> int:
    """Mark every case-insensitive occurrence of ``query`` in ``text``; returns how many."""
    if not query:
        return 0
    return text.highlight_regex(re.compile(re.escape(query), re.IGNORECASE), style=style)


def human_bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


def duration(seconds: float | None) -> str:
    """Short duration: 850ms, 4.2s, 3m05s."""
    if seconds is None:
        return ""
    if seconds < 1:
        return f"{seconds * 1000:.0f}ms"
    if seconds < 60:
        return f"{seconds:.1f}s"
    m, s = divmod(int(seconds), 60)
    if m < 60:
        return f"{m}m{s:02d}s"
    h, m = divmod(m, 60)
    return f"{h}h{m:02d}m"
