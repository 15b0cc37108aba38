"""The batch directory: ``batch.json`` (what was asked, versions, seeds, every cell) and each cell's own directory.

Layout::

    DIR/batch.json                 the manifest (written once, before the first episode)
    DIR/<cell>/episode/            the episode (trace.jsonl, workspace, logs…), as `stripebench run` writes it
    DIR/<cell>/running.json        while an attempt runs (attempt, start time, where)
    DIR/<cell>/result.json         once it ended: status, exit code, score, attempts
    DIR/<cell>/attempts.jsonl      every attempt's result (an infra_error before its retry)
    DIR/<cell>/run.log             what the episode's process printed
    DIR/<cell>/attempt-N/          an earlier attempt's episode that did not finish (kept, never deleted)

A cell is finished when its ``result.json`` says so; ``--resume`` runs the rest. Files are written
whole (a temporary file renamed over), so a reader never sees half a manifest.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stripebench_tui import __version__
from stripebench_tui.batch.matrix import Cell
from stripebench_tui.core import json_depth
from stripebench_tui.core.json_value import JSONValue
from stripebench_tui.core.regular_file import read_capped
from stripebench_tui.errors import BadFileError, UserError

FORMAT = 1  # batch.json's format; a newer one is refused rather than misread
MANIFEST = "batch.json"
RESULT = "result.json"
RUNNING = "running.json"
ATTEMPTS = "attempts.jsonl"
EPISODE = "episode"
# Statuses of a cell's result. infra_error: the episode's process or node was lost (retried once, re-run by --resume).
PASSED, FAILED, ERROR, INFRA_ERROR = "passed", "failed", "error", "infra_error"
FINISHED = (PASSED, FAILED, ERROR)
# The variables that pick environments and graders: recorded so one cell can be re-run exactly, and handed to
# Ray nodes. Keys and tokens are never among them.
RECORDED_VARIABLES = ("STRIPEBENCH_ENVIRONMENTS", "STRIPEBENCH_GRADERS", "STRIPEBENCH_CACHE", "STRIPEBENCH_SANDBOX")


def now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds")


def write_json(path: Path, data: JSONValue) -> None:
    """``data`` as JSON at ``path``, whole or not at all (OSError, e.g. a full disk, leaves the old file)."""
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


MAX_JSON_BYTES = 64 << 20  # a manifest of thousands of cells is a few megabytes


def read_json(path: Path) -> Any:
    """The JSON in ``path``; None when it is missing, half-written, or not a regular file of at most
    ``MAX_JSON_BYTES`` nested at most ``json_depth.MAX_DEPTH`` levels (a batch directory may come from anyone: a
    FIFO would block the reader, ``/dev/zero`` never end, ``[[[…`` exhaust the stack)."""
    try:
        return json_depth.loads(read_capped(path, MAX_JSON_BYTES))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return None  # half-written by a runner killed mid-write: treated as absent


def versions() -> dict[str, str]:
    # the SDK (half a second to import) for its version alone: readers of a batch never call this
    import stripe

    return {"stripebench": __version__, "python": platform.python_version(), "stripe_sdk": stripe.VERSION}


@dataclass
class Batch:
    """An opened batch directory."""

    root: Path
    request: dict[str, Any]
    cells: list[Cell]
    created: str = ""
    versions: dict[str, str] = field(default_factory=dict)
    variables: dict[str, str] = field(default_factory=dict)

    # ---- creating and opening ----

    @classmethod
    def create(cls, root: Path, request: dict[str, Any], cells: list[Cell]) -> Batch:
        """A new batch directory (refused when ``root`` holds anything: nothing a user has is overwritten)."""
        root = root.expanduser().resolve()
        if root.exists() and (not root.is_dir() or any(root.iterdir())):
            hint = " (--resume DIR continues a batch)" if (root / MANIFEST).is_file() else ""
            raise UserError(f"{root} already exists and is not empty; not overwriting it{hint}")
        root.mkdir(parents=True, exist_ok=True)
        batch = cls(root, request, cells, created=now(), versions=versions(),
                    variables={k: os.environ[k] for k in RECORDED_VARIABLES if os.environ.get(k)})
        write_json(root / MANIFEST, batch.to_dict())
        return batch

    @classmethod
    def open(cls, root: Path) -> Batch:
        """The batch in ``root``; UserError (exit 3) when it is not one or comes from a newer stripebench."""
        root = root.expanduser().resolve()
        data = read_json(root / MANIFEST)
        if not isinstance(data, dict) or data.get("kind") != "stripebench-batch":
            raise BadFileError(f"{root} is not a batch directory (no readable {MANIFEST})")
        fmt = data.get("format")
        if not isinstance(fmt, int) or fmt > FORMAT:
            made_by = (data.get("versions") or {}).get("stripebench", "?")
            raise BadFileError(f"{root / MANIFEST} is format {fmt} (written by stripebench {made_by}); this stripebench "
                               f"reads format {FORMAT}: upgrade to open it")
        try:
            cells = [Cell.from_dict(c) for c in data["cells"]]
        except (KeyError, TypeError) as exc:
            raise BadFileError(f"{root / MANIFEST} is damaged ({exc})") from None
        return cls(root, data.get("request", {}), cells, data.get("created", ""), data.get("versions", {}),
                   data.get("variables", {}))

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "stripebench-batch", "format": FORMAT, "created": self.created, "versions": self.versions,
                "request": self.request, "variables": self.variables, "cells": [c.to_dict() for c in self.cells]}

    # ---- cells ----

    def cell_dir(self, cell: Cell) -> Path:
        return self.root / cell.id

    def episode_dir(self, cell: Cell) -> Path:
        return self.cell_dir(cell) / EPISODE

    def result(self, cell: Cell) -> dict[str, Any] | None:
        data = read_json(self.cell_dir(cell) / RESULT)
        return data if isinstance(data, dict) else None

    def running(self, cell: Cell) -> dict[str, Any] | None:
        data = read_json(self.cell_dir(cell) / RUNNING)
        return data if isinstance(data, dict) else None

    def attempts(self, cell: Cell) -> list[dict[str, Any]]:
        try:
            lines = (self.cell_dir(cell) / ATTEMPTS).read_text(encoding="utf-8").splitlines()
        except OSError:
            return []
        out = []
        for line in lines:
            try:
                out.append(json.loads(line))
            except ValueError:
                continue
        return out

    def finished(self, cell: Cell) -> bool:
        result = self.result(cell)
        return result is not None and result.get("status") in FINISHED

    def pending(self) -> list[Cell]:
        """The cells still to run (never run, interrupted, or lost to the infrastructure)."""
        return [c for c in self.cells if not self.finished(c)]

    def start_attempt(self, cell: Cell, attempt: int, where: str) -> Path:
        """Move an unfinished earlier episode aside, mark the cell running; returns the fresh episode directory."""
        cdir = self.cell_dir(cell)
        cdir.mkdir(parents=True, exist_ok=True)
        episode = self.episode_dir(cell)
        if episode.exists():
            n = 1
            while (cdir / f"attempt-{n}").exists():
                n += 1
            episode.rename(cdir / f"attempt-{n}")
        (cdir / RESULT).unlink(missing_ok=True)  # an infra_error result of an earlier attempt
        write_json(cdir / RUNNING, {"attempt": attempt, "started": now(), "where": where})
        return episode

    def finish(self, cell: Cell, result: dict[str, Any]) -> None:
        cdir = self.cell_dir(cell)
        result = {**result, "ended": now()}
        with open(cdir / ATTEMPTS, "a", encoding="utf-8") as log:  # every attempt, retried ones included
            log.write(json.dumps(result, sort_keys=True) + "\n")
        write_json(cdir / RESULT, result)
        (cdir / RUNNING).unlink(missing_ok=True)

    def rerun_command(self, cell: Cell) -> str:
        """A shell line that re-runs this one cell exactly (its variables, arguments and seed)."""
        env = " ".join(f"{k}={shlex.quote(v)}" for k, v in sorted(self.variables.items()))
        return (env + " " if env else "") + "stripebench " + " ".join(shlex.quote(a) for a in cell.argv)


__all__ = ["Batch", "ERROR", "FAILED", "FINISHED", "FORMAT", "INFRA_ERROR", "MANIFEST", "PASSED", "RECORDED_VARIABLES"]
