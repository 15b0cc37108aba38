"""Panes whose border title changes often: setting it repaints the top border line only.

Setting ``border_title`` refreshes the whole widget. For a container that is
most of a pane (the objects and verdicts panes) that means drawing every line
of it again, under children that are drawn anyway, when only the title changed.

``TitledPane`` is a plain mixin, not a ``Widget``: Textual inherits default CSS
along a class's first widget base only, so a ``Widget`` mixed in first would cut
off the CSS of the class it is mixed into (a ``VerticalScroll`` would lose its
``overflow-y: auto`` and stop scrolling).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Self

from textual.geometry import Region

if TYPE_CHECKING:  # what the class it is mixed into is; at run time a plain mixin (see above)
    from textual.widget import Widget

    _Pane = Widget
else:
    _Pane = object


class TitledPane(_Pane):
    """Mix in before a widget class: ``set_title`` changes the border title and repaints its line only."""

    _title_only = False  # set while the title is assigned: the whole-widget refresh that causes is dropped
    _shown_title: str | None = None

    def set_title(self, title: str) -> None:
        if title == self._shown_title:
            return  # the same text: nothing to repaint
        self._shown_title = title
        self._title_only = True
        try:
            self.border_title = title
        finally:
            self._title_only = False
        # Widget-relative rows are counted from the content (inside the border): the top border is row -1.
        offset = self.content_offset
        self.refresh(Region(-offset.x, -offset.y, self.outer_size.width, max(1, offset.y)))

    def refresh(self, *regions: Region, repaint: bool = True, layout: bool = False, recompose: bool = False) -> Self:
        if self._title_only and not regions and not layout and not recompose:
            return self
        return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)
