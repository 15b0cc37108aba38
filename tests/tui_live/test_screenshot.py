"""The screenshot widget draws a PNG in the terminal (textual-image, halfblocks under Pilot); its loader reads only
inside the episode directory."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from PIL import Image as PILImage
from textual.app import App, ComposeResult
from textual_image.widget import HalfcellImage

from stripebench_tui.core.events import Header, ToolResult
from stripebench_tui.tui.sources.live_source import LiveSource, Shot, load_screenshot
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
        shot.show(load_screenshot(tmp_path, 3, "shot.png"))
        await pilot.pause(0.3)
        after = app.export_screenshot()
        assert str(shot.query_one("#shot-caption").render()) == "turn 3: shot.png"
        assert after != before
        # The picture's colours reach the terminal: red on the left, blue on the right.
        assert "#ff0000" in after.lower() and "#0000ff" in after.lower()
        shot.show(load_screenshot(tmp_path, 4, "gone.png"))
        await pilot.pause(0.1)
        assert str(shot.query_one("#shot-caption").render()) == "turn 4: gone.png (file missing)"
        assert shot.query_one("#shot-image").image is None


async def test_screenshot_screen_shows_the_picture_large(tmp_path: Path) -> None:
    from stripebench_tui.tui.screens.screenshot_view import ScreenshotScreen

    png = tmp_path / "big.png"
    PILImage.new("RGB", (200, 100), (0, 255, 0)).save(png)
    app = App()
    async with app.run_test(size=(100, 40)) as pilot:
        await app.push_screen(ScreenshotScreen(Shot(5, "big.png", png.read_bytes())))
        await pilot.pause(0.3)
        image = app.screen.query_one("#big-shot")
        assert image.size.width > 40 and image.size.height > 10
        await pilot.press("escape")
        assert not isinstance(app.screen, ScreenshotScreen)


# -- the loader: only files inside the episode directory ------------------------------------------------------

SECRET = b"the reader's own secret"
OUTSIDE = "refused, it points outside the episode directory"


def _episode_and_outside(tmp_path: Path) -> tuple[Path, Path]:
    episode, home = tmp_path / "ep", tmp_path / "home"
    episode.mkdir()
    home.mkdir()
    (home / "secret.png").write_bytes(SECRET)
    return episode, home


def test_the_loader_refuses_a_link_leading_outside(tmp_path: Path) -> None:
    episode, home = _episode_and_outside(tmp_path)
    (episode / "leak.png").symlink_to(home / "secret.png")
    (episode / "screenshots").symlink_to(home, target_is_directory=True)
    for name in ("leak.png", "screenshots/secret.png", "../home/secret.png", str(home / "secret.png")):
        shot = load_screenshot(episode, 2, name)
        assert shot.data == b"" and shot.problem == OUTSIDE, name
        assert shot.caption == f"turn 2: {name} ({OUTSIDE})"


@pytest.mark.timeout(10)
def test_the_loader_refuses_a_fifo_without_blocking(tmp_path: Path) -> None:
    episode, _ = _episode_and_outside(tmp_path)
    os.mkfifo(episode / "hang.png")
    assert load_screenshot(episode, 1, "hang.png").problem == "refused, it is not a regular file (a FIFO)"


def test_a_followed_trace_keeps_its_own_directory_whatever_its_header_claims(tmp_path: Path) -> None:
    """``tui.follow`` sets the directory the trace is in; a header's ``episode_dir`` must not move names elsewhere."""
    episode, home = _episode_and_outside(tmp_path)
    (episode / "ok.png").write_bytes(b"png")
    source = LiveSource()
    source.trace_dir = episode  # what TraceFollower does before the first event
    source(Header(env="e", extra={"episode_dir": str(home)}))
    source(ToolResult(turn=1, call_id="c", tool="browser_screenshot", images=["secret.png"]))
    shot = source.screenshot()
    assert shot is not None and shot.data == b"" and shot.problem == "file missing"
    source(ToolResult(turn=2, call_id="d", tool="browser_screenshot", images=["ok.png"]))
    shot = source.screenshot()
    assert shot is not None and shot.data == b"png" and source.screenshot() is shot  # read once, not per redraw


def test_the_live_sidecar_reader_refuses_a_link_leading_outside(tmp_path: Path) -> None:
    episode, home = _episode_and_outside(tmp_path)
    (episode / "out.txt").symlink_to(home / "secret.png")
    source = LiveSource()
    source.trace_dir = episode
    text = source.full_output(ToolResult(turn=1, call_id="c", tool="shell", output="head", sidecar="out.txt"))
    assert text == "head\n[full output not shown: sidecar out.txt: refused, it points outside the episode directory]"
