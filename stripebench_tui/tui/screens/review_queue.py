"""The batch grid's review queue (``r`` on the grid): each task × agent's best run first, a key per verdict, the
transcript one key away.

Keys: ``v`` valid, ``i`` infra-failure, ``x`` integrity, ``o`` other (it needs a note); ``n`` writes the note that
goes with the next verdict; Enter or ``t`` opens the run's transcript (Escape comes back here); Escape goes back to
the grid. A verdict is written beside the run's trace at once (``core.review``), and the queue is read again: a best
run judged not valid gives way, so the next best comes to the head.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Input, Static

from stripebench_tui.batch.manifest import Batch
from stripebench_tui.batch.review_queue import BatchRun, QueueItem, batch_queue
from stripebench_tui.core.review import save_review
from stripebench_tui.errors import UserError
from stripebench_tui.tui.text import clean, plain

VERDICT_KEYS = {"v": "valid", "i": "infra-failure", "x": "integrity", "o": "other"}
VERDICT_STYLE = {"valid": "green", "infra-failure": "yellow", "integrity": "bold red", "other": "red"}


class ReviewQueueScreen(Screen[None]):
    """The runs of a batch in review order; ``open_trace`` opens a transcript on top (the grid's own way)."""

    BINDINGS = [*(Binding(key, f"judge('{verdict}')", verdict) for key, verdict in VERDICT_KEYS.items()),
                Binding("n", "note", "Note"), Binding("t", "transcript", "Transcript"),
                Binding("escape", "back", "Grid")]

    def __init__(self, batch: Batch, open_trace: Callable[[Path], None]) -> None:
        super().__init__()
        self.sweep = batch
        self.open_trace = open_trace
        self.queue: list[tuple[QueueItem, BatchRun]] = []

    def compose(self) -> ComposeResult:
        yield Static(id="review-summary")
        yield DataTable(id="review-table", cursor_type="row", zebra_stripes=True)
        yield Input(placeholder="note for the next verdict (n to write, Enter to keep it)", id="review-note")
        yield Footer()

    @property
    def table(self) -> DataTable[Any]:
        return self.query_one("#review-table", DataTable)

    def on_mount(self) -> None:
        for name in ("", "task", "agent", "run", "score", "turns", "verdict", "note"):
            self.table.add_column(name, key=name or "best")
        self.reload()
        self.table.focus()

    def reload(self, keep: int | None = None) -> None:
        """Read the queue again (verdicts change which run is best) and redraw it, the cursor on row ``keep``."""
        self.queue = batch_queue(self.sweep)
        table = self.table
        table.clear()
        for item, run in self.queue:
            verdict = item.run.verdict
            # names and notes are text, never markup (a "[@click=…]" in an agent's name would be a live action)
            table.add_row(Text("best", style="bold") if item.best else Text(""), plain(run.cell.env),
                          plain(run.cell.agent_label), str(run.cell.run), f"{float(item.run.score):.2f}",
                          str(item.run.turns), Text(verdict or "—", style=VERDICT_STYLE.get(verdict or "", "dim")),
                          plain(run.review.note if run.review else ""), key=run.cell.id)
        heads = [q for q, _ in self.queue if q.best]
        reviewed = sum(1 for q in heads if q.run.verdict is not None)
        self.query_one("#review-summary", Static).update(
            f"Review queue · {reviewed} of {len(heads)} best runs reviewed · v valid · i infra-failure · x integrity · "
            "o other · n note · Enter transcript · Escape grid")
        if keep is not None and self.queue:
            table.move_cursor(row=min(keep, len(self.queue) - 1))

    def selected(self) -> BatchRun | None:
        row = self.table.cursor_row
        return self.queue[row][1] if 0 <= row < len(self.queue) else None

    def action_judge(self, verdict: str) -> None:
        run = self.selected()
        if run is None:
            return
        note_box = self.query_one("#review-note", Input)
        if verdict == "other" and not note_box.value.strip():
            self.notify("`other` needs a note saying why: n, write it, Enter, then o.", title="Review",
                        severity="warning")
            return
        try:
            save_review(self.sweep.episode_dir(run.cell), verdict, note_box.value)
        except UserError as exc:
            self.notify(clean(str(exc)), title="Review", severity="error", markup=False)
            return
        note_box.value = ""
        self.reload(keep=self.table.cursor_row + 1)
        self.notify(clean(f"{run.cell.id}: {verdict}"), title="Review", markup=False)

    def action_note(self) -> None:
        self.query_one("#review-note", Input).focus()

    def on_input_submitted(self, _event: Input.Submitted) -> None:
        self.table.focus()  # the note waits for the verdict key

    def action_transcript(self) -> None:
        run = self.selected()
        trace = self.sweep.episode_dir(run.cell) / "trace.jsonl" if run is not None else None
        if trace is None or not trace.is_file():
            self.notify("This run has no transcript.", title="Review")
            return
        self.open_trace(trace)

    def on_data_table_row_selected(self, _event: DataTable.RowSelected) -> None:
        self.action_transcript()  # Enter on a DataTable row arrives as a selection

    def action_back(self) -> None:
        if self.query_one("#review-note", Input).has_focus:
            self.table.focus()
            return
        self.app.pop_screen()


__all__ = ["ReviewQueueScreen", "VERDICT_KEYS"]
