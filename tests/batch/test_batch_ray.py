"""The same batch on a local two-node Ray cluster: the same results as the local pool, and a lost node retried once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.batch.helpers import AGENTS, ENVS, batch_env, stripebench, trace_facts
from tests.batch.ray_cluster import LocalCluster, descendants_of

import ray  # noqa: E402,F401  scripts/test.sh installs the ray extra: without it this must fail, not skip
# two Ray nodes start (~10-25 s here) and 12 episodes run on them; the shared machine can make that minutes
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


@pytest.fixture(scope="module")
def ray_cluster(batch_envs: Path) -> Iterator[LocalCluster]:
    cluster = LocalCluster(batch_env(batch_envs))
    try:
        yield cluster.start()
    finally:
        cluster.stop()


def test_ray_batch_matches_local_and_retries_a_lost_node(ray_cluster: LocalCluster, local_batch: dict[str, Any],
                                                         tmp_path: Path) -> None:
    out = tmp_path / "ray-batch"
    env = ray_cluster.env
    proc = subprocess.Popen([sys.executable, "-m", "stripebench_tui", "batch", *ENVS, "--agents", AGENTS, "--runs", "2",
                             "--seed", "7", "--ray", ray_cluster.address, "--out", str(out)], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    raylet = ray_cluster.worker_raylet()
    deadline = time.monotonic() + 180
    while not descendants_of(raylet, "stripebench_tui run") and proc.poll() is None:  # an episode on the second node
        assert time.monotonic() < deadline, "no episode was scheduled on the second node"
        time.sleep(0.2)  # polling the process table: there is no event for "a process appeared over there"
    os.kill(raylet, signal.SIGKILL)  # the node is lost mid-episode
    stdout, _ = proc.communicate(timeout=400)
    assert proc.returncode == 0, stdout
    manifest = json.loads((out / "batch.json").read_text())
    histories = {c["id"]: [json.loads(line)["status"] for line in (out / c["id"] / "attempts.jsonl").read_text().splitlines()]
                 for c in manifest["cells"]}
    retried = {cell: h for cell, h in histories.items() if len(h) > 1}
    assert len(retried) == 1 and list(retried.values())[0][0] == "infra_error"
    assert all(h[-1] in ("passed", "failed") for h in histories.values())
    for cell in histories:  # the same scores, turns and even the same Stripe object ids (same seeds)
        assert trace_facts(out / cell / "episode") == trace_facts(local_batch["dir"] / cell / "episode"), cell
    ray_report = json.loads(stripebench("batch", "report", str(out), "-f", "json", env=env).stdout)
    local_report = json.loads(stripebench("batch", "report", str(local_batch["dir"]), "-f", "json", env=env).stdout)
    assert ray_report["finished"] == 12 and ray_report["retried"] == 1
    assert ray_report["tasks"] == local_report["tasks"] and ray_report["categories"] == local_report["categories"]
