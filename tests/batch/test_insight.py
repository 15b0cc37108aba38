"""Failure modes across a sweep: the report's findings tables match a plain scan of the traces."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import pytest

from stripebench_tui.batch.insight import distributions, failure_modes, p90, with_failures
from stripebench_tui.batch.manifest import Batch
from stripebench_tui.batch.matrix import Cell
from stripebench_tui.batch.sweep_report import CSV_COLUMNS, build_report, render
from stripebench_tui.core.events import Finding
from stripebench_tui.core.trace import open_trace
from stripebench_tui.findings.derived import with_derived_findings

REPLAYS = Path(__file__).resolve().parents[2] / "replays"
# (cell agent, sample replay): the 400-as-success sample plays a mutant that reads a 400 as success.
CELLS = [("oracle", "checkout-migration", 1, "checkout-migration-oracle"),
         ("oracle", "checkout-migration", 2, "checkout-migration-oracle"),
         ("mutant:400", "checkout-migration", 1, "checkout-migration-400"),
         ("mutant:400", "checkout-migration", 2, "checkout-migration-oracle"),
         ("oracle", "bookings-payments", 1, "bookings-payments-oracle"),
         ("mutant:400", "bookings-payments", 1, "bookings-payments-oracle")]


def make_sweep(root: Path) -> Batch:
    cells = [Cell(id=f"{env}__{agent.replace(':', '-')}__r{run}", env=env, env_ref=env, category="backend",
                  agent_label=agent, agent="oracle", options={}, run=run, seed=run - 1, memory=1 << 30,
                  argv=["run", env]) for agent, env, run, _ in CELLS]
    batch = Batch.create(root, {"runs": 2}, cells)
    for cell, (_, _, _, sample) in zip(cells, CELLS, strict=True):
        shutil.copytree(REPLAYS / sample, batch.start_attempt(cell, 1, "local"), dirs_exist_ok=True)
        batch.finish(cell, {"status": "failed" if sample.endswith("-400") else "passed", "attempts": 1})
    return batch


def scanned_findings(trace_path: Path) -> set[str]:
    """The finding kinds of one trace by a plain pass over its events (derived where it recorded none)."""
    trace = open_trace(trace_path)
    return {ev.detector for ev in with_derived_findings(trace.iter_events()) if isinstance(ev, Finding)}


def test_failure_modes_match_a_plain_scan_of_the_traces(tmp_path: Path) -> None:
    batch = make_sweep(tmp_path / "sweep")
    report = build_report(batch)
    expected: dict[tuple[str, str, str], set[str]] = {}
    for cell in batch.cells:
        for kind in scanned_findings(batch.episode_dir(cell) / "trace.jsonl"):
            expected.setdefault((kind, cell.agent_label, cell.env), set()).add(cell.id)
    got = {(m["finding"], m["model"], m["env"]): set(m["cells"]) for m in report["failure_modes"]}
    assert got == expected
    assert ("400-as-success", "mutant:400", "checkout-migration") in got  # the mutant's signature finding…
    assert not [k for k in got if k[1] == "oracle"]  # …and nothing on the oracle's runs
    row = next(m for m in report["failure_modes"] if m["finding"] == "400-as-success")
    assert (row["fired"], row["runs"], row["share"]) == (1, 2, 0.5) and row["median_turn"] == 11

    beside = {w["finding"]: w for w in report["with_failures"]}["400-as-success"]
    assert (beside["runs"], beside["failed_runs"], beside["passed_runs"]) == (1, 1, 0)
    assert {"criterion": "paid", "runs": 1} in beside["criteria"]


def test_the_three_formats_carry_the_failure_modes(tmp_path: Path) -> None:
    report = build_report(make_sweep(tmp_path / "sweep"))
    md = render(report, "md")
    assert "| 400-as-success | mutant:400 | checkout-migration | 1 | 2 | 50 % | 11 |" in md
    assert "## Per agent (median / p90 over runs)" in md
    rows = list(csv.DictReader(io.StringIO(render(report, "csv"))))
    assert tuple(rows[0]) == CSV_COLUMNS and CSV_COLUMNS[:5] == ("eval_name", "model", "run_id", "score", "turn_count")
    failing = [r for r in rows if r["passed"] == "false"]
    assert len(failing) == 1 and "400-as-success@11" in failing[0]["findings"].split(";")
    assert "paid" in failing[0]["failed_criteria"].split(";")
    data = json.loads(render(report, "json"))
    assert {"failure_modes", "with_failures", "distributions"} <= set(data)


def test_distributions_are_median_and_p90_per_agent() -> None:
    runs = [{"model": "a", "turns": t, "seconds": t * 2.0, "tokens": 10 * t, "cost_usd": t / 100} for t in range(1, 11)]
    runs.append({"model": "b", "turns": 4, "seconds": 1.0, "tokens": 0, "cost_usd": 0.0})
    [a, b] = distributions(runs)
    assert a["model"] == "a" and a["runs"] == 10
    assert a["turns"] == {"median": 5.5, "p90": 9.0} and a["seconds"] == {"median": 11.0, "p90": 18.0}
    assert b["turns"] == {"median": 4.0, "p90": 4.0}
    assert p90([]) == 0.0 and p90([3]) == 3.0 and p90(list(range(1, 101))) == 90.0


def test_a_finding_counts_once_per_run_at_its_first_turn() -> None:
    runs = [{"cell": "c1", "model": "m", "env": "e", "passed": False, "failed": ["x"],
             "findings": [{"kind": "k", "turn": 7}, {"kind": "k", "turn": 3}]},
            {"cell": "c2", "model": "m", "env": "e", "passed": True, "failed": [], "findings": []}]
    [row] = failure_modes(runs)
    assert (row["fired"], row["runs"], row["median_turn"], row["cells"]) == (1, 2, 3, ["c1"])
    [beside] = with_failures(runs)
    assert beside["criteria"] == [{"criterion": "x", "runs": 1}]


@pytest.mark.parametrize("damage", ["garbage", "empty", "missing"])
def test_a_broken_episode_is_left_out_and_counted(tmp_path: Path, damage: str) -> None:
    batch = make_sweep(tmp_path / "sweep")
    trace = batch.episode_dir(batch.cells[2]) / "trace.jsonl"
    if damage == "garbage":
        trace.write_bytes(b"\x00not json at all\n" * 10)
    elif damage == "empty":
        trace.write_text("")
    else:
        trace.unlink()
    report = build_report(batch)
    assert report["finished"] == 5 and report["cells"] == 6
    assert not [m for m in report["failure_modes"] if m["finding"] == "400-as-success"]


# A results file in the published format, written for these tests (models and numbers of our own).
RESULTS = """eval name,model,run ID,score,turn count
checkout-migration,model-x,r1,0.5,20
checkout-migration,model-x,r2,1,31
checkout-migration,model-x,r3,0.25,12
subscription gym,model-x,r1,1,40
ruby-charges-on-payment-intent,model-x,r1,0.8,25
imaginary-eval,model-x,r1,1,3
checkout-migration,model-y,r1,not-a-score,9
"""


def test_compare_puts_published_models_beside_the_sweeps_agents(tmp_path: Path) -> None:
    from stripebench_tui.batch.published import compare, read_results

    batch = make_sweep(tmp_path / "sweep")
    results = tmp_path / "results.csv"
    results.write_text(RESULTS)
    report = build_report(batch)
    cmp = compare(report, read_results(results))
    by_eval = {t["eval_name"]: t for t in cmp["tasks"]}
    mine = by_eval["checkout-migration"]
    assert (mine["env"], mine["in_sweep"], mine["runs"], mine["best"], mine["mean"], mine["best_turns"]) == (
        "checkout-migration", True, 3, 1.0, pytest.approx(1.75 / 3), [31, 31])
    assert by_eval["subscription gym"]["env"] == "subscription-gym"  # the overlay's eval_name
    assert by_eval["ruby-charges-on-payment-intent"]["env"] == "sdk-upgrades-ruby-charges-on-payment-intent"
    assert cmp["unmatched"] == [{"eval_name": "imaginary-eval", "runs": 1}]
    assert cmp["not_in_sweep"] == ["ruby-charges-on-payment-intent", "subscription gym"]
    assert len(cmp["skipped"]) == 1 and "line 8" in cmp["skipped"][0]
    # The sweep covers 1 of the published backend's 2 tasks (checkout-migration; ruby's SDK upgrade it did not run):
    # model-x over the same task, then over the whole category, by the published rule (ruby's task is 0.8).
    assert [(c["scope"], c["model"], c["tasks"], c["of_tasks"], c["best_percent"], c["best_turns"])
            for c in cmp["categories"]] == [("same tasks", "model-x", 1, 2, 100, [31, 31]),
                                             ("whole category", "model-x", 2, 2, 90, [25, 31])]

    report["compare"] = cmp
    md = render(report, "md")
    assert "| checkout-migration | model-x | published (checkout-migration) | 3 | 100 % | 58 % | 31 |" in md
    assert "| checkout-migration | oracle | this sweep | 2 | 100 % | 100 % |" in md
    assert "imaginary-eval (1 runs)" in md and "1 rows of the results file left out" in md
    assert "| backend | model-x | published, same 1 of 2 tasks as this sweep | 1 | 100 % | 31 |" in md
    assert "| backend | model-x | published, whole category (2 of 2 tasks) | 2 | 90 % | 25–31 |" in md


@pytest.mark.parametrize("text, message", [
    ("", "empty"), ("name,score\nx,1\n", "no column for eval, model, run, turns"),
])
def test_a_results_file_it_cannot_use_is_a_one_line_error(tmp_path: Path, text: str, message: str) -> None:
    from stripebench_tui.batch.published import read_results
    from stripebench_tui.errors import BadFileError

    path = tmp_path / "r.csv"
    path.write_text(text)
    with pytest.raises(BadFileError, match=message):
        read_results(path)
    with pytest.raises(BadFileError, match="cannot read"):
        read_results(tmp_path / "missing.csv")


def test_the_command_prints_both_and_refuses_bad_input_in_one_line(tmp_path: Path) -> None:
    import subprocess
    import sys

    batch = make_sweep(tmp_path / "sweep")
    results = tmp_path / "results.csv"
    results.write_text(RESULTS)
    ok = subprocess.run([sys.executable, "-m", "stripebench_tui", "batch", "report", str(batch.root), "--compare",
                         str(results)], capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stderr
    assert "## Beside the published results" in ok.stdout and "model-x" in ok.stdout
    bad = tmp_path / "bad.csv"
    bad.write_text("just,two\n1,2\n")
    refused = subprocess.run([sys.executable, "-m", "stripebench_tui", "batch", "report", str(batch.root),
                              "--compare", str(bad)], capture_output=True, text=True, timeout=120)
    assert refused.returncode == 3 and refused.stderr.count("\n") == 1 and "Traceback" not in refused.stderr


def test_the_html_report_shows_the_published_comparison_with_the_markdowns_rows(tmp_path: Path) -> None:
    """`--compare` with `--format html` once went unread; the page now has the Markdown's tables, escaped."""
    import html
    import re
    import subprocess
    import sys

    batch = make_sweep(tmp_path / "sweep")
    results = tmp_path / "results.csv"
    results.write_text(RESULTS + "checkout-migration,<b>model-z</b>,r1,0.5,7\n")
    out = tmp_path / "sweep.html"
    made = subprocess.run([sys.executable, "-m", "stripebench_tui", "batch", "report", str(batch.root), "--compare",
                           str(results), "--format", "html", "-o", str(out)], capture_output=True, text=True,
                          timeout=120)
    assert made.returncode == 0, made.stderr
    page = out.read_text(encoding="utf-8")
    assert f"Beside the published results ({html.escape(str(results))}: 7 runs)" in page
    assert "<b>model-z</b>" not in page and "&lt;b&gt;model-z&lt;/b&gt;" in page  # a name is text, never markup
    cells = [[html.unescape(re.sub(r"<[^>]+>", "", c)) for c in re.findall(r"<td[^>]*>(.*?)</td>", row)]
             for row in re.findall(r"<tr>(.*?)</tr>", page.split('id="published"')[1].split('id="runs"')[0])]
    md = subprocess.run([sys.executable, "-m", "stripebench_tui", "batch", "report", str(batch.root), "--compare",
                         str(results)], capture_output=True, text=True, timeout=120).stdout
    assert "<b>model-z</b>" not in md and "&lt;b&gt;model-z&lt;/b&gt;" in md  # in the Markdown too
    published = md.split("## Beside the published results")[1]
    # The Markdown's cells as a renderer shows them: its escapes undone (it has HTML's as entities, never raw).
    rows = [[html.unescape(re.sub(r"\\(.)", r"\1", c.strip())) for c in line.strip().strip("|").split(" | ")]
            for line in published.splitlines() if line.startswith("| ") and not line.startswith("| task |")
            and not line.startswith("| category |")]
    assert [c for c in cells if c] == rows  # the same rows, in the same order, tasks then categories
    assert ["checkout-migration", "model-x", "published (checkout-migration)", "3", "100 %", "58 %", "31"] in rows
    assert "imaginary-eval (1 runs)" in page and "1 rows of the results file left out" in page


def test_published_folders_are_named_as_the_published_results_name_them() -> None:
    """The CSV's eval_name is the overlay's (saas-starter for the embedded-checkout folder), per problem for the
    SDK folders, the folder's own name otherwise, and our id for environments of ours."""
    from stripebench_tui.batch.published import eval_name_of, eval_targets

    targets = eval_targets()
    assert eval_name_of("saas-starter-embedded-checkout", targets) == "saas-starter"
    assert eval_name_of("saas-starter-partial-payments", targets) == "saas-starter-partial-payments"
    assert eval_name_of("sdk-upgrades-ruby-invoice-partial-payments", targets) == "ruby-invoice-partial-payments"
    assert eval_name_of("checkout-migration", targets) == "checkout-migration"
