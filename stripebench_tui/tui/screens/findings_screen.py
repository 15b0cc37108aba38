"""The findings of the episode so far (`!`), full screen (Esc closes); and keeping the open request log and findings
screens up to date as a live episode goes on."""

from __future__ import annotations

from typing import Any

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.screen import ModalScreen
from textual.widgets import Footer

from stripebench_tui.core.events import Finding, StripeRequest
from stripebench_tui.tui.screens.request_log_screen import RequestLogScreen
from stripebench_tui.tui.widgets.findings import FindingsPane


class FindingsScreen(ModalScreen["int | None"]):
    """The findings pane; Enter closes it on the finding's turn, ``r`` opens its request in the log."""

    BINDINGS = [Binding("escape,q", "close", "Close"), Binding("r", "open_request", "Its request")]
    DEFAULT_CSS = ("FindingsScreen { align: center middle; } "
                   "FindingsScreen > FindingsPane { width: 90%; height: 80%; background: $surface; }")

    def __init__(self, findings: list[Finding], requests: list[StripeRequest], *, derived: bool = False) -> None:
        super().__init__()
        self.findings, self.requests, self.derived = findings, requests, derived

    def compose(self) -> ComposeResult:
        yield FindingsPane(self.findings, derived=self.derived, id="findings")
        yield Footer()

    def update_episode(self, requests: list[StripeRequest], findings: list[Finding]) -> None:
        """A live episode moved on: list its new findings."""
        self.requests = list(requests)
        if not self.derived and self.is_mounted:
            pane = self.query_one(FindingsPane)
            pane.set_findings(findings)
            self.findings = pane.findings

    def on_mount(self) -> None:
        self.query_one(FindingsPane).table.focus()

    def on_findings_pane_chosen(self, message: FindingsPane.Chosen) -> None:
        self.dismiss(message.finding.turn)

    def action_open_request(self) -> None:
        pane = self.query_one(FindingsPane)
        if not self.findings:
            return
        finding = self.findings[max(0, min(pane.table.cursor_row, len(self.findings) - 1))]
        request_id = next((e["request_id"] for e in finding.evidence if "request_id" in e), "")
        if not request_id:
            self.notify("This finding names no Stripe request.", title="Findings")
            return
        self.app.push_screen(RequestLogScreen(self.requests, request_id=request_id))

    def action_close(self) -> None:
        self.dismiss(None)


def update_open_screens(app: App[Any], requests: list[StripeRequest], findings: list[Finding]) -> None:
    """Bring every request log or findings screen on ``app``'s stack up to date with the episode so far."""
    for screen in app.screen_stack:
        if isinstance(screen, (RequestLogScreen, FindingsScreen)):
            screen.update_episode(requests, findings)


__all__ = ["FindingsScreen", "update_open_screens"]
