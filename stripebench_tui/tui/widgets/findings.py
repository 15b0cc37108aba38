"""The findings pane: what the detectors marked, one line each; Enter jumps to the turn, its evidence below."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Static

from stripebench_tui.core.events import Finding
from stripebench_tui.formats.text import evidence_text
from stripebench_tui.tui.text import clean

SEVERITY_STYLES = {"error": "bold red", "warning": "yellow", "info": "dim"}


class FindingsPane(Vertical):
    """Table of findings (turn, detector, message) and the highlighted one's evidence."""

    DEFAULT_CSS = Path(__file__).with_suffix(".tcss").read_text()

    class Chosen(Message):
        """The user picked a finding (Enter): the screen shows its turn."""

        def __init__(self, finding: Finding) -> None:
            super().__init__()
            self.finding = finding

    def __init__(self, findings: list[Finding], *, derived: bool = False, id: str | None = None) -> None:
        super().__init__(id=id)
        self.findings = findings
        self.derived = derived  # run over the trace on open, not recorded during the episode

    def compose(self) -> ComposeResult:
        yield DataTable(id="findings-table", cursor_type="row", zebra_stripes=True)
        with VerticalScroll(id="finding-detail-scroll"):
            yield Static(id="finding-detail")

    @property
    def table(self) -> DataTable:
        return self.query_one("#findings-table", DataTable)

    def on_mount(self) -> None:
        self.table.add_columns("turn", "finding", "message")
        self._add_rows(0)
        self._detail(0)

    def _add_rows(self, start: int) -> None:
        for i, f in enumerate(self.findings[start:], start):
            self.table.add_row(str(f.turn), Text(clean(f.detector), style=SEVERITY_STYLES.get(f.severity, "")),
                               Text(clean(f.message)), key=str(i))
        how = " · derived on open, not recorded" if self.derived else ""
        self.border_title = f"Findings ({len(self.findings)}{how})"

    def set_findings(self, findings: list[Finding]) -> None:
        """The episode so far has these findings (a live one grows): list the new ones, keep the cursor."""
        if len(findings) <= len(self.findings):
            return
        was_empty = not self.findings
        start = len(self.findings)
        self.findings = list(findings)
        self._add_rows(start)
        if was_empty:
            self._detail(0)

    def _detail(self, index: int) -> None:
        target = self.query_one("#finding-detail", Static)
        if not self.findings:
            target.update(Text("No findings: no detector saw a failure mode in this episode.", style="dim italic"))
            return
        f = self.findings[max(0, min(index, len(self.findings) - 1))]
        how = " · derived (the detectors ran over the trace on open; it recorded no findings)" if self.derived else ""
        target.update(Text.assemble((f"{clean(f.detector)} · turn {f.turn} · {f.severity}", "bold"), (how, "dim"), "\n",
                                    clean(f.message), "\nevidence: ", (clean(evidence_text(f.evidence)), "cyan")))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        self._detail(event.cursor_row)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        index = int(event.row_key.value or 0)
        if 0 <= index < len(self.findings):
            self.post_message(self.Chosen(self.findings[index]))


__all__ = ["FindingsPane"]
