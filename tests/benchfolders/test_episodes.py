"""Whole episodes on our fixture folders: oracle 1.0, untouched 0, a wrong solution below 1, folders unchanged."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from stripebench_tui.core.events import PASS, GraderVerdict
from stripebench_tui.core.operator import Resume, Step
from stripebench_tui.envs.catalog import find_environment
from stripebench_tui.runtime.episode import EpisodeConfig, run_episode
from stripebench_tui.runtime.fork import fork_config
from stripebench_tui.runtime.grade import grade_episode
from tests.benchfolders.conftest import FOLDERS, tree_hash

pytestmark = pytest.mark.drill


@pytest.mark.slow
@pytest.mark.parametrize("name", ["pi-script", "config-gym", pytest.param("order-api-node", marks=pytest.mark.node),
                                  pytest.param("tea-checkout", marks=pytest.mark.browser)])
def test_validate_a_folder_as_it_is(name: str, tmp_path: Path) -> None:
    folder = FOLDERS / name
    before = tree_hash(folder)
    done = subprocess.run([sys.executable, "-m", "stripebench_tui", "validate", str(folder)], capture_output=True,
                          text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = {line.split("│")[2].strip(): line.split("│")[3].strip() for line in done.stdout.splitlines() if line.count("│") > 5}
    assert rows["oracle"] == "1.00" and rows["no-op"] == "0.00"
    mutant = next(v for k, v in rows.items() if k.startswith("mutant"))
    assert 0 < float(mutant) < 1  # the wrong solution loses some points, not all
    assert tree_hash(folder) == before


@pytest.mark.slow
async def test_gym_verdicts_turn_live_then_final_and_grade_again(tmp_path: Path) -> None:
    folder = FOLDERS / "config-gym"
    before = tree_hash(folder)
    env = find_environment(str(folder))
    loop = asyncio.get_running_loop()
    phases = {"start": loop.create_future(), "submission": loop.create_future()}
    ready: asyncio.Future[Any] = loop.create_future()
    seen: dict[str, set[str]] = {"start": set(), "submission": set()}

    def on_event(ev: Any) -> None:
        if isinstance(ev, GraderVerdict) and ev.trigger in seen and not ev.final:
            seen[ev.trigger].add(ev.criterion)
            if len(seen[ev.trigger]) == 3 and not phases[ev.trigger].done():
                phases[ev.trigger].set_result(None)

    async def operate() -> None:  # an operator pacing the fast oracle the way a model's thinking would
        episode = await ready
        await phases["start"]  # the untouched workspace is graded while the episode waits, paused
        episode.driver.send(Step())  # turn 1 writes submission.json
        await phases["submission"]
        episode.driver.send(Resume())

    operator = asyncio.ensure_future(operate())
    result = await run_episode(EpisodeConfig(env=env, agent="oracle", episode_dir=tmp_path / "ep", start_paused=True),
                               subscribers=[on_event], on_ready=ready.set_result)
    await asyncio.wait_for(operator, 5)
    assert (result.score, result.passed) == (1.0, True)
    events = [json.loads(line) for line in (tmp_path / "ep" / "trace.jsonl").read_text().splitlines()]
    verdicts = [e for e in events if e.get("type") == "grader_verdict"]
    live = [(v["criterion"], v["status"], v["trigger"]) for v in verdicts if not v["final"]]
    # the untouched submission fails at the start; the oracle's write turns each challenge to pass, live
    assert ("donation", "fail", "start") in live and ("donation", "pass", "submission") in live
    finals = {v["criterion"]: v["status"] for v in verdicts if v["final"]}
    assert finals == dict.fromkeys(["donation", "subscription", "setup"], PASS)
    assert fork_config(tmp_path / "ep" / "trace.jsonl", "noop").env == str(folder)  # replay --fork-at finds the folder
    graded = await grade_episode(env, tmp_path / "ep")  # `stripebench grade`: one more run of the grader
    assert graded.score == 1.0 and set(graded.results) == {"donation", "subscription", "setup"}
    assert tree_hash(folder) == before
