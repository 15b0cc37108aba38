"""Writing a small file beside a trace (notes, a review) whole or not at all."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from stripebench_tui.errors import BadFileError


def write_whole(path: Path, data: bytes) -> None:
    """``data`` at ``path`` through a temporary file and ``os.replace``: a crash leaves the old file or the new one,
    never half of either; two writers at once each write their own temporary. BadFileError (one line) when the
    directory cannot be written."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise BadFileError(f"{path}: cannot write ({exc.strerror})") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise BadFileError(f"{path}: cannot write ({exc.strerror})") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


__all__ = ["write_whole"]
