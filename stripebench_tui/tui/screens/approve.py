"""Dialogs for the tool call waiting for approval: edit its arguments (JSON), or reject it with a reason."""

from __future__ import annotations

import json
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, Label, TextArea

from stripebench_tui.tui.screens.dialog import DialogScreen
from stripebench_tui.tui.text import clean, plain


def parse_arguments(text: str) -> dict[str, Any]:
    """The JSON object typed in an editor; ValueError with a short reason otherwise."""
    try:
        value = json.loads(text or "{}")
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None
    if not isinstance(value, dict):
        raise ValueError("the arguments must be a JSON object")
    return value


class EditCallScreen(DialogScreen["dict[str, Any] | None"]):
    """A JSON editor prefilled with the call's arguments; Ctrl+S runs the call with them."""

    BINDINGS = [Binding("escape", "cancel", "Cancel"), Binding("ctrl+s", "save", "Run with these arguments")]

    def __init__(self, tool: str, arguments: dict[str, Any]) -> None:
        super().__init__()
        self.tool = tool
        self.arguments = arguments

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = plain(f"Edit the arguments of {self.tool}")  # the agent's tool name: text, not markup
            yield TextArea(json.dumps(self.arguments, indent=2, ensure_ascii=False), language="json", id="edit-args")
            yield Label("Ctrl+S runs the call with these arguments · Esc cancels", classes="help", id="edit-help")

    def action_save(self) -> None:
        try:
            self.dismiss(parse_arguments(self.query_one(TextArea).text))
        except ValueError as exc:
            self.query_one("#edit-help", Label).update(Text.assemble((clean(str(exc)), "bold"), " — fix it, or Esc to cancel"))

    def action_cancel(self) -> None:
        self.dismiss(None)


class RejectScreen(DialogScreen["str | None"]):
    """Asks why the call is rejected (the agent is told); returns the reason, "" for none, None if cancelled."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, tool: str) -> None:
        super().__init__()
        self.tool = tool

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = plain(f"Reject {self.tool}")
            yield Input(placeholder="why (the agent sees this); Enter to reject", id="reject-reason")
            yield Label("Esc cancels", classes="help")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value.strip())

    def action_cancel(self) -> None:
        self.dismiss(None)
