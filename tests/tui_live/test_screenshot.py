"""The screenshot widget draws a PNG in the terminal (textual-image, halfblocks under Pilot)."""

from __future__ import annotations

from pathlib import Path

from PIL import Image as PILImage
from textual.app import App, ComposeResult
from textual_image.widget import HalfcellImage

from stripebench_tui.tui.widgets.screenshot import Screenshot


class _ShotApp(App[None]):
    def compose(self) -> ComposeResult:
        # Pilot has no graphics protocol: half blocks put the picture's colours in the exported screen.
        yield Screenshot(id="shot", image_class=HalfcellImage)


def test_the_live_screen_lets_textual_image_pick_the_renderer() -> None:
    from textual_image.widget import Image

    assert Screenshot().image_class is Image


async def test_screenshot_widget_renders_a_png(tmp_path: Path) -> None:
    png = tmp_path / "shot.png"
    img = PILImage.new("RGB", (64, 32), (255, 0, 0))
    for x in range(32, 64):
        for y in range(32):
            img.putpixel((x, y), (0, 0, 255))
    img.save(png)
    app = _ShotApp()
    async with app.run_test(size=(80, 30)) as pilot:
        shot = app.query_one(Screenshot)
        before = app.export_screenshot()
        shot.show(png, "turn 3: shot.png")
        await pilot.pause(0.3)
        after = app.export_screenshot()
        assert str(shot.query_one("#shot-caption").render()) == "turn 3: shot.png"
        assert after != before
        # The picture's colours reach the terminal: red on the left, blue on the right.
        assert "#ff0000" in after.lower() and "#0000ff" in after.lower()
        shot.show(tmp_path / "gone.png", "turn 4")
        await pilot.pause(0.1)
        assert "file missing" in str(shot.query_one("#shot-caption").render())


async def test_screenshot_screen_shows_the_picture_large(tmp_path: Path) -> None:
    from stripebench_tui.tui.screens.screenshot_view import ScreenshotScreen

    png = tmp_path / "big.png"
    PILImage.new("RGB", (200, 100), (0, 255, 0)).save(png)
    app = App()
    async with app.run_test(size=(100, 40)) as pilot:
        await app.push_screen(ScreenshotScreen(png, "turn 5: big.png"))
        await pilot.pause(0.3)
        image = app.screen.query_one("#big-shot")
        assert image.size.width > 40 and image.size.height > 10
        await pilot.press("escape")
        assert not isinstance(app.screen, ScreenshotScreen)
