"""The newest screenshot, as large as the terminal allows (the side pane only has room for a thumbnail)."""

from __future__ import annotations

import io

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Static
from textual_image.widget import Image

from stripebench_tui.tui.screens.dialog import DialogScreen
from stripebench_tui.tui.sources.live_source import Shot


class ScreenshotScreen(DialogScreen[None]):
    """A caption and the picture; Esc, q or o closes it."""

    BINDINGS = [Binding("escape,q,o", "close", "Close")]
    DEFAULT_CSS = """
    ScreenshotScreen > Vertical { width: 95%; height: 95%; max-height: 95%; }
    ScreenshotScreen #big-shot { width: 1fr; height: 1fr; }
    """

    def __init__(self, shot: Shot) -> None:
        super().__init__()
        self.shot = shot  # read already (``LiveSource.screenshot``): only its bytes are drawn

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = self.shot.caption
            box.border_subtitle = "Esc closes"
            yield Static(self.shot.caption, markup=False, classes="help")
            yield Image(io.BytesIO(self.shot.data) if self.shot.data else None, id="big-shot")

    def action_close(self) -> None:
        self.dismiss(None)
