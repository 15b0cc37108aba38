"""A Rich renderable drawn through Textual's line API: replacing it repaints, and relayouts only if its height changes.

``Static.update`` always asks for a layout of the screen (its size may depend on
the content). Here the renderable is rendered once into strips at the widget's
width, ``render_line`` hands them out, and the virtual size (the height an
``height: auto`` pane takes) changes only when the number of lines does.

A caller that can name what it shows passes ``key`` to ``update``: the strips
rendered for a key (at a width and style) are kept for the last few keys, so
going back to something shown before renders nothing again, and showing the
same key again repaints nothing.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable

from rich.console import RenderableType
from rich.style import Style
from rich.text import Text
from textual.geometry import Region, Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from stripebench_tui.tui.widgets.titled import TitledPane

KEPT = 8  # rendered renderables kept per view, by key


class LinesView(TitledPane, ScrollView, can_focus=True):
    """Scrollable view of one Rich renderable, wrapped to the width of the widget."""

    DEFAULT_CSS = """
    LinesView {
        width: 1fr;
        overflow-x: hidden;
    }
    """

    def __init__(self, renderable: RenderableType = "", *, focusable: bool = True, id: str | None = None) -> None:
        super().__init__(id=id)
        self.can_focus = focusable  # False inside a scrolling container that takes the focus itself
        self.renderable: RenderableType = renderable
        self._strips: list[Strip] = []
        self._width = 0  # the width self._strips were rendered at; 0: not yet
        self._key: Hashable | None = None  # the caller's name for the renderable shown (None: unnamed)
        self._style: Style | None = None  # the base style self._strips were rendered with
        self._kept: OrderedDict[tuple, list[Strip]] = OrderedDict()  # (key, width, style) → strips
        self._paint_style: Style | None = None  # set per paint by render_lines
        self._renderables: OrderedDict[Hashable, RenderableType] = OrderedDict()  # key → renderable, for show_kept

    def on_mount(self) -> None:
        if not self._width and not self.virtual_size.height:
            # Not laid out yet: one line for now, so that an auto-height view gets a size (and a resize) at all.
            self.virtual_size = Size(0, 1)

    def update(self, renderable: RenderableType, key: Hashable | None = None) -> None:
        """Show ``renderable`` from the top; ``key`` names it (the same key must mean the same renderable)."""
        width = self._content_width()
        if key is not None and key == self._key and width == self._width and width > 0:
            style = self.rich_style
            if style == self._style:
                self.renderable = renderable
                self.scroll_to(0, 0, animate=False, immediate=True)  # nothing to draw again
                return
        self.renderable = renderable
        self._key = key
        if key is not None:
            self._renderables[key] = renderable  # to draw it again at another width (show_kept, a resize)
            self._renderables.move_to_end(key)
            while len(self._renderables) > KEPT:
                self._renderables.popitem(last=False)
        self._width = 0
        self.scroll_to(0, 0, animate=False, immediate=True)
        self._render_strips(width)
        self.refresh()

    def show_kept(self, key: Hashable) -> bool:
        """Show what was drawn for ``key`` if it is still kept at this width (True), so that the caller need not
        build the renderable again; False: call ``update``."""
        width = self._content_width()
        if width <= 0:
            return False
        if key == self._key and width == self._width and self.rich_style == self._style:
            self.scroll_to(0, 0, animate=False, immediate=True)
            return True
        renderable = self._renderables.get(key)
        if renderable is None or (key, width, self.rich_style) not in self._kept:
            return False
        self.update(renderable, key)  # the strips come from the kept ones: nothing is drawn
        return True

    def _content_width(self) -> int:
        return self.scrollable_content_region.width

    def _render_strips(self, width: int) -> None:
        if width <= 0:
            return  # not laid out yet: on_resize renders it
        style = self.rich_style
        kept_key = None if self._key is None else (self._key, width, style)
        strips = self._kept.get(kept_key) if kept_key is not None else None
        if strips is None:
            console = self.app.console
            options = self.app.console_options.update(highlight=False, width=width, height=None)
            renderable = Text(self.renderable) if isinstance(self.renderable, str) else self.renderable
            lines = console.render_lines(renderable, options, style=style, pad=False)
            strips = [Strip(line) for line in lines]
            if kept_key is not None:
                self._kept[kept_key] = strips
                if len(self._kept) > KEPT:
                    self._kept.popitem(last=False)
        elif kept_key is not None:
            self._kept.move_to_end(kept_key)
        self._strips = strips
        self._width = width
        self._style = style
        size = Size(width, len(self._strips))
        if size != self.virtual_size:
            self.virtual_size = size  # a new height: this (and only this) asks for a layout

    def on_resize(self) -> None:
        width = self._content_width()
        if width != self._width:
            self._render_strips(width)
            self.refresh()

    def render_lines(self, crop: Region) -> list[Strip]:
        # Look the style up once per paint, not once per line: it is most of a line's cost.
        self._paint_style = self.rich_style
        try:
            return super().render_lines(crop)
        finally:
            self._paint_style = None

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        number = self.scroll_offset.y + y
        base = self._paint_style if self._paint_style is not None else self.rich_style
        if number >= len(self._strips):
            return Strip.blank(width, base)
        return self._strips[number].adjust_cell_length(width, base)

    @property
    def text(self) -> str:
        """The lines drawn, as plain text (tests and copy)."""
        return "\n".join(strip.text.rstrip() for strip in self._strips)
