"""Grader verdicts: each criterion's status with its evidence and the turn that last changed it."""

from __future__ import annotations

import json
from collections import OrderedDict
from pathlib import Path

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll

from stripebench_tui.core.events import ERROR, FAIL, PASS, PENDING
from stripebench_tui.core.state import EpisodeState
from stripebench_tui.tui.text import clean
from stripebench_tui.tui.widgets.lines_view import KEPT, LinesView
from stripebench_tui.tui.widgets.titled import TitledPane

VERDICT_GLYPHS = {PASS: ("✔ pass", "bold green"), FAIL: ("✘ fail", "bold red"), PENDING: ("… pending", "yellow"),
                  ERROR: ("! error", "bold magenta")}
EVIDENCE_CHARS = 160


class Verdicts(TitledPane, VerticalScroll):
    """Table of criteria and the total score."""

    DEFAULT_CSS = Path(__file__).with_suffix(".tcss").read_text()

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.summary = ""  # plain text of what is shown, for copy and tests
        self._signature: tuple = ()
        self._held: OrderedDict[tuple, tuple[list[object], str]] = OrderedDict()  # signature → (its evidence, summary)

    def compose(self) -> ComposeResult:
        # Line API: a seek repaints the table, and lays the screen out again only if its height changed.
        yield LinesView(Text("Reading grader verdicts…", style="dim italic"), focusable=False, id="verdicts-table")

    def show(self, state: EpisodeState, selected_turn: int | None) -> None:
        # Stepping between turns that changed no verdict redraws nothing here (a seek repaints every pane it touches).
        # The selected turn only matters (bold) where a criterion last changed at it.
        if not any(c.changed_turn == selected_turn for c in state.verdicts.values()):
            selected_turn = None
        signature = (state.score(), selected_turn, tuple((c.criterion, c.status, c.changed_turn, c.weight, id(c.evidence))
                                                         for c in state.verdicts.values()))
        if signature == self._signature:
            return
        self._signature = signature
        # The view keeps the tables drawn for the last few signatures (going back to one draws nothing again);
        # the evidence objects are held as long as their signature may be, so that no id in it names another object.
        held = self._held.get(signature)
        self._held[signature] = [c.evidence for c in state.verdicts.values()], held[1] if held else ""
        self._held.move_to_end(signature)
        while len(self._held) > KEPT:
            self._held.popitem(last=False)
        score = state.score()
        counts = state.verdict_counts()
        score_text = "–" if score is None else f"{score:.2f}"
        title = f"Verdicts · score {score_text}"
        self.set_title(title)  # repaints the title's line only, and only when it changes
        view = self.query_one(LinesView)
        if held is not None and held[1] and view.show_kept(signature):
            self.summary = held[1]  # drawn before: no table to build
            return
        if not state.verdicts:
            self.summary = "No grader verdicts yet."
            view.update(Text(self.summary, style="dim italic"), key=signature)
            self._held[signature] = self._held[signature][0], self.summary
            return
        table = Table(box=None, expand=True, show_header=True, header_style="bold", pad_edge=False)
        table.add_column("status", no_wrap=True)
        table.add_column("criterion", ratio=1, overflow="ellipsis", no_wrap=True)
        table.add_column("turn", justify="right", no_wrap=True)
        lines = []
        for crit in state.verdicts.values():
            label, style = VERDICT_GLYPHS.get(crit.status, (crit.status, ""))
            name = Text(clean(crit.criterion))
            if crit.weight != 1:
                name.append(f" ×{crit.weight:g}", style="dim")
            changed = Text(str(crit.changed_turn), style="bold reverse" if crit.changed_turn == selected_turn else "")
            table.add_row(Text(label, style=style), name, changed)
            evidence = clean(json.dumps(crit.evidence, default=str, ensure_ascii=False)) if crit.evidence else ""
            if len(evidence) > EVIDENCE_CHARS:
                evidence = evidence[: EVIDENCE_CHARS - 1] + "…"
            if evidence:
                # One line under the criterion, cut with an ellipsis; copy (y) gives it whole.
                table.add_row("", Text(evidence, style="dim", no_wrap=True, overflow="ellipsis"), "")
            caused = f"caused by {crit.request_id}" if crit.request_id else ""
            if caused:  # the Stripe request (in the request log, R) whose event made the grader look again
                table.add_row("", Text(clean(caused), style="dim cyan", no_wrap=True), "")
            lines.append(f"{crit.criterion}: {crit.status} (turn {crit.changed_turn}) {evidence}"
                         + (f" {caused}" if caused else ""))
        total = Text(
            f"score {score_text} · {counts[PASS]} pass · {counts[FAIL]} fail · {counts[PENDING]} pending · {counts[ERROR]} error",
            style="bold",
        )
        self.summary = "\n".join(lines + [total.plain])
        view.update(Group(table, total), key=signature)
        self._held[signature] = self._held[signature][0], self.summary
