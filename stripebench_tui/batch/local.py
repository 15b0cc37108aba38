"""The default batch runner: episodes as child processes of this one, a bounded number at once."""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import threading
from collections.abc import Callable

from stripebench_tui.batch.runner import AttemptOutcome, Job

LOG = "run.log"
_PR_SET_PDEATHSIG = 1


def default_workers() -> int:
    """Episodes at once by default: one per CPU this process may use (an episode keeps about one core busy)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _die_with_parent() -> None:
    # Runs in the child before exec: if the batch runner is killed (even with -9) the episode hears SIGTERM and
    # stops cleanly (its services reaped, its trace closed) instead of running on unattended.
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        pass


def run_episode_process(job: Job, on_line: Callable[[str], None], stop: threading.Event, where: str,
                        extra_env: dict[str, str] | None = None) -> AttemptOutcome:
    """``stripebench run … --headless`` for the job's cell, its output in ``run.log`` beside the episode."""
    env = {**os.environ, **job.variables, **(extra_env or {})}
    log_path = job.episode_dir.parent / LOG
    with open(log_path, "a", encoding="utf-8", errors="replace") as log:
        log.write(f"=== attempt {job.attempt} on {where}\n")
        log.flush()
        proc = subprocess.Popen(job.cell.command(job.episode_dir), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, env=env, text=True, errors="replace",
                                preexec_fn=_die_with_parent)
        watcher = threading.Thread(target=_stop_on, args=(stop, proc), daemon=True)
        watcher.start()
        assert proc.stdout is not None
        for line in proc.stdout:
            log.write(line)
            on_line(line.rstrip("\n"))
        code = proc.wait()
    if stop.is_set() and code != 0:
        return AttemptOutcome(code, where=where, stopped=True)
    if code < 0:  # killed by a signal nobody here sent: the machine (OOM killer, an operator), not the episode
        return AttemptOutcome(code, infra_error=f"episode process killed by signal {-code}", where=where)
    return AttemptOutcome(code, where=where)


def _stop_on(stop: threading.Event, proc: subprocess.Popen[str]) -> None:
    while proc.poll() is None:
        if stop.wait(0.5):  # the batch was stopped: ask the episode to stop (it keeps its trace)
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
            return


class LocalPool:
    """Run episodes on this machine, ``workers`` at once."""

    label = "local"

    def __init__(self, workers: int | None = None) -> None:
        self.slots = workers or default_workers()

    def start(self) -> None:
        pass

    def run_one(self, job: Job, on_line: Callable[[str], None], stop: threading.Event) -> AttemptOutcome:
        return run_episode_process(job, on_line, stop, where=self.label)

    def close(self) -> None:
        pass


__all__ = ["LocalPool", "default_workers", "run_episode_process"]
