"""Episodes as Ray tasks on any node of a cluster, their directories copied back to the driver's batch directory.

Each task asks for one CPU and the memory of its environment's manifest and runs the same
``stripebench run … --headless`` process as the local pool. A node that sees the driver's batch directory
(the same machine, or a shared disk: the cell's ``running.json`` there is the one the driver just wrote)
writes the episode straight into it, as the local pool does; any other node runs it in a scratch directory
and returns it packed as an (uncompressed) tarball, which the driver unpacks into the cell's directory:
the report and the TUI read it as if it had run here. While it runs, its turn lines stream back through a
Ray queue (an actor on the driver's node) that a thread of the driver drains into the progress display.
Ray's own retries are off: a task whose node or worker is lost comes back as an ``infra_error`` and
``runner.run_batch`` retries it once.
Every node needs this package (same version) and the environments at the same paths or ids.
"""

from __future__ import annotations

import io
import logging
import shutil
import socket
import tarfile
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from stripebench_tui.archives import extract_within
from stripebench_tui.batch.local import LOG, run_episode_process
from stripebench_tui.batch.manifest import RUNNING, read_json
from stripebench_tui.batch.matrix import Cell
from stripebench_tui.batch.progress import is_progress_line
from stripebench_tui.batch.runner import AttemptOutcome, Job
from stripebench_tui.errors import RuntimeProblem

_task: Any = None


# Any: a Ray actor handle (Ray is an optional extra, not imported where this module is)
def _shared(episode_dir: str | None, token: Any) -> Path | None:
    """``episode_dir`` when this node sees the driver's batch directory (its cell's running.json is ``token``)."""
    if not episode_dir or token is None:
        return None
    target = Path(episode_dir)
    try:
        return target if read_json(target.parent / RUNNING) == token else None
    except OSError:
        return None


# Any: lines and token are Ray handles (an actor and a queue), Ray being an optional extra
def _episode_on_node(cell: dict[str, Any], attempt: int, variables: dict[str, str], lines: Any = None,
                     episode_dir: str | None = None, token: Any = None) -> dict[str, Any]:
    """Runs on a Ray worker: the episode, and how it ended.

    On a node that sees the driver's batch directory (the same machine, or a shared disk: the cell's
    ``running.json`` there is ``token``) the episode is written straight to ``episode_dir``, as the local pool
    does; elsewhere it runs in a scratch directory and comes back packed (episode/ and run.log).
    ``lines`` (a ``ray.util.queue.Queue``) receives ``((cell id, attempt), line)`` for each progress line.
    """
    # Ray is optional (the [ray] extra); this runs on a Ray worker, where it is installed
    import ray

    key = (cell["id"], attempt)

    def forward(line: str) -> None:
        if lines is None or not is_progress_line(line):
            return
        try:
            lines.put_nowait((key, line))
        except Exception:  # noqa: BLE001 - the driver's queue is gone or full: progress is lost, never the episode
            pass

    where = f"ray:{socket.gethostname()}:{ray.get_runtime_context().get_node_id()[:8]}"
    direct = _shared(episode_dir, token)
    if direct is not None:
        job = Job(Cell.from_dict(cell), direct, attempt, variables)
        outcome = run_episode_process(job, forward, threading.Event(), where=where)
        return {"exit_code": outcome.exit_code, "infra_error": outcome.infra_error, "where": where, "tar": None}
    scratch = Path(tempfile.mkdtemp(prefix="stripebench-batch-"))
    try:
        job = Job(Cell.from_dict(cell), scratch / "episode", attempt, variables)
        outcome = run_episode_process(job, forward, threading.Event(), where=where)
        packed = io.BytesIO()
        # Not compressed: a workspace can hold a venv (57 MB in sdk-upgrade-charges) and gzip then cost seconds of
        # CPU per episode on both ends (most of the Ray/local gap on a small machine); nodes talk over a LAN.
        with tarfile.open(fileobj=packed, mode="w") as tar:
            for name in ("episode", LOG):
                if (scratch / name).exists():
                    tar.add(scratch / name, arcname=name)
        return {"exit_code": outcome.exit_code, "infra_error": outcome.infra_error, "where": where,
                "tar": packed.getvalue()}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _remote() -> Any:
    global _task
    if _task is None:
        # optional dependency (the [ray] extra), loaded only once --ray asked for it
        import ray

        _task = ray.remote(max_retries=0)(_episode_on_node)
    return _task


class _LineStream:
    """The episodes' progress lines, from the tasks to the driver: a queue actor on the driver's node, drained here."""

    def __init__(self) -> None:
        # Ray is optional; RayRunner.start has found it before a stream is made
        import ray
        from ray.util.queue import Queue
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        # On the driver's node (soft: anywhere if that cannot be), so losing another node does not lose the queue.
        here = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=True)
        self.queue = Queue(maxsize=10_000, actor_options={"num_cpus": 0, "scheduling_strategy": here})
        self._listeners: dict[tuple[str, int], Callable[[str], None]] = {}
        self._ends: dict[tuple[str, int], threading.Event] = {}
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._drain, name="ray-progress", daemon=True)
        self._thread.start()

    def listen(self, key: tuple[str, int], on_line: Callable[[str], None]) -> None:
        with self._lock:
            self._listeners[key] = on_line

    def finish(self, key: tuple[str, int], timeout: float = 10.0) -> None:
        """After the task returned: hand on its lines still queued (they precede an end marker), then forget it."""
        done = threading.Event()
        with self._lock:
            self._ends[key] = done
        try:
            self.queue.put((list(key), None), timeout=timeout)
            done.wait(timeout)  # set by the drain thread when it reaches the marker (gone queue: give up)
        except Exception:  # noqa: BLE001 - the queue is gone: nothing more will come
            pass
        with self._lock:
            self._listeners.pop(key, None)
            self._ends.pop(key, None)

    def _drain(self) -> None:
        # optional dependency, like every Ray import here
        from ray.util.queue import Empty

        while not self._closed.is_set():
            try:
                key, line = self.queue.get(timeout=0.5)  # bounded so that close() is heard; not a synchronisation
            except Empty:
                continue
            except Exception:  # noqa: BLE001 - the queue's actor is gone (shut down, or its node lost): no more lines
                return
            with self._lock:
                on_line = self._listeners.get(tuple(key))
                end = self._ends.get(tuple(key)) if line is None else None
            if end is not None:
                end.set()
            elif on_line is not None and line is not None:
                on_line(line)

    def close(self) -> None:
        self._closed.set()
        self._thread.join(timeout=5)
        try:
            self.queue.shutdown()
        except Exception:  # noqa: BLE001 - already gone with its node
            pass


