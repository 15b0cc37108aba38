"""What happened in the selected turn: the model's message and reasoning, tool calls, their output."""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path

from rich.console import Group, RenderableType
from rich.syntax import Syntax
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical

from stripebench_tui.core.events import Finding, ToolResult
from stripebench_tui.core.state import Turn
from stripebench_tui.formats.text import evidence_text
from stripebench_tui.tui.text import clean, duration, highlight, human_bytes, plain, pretty_json
from stripebench_tui.tui.widgets.lines_view import KEPT, LinesView
from stripebench_tui.tui.widgets.output_view import OutputView

# Arguments bigger than this are shown as plain text: highlighting megabytes of JSON is slow.
HIGHLIGHT_LIMIT = 20_000
DOCUMENTS_KEPT = 4  # output documents kept (a turn's can be megabytes: a few only)
REQUESTS_SHOWN = 12  # request lines listed under a turn; the request log (R) has them all


def arguments_renderable(arguments: object) -> RenderableType:
    """Tool arguments as indented, highlighted JSON (strings inside are data, not markup)."""
    text = clean(pretty_json(arguments))
    if len(text) > HIGHLIGHT_LIMIT:
        return Text(text)
    return Syntax(text, "json", theme="ansi_dark", word_wrap=True, background_color="default")


def output_document(turn: Turn, full_output: Callable[[ToolResult], str]) -> tuple[str, set[int]]:
    """The outputs of a turn's calls as one text, each under a rule line; returns (text, rule line numbers)."""
    chunks: list[str] = []
    rules: set[int] = set()
    for view in turn.calls:
        result = view.result
        if result is None:
            head, body = f"── {view.call.tool}: no result yet ──", ""
        else:
            size = result.output_bytes or len(result.output.encode("utf-8", "replace"))
            bits = [view.call.tool, view.status]
            if result.exit_code is not None:
                bits.append(f"exit {result.exit_code}")
            bits += [duration(result.duration), human_bytes(size)]
            head, body = "── " + " · ".join(b for b in bits if b) + " ──", full_output(result)
        rules.add(len(chunks))
        chunks.append(clean(head))
        chunks.extend(body.split("\n") if body else ["(no output)"])
    if not chunks:
        return "", rules
    return "\n".join(chunks), rules


def turn_key(turn: Turn) -> tuple:
    """What identifies a turn's content: a turn only grows (events are appended), and every event has a later seq."""
    results = sum(1 for view in turn.calls if view.result is not None)
    return (turn.index, turn.first_seq, turn.last_seq, len(turn.messages), len(turn.calls), results,
            len(turn.operator_actions), len(turn.requests), len(turn.findings))


