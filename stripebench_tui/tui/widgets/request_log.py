"""The Stripe request log pane: every API request of the episode, like the Dashboard's request logs.

A filter line narrows the list (``4xx``, ``source:app`` or just ``app``, a path fragment such as
``/v1/checkout``, a method); Enter on a request shows its request and response bodies (redacted when recorded).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from rich.console import Group
from rich.syntax import Syntax
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widgets import DataTable, Input, Static

from stripebench_tui.core.events import StripeRequest
from stripebench_tui.tui.text import clean, plain

SOURCES = ("agent", "app", "browser", "grader")
METHODS = ("GET", "POST", "DELETE", "PUT", "PATCH")


@dataclass(frozen=True)
class RequestFilter:
    """What the filter line asks for; empty fields match everything."""

    classes: frozenset[int] = frozenset()  # status // 100
    sources: frozenset[str] = frozenset()
    methods: frozenset[str] = frozenset()
    paths: tuple[str, ...] = ()  # substrings of the path, all of which must match

    @classmethod
    def parse(cls, query: str) -> RequestFilter:
        """``4xx 5xx source:app /v1/checkout POST`` → a filter (unknown words are path fragments)."""
        classes, sources, methods, paths = set(), set(), set(), []
        for word in query.split():
            low = word.lower()
            key, _, value = low.partition(":")
            if value and key in ("status", "source", "path", "method"):
                low, word = value, word.split(":", 1)[1]
            if len(low) == 3 and low[0] in "12345" and low[1:] == "xx":
                classes.add(int(low[0]))
            elif low.isdigit() and len(low) == 3:
                classes.add(int(low[0]))
            elif low in SOURCES:
                sources.add(low)
            elif word.upper() in METHODS:
                methods.add(word.upper())
            else:
                paths.append(word)
        return cls(frozenset(classes), frozenset(sources), frozenset(methods), tuple(paths))

    def matches(self, req: StripeRequest) -> bool:
        return ((not self.classes or req.status // 100 in self.classes)
                and (not self.sources or req.source in self.sources)
                and (not self.methods or req.method in self.methods)
                and all(p in req.path for p in self.paths))


def filter_requests(requests: list[StripeRequest], query: str) -> list[StripeRequest]:
    """The requests the filter line ``query`` keeps, in order."""
    wanted = RequestFilter.parse(query)
    return [r for r in requests if wanted.matches(r)]


def _body(text: str) -> Syntax | Text:
    try:
        pretty = json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except ValueError:
        return Text(clean(text) or "(empty)")
    return Syntax(clean(pretty), "json", theme="ansi_dark", word_wrap=True, background_color="default")


def request_detail(req: StripeRequest) -> Group:
    """One request in full: its line, the fields the log keeps, the request and response bodies."""
    head = Text(clean(f"{req.method} {req.path}") + f" → {req.status}", style="bold red" if req.status >= 400 else "bold")
    facts = [("request id", req.request_id), ("turn", str(req.turn)), ("source", req.source),
             ("error", " ".join(x for x in (req.error_type, req.error_code) if x)),
             ("idempotency key", req.idempotency_key), ("API version", req.api_version),
             ("latency", f"{req.latency * 1000:.1f} ms" if req.latency is not None else ""),
             ("objects", ", ".join(req.object_ids))]
    lines = Text("\n".join(f"{k}: {clean(v)}" for k, v in facts if v), style="dim")
    return Group(head, lines, Text("request", style="bold cyan"), _body(req.request_body),
                 Text("response", style="bold cyan"), _body(req.response_body))


class RequestLogPane(Vertical):
    """Filter line, table of requests, the chosen request's bodies."""

    DEFAULT_CSS = Path(__file__).with_suffix(".tcss").read_text()

    def __init__(self, requests: list[StripeRequest], *, query: str = "", id: str | None = None) -> None:
        super().__init__(id=id)
        self.requests = requests
        self.query_text = query
        self.shown: list[StripeRequest] = []
        self.selected: StripeRequest | None = None

    def compose(self) -> ComposeResult:
        yield Input(value=self.query_text, placeholder="filter: 4xx  source:app  /v1/checkout  POST",
                    id="request-filter")
        yield DataTable(id="request-table", cursor_type="row", zebra_stripes=True)
        with VerticalScroll(id="request-detail-scroll"):
            yield Static(Text("Enter shows a request's bodies.", style="dim italic"), id="request-detail")

    @property
    def table(self) -> DataTable:
        return self.query_one("#request-table", DataTable)

    def on_mount(self) -> None:
        self.table.add_columns("turn", "method", "path", "status", "source", "ms", "request id")
        self.apply_filter(self.query_text)

    def apply_filter(self, query: str) -> None:
        """Show only the requests ``query`` keeps."""
        self.query_text = query
        self.shown = []
        self.table.clear()
        self._add_rows(self.requests)

    def set_requests(self, requests: list[StripeRequest]) -> None:
        """The episode so far made these requests (a live one grows): list the new ones, keep the cursor."""
        if len(requests) <= len(self.requests):
            return
        new = list(requests[len(self.requests):])
        self.requests = list(requests)
        self._add_rows(new)

    def _add_rows(self, requests: list[StripeRequest]) -> None:
        table = self.table
        for req in filter_requests(requests, self.query_text):
            status = Text(str(req.status), style="bold red" if req.status >= 400 else "green")
            took = f"{req.latency * 1000:.0f}" if req.latency is not None else ""
            table.add_row(str(req.turn), plain(req.method), plain(req.path), status, plain(req.source), took,
                          plain(req.request_id), key=str(len(self.shown)))  # recorded text: never markup
            self.shown.append(req)
        self.border_title = f"Stripe requests ({len(self.shown)} of {len(self.requests)})"

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.apply_filter(event.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.table.focus()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.show_request(int(event.row_key.value or 0))

    def show_request(self, index: int) -> None:
        """Show the bodies of the ``index``-th request listed."""
        if not 0 <= index < len(self.shown):
            return
        self.selected = self.shown[index]
        self.query_one("#request-detail", Static).update(request_detail(self.selected))

    def select_request_id(self, request_id: str) -> bool:
        """Move to and show the request with this id (a finding's or a verdict's evidence); False if not listed."""
        for i, req in enumerate(self.shown):
            if req.request_id == request_id:
                self.table.move_cursor(row=i)
                self.show_request(i)
                return True
        return False


__all__ = ["RequestFilter", "RequestLogPane", "filter_requests", "request_detail"]
