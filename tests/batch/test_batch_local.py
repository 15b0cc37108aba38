"""A real batch on the local pool: every episode ends, resume after kill -9 runs only the rest, the report matches the traces."""

from __future__ import annotations

import csv
import io
import json
from statistics import mean
from typing import Any

import pytest

from tests.batch.helpers import ENVS, ended_lines, stripebench, trace_facts

# 12 real episodes, two at a time (about 35 s on an idle 2-core machine; minutes when it is shared)
# One xdist group with test_batch_ray.py, which compares its traces with this batch (the fixture runs once).
pytestmark = [pytest.mark.slow, pytest.mark.timeout(600), pytest.mark.xdist_group("batch"), pytest.mark.drill]


def test_kill_and_resume_runs_only_unfinished_episodes(local_batch: dict[str, Any]) -> None:
    out, before, resumed = local_batch["dir"], local_batch["before"], local_batch["resumed"]
    assert resumed.returncode == 0, resumed.stderr
    manifest = json.loads((out / "batch.json").read_text())
    cells = {c["id"] for c in manifest["cells"]}
    assert len(cells) == 12 and len(before) >= 4
    rerun = set(ended_lines(resumed.stdout))
    assert rerun == cells - set(before)  # exactly the unfinished ones, each once
    assert len(ended_lines(resumed.stdout)) == len(rerun)
    for cell, result in before.items():  # what had finished was left alone
        assert json.loads((out / cell / "result.json").read_text()) == result
    for cell in cells:
        assert json.loads((out / cell / "result.json").read_text())["status"] in ("passed", "failed")


def test_manifest_records_seeds_and_commands(local_batch: dict[str, Any]) -> None:
    manifest = json.loads((local_batch["dir"] / "batch.json").read_text())
    assert manifest["format"] == 1 and manifest["versions"]["stripebench"]
    assert manifest["request"]["runs"] == 2 and manifest["variables"]["STRIPEBENCH_ENVIRONMENTS"]
    for cell in manifest["cells"]:
        assert cell["seed"] == 7 + cell["run"] - 1
        assert cell["argv"][cell["argv"].index("--seed") + 1] == str(cell["seed"])
        header = json.loads((local_batch["dir"] / cell["id"] / "episode" / "trace.jsonl").read_text().splitlines()[0])
        assert header["seeds"] == {"emulator": cell["seed"]} and header["env"] == cell["env"]


def test_report_numbers_come_from_the_traces(local_batch: dict[str, Any]) -> None:
    out, env = local_batch["dir"], local_batch["env"]
    manifest = json.loads((out / "batch.json").read_text())
    facts = {c["id"]: {**c, **trace_facts(out / c["id"] / "episode")} for c in manifest["cells"]}
    report = json.loads(stripebench("batch", "report", str(out), "--format", "json", env=env).stdout)
    assert report["finished"] == 12 and len(report["tasks"]) == 6
    for task in report["tasks"]:
        mine = [f for f in facts.values() if f["env"] == task["env"] and f["agent_label"] == task["model"]]
        scores = [f["score"] for f in mine]
        assert task["best"] == max(scores) and task["mean"] == pytest.approx(mean(scores))
        best_turns = [f["turns"] for f in mine if f["score"] == max(scores)]
        assert task["best_turns"] == [min(best_turns), max(best_turns)]
    oracle = [f["score"] for f in facts.values() if f["agent_label"] == "oracle"]
    mutant = [f["score"] for f in facts.values() if f["agent_label"] == "mutant:no-metadata"]
    assert set(oracle) == {1.0} and max(mutant) < 1.0  # the mutant really lost a criterion
    by_cat = {c["model"]: c["best_of_k"] for c in report["categories"]}
    best = [max(f["score"] for f in facts.values() if f["env"] == e and f["agent_label"] == "mutant:no-metadata")
            for e in ENVS]
    assert by_cat["mutant:no-metadata"] == pytest.approx(mean(best))
    failing = {(c["env"], c["criterion"]): c["failed"] for c in report["criteria"]}
    assert failing == {(e, "customer metadata"): 2 for e in ENVS}
    rows = list(csv.DictReader(io.StringIO(stripebench("batch", "report", str(out), "-f", "csv", env=env).stdout)))
    assert list(rows[0])[:5] == ["eval_name", "model", "run_id", "score", "turn_count"] and len(rows) == 12
    for row in rows:
        cell = next(f for f in facts.values() if f["env"] == row["eval_name"] and f["agent_label"] == row["model"]
                    and f["run"] == int(row["run_id"]))
        assert float(row["score"]) == pytest.approx(cell["score"], abs=1e-4) and int(row["turn_count"]) == cell["turns"]
    md = stripebench("batch", "report", str(out), env=env).stdout
    assert "| tiny-a | backend | oracle | 2 | 100 % | 100 % |" in md and (out / "report.md").is_file()
