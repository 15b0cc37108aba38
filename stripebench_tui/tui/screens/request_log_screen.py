"""The Stripe requests of the episode so far (``R``), newest last."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import ModalScreen
from textual.widgets import Footer

from stripebench_tui.core.events import Finding, StripeRequest
from stripebench_tui.tui.widgets.request_log import RequestLogPane


class RequestLogScreen(ModalScreen[None]):
    """The request log pane over the episode screen."""

    BINDINGS = [Binding("escape,q", "close", "Close"), Binding("slash", "filter", "Filter")]
    DEFAULT_CSS = ("RequestLogScreen { align: center middle; } "
                   "RequestLogScreen > RequestLogPane { width: 96%; height: 94%; background: $surface; }")

    def __init__(self, requests: list[StripeRequest], *, query: str = "", request_id: str = "") -> None:
        super().__init__()
        self.requests, self.query_text, self.request_id = requests, query, request_id

    def compose(self) -> ComposeResult:
        yield RequestLogPane(self.requests, query=self.query_text, id="request-log")
        yield Footer()

    @property
    def pane(self) -> RequestLogPane:
        return self.query_one(RequestLogPane)

    def update_episode(self, requests: list[StripeRequest], findings: list[Finding]) -> None:
        """A live episode moved on: list its new requests."""
        if not self.is_mounted:
            return
        self.pane.set_requests(requests)
        self.requests = self.pane.requests

    def on_mount(self) -> None:
        self.pane.table.focus()
        if self.request_id:
            self.call_after_refresh(self.pane.select_request_id, self.request_id)

    def action_filter(self) -> None:
        self.query_one("#request-filter").focus()

    def action_close(self) -> None:
        self.dismiss(None)