class RayRunner:
    """Run each episode as a Ray task (``address``: ``auto`` or host:port of a cluster's head)."""

    label = "ray"

    def __init__(self, address: str = "auto", workers: int | None = None, copy: str = "auto") -> None:
        """``copy``: "auto" (episodes write straight to a batch directory their node sees, else come back packed)
        or "always" (always packed: what a cluster of separate machines does, for tests and benchmarks)."""
        if copy not in ("auto", "always"):
            raise ValueError(f"copy must be 'auto' or 'always', not {copy!r}")
        self.copy = copy
        self.address = address
        self.requested = workers
        self.slots = workers or 1
        self._started_here = False
        self._ready = False
        self._lines: _LineStream | None = None

    def start(self) -> None:
        try:
            # optional (the [ray] extra): its absence is one line here
            import ray
        except ImportError:
            raise RuntimeProblem("--ray needs Ray: pip install 'stripebench-tui[ray]'") from None
        if self._ready:
            return
        self._ready = True
        if not ray.is_initialized():
            try:
                ray.init(address=self.address, log_to_driver=False, logging_level=logging.ERROR)
            except ConnectionError:
                if self.address != "auto":
                    raise RuntimeProblem(f"no Ray cluster answers at {self.address}") from None
                ray.init(log_to_driver=False, logging_level=logging.ERROR)  # none found: a local one for this batch
                self._started_here = True
        if self.requested is None:
            self.slots = max(1, int(ray.cluster_resources().get("CPU", 1)))
        self.label = f"ray ({ray.get_runtime_context().gcs_address})"
        self._lines = _LineStream()

    def run_one(self, job: Job, on_line: Callable[[str], None], stop: threading.Event) -> AttemptOutcome:
        key = (job.cell.id, job.attempt)
        lines = self._lines
        if lines is not None:
            lines.listen(key, on_line)
        try:
            return self._run(job, stop, lines)
        finally:
            if lines is not None:
                lines.finish(key)

    def _run(self, job: Job, stop: threading.Event, lines: _LineStream | None) -> AttemptOutcome:
        # optional dependency; start() has checked that it is installed
        import ray
        from ray.exceptions import GetTimeoutError, RayError

        # The cell's running.json (just written by the batch) tells a node that sees this directory it can write there.
        token = read_json(job.episode_dir.parent / RUNNING) if self.copy == "auto" else None
        ref = _remote().options(num_cpus=1, memory=job.cell.memory).remote(
            job.cell.to_dict(), job.attempt, job.variables, lines.queue if lines is not None else None,
            str(job.episode_dir), token)
        while True:
            if stop.is_set():
                ray.cancel(ref, force=True)
                return AttemptOutcome(None, where=self.label, stopped=True)
            try:
                reply = ray.get(ref, timeout=1.0)  # a bounded wait so a stop is heard; not a synchronisation
                break
            except GetTimeoutError:
                continue
            except RayError as exc:  # the node, its raylet or the worker died: the infrastructure, not the episode
                first = (str(exc).strip().splitlines() or [""])[0].split(". ")[0]  # Ray's messages run on for lines
                return AttemptOutcome(None, infra_error=f"{type(exc).__name__}: {first}"[:200], where=self.label)
        try:
            if reply["tar"] is not None:  # None: written in place (the node sees this batch directory)
                self._unpack(reply["tar"], job.episode_dir.parent)
        except (tarfile.TarError, OSError) as exc:
            return AttemptOutcome(None, infra_error=f"copying the episode back failed: {exc}"[:200], where=reply["where"])
        return AttemptOutcome(reply["exit_code"], infra_error=reply["infra_error"], where=reply["where"])

    @staticmethod
    def _unpack(packed: bytes, cell_dir: Path) -> None:
        # "tar", not "data": a workspace's venv links to its node's absolute interpreter path. Members still cannot
        # land outside the cell directory (the tarball is ours, made by _episode_on_node).
        with tarfile.open(fileobj=io.BytesIO(packed), mode="r:*") as tar:
            log = tar.extractfile(LOG) if LOG in tar.getnames() else None
            if log is not None:
                with open(cell_dir / LOG, "ab") as out:
                    out.write(log.read())
            members = [m for m in tar.getmembers() if m.name == "episode" or m.name.startswith("episode/")]
            extract_within(tar, cell_dir, members)

    def close(self) -> None:
        # optional dependency, loaded by start() already
        import ray

        if self._lines is not None:
            self._lines.close()
            self._lines = None
        if ray.is_initialized():
            ray.shutdown()


__all__ = ["RayRunner"]
