"""Making untrusted text (tool output, model text) safe to draw in a terminal."""

from __future__ import annotations

import json
import re
from typing import Any

from rich.text import Text

# CSI (ESC [ … final), OSC (ESC ] … BEL/ST), other two-byte ESC sequences, C1 CSI/OSC.
_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"
    r"|\x1b[@-Z\\-_]"
    r"|\x9b[0-?]*[ -/]*[@-~]"
    r"|\x9d[^\x07\x9c]*[\x07\x9c]?"
)
# Remaining C0/C1 controls except tab and newline; DEL too.
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def clean(text: str, tab_size: int = 4) -> str:
    """``text`` with terminal control sequences and control characters removed, tabs expanded."""
    if not text:
        return ""
    text = _ESCAPES.sub("", text)
    text = text.replace("\r\n", "\n")
    text = _CONTROLS.sub("", text)
    if "\t" in text:
        text = text.expandtabs(tab_size)
    return text


def plain(text: str, style: str = "") -> Text:
    """A Rich ``Text`` of untrusted ``text``: never parsed as markup, controls stripped."""
    return Text(clean(text), style=style)


def pretty_json(value: Any) -> str:
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
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
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
