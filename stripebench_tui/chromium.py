"""Finding and launching a Chromium for Playwright without downloading one.

Order of preference: ``$STRIPEBENCH_CHROMIUM``, the system's Chromium (Debian's
``chromium``), then a browser that ``playwright install chromium`` put in place.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from stripebench_tui.errors import RuntimeProblem

SYSTEM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")

# Background networking off: this machine (and many CI boxes) refuse outside connections,
# and Chromium would otherwise retry them for the whole session.
LAUNCH_ARGS = [
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-quic",
    "--no-first-run",
    "--disable-gpu",
    "--disable-dev-shm-usage",
]


def find_chromium() -> str | None:
    """Path of a usable Chromium executable, or None."""
    override = os.environ.get("STRIPEBENCH_CHROMIUM")
    if override:
        return override if Path(override).exists() else None
    for name in SYSTEM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    cache = Path(os.environ.get("PLAYWRIGHT_BROWSERS_PATH", Path.home() / ".cache" / "ms-playwright"))
    for candidate in sorted(cache.glob("chromium-*/chrome-linux*/chrome"), reverse=True):
        return str(candidate)
    return None


def launch_options(headless: bool = True) -> dict:
    """Keyword arguments for Playwright's ``chromium.launch``; raises when no browser is found."""
    exe = find_chromium()
    if exe is None:
        raise RuntimeProblem(
            "no Chromium found: install Debian's 'chromium' package, set STRIPEBENCH_CHROMIUM, "
            "or run 'playwright install chromium' where downloads work"
        )
    args = list(LAUNCH_ARGS)
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        args.append("--no-sandbox")  # Chromium refuses to start its sandbox as root
    return {"executable_path": exe, "headless": headless, "args": args}
