"""`stripebench export --format gif`: the recording rendered by agg, its first and last frames read back cell by cell.

What the GIF should show is known from the recording itself: pyte plays the cast and says, for every cell of the
screen, its background colour and whether a character is drawn there. The GIF's frames are cut into the same grid
(agg's: font size × 0.6 wide, × 1.4 high, inside a small margin) and each cell is compared: the same background, and
ink exactly where there is text. So a blank, shifted or wrongly coloured rendering fails, not only a missing file.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pyte
import pytest
from PIL import Image

from stripebench_tui.errors import EXIT_RUNTIME
from tests.formats.cast_screens import read_cast

REPLAYS = Path(__file__).resolve().parents[2] / "replays"
SAMPLE = REPLAYS / "checkout-migration-400"
COLS, ROWS = 120, 36
FONT, LINE = 14, 1.4
CAPTION_BG, STATUS_BG = (255, 215, 0), (255, 255, 255)


def stripebench(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "stripebench_tui", *map(str, args)], capture_output=True, text=True,
                          timeout=300)


def screens(cast: Path, indices: list[int]) -> list[pyte.Screen]:
    """pyte's screen after each of the events at ``indices`` (negative ones count from the end)."""
    header, events = read_cast(cast)
    wanted = sorted({i % len(events) for i in indices})
    out: dict[int, pyte.Screen] = {}
    for i in wanted:
        screen = pyte.Screen(header["width"], header["height"])
        stream = pyte.Stream(screen)
        for _, _, data in events[: i + 1]:
            stream.feed(data)
        out[i] = screen
    return [out[i % len(events)] for i in indices]


def hex_rgb(value: str, default: tuple[int, int, int]) -> tuple[int, int, int]:
    return default if len(value) != 6 else (int(value[0:2], 16), int(value[2:4], 16), int(value[4:6], 16))


def grid_match(image: Image.Image, screen: pyte.Screen) -> float:
    """The share of cells whose background and ink (text or none) in ``image`` are what ``screen`` holds."""
    rgb = image.convert("RGB")
    px = rgb.load()
    width, height = rgb.size
    cell_h = FONT * LINE
    pad_y = (height - ROWS * cell_h) / 2
    pad_x = pad_y - 2  # agg's margin: measured 8 px across and 10 down at 14 px
    cell_w = (width - 2 * pad_x) / COLS
    good = total = 0
    for row in range(ROWS):
        for col in range(COLS):
            char = screen.buffer[row][col]
            if char.data in "┃━┏┓┗┛│─▶‖◆…▸" or not char.data.isprintable():
                continue  # borders and symbols: their ink is font-dependent; letters and digits are the text
            x0, y0 = pad_x + col * cell_w, pad_y + row * cell_h
            pixels = [px[int(x0 + dx), int(y0 + dy)] for dx in range(1, int(cell_w) - 1)
                      for dy in range(3, int(cell_h) - 3)]
            bg = hex_rgb(char.bg, (0, 0, 0))
            corner = px[int(x0 + 1), int(y0 + 1)]
            same_bg = max(abs(a - b) for a, b in zip(corner, bg, strict=False)) < 24
            ink = sum(1 for p in pixels if max(abs(a - b) for a, b in zip(p, bg, strict=False)) > 96)
            has_text = char.data.strip() != ""
            total += 1
            good += same_bg and ((ink > 3) == has_text)
    return good / total


@pytest.fixture(scope="module")
def sample_gif(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("gif")
    cast, gif = folder / "s.cast", folder / "s.gif"
    done = stripebench("export", SAMPLE, "--format", "cast", "--speed", "6", "--size", f"{COLS}x{ROWS}", "-o", cast)
    assert done.returncode == 0, done.stderr
    from stripebench_tui.formats.gif import render_gif

    render_gif(cast, gif, max_mb=5)
    return cast, gif


def frame(gif: Path, index: int) -> Image.Image:
    image = Image.open(gif)
    image.seek(index if index >= 0 else image.n_frames + index)
    return image.convert("RGB")


def test_the_last_frame_is_the_recordings_last_screen(sample_gif: tuple[Path, Path]) -> None:
    cast, gif = sample_gif
    last_screen, first_screen = screens(cast, [-1, 0])
    assert "score 0.08" in "\n".join(last_screen.display)
    assert grid_match(frame(gif, -1), last_screen) > 0.97
    # and not any screen will do: the first one differs enough to fail the same comparison
    assert grid_match(frame(gif, -1), first_screen) < 0.97


def test_the_first_frame_shows_the_presenter_caption_turns_and_status(sample_gif: tuple[Path, Path]) -> None:
    cast, gif = sample_gif
    first = frame(gif, 0)
    early = screens(cast, list(range(6)))
    assert max(grid_match(first, s) for s in early) > 0.97
    px = first.load()
    width, height = first.size
    assert px[width // 2, 14] == CAPTION_BG and px[width // 2, height - 16] == STATUS_BG


@pytest.mark.drill  # two or three more renderings
def test_a_budget_lowers_the_frame_rate_until_the_gif_fits(tmp_path: Path, sample_gif: tuple[Path, Path]) -> None:
    from stripebench_tui.formats.gif import render_gif

    cast, full = sample_gif
    size = full.stat().st_size
    out = tmp_path / "small.gif"
    stats = render_gif(cast, out, max_mb=size * 0.8 / 1048576)
    assert stats.attempts > 1 and stats.fps < 10 and out.stat().st_size <= size * 0.8
    assert Image.open(out).n_frames < Image.open(full).n_frames


def test_a_budget_nothing_fits_is_one_line_and_leaves_no_file(tmp_path: Path) -> None:
    out = tmp_path / "x.gif"
    done = stripebench("export", SAMPLE, "--format", "gif", "--speed", "20", "--to-turn", "1", "--max-mb", "0.01",
                       "-o", out)
    assert done.returncode == EXIT_RUNTIME, done.stderr
    assert "over --max-mb 0.01" in done.stderr and "Traceback" not in done.stderr
    assert not out.exists() and not list(tmp_path.iterdir())
