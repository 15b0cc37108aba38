"""The human agent's turn: pick a tool, type its arguments as JSON."""

from __future__ import annotations

import json
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Label, Select, TextArea

from stripebench_tui.core.agent import ToolSpec
from stripebench_tui.tui.screens.approve import parse_arguments
from stripebench_tui.tui.screens.dialog import DialogScreen
from stripebench_tui.tui.text import clean

DONE = "__done__"  # the "end the episode" choice


def example_arguments(spec: ToolSpec) -> dict[str, Any]:
    """A skeleton of the tool's required arguments, to start typing from."""
    props = (spec.input_schema or {}).get("properties", {}) or {}
    required = (spec.input_schema or {}).get("required", []) or []
    return {name: "" for name in required if name in props}


class ToolCallScreen(DialogScreen["tuple[str, dict[str, Any]] | None"]):
    """Returns (tool, arguments), (DONE, {}) to end the episode, or None when cancelled."""

    BINDINGS = [Binding("escape", "cancel", "Cancel"), Binding("ctrl+s", "submit", "Run")]

    def __init__(self, tools: list[ToolSpec]) -> None:
        super().__init__()
        self.tools = {t.name: t for t in tools}

    def compose(self) -> ComposeResult:
        options = [(clean(name), name) for name in self.tools] + [("(done: end the episode)", DONE)]
        with Vertical() as box:
            box.border_title = "Your turn: a tool call"
            yield Select(options, prompt="tool", id="call-tool", allow_blank=True)
            yield Label("", classes="help", id="call-description")
            yield TextArea("{}", language="json", id="call-args")
            yield Label("Ctrl+S runs it · Esc cancels", classes="help", id="call-help")

    def on_select_changed(self, event: Select.Changed) -> None:
        spec = self.tools.get(str(event.value))
        if spec is not None:
            self.query_one("#call-description", Label).update(clean(spec.description.splitlines()[0] if spec.description else ""))
            self.query_one(TextArea).text = json.dumps(example_arguments(spec), indent=2)

    def action_submit(self) -> None:
        tool = self.query_one(Select).value
        help_label = self.query_one("#call-help", Label)
        if tool == DONE:
            self.dismiss((DONE, {}))
            return
        if not isinstance(tool, str) or tool not in self.tools:
            help_label.update("Pick a tool first · Esc cancels")
            return
        try:
            self.dismiss((tool, parse_arguments(self.query_one(TextArea).text)))
        except ValueError as exc:
            help_label.update(f"{exc} · Esc cancels")

    def action_cancel(self) -> None:
        self.dismiss(None)
