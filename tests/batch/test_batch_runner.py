"""The batch orchestration with a stand-in runner (no episodes): retries, a full disk, bad input refused up front."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from stripebench_tui.batch.manifest import Batch
from stripebench_tui.batch.matrix import build_cells, parse_agents, resolve_environments
from stripebench_tui.batch.runner import AttemptOutcome, DiskFull, Job, run_batch
from stripebench_tui.errors import RuntimeProblem
from tests.batch.helpers import ENVS, make_envs


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """Run the CLI in this process: (exit code, stderr)."""
    from stripebench_tui.cli import main

    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_:
        main(list(args))
    return int(exit_.value.code or 0), capsys.readouterr().err


class ScriptedRunner:
    """Writes a minimal finished trace for each job; ``lose`` names cells whose first attempt the 'node' loses."""

    label = "scripted"
    slots = 2

    def __init__(self, lose: tuple[str, ...] = ()) -> None:
        self.lose = set(lose)
        self.jobs: list[tuple[str, int]] = []
        self._lock = threading.Lock()

    def start(self) -> None: ...

    def close(self) -> None: ...

    def run_one(self, job: Job, on_line: Callable[[str], None], stop: threading.Event) -> AttemptOutcome:
        with self._lock:
            self.jobs.append((job.cell.id, job.attempt))
        if job.cell.id in self.lose and job.attempt == 1:
            return AttemptOutcome(None, infra_error="NodeDiedError: node lost", where="node-2")
        job.episode_dir.mkdir(parents=True)
        header = {"type": "header", "schema": 1, "env": job.cell.env, "agent": job.cell.agent}
        end = {"type": "episode_end", "seq": 0, "t": 0.1, "turn": 1, "reason": "agent_done", "score": 1.0, "passed": True}
        (job.episode_dir / "trace.jsonl").write_text(json.dumps(header) + "\n" + json.dumps(end) + "\n")
        return AttemptOutcome(0, where="node-1")


class Quiet:
    def started(self, *a: Any) -> None: ...

    def line(self, *a: Any) -> None: ...

    def ended(self, *a: Any) -> None: ...


@pytest.fixture
def batch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Batch:
    envs = make_envs(tmp_path / "envs")
    monkeypatch.setenv("STRIPEBENCH_ENVIRONMENTS", str(envs))
    cells = build_cells(resolve_environments(list(ENVS)), parse_agents("oracle"), 2, 0)
    return Batch.create(tmp_path / "b", {"runs": 2}, cells)


def test_a_lost_node_is_retried_once(batch: Batch) -> None:
    runner = ScriptedRunner(lose=("tiny-b__oracle__r1",))
    run_batch(batch, runner, Quiet())
    assert sorted(runner.jobs).count(("tiny-b__oracle__r1", 2)) == 1 and len(runner.jobs) == 7
    cell = next(c for c in batch.cells if c.id == "tiny-b__oracle__r1")
    assert [a["status"] for a in batch.attempts(cell)] == ["infra_error", "passed"]
    assert batch.result(cell)["attempts"] == 2 and not batch.pending()


def test_lost_twice_stays_pending_for_resume(batch: Batch) -> None:
    class AlwaysLost(ScriptedRunner):
        def run_one(self, job: Job, on_line: Any, stop: Any) -> AttemptOutcome:
            self.jobs.append((job.cell.id, job.attempt))
            return AttemptOutcome(None, infra_error="node lost")

    runner = AlwaysLost()
    run_batch(batch, runner, Quiet())
    assert len(runner.jobs) == 12 and len(batch.pending()) == 6  # each tried twice, none counted as a result


def test_disk_full_stops_cleanly_and_resume_finishes(batch: Batch) -> None:
    checks = [0]

    def space(_root: Path) -> None:
        checks[0] += 1
        if checks[0] > 3:
            raise DiskFull("only 3 MB free")

    runner = ScriptedRunner()
    with pytest.raises(RuntimeProblem, match="only 3 MB free.*--resume"):
        run_batch(batch, runner, Quiet(), space=space)
    done = len(batch.cells) - len(batch.pending())
    assert done == 3 and len(runner.jobs) == 3
    again = ScriptedRunner()
    run_batch(Batch.open(batch.root), again, Quiet(), space=lambda _root: None)
    assert len(again.jobs) == 3 and not Batch.open(batch.root).pending()


def test_bad_input_is_refused_before_anything_starts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("STRIPEBENCH_ENVIRONMENTS", str(make_envs(tmp_path / "envs")))
    out = tmp_path / "out"
    cases = [
        (["tiny-a", "no-such-env"], "unknown environment 'no-such-env'", 2),
        (["tiny-a", "--agents", "oracle,gpt-9"], "unknown agent 'gpt-9'", 2),
        (["tiny-a", "--agents", "human"], "cannot run unattended", 2),
        (["tiny-a", "--agents", "mutant:nope"], "has no mutant 'nope'", 2),
        (["tiny-a", "--ray", "127.0.0.1:9"], "no Ray cluster answers at 127.0.0.1:9", 4),
    ]
    for args, message, code in cases:
        got, err = cli(capsys, "batch", *args, "--out", str(out))
        assert got == code and message in err, (args, err)
        assert len(err.strip().splitlines()) == 1 and not out.exists()


def test_a_batch_from_a_newer_version_is_refused(batch: Batch, capsys: pytest.CaptureFixture[str]) -> None:
    data = json.loads((batch.root / "batch.json").read_text())
    (batch.root / "batch.json").write_text(json.dumps({**data, "format": 99, "versions": {"stripebench": "9.0"}}))
    for args in (["batch", "--resume", str(batch.root)], ["batch", "report", str(batch.root)]):
        code, err = cli(capsys, *args)
        assert code == 3 and "format 99 (written by stripebench 9.0)" in err


def test_progress_shows_each_episode_turn_and_end(batch: Batch) -> None:
    import io

    from rich.console import Console

    from stripebench_tui.batch.progress import BatchProgress

    console = Console(file=io.StringIO(), force_terminal=True, width=120, record=True)
    cell = batch.cells[0]
    with BatchProgress(2, console) as progress:
        progress.started(cell, 1, "local")
        progress.line(cell, "── turn 3 ·    2.1s ──────")
        assert progress.progress.tasks[-1].description.endswith("turn 3")
        progress.ended(cell, {"status": "failed", "score": 0.5, "turns": 3, "attempts": 1, "where": "local",
                              "error": "[bold]not markup[/]"})
        assert len(progress.progress.tasks) == 1 and progress.progress.tasks[0].completed == 1
    text = console.export_text()
    assert f"[1/2] ✗ {cell.id} failed 0.50 · 3 turns (attempt 1, local): [bold]not markup[/]" in text
