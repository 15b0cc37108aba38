"""asciinema's web player (npm ``asciinema-player``), fetched once into the user's cache for reports to inline.

Nothing of it is in the repository: the first report that embeds a recording (or ``scripts/setup.sh``, which runs
``python -m stripebench_tui.formats.player_assets``) installs the pinned version with npm into a temporary folder,
copies its bundle (one script, one stylesheet) into the cache, and publishes the folder with one rename, under a
lock, so concurrent reports never see half a player. A report then carries the player inline: nothing is fetched
when the file is opened.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from stripebench_tui.errors import RuntimeProblem

PACKAGE = "asciinema-player"
VERSION = "3.18.0"
FILES = {"js": "dist/bundle/asciinema-player.min.js", "css": "dist/bundle/asciinema-player.css"}
LICENSE = "Apache-2.0"


@dataclass(frozen=True)
class PlayerAssets:
    """The player's script and stylesheet, as text to inline."""

    js: str
    css: str
    version: str = VERSION


def cache_dir() -> Path:
    """Where the player is kept ($STRIPEBENCH_PLAYER_CACHE, else the user cache)."""
    override = os.environ.get("STRIPEBENCH_PLAYER_CACHE")
    if override:
        return Path(override)
    return Path(platformdirs.user_cache_dir("stripebench")) / "web"


def player_dir() -> Path:
    return cache_dir() / f"{PACKAGE}-{VERSION}"


def _install(target: Path) -> None:
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeProblem("embedding a recording needs asciinema's player, installed once with npm: install "
                             "Node.js and npm (Debian: apt-get install nodejs npm)")
    with tempfile.TemporaryDirectory(prefix=".player-", dir=target.parent) as tmp:
        done = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--ignore-scripts", "--prefix", tmp,
                               f"{PACKAGE}@{VERSION}"], capture_output=True, text=True, timeout=300)
        if done.returncode != 0:
            last = (done.stderr or done.stdout).strip().splitlines()
            raise RuntimeProblem(f"npm install {PACKAGE}@{VERSION} failed: {last[-1] if last else 'no output'}")
        staged = Path(tmp) / "published"
        staged.mkdir()
        package = Path(tmp) / "node_modules" / PACKAGE
        for rel in FILES.values():
            shutil.copyfile(package / rel, staged / Path(rel).name)
        shutil.copyfile(package / "LICENSE", staged / "LICENSE")
        os.replace(staged, target)  # one rename: readers see no player or all of it


def ensure_player() -> Path:
    """The cached player's folder, installing it first if needed (one install at a time across processes)."""
    target = player_dir()
    if all((target / Path(rel).name).is_file() for rel in FILES.values()):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f".{target.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file is closed
        if not target.is_dir():
            _install(target)
    return target


def player_assets() -> PlayerAssets:
    """The player's script and stylesheet (installed into the cache on first use)."""
    folder = ensure_player()
    js = (folder / Path(FILES["js"]).name).read_text(encoding="utf-8")
    css = (folder / Path(FILES["css"]).name).read_text(encoding="utf-8")
    if "</script" in js.lower() or "</style" in css.lower():  # inlined, either would end its element early
        raise RuntimeProblem(f"{folder}: the player cannot be inlined (it contains a closing tag)")
    return PlayerAssets(js=js, css=css)


if __name__ == "__main__":
    try:
        print(ensure_player())
    except RuntimeProblem as exc:
        sys.exit(f"player_assets: {exc}")
