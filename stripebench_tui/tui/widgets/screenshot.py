"""The newest browser screenshot, drawn in the terminal by textual-image.

textual-image picks the best renderer the terminal supports (Kitty graphics,
Sixel, else Unicode half blocks), so this works over plain SSH too.
"""

from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static
from textual_image.widget import Image


class Screenshot(Vertical):
    """A caption and the image; ``show(path)`` swaps the picture (only when the path changed)."""

    DEFAULT_CSS = """
    Screenshot { height: 1fr; }
    Screenshot #shot-caption { color: $text-muted; height: 1; }
    Screenshot #shot-image { width: auto; height: 1fr; }
    """

    def __init__(self, *, id: str | None = None, image_class: type[Image] = Image) -> None:
        super().__init__(id=id)
        self.path: Path | None = None
        self.image_class = image_class  # Image picks the renderer; tests may ask for half blocks explicitly

    def compose(self) -> ComposeResult:
        yield Static("No screenshot yet.", id="shot-caption", markup=False)
        yield self.image_class(None, id="shot-image")

    def show(self, path: Path | None, caption: str = "") -> None:
        """Draw ``path`` (a PNG) with ``caption``; a missing file is said, not raised."""
        if path == self.path:
            return
        self.path = path
        label = self.query_one("#shot-caption", Static)
        image = self.query_one("#shot-image")
        if path is None:
            label.update("No screenshot yet.")
            image.image = None
            return
        if not path.is_file():
            label.update(f"{caption} (file missing: {path.name})")
            image.image = None
            return
        label.update(caption or path.name)
        image.image = path
