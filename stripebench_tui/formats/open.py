"""Open any episode file the app can show: a stripebench trace, or a foreign format converted on the way in.

The core reader (``core.trace.open_trace``) knows only our JSONL traces; the
choice of which other formats to accept lives here, at the edge, so the core
never names the formats package.
"""

from __future__ import annotations

import os

from stripebench_tui.core.trace import NotATraceError, Trace, open_trace
from stripebench_tui.formats import atif

SNIFF_BYTES = 8192  # how much of a file the format sniffers look at

# Foreign formats tried in order when a file is not a stripebench trace; each
# module offers ``sniff(head: bytes) -> bool`` and ``load(path) -> (Header, list[Event])``.
FOREIGN_FORMATS = (atif,)


def open_episode(path: str | os.PathLike[str]) -> Trace:
    """Open a stripebench trace, or an ATIF file converted in memory; TraceError when it is neither."""
    try:
        return open_trace(path)
    except NotATraceError as not_ours:
        with open(not_ours.path, "rb") as f:
            head = f.read(SNIFF_BYTES)
        for module in FOREIGN_FORMATS:
            if module.sniff(head):
                header, events = module.load(not_ours.path)
                return Trace.from_events(not_ours.path, header, events)
        raise


def opened(trace: Trace | str | os.PathLike[str]) -> Trace:
    """``trace`` itself when it is open already, else ``open_episode(trace)``: a command opens an episode once and
    hands the ``Trace`` on, while callers with only a path still may pass that."""
    return trace if isinstance(trace, Trace) else open_episode(trace)


__all__ = ["FOREIGN_FORMATS", "open_episode", "opened"]
