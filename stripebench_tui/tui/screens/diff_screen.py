"""The diff screen: two episodes' turns aligned side by side, the first divergence highlighted.

The table lists the aligned turn pairs (``core.diff``); the two panes below show the selected
pair's calls, arguments and outcome; the bottom pane lists the verdicts and Stripe objects that differ.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from stripebench_tui.core.episode_diff import CHANGED, ONLY_A, ONLY_B, SAME, EpisodeDiff, TurnSide
from stripebench_tui.tui.text import clean

MARK = {SAME: "=", CHANGED: "~", ONLY_A: "A", ONLY_B: "B"}
STYLE = {SAME: "", CHANGED: "yellow", ONLY_A: "red", ONLY_B: "green"}
ARGS_SHOWN = 600  # characters of a call's arguments in the detail panes

DIFF_CSS = """
DiffScreen #diff-summary { height: auto; padding: 0 1; }
DiffScreen #diff-table { height: 1fr; }
DiffScreen #diff-sides { height: 1fr; }
DiffScreen .side { width: 1fr; border: round $primary-darken-2; padding: 0 1; }
DiffScreen #diff-rest { height: auto; max-height: 12; border: round $primary-darken-2; padding: 0 1; }
"""


def _tools(side: TurnSide | None) -> Text:
    if side is None:
        return Text("—", style="dim")
    out = Text()
    for i, (tool, _, status) in enumerate(side.calls):
        out.append(", " if i else "")
        out.append(clean(tool), style="bold red" if status in ("failed", "rejected") else "")
    return out if side.calls else Text(f"({clean(side.text[:40]) or 'no calls'})", style="dim")


def side_detail(side: TurnSide | None, label: str) -> Text:
    """What one side of the selected pair did."""
    if side is None:
        return Text(f"{label}: no such turn here (the other episode has it only).", style="dim")
    out = Text(f"{label} · turn {side.turn} · {side.actor}\n", style="bold")
    if side.text:
        out.append(clean(side.text) + "\n", style="italic")
    for tool, args, status in side.calls:
        out.append(f"→ {clean(tool)} ", style="bold")
        out.append(f"{status}\n", style="red" if status in ("failed", "rejected") else "green")
        shown = args if len(args) <= ARGS_SHOWN else args[: ARGS_SHOWN - 1] + "…"
        out.append(clean(shown) + "\n", style="dim")
    return out


def rest_text(diff: EpisodeDiff) -> Text:
    """Verdicts and objects that differ, and the scores."""
    out = Text()
    a, b = diff.score
    fmt = lambda s: "unscored" if s is None else f"{s:.2f}"
    out.append(f"Score A {fmt(a)} · B {fmt(b)} · {'equivalent' if diff.equivalent else 'not equivalent'}\n", style="bold")
    for v in diff.verdicts:
        if not v.same:
            out.append(f"verdict {clean(v.criterion)}: ", style="bold")
            out.append(f"A {v.timeline('a')}  ·  B {v.timeline('b')}\n")
    for o in diff.objects:
        out.append(f"{clean(o.object_type)} #{o.ordinal}: ", style="bold")
        if o.missing:
            out.append(f"only in {'A' if o.missing == 'b' else 'B'}\n")
            continue
        out.append(", ".join(f"{clean(f.path)} {f.a!r} ≠ {f.b!r}" for f in o.fields[:6]) + "\n")
    return out


class DiffScreen(Screen[None]):
    """Aligned turns of A and B; n/p move between divergences."""

    DEFAULT_CSS = DIFF_CSS
    BINDINGS = [Binding("n", "next_divergence", "Next difference"), Binding("p", "previous_divergence", "Prev difference"),
                Binding("escape", "close", "Back"), Binding("q", "quit", "Quit")]

    def __init__(self, diff: EpisodeDiff, labels: tuple[str, str], *, closable: bool = False) -> None:
        super().__init__()
        self.diff = diff
        self.labels = labels
        self.closable = closable  # opened over another screen (the fork tree's diff): Esc and q go back to it

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return self.closable or action != "close"

    def compose(self) -> ComposeResult:
        yield Static(self._summary(), id="diff-summary")
        yield DataTable(id="diff-table", cursor_type="row", zebra_stripes=False)
        with Horizontal(id="diff-sides"):
            yield VerticalScroll(Static(id="side-a"), classes="side")
            yield VerticalScroll(Static(id="side-b"), classes="side")
        yield VerticalScroll(Static(rest_text(self.diff)), id="diff-rest")
        yield Footer()

    def _summary(self) -> Text:
        d = self.diff
        counts = {k: sum(1 for p in d.pairs if p.kind == k) for k in MARK}
        first = d.first_divergence
        out = Text(f"A {clean(self.labels[0])}   B {clean(self.labels[1])}\n")
        out.append(f"{counts[SAME]} same · {counts[CHANGED]} changed · {counts[ONLY_A]} only in A · "
                   f"{counts[ONLY_B]} only in B · ")
        if first is None:
            out.append("no divergence", style="green")
        else:
            p = d.pairs[first]
            where = " / ".join(f"{n} turn {s.turn}" if s else f"{n} —" for n, s in (("A", p.a), ("B", p.b)))
            out.append(f"first divergence: {where}", style="bold red")
        return out

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns(" ", "A", "A's calls", "B", "B's calls")
        first = self.diff.first_divergence
        for i, pair in enumerate(self.diff.pairs):
            style = STYLE[pair.kind] + (" bold reverse" if i == first else "")
            table.add_row(Text(("▶" if i == first else " ") + MARK[pair.kind], style=style),
                          Text(str(pair.a.turn) if pair.a else "", style=style), _tools(pair.a),
                          Text(str(pair.b.turn) if pair.b else "", style=style), _tools(pair.b), key=str(i))
        table.focus()
        if self.diff.pairs:
            table.move_cursor(row=first if first is not None else 0)
            self.show_pair(first if first is not None else 0)

    @property
    def selected(self) -> int:
        return self.query_one(DataTable).cursor_row

    def show_pair(self, index: int) -> None:
        pair = self.diff.pairs[index]
        self.query_one("#side-a", Static).update(side_detail(pair.a, "A"))
        self.query_one("#side-b", Static).update(side_detail(pair.b, "B"))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if 0 <= event.cursor_row < len(self.diff.pairs):
            self.show_pair(event.cursor_row)

    def _move(self, forward: bool) -> None:
        rows = range(self.selected + 1, len(self.diff.pairs)) if forward else range(self.selected - 1, -1, -1)
        target = next((i for i in rows if self.diff.pairs[i].kind != SAME), None)
        if target is None:
            self.notify(f"No {'later' if forward else 'earlier'} difference.", title="Diff")
            return
        self.query_one(DataTable).move_cursor(row=target)

    def action_next_divergence(self) -> None:
        self._move(True)

    def action_previous_divergence(self) -> None:
        self._move(False)

    def action_close(self) -> None:
        self.dismiss()

    def action_quit(self) -> None:
        if self.closable:
            self.dismiss()
        else:
            self.app.exit()
