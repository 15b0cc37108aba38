"""The timeline of turns: a virtual list drawn line by line, fast with tens of thousands of turns.

Rows are fetched on demand (only the visible ones) through ``row_for(position)``
and kept in a small cache, so opening a huge trace does not read every turn.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from stripebench_tui.core.state import FAILED, OK, REJECTED, RUNNING
from stripebench_tui.tui.sources.episode_source import TurnRow
from stripebench_tui.tui.text import clean, duration

GLYPHS = {OK: "✔", FAILED: "✘", RUNNING: "…", REJECTED: "⊘", "": "·"}
GLYPH_STYLES = {k: Style.parse(v) for k, v in {OK: "green", FAILED: "bold red", RUNNING: "yellow",
                                               REJECTED: "magenta", "": "dim"}.items()}
ROW_CACHE = 512


class Timeline(ScrollView, can_focus=True, inherit_bindings=False):
    """Turns of the episode, one line each; the cursor is the selected turn."""

    DEFAULT_CSS = Path(__file__).with_suffix(".tcss").read_text()
    # inherit_bindings=False above: left/right/home/end belong to the replay controls, not scrolling.
    BINDINGS = [
        Binding("up,k", "cursor_up", "Up", show=False),
        Binding("down,j", "cursor_down", "Down", show=False),
        Binding("pageup", "page_up", "Page up", show=False),
        Binding("pagedown", "page_down", "Page down", show=False),
    ]
    COMPONENT_CLASSES = {"timeline--cursor", "timeline--future", "timeline--verdict", "timeline--finding"}

    # No repaint of its own: move_to repaints the rows whose look changed (a step: two of them).
    cursor: reactive[int] = reactive(0, always_update=False, init=False, repaint=False)

    class Selected(Message):
        """The user moved the cursor to turn ``position`` (0-based row)."""

        def __init__(self, position: int) -> None:
            self.position = position
            super().__init__()

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.row_count = 0
        self.placeholder = "Reading turns…"
        self._row_for: Callable[[int], TurnRow] | None = None
        self._cache: OrderedDict[int, TurnRow] = OrderedDict()
        self._strips: OrderedDict[tuple, Strip] = OrderedDict()  # drawn lines, by everything that decides them
        self._paint_styles: tuple[Style, ...] | None = None  # set per paint by render_lines
        self.marked: set[int] = set()  # turn numbers with an operator's note
        self.derived: set[int] = set()  # turn numbers with a finding derived on open (not recorded): ⚐
        self.bisect_turn: int | None = None  # the last turn a bisect found a fork still passes from: ⌖

    def set_marked(self, turns: set[int]) -> None:
        """Mark these turn numbers (the noted ones) with ✎."""
        if turns != self.marked:
            self.marked = set(turns)
            self.refresh()

    def set_derived(self, turns: set[int]) -> None:
        """Mark these turn numbers with ⚐: the detectors, run on open, found something there."""
        if turns != self.derived:
            self.derived = set(turns)
            self.refresh()

    def set_bisect(self, turn: int | None) -> None:
        """Mark ``turn`` with ⌖: `stripebench bisect` found it the last from which a fork still passes."""
        if turn != self.bisect_turn:
            self.bisect_turn = turn
            self.refresh()

    def set_rows(self, count: int, row_for: Callable[[int], TurnRow]) -> None:
        """Show ``count`` turns; ``row_for(position)`` loads one row when it scrolls into view."""
        self.row_count = count
        self._row_for = row_for
        self._cache.clear()
        self.virtual_size = Size(self.size.width, count)
        self.refresh()

    def row(self, position: int) -> TurnRow | None:
        if self._row_for is None or not 0 <= position < self.row_count:
            return None
        row = self._cache.get(position)
        if row is None:
            row = self._row_for(position)
            self._cache[position] = row
            if len(self._cache) > ROW_CACHE:
                self._cache.popitem(last=False)
        else:
            self._cache.move_to_end(position)
        return row

    def move_to(self, position: int, *, post: bool = False) -> None:
        """Put the cursor on ``position`` and scroll it into view."""
        if self.row_count == 0:
            return
        position = max(0, min(self.row_count - 1, position))
        old = self.cursor
        self.cursor = position
        # The rows from the old cursor to the new one change (cursor, and dim for turns after the cursor).
        self.refresh_rows(min(old, position), max(old, position))
        self.scroll_to_row(position)
        if post:
            self.post_message(self.Selected(position))

    def scroll_to_row(self, position: int) -> None:
        top = self.scroll_offset.y
        height = max(1, self.scrollable_content_region.height)
        if position < top:
            self.scroll_to(y=position, animate=False, immediate=True)
        elif position >= top + height:
            self.scroll_to(y=position - height + 1, animate=False, immediate=True)

    def refresh_rows(self, first: int, last: int) -> None:
        """Repaint rows ``first``..``last`` (timeline positions) where they are on screen."""
        top = self.scroll_offset.y
        first, last = max(first, top), min(last, top + self.size.height - 1)
        if first <= last:
            self.refresh_lines(first, last - first + 1)  # ScrollView takes content lines, not screen lines

    def action_cursor_up(self) -> None:
        self.move_to(self.cursor - 1, post=True)

    def action_cursor_down(self) -> None:
        self.move_to(self.cursor + 1, post=True)

    def action_page_up(self) -> None:
        self.move_to(self.cursor - max(1, self.size.height - 1), post=True)

    def action_page_down(self) -> None:
        self.move_to(self.cursor + max(1, self.size.height - 1), post=True)

    def on_click(self, event: events.Click) -> None:
        inside = event.get_content_offset(self)  # event.y counts the border row: the row under the pointer is this
        if inside is None:
            return
        position = self.scroll_offset.y + inside.y
        if 0 <= position < self.row_count:
            self.move_to(position, post=True)

    def on_resize(self) -> None:
        self.virtual_size = Size(self.size.width, self.row_count)

    def render_lines(self, crop: Region) -> list[Strip]:
        # Look the styles up once per paint, not once per line: it is most of a line's cost.
        self._paint_styles = self._compute_paint_styles()
        return super().render_lines(crop)

    def _compute_paint_styles(self) -> tuple[Style, ...]:
        base = self.rich_style
        return (
            base,
            base + self.get_component_rich_style("timeline--cursor"),
            base + self.get_component_rich_style("timeline--future"),
            self.get_component_rich_style("timeline--verdict"),
            self.get_component_rich_style("timeline--finding"),
        )

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        position = self.scroll_offset.y + y
        base, cursor_style, future_style, verdict_style, finding_style = self._paint_styles or self._compute_paint_styles()
        if self.row_count == 0:
            text = self.placeholder if y == 0 else ""
            return Strip([Segment(text[:width].ljust(width), base + Style(dim=True))], width)
        row = self.row(position)
        if row is None:
            return Strip.blank(width, base)
        style = base
        if position == self.cursor:
            style = cursor_style
        elif position > self.cursor:
            style = future_style
        # A row's line follows from what it shows alone: drawn lines are kept by that (a seek back draws none again).
        key = (row, style, width, row.index in self.marked, row.index in self.derived, row.index == self.bisect_turn,
               verdict_style, finding_style)
        strip = self._strips.get(key)
        if strip is None:
            strip = self._strips[key] = self._draw_row(row, width, style, verdict_style, finding_style)
            if len(self._strips) > ROW_CACHE:
                self._strips.popitem(last=False)
        else:
            self._strips.move_to_end(key)
        return strip

    def _draw_row(self, row: TurnRow, width: int, style: Style, verdict_style: Style, finding_style: Style) -> Strip:
        actor = {"agent": "A", "operator": "O", "setup": "S"}.get(row.actor, "?")
        tools = clean(", ".join(row.tools)) if row.tools else row.label
        # A finding outranks a verdict change in the one-cell mark column (the detail pane lists both).
        if row.findings:
            mark, mark_style = "⚑", finding_style
        elif row.index in self.derived:  # a finding derived on open, not recorded
            mark, mark_style = "⚐", finding_style
        else:
            mark, mark_style = "◆" if row.verdict_changes else " ", verdict_style
        # The bisect's turn outranks a note in the mark column before the actor (the note stays in the detail pane).
        noted = "⌖" if row.index == self.bisect_turn else "✎" if row.index in self.marked else " "
        left = f"{row.index:>5}{noted}{actor} "
        right = f" {duration(row.duration):>6}"
        middle_width = max(0, width - len(left) - len(right) - 4)
        middle = tools[:middle_width].ljust(middle_width)
        segments = [
            Segment(left, style),
            Segment(GLYPHS.get(row.status, "·"), style + GLYPH_STYLES.get(row.status, GLYPH_STYLES[""])),
            Segment(" ", style),
            Segment(middle, style),
            Segment(mark, style + mark_style),
            Segment(right, style),
        ]
        return Strip(segments).adjust_cell_length(width, style)
