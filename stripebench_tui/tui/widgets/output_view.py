"""A tool's output as a scrollable list of lines, drawn on demand so multi-MB outputs stay fast.

The text is split once into lines; each visible line is cleaned of control
sequences only when drawn. Search matches are highlighted in the drawn lines.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from functools import lru_cache
from pathlib import Path

from rich.segment import Segment
from rich.style import Style
from textual.geometry import Region, Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from stripebench_tui.core.sanitize import CUT_MARK, MAX_LINE
from stripebench_tui.tui.text import clean
from stripebench_tui.tui.widgets.titled import TitledPane

# Lines longer than MAX_LINE are cut when drawn (with a marker); the pager and the clipboard get them whole.
STRIPS_KEPT = 512  # drawn lines kept
SPLITS_KEPT = 4  # texts kept split into lines (going back to a turn splits nothing again)
WIDEST = MAX_LINE + len(CUT_MARK.format(n=10**12))


class OutputView(TitledPane, ScrollView, can_focus=True):
    """Read-only, line-based view of untrusted text (never parsed as markup)."""

    DEFAULT_CSS = Path(__file__).with_suffix(".tcss").read_text()
    COMPONENT_CLASSES = {"output--match", "output--current", "output--rule"}

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.text = ""
        self.lines: list[str] = []
        self.rules: set[int] = set()  # lines that are our own separators, not output
        self.search_query: str = ""
        self._pattern: re.Pattern[str] | None = None
        self.current_line: int | None = None
        self._clean_line = lru_cache(maxsize=2048)(self._clean)
        self._paint_styles: dict[str, Style] | None = None  # set per paint by render_lines
        self._strips: OrderedDict[tuple, Strip] = OrderedDict()  # drawn lines, by everything that decides them
        self._split: OrderedDict[str, tuple[list[str], int]] = OrderedDict()  # text → (its lines, the widest's length)

    @staticmethod
    def _clean(raw: str) -> str:
        return clean(raw)  # the same cleaning (and cut) as search and the headless printer

    def set_text(self, text: str, rules: set[int] | None = None) -> None:
        """Show ``text`` from the top; ``rules`` marks separator lines we drew ourselves."""
        self.text = text
        split = self._split.get(text)
        if split is None:
            lines = text.split("\n") if text else []
            split = self._split[text] = (lines, max((len(line) for line in lines), default=0))
            if len(self._split) > SPLITS_KEPT:
                self._split.popitem(last=False)
        else:
            self._split.move_to_end(text)
        self.lines, widest = split
        self.rules = rules or set()
        self.current_line = None  # (the cleaned lines stay cached: cleaning depends on the raw line alone)
        self._set_virtual_size(Size(min(widest, WIDEST), len(self.lines)))
        self.scroll_target_x = self.scroll_x = 0
        self.scroll_target_y = self.scroll_y = 0
        self.refresh()

    def _set_virtual_size(self, size: Size) -> None:
        """Set the scrollable size; ask for a layout of the screen only if that can move or resize anything.

        Assigning ``virtual_size`` always lays the screen out. The pane's own size does not depend on its
        content (its height and width, and its parent's, are not auto), so only a scrollbar appearing or vanishing needs a
        layout; otherwise the new size is set without one and the scrollbars are told the new length.
        """
        if size == self.virtual_size:
            return
        styles = self.styles
        parent = self.parent.styles if self.parent is not None else None
        # Neither this view's size nor (through an auto-sized parent) its parent's can depend on the content.
        fixed = (not styles.is_auto_width and not styles.is_auto_height and parent is not None
                 and not parent.is_auto_width and not parent.is_auto_height)
        width, height = self.container_size
        if not fixed or not width or not height:
            self.virtual_size = size
            return

        def needs(overflow: str, length: int, room: int) -> bool:
            return overflow == "scroll" or (overflow == "auto" and length > room)

        # The same test Textual makes when it lays the view out (one scrollbar takes room from the other).
        horizontal = needs(styles.overflow_x, size.width, width)
        vertical = needs(styles.overflow_y, size.height, height)
        if styles.overflow_x == "auto" and vertical and not horizontal:
            horizontal = size.width > width - styles.scrollbar_size_vertical
        if styles.overflow_y == "auto" and horizontal and not vertical:
            vertical = size.height > height - styles.scrollbar_size_horizontal
        if (vertical, horizontal) != (self.show_vertical_scrollbar, self.show_horizontal_scrollbar):
            self.virtual_size = size  # a scrollbar comes or goes: the content region changes
            return
        self.set_reactive(ScrollView.virtual_size, size)
        if vertical:
            self.vertical_scrollbar.window_virtual_size = size.height
        if horizontal:
            self.horizontal_scrollbar.window_virtual_size = size.width
        self.refresh()

    def set_query(self, query: str) -> None:
        self.search_query = query
        self._pattern = re.compile(re.escape(query), re.IGNORECASE) if query else None
        self.refresh()

    def show_line(self, line: int, col: int = 0, length: int = 0) -> None:
        """Scroll so that ``line`` (and column ``col`` of it) is visible and mark it as the current match."""
        self.current_line = line
        self._scroll_near(line, col, length)
        # Again after the next layout: a new text in the same callback changes the scroll limits.
        self.call_after_refresh(self._scroll_near, line, col, length)

    def _scroll_near(self, line: int, col: int, length: int) -> None:
        region = self.scrollable_content_region
        height, width = max(1, region.height), max(1, region.width)
        target = max(0, min(line - height // 3, self.max_scroll_y))
        self.scroll_target_y = self.scroll_y = target
        x = 0 if col + length <= width else max(0, min(col - width // 3, self.max_scroll_x))
        self.scroll_target_x = self.scroll_x = x
        self.refresh()

    def visible_text(self) -> str:
        top = self.scroll_offset.y
        return "\n".join(self._clean_line(x) for x in self.lines[top : top + self.size.height])

    def render_lines(self, crop: Region) -> list[Strip]:
        # Look the styles up once per paint, not once per line.
        self._paint_styles = self._compute_paint_styles()
        return super().render_lines(crop)

    def _compute_paint_styles(self) -> dict[str, Style]:
        base = self.rich_style
        return {
            "base": base,
            "rule": base + self.get_component_rich_style("output--rule"),
            "match": self.get_component_rich_style("output--match"),
            "current": self.get_component_rich_style("output--current"),
        }

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        number = self.scroll_offset.y + y
        styles = self._paint_styles or self._compute_paint_styles()
        base = styles["base"]
        if number >= len(self.lines):
            return Strip.blank(width, base)
        raw = self.lines[number]
        style = styles["rule"] if number in self.rules else base
        current = number == self.current_line
        x = self.scroll_offset.x
        # A drawn line follows from these alone: kept by them, so that a seek back to a turn draws none again.
        key = (raw, style, base, current, self._pattern, styles["match"], styles["current"], x, width)
        strip = self._strips.get(key)
        if strip is not None:
            self._strips.move_to_end(key)
            return strip
        segments = self._segments(self._clean_line(raw), style, current)
        strip = Strip(segments)
        if x:
            strip = strip.crop(x, x + width)
        strip = self._strips[key] = strip.adjust_cell_length(width, base)
        if len(self._strips) > STRIPS_KEPT:
            self._strips.popitem(last=False)
        return strip

    def _segments(self, line: str, style: Style, current: bool) -> list[Segment]:
        if self._pattern is None:
            return [Segment(line, style)]
        match_style = style + (self._paint_styles or self._compute_paint_styles())["current" if current else "match"]
        out: list[Segment] = []
        pos = 0
        for m in self._pattern.finditer(line):
            if m.start() > pos:
                out.append(Segment(line[pos : m.start()], style))
            out.append(Segment(m.group(0), match_style))
            pos = m.end()
        out.append(Segment(line[pos:], style))
        return out
