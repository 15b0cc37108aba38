"""*Secret exposure*: a secret or restricted Stripe key written into the workspace's front-end files, or shown by
the browser (a page's text carries one).

Traces are redacted, but the key's prefix is kept (``sk_test_[REDACTED]``), which is enough to tell a secret key
from a publishable one. Front-end means a page template or a file served to the browser (``static/``,
``public/``, ``templates/``…, ``.html``/``.jsx``/``.tsx``/``.vue``/``.svelte``); a Node server's ``server.js`` is not.
"""

from __future__ import annotations

import re

from stripebench_tui.core.events import Event, Finding, ToolCall, ToolResult
from stripebench_tui.findings.base import ERROR, finding, is_edit

NAME = "secret-exposure"
_SECRET = re.compile(r"(?<![A-Za-z0-9])(?:sk|rk)_(?:test|live)_(?:\[REDACTED\]|[A-Za-z0-9]{6,})|STRIPE_SECRET_KEY")
_FRONT_DIR = re.compile(r"(?:^|/)(?:static|public|assets|templates|views|frontend|client|www)/")
_FRONT_EXT = re.compile(r"\.(?:html?|jsx|tsx|vue|svelte|hbs|ejs)$")


def is_front_end(path: str) -> bool:
    """Whether ``path`` is a file the browser gets (or a page template)."""
    return bool(_FRONT_DIR.search(path) or _FRONT_EXT.search(path))


class SecretExposure:
    """See the module docstring."""

    name = NAME
    wants = (ToolCall.type, ToolResult.type)

    def __init__(self) -> None:
        self.browser_calls: set[str] = set()
        self.fired: set[str] = set()

    def feed(self, event: Event) -> list[Finding] | None:
        if isinstance(event, ToolCall):
            if event.tool.startswith("browser_"):
                self.browser_calls.add(event.call_id)
            if not is_edit(event):
                return None
            path = str(event.arguments.get("path", ""))
            text = " ".join(str(event.arguments.get(k, "")) for k in ("content", "new_text", "text"))
            if path in self.fired or not is_front_end(path) or not _SECRET.search(text):
                return None
            self.fired.add(path)
            return [finding(NAME, f"a secret Stripe key goes into the front-end file {path}",
                            [{"call_id": event.call_id}, {"seq": event.seq}], turn=event.turn, seq=event.seq,
                            severity=ERROR)]
        assert isinstance(event, ToolResult)
        if event.call_id not in self.browser_calls:
            return None
        self.browser_calls.discard(event.call_id)
        output = event.output or ""
        if "browser" in self.fired or not ("_test_" in output or "_live_" in output or "SECRET" in output) \
                or not _SECRET.search(output):
            return None
        self.fired.add("browser")
        return [finding(NAME, f"the browser page shows a secret Stripe key ({event.tool})",
                        [{"call_id": event.call_id}, {"seq": event.seq}], turn=event.turn, seq=event.seq,
                        severity=ERROR)]

    def finish(self, reason: str) -> None:
        return None


__all__ = ["NAME", "SecretExposure", "is_front_end"]
