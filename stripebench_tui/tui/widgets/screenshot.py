"""The newest browser screenshot, drawn in the terminal by textual-image.

textual-image picks the best renderer the terminal supports (Kitty graphics,
Sixel, else Unicode half blocks), so this works over plain SSH too.
"""

from __future__ import annotations

import io

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static
from textual_image.widget import BaseImage, Image

from stripebench_tui.tui.sources.live_source import Shot


class Screenshot(Vertical):
    """A caption and the image; ``show(shot)`` swaps the picture (only when the shot changed)."""

    DEFAULT_CSS = """
    Screenshot { height: 1fr; }
    Screenshot #shot-caption { color: $text-muted; height: 1; }
    Screenshot #shot-image { width: auto; height: 1fr; }
    """

    def __init__(self, *, id: str | None = None, image_class: type[BaseImage] = Image) -> None:
        super().__init__(id=id)
        self.shot: Shot | None = None
        self.image_class = image_class  # Image picks the renderer; tests may ask for half blocks explicitly

    def compose(self) -> ComposeResult:
        yield Static("No screenshot yet.", id="shot-caption", markup=False)
        yield self.image_class(None, id="shot-image")

    def show(self, shot: Shot | None) -> None:
        """Draw ``shot`` (``LiveSource.screenshot``); one that could not be read is captioned with why, not raised."""
        if shot is self.shot:
            return
        self.shot = shot
        label = self.query_one("#shot-caption", Static)
        image = self.query_one("#shot-image", BaseImage)
        label.update(shot.caption if shot is not None else "No screenshot yet.")
        # The bytes were read through core.episode_files; handing textual-image a path would let it open
        # whatever the name leads to.
        image.image = io.BytesIO(shot.data) if shot is not None and shot.data else None
