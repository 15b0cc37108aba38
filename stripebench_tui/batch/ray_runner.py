"""Episodes as Ray tasks on any node of a cluster, their directories copied back to the driver's batch directory.

Each task asks for one CPU and the memory of its environment's manifest, runs the same
``stripebench run … --headless`` process as the local pool in a scratch directory of its node, and
returns the episode directory packed as an (uncompressed) tarball, which the driver unpacks into the
cell's directory: the report and the TUI read it as if it had run here. Ray's own retries are off: a task
whose node or worker is lost comes back as an ``infra_error`` and ``runner.run_batch`` retries it once.
Every node needs this package (same version) and the environments at the same paths or ids.
"""

from __future__ import annotations

import io
import shutil
import tarfile
import tempfile
import threading
from pathlib import Path
from typing import Any, Callable

from stripebench_tui.batch.local import LOG, run_episode_process
from stripebench_tui.batch.matrix import Cell
from stripebench_tui.batch.runner import Job, Outcome
from stripebench_tui.errors import RuntimeProblem

_task: Any = None


def _episode_on_node(cell: dict[str, Any], attempt: int, variables: dict[str, str]) -> dict[str, Any]:
    """Runs on a Ray worker: the episode in a scratch directory, returned packed (episode/ and run.log)."""
    import socket

    import ray

    scratch = Path(tempfile.mkdtemp(prefix="stripebench-batch-"))
    try:
        where = f"ray:{socket.gethostname()}:{ray.get_runtime_context().get_node_id()[:8]}"
        job = Job(Cell.from_dict(cell), scratch / "episode", attempt, variables)
        outcome = run_episode_process(job, lambda _line: None, threading.Event(), where=where)
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
        import ray

        _task = ray.remote(max_retries=0)(_episode_on_node)
    return _task


class RayRunner:
    """Run each episode as a Ray task (``address``: ``auto`` or host:port of a cluster's head)."""

    label = "ray"

    def __init__(self, address: str = "auto", workers: int | None = None) -> None:
        self.address = address
        self.requested = workers
        self.slots = workers or 1
        self._started_here = False
        self._ready = False

    def start(self) -> None:
        try:
            import ray
        except ImportError:
            raise RuntimeProblem("--ray needs Ray: pip install 'stripebench-tui[ray]'") from None
        if self._ready:
            return
        self._ready = True
        if not ray.is_initialized():
            try:
                ray.init(address=self.address, log_to_driver=False, logging_level="ERROR")
            except ConnectionError:
                if self.address != "auto":
                    raise RuntimeProblem(f"no Ray cluster answers at {self.address}") from None
                ray.init(log_to_driver=False, logging_level="ERROR")  # none found: a local one for this batch
                self._started_here = True
        if self.requested is None:
            self.slots = max(1, int(ray.cluster_resources().get("CPU", 1)))
        self.label = f"ray ({ray.get_runtime_context().gcs_address})"

    def run_one(self, job: Job, on_line: Callable[[str], None], stop: threading.Event) -> Outcome:
        import ray
        from ray.exceptions import GetTimeoutError, RayError

        ref = _remote().options(num_cpus=1, memory=job.cell.memory).remote(job.cell.to_dict(), job.attempt, job.variables)
        while True:
            if stop.is_set():
                ray.cancel(ref, force=True)
                return Outcome(None, where=self.label, stopped=True)
            try:
                reply = ray.get(ref, timeout=1.0)  # a bounded wait so a stop is heard; not a synchronisation
                break
            except GetTimeoutError:
                continue
            except RayError as exc:  # the node, its raylet or the worker died: the infrastructure, not the episode
                first = (str(exc).strip().splitlines() or [""])[0].split(". ")[0]  # Ray's messages run on for lines
                return Outcome(None, infra_error=f"{type(exc).__name__}: {first}"[:200], where=self.label)
        try:
            self._unpack(reply["tar"], job.episode_dir.parent)
        except (tarfile.TarError, OSError) as exc:
            return Outcome(None, infra_error=f"copying the episode back failed: {exc}"[:200], where=reply["where"])
        return Outcome(reply["exit_code"], infra_error=reply["infra_error"], where=reply["where"])

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
            tar.extractall(cell_dir, members=members, filter="tar")

    def close(self) -> None:
        import ray

        if ray.is_initialized():
            ray.shutdown()


__all__ = ["RayRunner"]
