"""Writing a command's output file without overwriting what a user has (shared by export and report)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from stripebench_tui.errors import UserError


def write_new(out: Path, text: str, force: bool) -> None:
    """Write ``text`` to ``out``; refuse an existing file unless ``force`` (exclusive create, so no race)."""
    write_new_with(out, lambda f: f.write(text), force)


def write_new_with(out: Path, write: Callable[[TextIO], object], force: bool) -> None:
    """``write_new`` for output produced piece by piece: ``write`` is given the open file; if it fails, the
    partial file is removed (a half-written document is worse than none)."""
    try:
        f = open(out, "w" if force else "x", encoding="utf-8")
    except FileExistsError:
        raise UserError(f"{out}: already exists (use --force to overwrite)") from None
    except OSError as exc:
        raise UserError(f"{out}: cannot write ({exc.strerror})") from None
    try:
        with f:
            write(f)
    except OSError as exc:
        out.unlink(missing_ok=True)
        raise UserError(f"{out}: cannot write ({exc.strerror})") from None
    except BaseException:
        out.unlink(missing_ok=True)
        raise
