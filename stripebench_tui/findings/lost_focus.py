"""*Lost focus*: browser input that did not land where the agent meant it to, or a page error after which the
agent gave up.

Fires on a browser call whose result says the element was hidden, detached, not editable or outside the page,
or that typing went to "the focused element" right after a navigation (nothing the agent chose had focus); and
when the agent ends (``agent_done``) within ``GIVE_UP_TURNS`` turns of a failed browser call with no browser
call succeeding after it.
"""

from __future__ import annotations

import re

from stripebench_tui.core.events import Event, Finding, ModelMessage, ToolCall, ToolResult
from stripebench_tui.findings.base import finding

NAME = "lost-focus"
GIVE_UP_TURNS = 3
_MISSED = re.compile(r"(?i)not visible|is hidden|hidden element|detached|not attached|not editable|"
                     r"outside of the viewport|element is not an <input>|intercepts pointer events")


class LostFocus:
    """See the module docstring."""

    name = NAME
    wants = (ToolCall.type, ToolResult.type, ModelMessage.type)  # messages: to know the last turn

    def __init__(self) -> None:
        self.calls: dict[str, ToolCall] = {}
        self.last_browser: str = ""  # the previous browser tool
        self.failed: ToolResult | None = None  # the latest failed browser call not followed by a success
        self.last_turn = 0

    def feed(self, event: Event) -> list[Finding] | None:
        self.last_turn = max(self.last_turn, event.turn)
        if isinstance(event, ModelMessage):
            return None
        if isinstance(event, ToolCall):
            if event.tool.startswith("browser_"):
                self.calls[event.call_id] = event
            return None
        assert isinstance(event, ToolResult)
        call = self.calls.pop(event.call_id, None)
        if call is None:
            return None
        previous, self.last_browser = self.last_browser, call.tool
        if event.is_error:
            self.failed = event
            if _MISSED.search(event.output or ""):
                return [finding(NAME, f"{call.tool} {_target(call)} hit an element that cannot take input",
                                [{"call_id": call.call_id}, {"seq": event.seq}], turn=event.turn, seq=event.seq)]
            return None
        self.failed = None
        blind = call.tool in ("browser_type", "browser_press") and not call.arguments.get("field")
        if blind and previous == "browser_navigate" and "the focused element" in (event.output or ""):
            return [finding(NAME, f"{call.tool} went to whatever had focus right after a navigation, not to a "
                                  "chosen field", [{"call_id": call.call_id}, {"seq": event.seq}],
                            turn=event.turn, seq=event.seq)]
        return None

    def finish(self, reason: str) -> list[Finding] | None:
        failed = self.failed
        if reason != "agent_done" or failed is None or self.last_turn - failed.turn > GIVE_UP_TURNS:
            return None
        return [finding(NAME, f"agent gave up {self.last_turn - failed.turn} turn(s) after a failed "
                              f"{failed.tool}", [{"call_id": failed.call_id}, {"seq": failed.seq}],
                        turn=self.last_turn, seq=failed.seq)]


def _target(call: ToolCall) -> str:
    for key in ("field", "target"):
        if call.arguments.get(key):
            return repr(str(call.arguments[key])[:40])
    return ""


__all__ = ["GIVE_UP_TURNS", "LostFocus", "NAME"]
