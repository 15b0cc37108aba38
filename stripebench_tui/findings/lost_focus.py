"""*Lost focus*: browser input that did not land where the agent meant it to, or a page error after which the
agent gave up.

Fires on a browser call whose result says the element was hidden, detached, not editable or outside the page,
or that typing went to "the focused element" right after a navigation (nothing the agent chose had focus); and
when the agent ends (``agent_done``) within ``GIVE_UP_TURNS`` turns of a failed browser call with no browser
call succeeding after it.

Typing into the wrong element: ``browser_type`` into a field says where the keyboard was once the text was typed
(``focus after typing: still in …`` / ``moved to …`` / ``lost …``, see tools/browser.py). When the page moved
focus away mid-typing, the field holds less than was typed and the rest went to another element (or nowhere).
That is repaired by a later ``browser_fill`` of the same field, or a ``browser_type`` into it that kept focus;
the fields still unrepaired when the episode ends get a finding each, at the turn of the typing.
"""

from __future__ import annotations

import re

from stripebench_tui.core.events import Event, Finding, ModelMessage, ToolCall, ToolResult
from stripebench_tui.findings.base import finding

NAME = "lost-focus"
GIVE_UP_TURNS = 3
_MISSED = re.compile(r"(?i)not visible|is hidden|hidden element|detached|not attached|not editable|"
                     r"outside of the viewport|element is not an <input>|intercepts pointer events")
# What browser_type says about the keyboard after typing into a field (tools/browser.py writes these lines).
_KEYS_ELSEWHERE = re.compile(r"(?m)^focus after typing: (?:moved to (?P<to>.*?)(?:: the keys after that|$)|lost\b)")
_KEYS_KEPT = re.compile(r"(?m)^focus after typing: still in ")


class LostFocus:
    """See the module docstring."""

    name = NAME
    wants = (ToolCall.type, ToolResult.type, ModelMessage.type)  # messages: to know the last turn

    def __init__(self) -> None:
        self.calls: dict[str, ToolCall] = {}
        self.last_browser: str = ""  # the previous browser tool
        self.failed: ToolResult | None = None  # the latest failed browser call not followed by a success
        self.last_turn = 0
        self.mistyped: dict[str, tuple[ToolCall, ToolResult, str]] = {}  # field -> typing that lost focus, unrepaired

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
        self._track_typing(call, event)
        blind = call.tool in ("browser_type", "browser_press") and not call.arguments.get("field")
        if blind and previous == "browser_navigate" and "the focused element" in (event.output or ""):
            return [finding(NAME, f"{call.tool} went to whatever had focus right after a navigation, not to a "
                                  "chosen field", [{"call_id": call.call_id}, {"seq": event.seq}],
                            turn=event.turn, seq=event.seq)]
        return None

    def _track_typing(self, call: ToolCall, result: ToolResult) -> None:
        field = call.arguments.get("field")
        if call.tool not in ("browser_type", "browser_fill") or not isinstance(field, str) or not field:
            return
        key = field.strip().casefold()
        output = result.output or ""
        moved = _KEYS_ELSEWHERE.search(output) if call.tool == "browser_type" else None
        if moved is not None:
            self.mistyped[key] = (call, result, (moved.group("to") or "").strip())
        elif call.tool == "browser_fill" or _KEYS_KEPT.search(output):
            self.mistyped.pop(key, None)  # refilled, or typed again and the keys stayed: repaired

    def finish(self, reason: str) -> list[Finding] | None:
        out = [self._mistyped_finding(*entry) for entry in self.mistyped.values()]
        self.mistyped = {}
        failed = self.failed
        if reason != "agent_done" or failed is None or self.last_turn - failed.turn > GIVE_UP_TURNS:
            return out or None
        return out + [finding(NAME, f"agent gave up {self.last_turn - failed.turn} turn(s) after a failed "
                              f"{failed.tool}", [{"call_id": failed.call_id}, {"seq": failed.seq}],
                        turn=self.last_turn, seq=failed.seq)]

    @staticmethod
    def _mistyped_finding(call: ToolCall, result: ToolResult, to: str) -> Finding:
        where = f"went to {to}" if to else "went nowhere (nothing had focus)"
        return finding(NAME, f"{call.tool} {_target(call)}: the page moved focus while typing and the rest {where}; "
                             "the field was never refilled", [{"call_id": call.call_id}, {"seq": result.seq}],
                       turn=result.turn, seq=result.seq)


def _target(call: ToolCall) -> str:
    for key in ("field", "target"):
        if call.arguments.get(key):
            return repr(str(call.arguments[key])[:40])
    return ""


__all__ = ["GIVE_UP_TURNS", "LostFocus", "NAME"]
