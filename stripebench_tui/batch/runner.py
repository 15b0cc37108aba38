"""Playing a batch's pending cells through a ``BatchRunner``: a bounded number at once, retries, a full disk.

A runner runs one episode as a separate process somewhere (this machine, a Ray node) and says how it
ended; everything else — which cells are left, the cell directories, one retry of an episode lost to
the infrastructure, stopping cleanly — is here, so every runner behaves the same.
"""

from __future__ import annotations

import errno
import os
import shutil
import threading
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from stripebench_tui.batch.manifest import ERROR, FAILED, INFRA_ERROR, PASSED, Batch
from stripebench_tui.batch.matrix import Cell
from stripebench_tui.batch.sweep_report import read_episode
from stripebench_tui.errors import RuntimeProblem

MAX_ATTEMPTS = 2  # an episode lost to the infrastructure is retried once
MIN_FREE_BYTES = int(float(os.environ.get("STRIPEBENCH_BATCH_MIN_FREE_MB", "200")) * 1024 * 1024)


@dataclass
class Job:
    """One attempt at one cell: what to run and where its episode goes (on the driver's machine)."""

    cell: Cell
    episode_dir: Path
    attempt: int
    variables: dict[str, str] = field(default_factory=dict)


@dataclass
class AttemptOutcome:
    """How an attempt ended: the episode's exit code, or an infrastructure failure (process or node lost)."""

    exit_code: int | None
    infra_error: str = ""
    where: str = ""
    stopped: bool = False  # ended because the batch was stopped: not a result


class BatchRunner(Protocol):
    """Where episodes run. ``run_one`` blocks until the episode ended and its directory is at ``job.episode_dir``."""

    label: str
    slots: int  # episodes at once

    def start(self) -> None: ...

    def run_one(self, job: Job, on_line: Callable[[str], None], stop: threading.Event) -> AttemptOutcome: ...

    def close(self) -> None: ...


class Listener(Protocol):
    """What a progress display hears."""

    def started(self, cell: Cell, attempt: int, where: str) -> None: ...

    def line(self, cell: Cell, text: str) -> None: ...

    def ended(self, cell: Cell, result: dict[str, Any]) -> None: ...


class DiskFull(Exception):
    """Less free space than a batch needs to go on."""


def status_for(exit_code: int | None) -> str:
    return {0: PASSED, 1: FAILED}.get(exit_code if exit_code is not None else -1, ERROR)


def episode_score(episode_dir: Path) -> tuple[float | None, int]:
    """The score and the number of turns in an episode's trace (None, 0 when it has no end)."""
    summary = read_episode(episode_dir)
    return (summary.score, summary.turns) if summary is not None else (None, 0)


def check_space(root: Path, minimum: int = MIN_FREE_BYTES) -> None:
    free = shutil.disk_usage(root).free
    if free < minimum:
        raise DiskFull(f"only {free // (1024 * 1024)} MB free under {root} (a batch needs {minimum // (1024 * 1024)} MB)")


def run_batch(batch: Batch, runner: BatchRunner, listener: Listener, stop: threading.Event | None = None,
              space: Callable[[Path], None] = check_space) -> list[Cell]:
    """Run every pending cell of ``batch`` (at most ``runner.slots`` at once); returns the cells that ran.

    A full disk stops launching episodes, lets the running ones end and raises RuntimeProblem;
    ``--resume`` picks up from there once there is space again.
    """
    stop = stop or threading.Event()
    pending = batch.pending()
    queue = [(cell, 1) for cell in pending]
    full: list[str] = []
    ran: list[Cell] = []

    def attempt(cell: Cell, n: int) -> tuple[Cell, int, AttemptOutcome]:
        try:
            space(batch.root)
            episode_dir = batch.start_attempt(cell, n, runner.label)
        except DiskFull as exc:
            full.append(str(exc))
            stop.set()
            return cell, n, AttemptOutcome(None, stopped=True)
        except OSError as exc:
            if exc.errno != errno.ENOSPC:
                raise
            full.append(f"no space left under {batch.root}")
            stop.set()
            return cell, n, AttemptOutcome(None, stopped=True)
        listener.started(cell, n, runner.label)
        job = Job(cell, episode_dir, n, dict(batch.variables))
        outcome = runner.run_one(job, lambda text: listener.line(cell, text), stop)
        return cell, n, outcome

    runner.start()
    try:
        with ThreadPoolExecutor(max_workers=max(1, runner.slots), thread_name_prefix="batch") as pool:
            running: set[Future[tuple[Cell, int, AttemptOutcome]]] = set()
            while queue or running:
                while queue and len(running) < runner.slots and not stop.is_set():
                    cell, n = queue.pop(0)
                    running.add(pool.submit(attempt, cell, n))
                if not running:
                    break
                done, running = wait(running, return_when=FIRST_COMPLETED)
                for future in done:
                    cell, n, outcome = future.result()
                    if outcome.stopped:
                        continue  # no result: the cell stays pending for --resume
                    result = _result(batch, cell, n, outcome, space, full, stop)
                    if result is None:
                        continue
                    batch.finish(cell, result)
                    ran.append(cell)
                    listener.ended(cell, result)
                    if result["status"] == INFRA_ERROR and n < MAX_ATTEMPTS and not stop.is_set():
                        queue.insert(0, (cell, n + 1))
    finally:
        runner.close()
    if full:
        raise RuntimeProblem(f"{full[0]}: stopped the batch cleanly; free some space and run "
                             f"`stripebench batch --resume {batch.root}`")
    return ran


def _result(batch: Batch, cell: Cell, n: int, outcome: AttemptOutcome, space: Callable[[Path], None], full: list[str],
            stop: threading.Event) -> dict[str, Any] | None:
    """The result.json of an ended attempt (None: leave the cell pending, e.g. it failed for lack of disk space)."""
    status = INFRA_ERROR if outcome.infra_error else status_for(outcome.exit_code)
    if status == ERROR:
        try:
            space(batch.root)
        except DiskFull as exc:  # the episode itself most likely failed for lack of space: not its result
            full.append(str(exc))
            stop.set()
            return None
    score, turns = episode_score(batch.episode_dir(cell)) if status != INFRA_ERROR else (None, 0)
    return {"status": status, "exit_code": outcome.exit_code, "score": score, "turns": turns, "attempts": n,
            "where": outcome.where, "error": outcome.infra_error}


__all__ = ["BatchRunner", "DiskFull", "Job", "Listener", "MAX_ATTEMPTS", "AttemptOutcome", "check_space", "run_batch"]
