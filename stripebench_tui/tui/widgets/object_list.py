"""A grouped list of one-line rows drawn through Textual's line API: header rows and the items under each.

It looks like a ``Tree`` with every branch expanded (a "▼" before each header,
guide lines before its items) but costs far less on a replay seek:

* ``set_rows`` with as many rows as before keeps the virtual size, so it asks
  for no layout of the screen, and repaints only the lines whose label (or
  place in its group) changed; rows it was given before, unchanged, are not
  drawn again.
* Only the rows on screen are rendered, each once per width and style; a
  paint hands out the kept strips (``render_line``). Strips are kept by row
  object, so a caller that keeps its rows (e.g. per turn) and gives them again
  gets them drawn from what was kept.
* Moving the cursor repaints the old and the new cursor line.

Keys while focused: up/down, page up/down move the cursor; home/end move it to
the first/last row when the list is taller than the view (otherwise they are
left to the screen, as a scrolling pane leaves them). A click picks a row.
A cursor moved by the user (keys, click) posts ``ObjectList.Highlighted``; one
set by the program (``set_rows``, ``cursor = …``) posts nothing.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable, Sequence
from typing import NamedTuple

from rich.style import Style
from rich.text import Text
from textual import events
from textual.actions import SkipAction
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

HEADER_ICON = "▼ "
ITEM_GUIDE = "├── "
LAST_GUIDE = "└── "  # before the last item of a group
KEPT_LINES = 512  # rows' strips kept (rows drawn, not rows given): a list shown again draws nothing again


class ObjectRow(NamedTuple):
    """One line: ``header`` rows start a group; the others belong to the header above them."""

    key: Hashable
    label: Text
    header: bool
    data: object = None


class ObjectList(ScrollView, can_focus=True):
    """Rows under headers, with a cursor row; see the module docstring."""

    COMPONENT_CLASSES = {"object-list--cursor", "object-list--guides", "object-list--hover"}

    DEFAULT_CSS = """
    ObjectList {
        background: $surface;
        color: $foreground;
        overflow-x: hidden;
        & > .object-list--guides {
            color: $surface-lighten-2;
        }
        & > .object-list--hover {
            background: $block-hover-background;
        }
        & > .object-list--cursor {
            text-style: $block-cursor-blurred-text-style;
            background: $block-cursor-blurred-background;
        }
        &:focus {
            background-tint: $foreground 5%;
            & > .object-list--cursor {
                color: $block-cursor-foreground;
                background: $block-cursor-background;
                text-style: $block-cursor-text-style;
            }
            & > .object-list--guides {
                color: $surface-lighten-3;
            }
        }
        &:light > .object-list--guides {
            color: $surface-darken-1;
        }
    }
    ObjectList:ansi {
        color: ansi_default;
        & > .object-list--guides {
            color: $ansi-background;
        }
        &:nocolor > .object-list--cursor {
            text-style: reverse;
        }
    }
    """

    BINDINGS = [
        Binding("up", "move('up')", "Cursor up", show=False),
        Binding("down", "move('down')", "Cursor down", show=False),
        Binding("pageup", "move('pageup')", "Page up", show=False),
        Binding("pagedown", "move('pagedown')", "Page down", show=False),
        Binding("home", "move('home')", "First row", show=False),
        Binding("end", "move('end')", "Last row", show=False),
    ]

    class Highlighted(Message):
        """The user moved the cursor to ``row`` (None: no row)."""

        def __init__(self, object_list: ObjectList, index: int | None, row: ObjectRow | None) -> None:
            super().__init__()
            self.object_list = object_list
            self.index = index
            self.row = row

        @property
        def control(self) -> ObjectList:
            return self.object_list

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._rows: list[ObjectRow] = []
        self._last_in_group: list[bool] = []  # per row: an item drawn with the closing guide
        self._cursor: int | None = None
        self._hover: int | None = None  # the row under the mouse
        # id(row) → (row, (drawn as last of its group, as the cursor row, as hovered), strip), drawn at _drawn_with;
        # the row is kept in the entry so that its id is not reused while the entry lives.
        self._strips: OrderedDict[int, tuple[ObjectRow, tuple[bool, bool, bool], Strip]] = OrderedDict()
        self._drawn_with: tuple | None = None  # what the kept strips were drawn with (see _paint_styles)
        self._paint: tuple | None = None  # set per paint by render_lines

    # -- the public API ---------------------------------------------------------------------------------------

    @property
    def rows(self) -> list[ObjectRow]:
        return self._rows

    @property
    def cursor(self) -> int | None:
        """The index of the cursor row, or None."""
        return self._cursor

    @cursor.setter
    def cursor(self, index: int | None) -> None:
        self._set_cursor(index, scroll=True)

    @property
    def cursor_row(self) -> ObjectRow | None:
        return None if self._cursor is None else self._rows[self._cursor]

    def set_rows(self, rows: Sequence[ObjectRow], cursor: int | None = None) -> None:
        """Show ``rows`` with the cursor on row ``cursor`` (None: no cursor row), scrolled into view.

        Lines that draw as before are not repainted; the screen is laid out only if the number of rows changes.
        """
        old, old_last = self._rows, self._last_in_group
        hovered = self._hover_span()
        new = list(rows)
        last = [not row.header and (i + 1 == len(new) or new[i + 1].header) for i, row in enumerate(new)]
        self._rows, self._last_in_group = new, last
        if self._cursor is not None and self._cursor >= len(new):
            self._cursor = None
        if len(new) != len(old):
            self.virtual_size = Size(0, len(new))  # a new height: this (and only this) lays the screen out
            self.refresh()
        else:
            for i, (a, b) in enumerate(zip(old, new, strict=True)):
                if old_last[i] == last[i] and (a is b or (a.header == b.header and a.label == b.label
                                                          and a.label.style == b.label.style)):
                    continue  # drawn as before
                self.refresh_line(i)
            if hovered != self._hover_span():  # the group under the mouse moved: highlight the new one
                for span in (hovered, self._hover_span()):
                    if span is not None:
                        self.refresh_lines(span[0], span[1] - span[0])
        self._set_cursor(cursor, scroll=True)

    def move_cursor(self, key: str) -> bool:
        """Move the cursor as key ``key`` does (up, down, pageup, pagedown, home, end); False if it did not move.

        Posts ``Highlighted`` when it moved.
        """
        count = len(self._rows)
        if not count:
            return False
        page = max(1, self.scrollable_content_region.height - 1)
        current = self._cursor
        if key == "home":
            target = 0
        elif key == "end":
            target = count - 1
        elif current is None:
            target = 0 if key in ("down", "pagedown") else count - 1
        else:
            step = {"up": -1, "down": 1, "pageup": -page, "pagedown": page}[key]
            target = min(count - 1, max(0, current + step))
        if target == current:
            return False
        self._set_cursor(target, scroll=True)
        self.post_message(self.Highlighted(self, target, self._rows[target]))
        return True

    # -- keys and mouse ---------------------------------------------------------------------------------------

    def action_move(self, key: str) -> None:
        if key in ("home", "end") and self.max_scroll_y <= 0:
            raise SkipAction()  # everything in view: Home/End are the screen's (as for any pane with no scrolling)
        self.move_cursor(key)

    def on_mouse_move(self, event: events.MouseMove) -> None:
        offset = event.get_content_offset(self)
        index = None if offset is None else self.scroll_offset.y + offset.y
        self._set_hover(index if index is not None and 0 <= index < len(self._rows) else None)

    def on_leave(self, _event: events.Leave) -> None:
        self._set_hover(None)

    def _set_hover(self, index: int | None) -> None:
        if index == self._hover:
            return
        before = self._hover_span()
        self._hover = index
        for span in (before, self._hover_span()):
            if span is not None:
                self.refresh_lines(span[0], span[1] - span[0])

    def _hover_span(self) -> tuple[int, int] | None:
        """The rows highlighted under the mouse, [start, end): a header's whole group, else the row."""
        index = self._hover
        if index is None or index >= len(self._rows):
            return None
        end = index + 1
        if self._rows[index].header:
            while end < len(self._rows) and not self._rows[end].header:
                end += 1
        return index, end

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        event.stop()
        index = self.scroll_offset.y + offset.y
        if 0 <= index < len(self._rows):
            if index != self._cursor:
                self._set_cursor(index, scroll=True)
            self.post_message(self.Highlighted(self, index, self._rows[index]))

    # -- drawing ----------------------------------------------------------------------------------------------

    def _set_cursor(self, index: int | None, *, scroll: bool) -> None:
        if index is not None and not 0 <= index < len(self._rows):
            index = None
        if index != self._cursor:
            previous, self._cursor = self._cursor, index
            if previous is not None:
                self.refresh_line(previous)
            if index is not None:
                self.refresh_line(index)
        if scroll and index is not None:
            self._scroll_to_cursor()

    def _scroll_to_cursor(self) -> None:
        if self._cursor is None:
            return
        height = self.scrollable_content_region.height
        if height <= 0:
            return  # not laid out yet: on_resize scrolls
        top = self.scroll_offset.y
        if self._cursor < top:
            self.scroll_to(y=self._cursor, animate=False, immediate=True)
        elif self._cursor >= top + height:
            self.scroll_to(y=self._cursor - height + 1, animate=False, immediate=True)

    def on_resize(self) -> None:
        self._scroll_to_cursor()

    def _line_text(self, index: int, guide_style: Style | None = None, cursor_style: Style | None = None) -> Text:
        row = self._rows[index]
        label = row.label
        if cursor_style is not None:
            label = label.copy()
            label.stylize(cursor_style)
        if row.header:
            return Text.assemble(HEADER_ICON, label)
        guide = LAST_GUIDE if self._last_in_group[index] else ITEM_GUIDE
        return Text.assemble((guide, guide_style or ""), label)

    def _paint_styles(self) -> tuple:
        """(width, base style, guides, cursor, hover) as drawn now; the kept strips go when any of them changes."""
        paint = (self.size.width, self.rich_style,
                 self.get_component_rich_style("object-list--guides", partial=True),
                 self.get_component_rich_style("object-list--cursor", partial=False),
                 self.get_component_rich_style("object-list--hover", partial=True))
        if paint != self._drawn_with:
            self._strips.clear()
            self._drawn_with = paint
        return paint

    def render_lines(self, crop: Region) -> list[Strip]:
        self._paint = self._paint_styles()  # looked up once per paint, not once per line
        try:
            return super().render_lines(crop)
        finally:
            self._paint = None

    def render_line(self, y: int) -> Strip:
        width, base, guide_style, cursor_style, hover_style = self._paint or self._paint_styles()
        index = self.scroll_offset.y + y
        if index >= len(self._rows):
            return Strip.blank(width, base)
        row = self._rows[index]
        hover = self._hover_span()
        drawn_as = (self._last_in_group[index], index == self._cursor, hover is not None and hover[0] <= index < hover[1])
        strips = self._strips
        kept = strips.get(id(row))
        if kept is not None and kept[0] is row and kept[1] == drawn_as:
            strips.move_to_end(id(row))
            return kept[2]
        text = self._line_text(index, guide_style, cursor_style if drawn_as[1] else None)
        strip = self._draw(text, width, base + hover_style if drawn_as[2] else base)
        strips[id(row)] = (row, drawn_as, strip)
        strips.move_to_end(id(row))
        if len(strips) > KEPT_LINES:
            strips.popitem(last=False)
        return strip

    def _draw(self, text: Text, width: int, base: Style) -> Strip:
        text.no_wrap = True
        text.end = ""
        return Strip(text.render(self.app.console)).apply_style(base).adjust_cell_length(width, base)
