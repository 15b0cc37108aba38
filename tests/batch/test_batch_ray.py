"""The same batch on a local two-node Ray cluster: the same results as the local pool, and a lost node retried once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.batch.helpers import AGENTS, ENVS, batch_env, stripebench, trace_facts
from tests.batch.ray_cluster import LocalCluster, descendants_of

# two Ray nodes start (~10-25 s here) and 6 episodes run on them; the shared machine can make that minutes
# In the same xdist group as test_batch_local.py: both use its session-scoped local batch, run once.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900), pytest.mark.xdist_group("batch"), pytest.mark.drill]
# The Ray batch is run 1 of the local batch: every environment × agent with the same seed (--runs 1 --seed 7 gives
# the same cells, ids and command lines as the local batch's r1 cells), so each cell is compared with its local twin.
# Run 2 would only repeat the seed+1 episodes the local batch already proves; on a 2-core machine each is seconds.
RUNS = 1
LOSE_AFTER = 4  # episodes ended (of 6) before the second node is lost: one round left, on both nodes


@pytest.fixture(scope="module")
def ray_cluster(batch_envs: Path) -> Iterator[LocalCluster]:
    """One two-node cluster for every Ray test of this module (starting one takes ~10-25 s)."""
    # Imported here, not at the top: `make test` collects this module without running it and installs no Ray, so a
    # top-level import broke a fresh machine's `make test`. `make drills` installs the ray extra: without it the
    # tests here must fail, not skip.
    import ray  # noqa: F401 - fails the tests, not skips them, without Ray (above)
    cluster = LocalCluster(batch_env(batch_envs))
    try:
        yield cluster.start()
    finally:
        cluster.stop()


class Heard:
    """A listener around the real progress display: what it was told, and what its rows said, in order."""

    def __init__(self, progress: Any) -> None:
        self.progress = progress
        self.events: list[tuple[str, str]] = []

    def started(self, cell: Any, attempt: int, where: str) -> None:
        self.progress.started(cell, attempt, where)
        self.events.append(("started", where))

    def line(self, cell: Any, text: str) -> None:
        self.progress.line(cell, text)
        rows = [str(t.description) for t in self.progress.progress.tasks if cell.id in str(t.description)]
        self.events.append(("line", rows[0] if rows else ""))

    def ended(self, cell: Any, result: dict[str, Any]) -> None:
        self.progress.ended(cell, result)
        self.events.append(("ended", result["status"]))


def test_a_ray_episode_streams_its_turns_to_the_progress_display(ray_cluster: LocalCluster, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs before the node-loss test below (same module, same cluster, both nodes still up)."""
    import io

    from rich.console import Console

    from stripebench_tui.batch import create_runner
    from stripebench_tui.batch.manifest import Batch
    from stripebench_tui.batch.matrix import build_cells, parse_agents, resolve_environments
    from stripebench_tui.batch.progress import BatchProgress
    from stripebench_tui.batch.runner import run_batch

    for name in ("STRIPEBENCH_ENVIRONMENTS", "STRIPEBENCH_GRADERS", "RAY_AUTH_MODE"):
        monkeypatch.setenv(name, ray_cluster.env[name])
    cells = build_cells(resolve_environments(["tiny-a"]), parse_agents("oracle"), 1, 7)
    batch = Batch.create(tmp_path / "b", {"runs": 1}, cells)
    console = Console(file=io.StringIO(), force_terminal=True, width=160)
    with BatchProgress(len(cells), console) as progress:
        heard = Heard(progress)
        # copy="always": the episode comes back packed, as from a node of another machine (the path the CLI
        # batch below does not take: its nodes see the batch directory and write the episodes in place)
        run_batch(batch, create_runner("ray", address=ray_cluster.address, workers=1, copy="always"), heard)
    assert heard.events[0][0] == "started" and heard.events[0][1].startswith("ray")
    assert heard.events[-1] == ("ended", "passed")
    rows = [text for kind, text in heard.events if kind == "line"]
    # the episode's four turns, each shown in its row as it happened, all before the end
    assert [r.rsplit(" ", 1)[-1] for r in rows] == ["1", "2", "3", "4"], rows
    assert all(r.endswith(f"{cells[0].id} · turn {n}") for r, n in zip(rows, "1234", strict=True))
    episode = batch.episode_dir(cells[0])  # unpacked into the cell's directory, with the task's run.log
    assert trace_facts(episode)["score"] == 1.0 and "=== attempt 1 on ray:" in (episode.parent / "run.log").read_text()


def test_ray_batch_matches_local_and_retries_a_lost_node(ray_cluster: LocalCluster, local_batch: dict[str, Any],
                                                         tmp_path: Path) -> None:
    out = tmp_path / "ray-batch"
    env = ray_cluster.env
    proc = subprocess.Popen([sys.executable, "-m", "stripebench_tui", "batch", *ENVS, "--agents", AGENTS,
                             "--runs", str(RUNS), "--seed", "7", "--ray", ray_cluster.address, "--out", str(out)],
                            env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    raylet = ray_cluster.worker_raylet()
    deadline = time.monotonic() + 400
    # Lose the node late (an episode of the last round on it): the batch runs on two slots until then; afterwards
    # only the head is left, one episode at a time. Two episodes at once each take the one CPU of a node, so
    # while two run one of them is on the second node.
    while ((len(list(out.glob("*/result.json"))) < LOSE_AFTER or not descendants_of(raylet, "stripebench_tui run"))
           and proc.poll() is None):
        assert time.monotonic() < deadline, "no late episode was scheduled on the second node"
        time.sleep(0.2)  # polling files and the process table: there is no event for "a process appeared over there"
    assert proc.poll() is None, "the batch ended before an episode ran on the second node"
    os.kill(raylet, signal.SIGKILL)  # the node is lost mid-episode
    stdout, _ = proc.communicate(timeout=400)
    assert proc.returncode == 0, stdout
    manifest = json.loads((out / "batch.json").read_text())
    local_cells = {c["id"]: c for c in json.loads((local_batch["dir"] / "batch.json").read_text())["cells"]}
    assert len(manifest["cells"]) == 6
    for cell in manifest["cells"]:  # the very cells of the local batch: same id, seed and command line
        assert cell == local_cells[cell["id"]], cell["id"]
    histories = {c["id"]: [json.loads(line)["status"] for line in (out / c["id"] / "attempts.jsonl").read_text().splitlines()]
                 for c in manifest["cells"]}
    retried = {cell: h for cell, h in histories.items() if len(h) > 1}
    assert len(retried) == 1 and list(retried.values())[0][0] == "infra_error"
    assert all(h[-1] in ("passed", "failed") for h in histories.values())
    for cell in histories:  # the same scores, turns and even the same Stripe object ids (same seeds)
        assert trace_facts(out / cell / "episode") == trace_facts(local_batch["dir"] / cell / "episode"), cell
    ray_report = json.loads(stripebench("batch", "report", str(out), "-f", "json", env=env).stdout)
    local_report = json.loads(stripebench("batch", "report", str(local_batch["dir"]), "-f", "json", env=env).stdout)
    assert ray_report["finished"] == 6 and ray_report["retried"] == 1
    same = ("env", "model", "run", "seed", "score", "turns", "failed", "reason")
    local_runs = {r["cell"]: {k: r[k] for k in same} for r in local_report["runs"]}
    assert {r["cell"]: {k: r[k] for k in same} for r in ray_report["runs"]} == {c: local_runs[c] for c in histories}
    assert {(c["env"], c["criterion"]): c["failed"] for c in ray_report["criteria"]} == {(e, "customer metadata"): 1
                                                                                          for e in ENVS}