class TurnDetail(Vertical):
    """The selected turn; ``show(turn, full_output)`` redraws it."""

    DEFAULT_CSS = Path(__file__).with_suffix(".tcss").read_text()

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.turn: Turn | None = None
        self.output_text = ""
        self.search_query = ""
        self.message_text = ""  # plain text of the summary, for copy and tests
        self.derived: list[Finding] = []  # this turn's findings derived on open (the trace recorded none): ⚐
        self._documents: OrderedDict[tuple, tuple[str, set[int]]] = OrderedDict()  # output documents, by turn_key
        self._summary_texts: OrderedDict[tuple, str] = OrderedDict()  # summary key → message_text, for the kept ones

    def compose(self) -> ComposeResult:
        # Line API, not a Static: a seek then repaints the summary instead of laying the screen out again.
        yield LinesView(id="turn-summary")
        yield OutputView(id="turn-output")

    @property
    def summary(self) -> LinesView:
        return self.query_one("#turn-summary", LinesView)

    @property
    def output(self) -> OutputView:
        return self.query_one("#turn-output", OutputView)

    def show_message(self, text: str) -> None:
        """Replace the detail with a one-line notice (e.g. an empty episode)."""
        self.turn = None
        self.message_text = text
        self.summary.update(Text(text, style="italic"))
        self.output.set_text("")
        self.output.set_title("Output")

    def show(self, turn: Turn, full_output: Callable[[ToolResult], str], derived: Sequence[Finding] = ()) -> None:
        self.turn = turn
        self.derived = list(derived)
        self.summary.set_title(f"Turn {turn.index}")
        self._draw_summary()
        key = turn_key(turn)
        document = self._documents.get(key)
        if document is None:
            document = output_document(turn, full_output)
            self._documents[key] = document
            if len(self._documents) > DOCUMENTS_KEPT:
                self._documents.popitem(last=False)
        else:
            self._documents.move_to_end(key)
        self.output_text, rules = document
        self.output.set_text(self.output_text or "(no tool calls in this turn)", rules)
        self.output.set_query(self.search_query)
        self.output.set_title(f"Output ({len(turn.calls)} call{'s' if len(turn.calls) != 1 else ''})")

    def set_query(self, query: str) -> None:
        self.search_query = query
        self.output.set_query(query)
        if self.turn is not None:
            self._draw_summary()

    def set_derived(self, derived: Sequence[Finding]) -> None:
        """The shown turn's derived findings, once the detectors have run (redraws the summary only)."""
        if list(derived) != self.derived:
            self.derived = list(derived)
            if self.turn is not None:
                self._draw_summary()

    def _draw_summary(self) -> None:
        turn = self.turn
        assert turn is not None
        # What the summary shows is fixed by the turn's events, the query and the derived findings.
        key = (turn_key(turn), self.search_query, tuple((f.detector, f.message, evidence_text(f.evidence)) for f in self.derived))
        text = self._summary_texts.get(key)
        if text is not None and self.summary.show_kept(key):
            self.message_text = text  # drawn before: nothing to build
            self._summary_texts.move_to_end(key)
            return
        parts: list[RenderableType] = []
        plain_parts: list[str] = []
        header = Text(f"Turn {turn.index} · {turn.actor} · t={turn.start:.1f}s", style="bold")
        if turn.tokens_in or turn.tokens_out:
            header.append(f" · {turn.tokens_in}→{turn.tokens_out} tokens", style="dim")
        parts.append(header)
        for f in turn.findings:  # first: what a detector thinks went wrong here
            parts.append(Text.assemble(("⚑ ", "bold red"), (clean(f.detector), "bold red"), " ", plain(f.message),
                                       (f"  {clean(evidence_text(f.evidence))}", "dim")))
            plain_parts.append(f"finding {f.detector}: {f.message}")
        for f in self.derived if not turn.findings else ():  # recorded ones, if any, are the episode's own
            parts.append(Text.assemble(("⚐ ", "bold yellow"), (clean(f.detector), "bold yellow"), " ", plain(f.message),
                                       (f"  {clean(evidence_text(f.evidence))}", "dim"),
                                       (" · derived on open, not recorded", "italic dim")))
            plain_parts.append(f"finding {f.detector} (derived): {f.message}")
        for msg in turn.messages:
            label = Text(f"{msg.role}:", style="bold cyan")
            body = plain(msg.text)
            highlight(body, self.search_query)
            parts += [label, body]
            plain_parts.append(msg.text)
            if msg.reasoning:
                reasoning = plain(msg.reasoning, style="italic dim")
                highlight(reasoning, self.search_query)
                parts += [Text("reasoning:", style="bold magenta"), reasoning]
                plain_parts.append(msg.reasoning)
        for op in turn.operator_actions:
            parts.append(Text.assemble(("operator ", "bold yellow"), plain(f"{op.action} {op.text}".strip())))
        for view in turn.calls:
            call = view.call
            title = Text.assemble(("⚙ ", "bold"), (clean(call.tool), "bold green"))
            if call.actor != "agent":
                title.append(f" (by {call.actor})", style="yellow")
            parts += [title, arguments_renderable(call.arguments)]
            plain_parts.append(json.dumps(call.arguments, default=str))
        if turn.requests:
            parts.append(Text(f"Stripe requests ({len(turn.requests)}, R for the log):", style="bold"))
            for req in turn.requests[:REQUESTS_SHOWN]:
                style = "red" if req.status >= 400 else ""
                # Status and id first: the pane is narrow and the log (R) has the rest.
                code = f" {req.error_code}" if req.error_code else ""
                line = f"{req.status} {req.request_id} {req.method} {req.path} ({req.source or '?'}){code}"
                parts.append(Text(clean(line), style=style, no_wrap=True, overflow="ellipsis"))
            if len(turn.requests) > REQUESTS_SHOWN:
                parts.append(Text(f"… {len(turn.requests) - REQUESTS_SHOWN} more", style="dim italic"))
        if len(parts) == 1:
            parts.append(Text("(nothing in this turn)", style="dim italic"))
        self.message_text = "\n".join(plain_parts)
        self.summary.update(Group(*parts), key=key)
        self._summary_texts[key] = self.message_text
        while len(self._summary_texts) > KEPT:
            self._summary_texts.popitem(last=False)
