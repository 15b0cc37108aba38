"""The human agent's turn: pick a tool, type its arguments as JSON."""

from __future__ import annotations

import json
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.suggester import SuggestFromList
from textual.widgets import Input, Label, TextArea

from stripebench_tui.core.tool_types import ToolSpec
from stripebench_tui.tui.screens.approve import parse_arguments
from stripebench_tui.tui.screens.dialog import DialogScreen
from stripebench_tui.tui.text import clean

DONE = "done"  # typed instead of a tool name: end the episode


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
        names = sorted(self.tools)
        with Vertical() as box:
            box.border_title = "Your turn: a tool call"
            # Typing with completion (→ or Tab accepts) beats scrolling a long list of tools.
            yield Input(placeholder="tool name (→ completes) — or 'done' to end the episode", id="call-tool",
                        suggester=SuggestFromList([*names, DONE], case_sensitive=True))
            yield Label("tools: " + ", ".join(clean(n) for n in names), classes="help", id="call-description",
                        markup=False)
            yield TextArea("{}", language="json", id="call-args")
            yield Label("Enter on the name fills in its arguments · Ctrl+S runs it · Esc cancels", classes="help",
                        id="call-help")

    def on_input_changed(self, event: Input.Changed) -> None:
        spec = self.tools.get(event.value.strip())
        if spec is not None:
            first = spec.description.splitlines()[0] if spec.description else ""
            self.query_one("#call-description", Label).update(f"{clean(spec.name)}: {clean(first)}")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        name = event.value.strip()
        spec = self.tools.get(name)
        if name == DONE:
            self.dismiss((DONE, {}))
        elif spec is None:
            self.query_one("#call-help", Label).update(f"No tool {clean(name)!r} · Esc cancels")
        else:
            area = self.query_one(TextArea)
            area.text = json.dumps(example_arguments(spec), indent=2)
            area.focus()
            area.select_all()  # typing replaces the skeleton; arrow keys keep it to edit

    def action_submit(self) -> None:
        tool = self.query_one(Input).value.strip()
        help_label = self.query_one("#call-help", Label)
        if tool == DONE:
            self.dismiss((DONE, {}))
            return
        if tool not in self.tools:
            help_label.update("Type a tool name first · Esc cancels")
            return
        try:
            self.dismiss((tool, parse_arguments(self.query_one(TextArea).text)))
        except ValueError as exc:
            help_label.update(f"{exc} · Esc cancels")

    def action_cancel(self) -> None:
        self.dismiss(None)
