"""Writing a command's output file without overwriting what a user has (shared by export and report)."""

from __future__ import annotations

from pathlib import Path

from stripebench_tui.errors import UserError


def write_new(out: Path, text: str, force: bool) -> None:
    """Write ``text`` to ``out``; refuse an existing file unless ``force`` (exclusive create, so no race)."""
    try:
        with open(out, "w" if force else "x", encoding="utf-8") as f:
            f.write(text)
    except FileExistsError:
        raise UserError(f"{out}: already exists (use --force to overwrite)") from None
    except OSError as exc:
        raise UserError(f"{out}: cannot write ({exc.strerror})") from None
