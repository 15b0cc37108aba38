"""Run review (``stripebench review``) and a sweep reported by the published rule: verdicts beside the trace change the
best run, the counts and the CSV; SDK-upgrade problems count toward their language's task; --compare labels the
published models' figure over the sweep's tasks and over the whole category."""

from __future__ import annotations

import csv
import io
import json
import shutil
from fractions import Fraction
from pathlib import Path

import pytest

from stripebench_tui.batch.manifest import Batch
from stripebench_tui.batch.matrix import Cell
from stripebench_tui.batch.published import compare, read_results
from stripebench_tui.batch.review_queue import review_queue
from stripebench_tui.batch.scorecard import ScoredRun
from stripebench_tui.batch.sweep_report import build_report, render
from stripebench_tui.cli import main
from stripebench_tui.core.review import load_review, review_history, review_path, save_review

REPLAYS = Path(__file__).resolve().parents[2] / "replays"
RUBY = "sdk-upgrades-ruby"
PROBLEMS = ("charges-on-payment-intent", "invoice-partial-payments", "subscription-billing-migration")


def cli(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as ended:
        main([str(a) for a in args])
    out = capsys.readouterr()
    return int(ended.value.code or 0), out.out, out.err


def make_batch(root: Path, cells: list[tuple[str, str, int, float, int]],
               samples: dict[str, str] | None = None) -> Batch:
    """A batch of finished cells (env, agent, run, score, turns), each on a sample trace (``samples``: cell id →
    replay, default one that scores 1.0). The report reads scores from the traces; the result file's score and
    turns are what the review queue reads."""
    made = [Cell(id=f"{env}__{agent}__r{run}", env=env, env_ref=env, category="backend", agent_label=agent,
                 agent="oracle", options={}, run=run, seed=run - 1, memory=1 << 30, argv=["run", env])
            for env, agent, run, _, _ in cells]
    batch = Batch.create(root, {"runs": 2}, made)
    for cell, (_, _, _, score, turns) in zip(made, cells, strict=True):
        sample = (samples or {}).get(cell.id, "bookings-payments-oracle")
        shutil.copytree(REPLAYS / sample, batch.start_attempt(cell, 1, "local"))
        batch.finish(cell, {"status": "passed", "score": score, "turns": turns, "attempts": 1})
    return batch


def test_a_verdict_lives_beside_the_trace_with_who_when_and_history(tmp_path: Path) -> None:
    episode = tmp_path / "ep"
    shutil.copytree(REPLAYS / "bookings-payments-oracle", episode)
    before = (episode / "trace.jsonl").read_bytes()
    assert load_review(episode) is None
    save_review(episode, "integrity", "read the grader at turn 3", "alice", clock=lambda: "2026-01-01T00:00:00Z")
    save_review(episode / "trace.jsonl", "valid", "", "bob", clock=lambda: "2026-01-02T00:00:00Z")
    assert review_path(episode) == episode / "trace.jsonl.review.json"
    assert (episode / "trace.jsonl").read_bytes() == before  # never inside the recorded events
    now = load_review(episode)
    assert now is not None and (now.verdict, now.reviewer, now.at) == ("valid", "bob", "2026-01-02T00:00:00Z")
    assert [(r.verdict, r.note) for r in review_history(episode)] == [
        ("integrity", "read the grader at turn 3"), ("valid", "")]


def test_the_review_command_judges_shows_and_refuses(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    batch = make_batch(tmp_path / "b", [("galtee-basic", "a", 1, 1.0, 10), ("galtee-basic", "a", 2, 0.5, 8)])
    cell_dir = batch.cell_dir(batch.cells[0])
    code, out, _ = cli(capsys, "review", cell_dir, "--verdict", "integrity", "--note", "edited the spec", "--by", "al")
    assert code == 0 and "integrity by al" in out
    assert load_review(batch.episode_dir(batch.cells[0])).note == "edited the spec"  # type: ignore[union-attr]
    _, out, _ = cli(capsys, "review", cell_dir)
    assert out.startswith("integrity by al at ") and out.rstrip().endswith(": edited the spec")
    for args, said in [(("--verdict", "fine"), "unknown verdict 'fine'"),
                       (("--verdict", "other"), "needs a --note"),
                       (("--clear", "--verdict", "valid"), "contradict")]:
        code, _, err = cli(capsys, "review", cell_dir, *args)
        assert code == 2 and err.count("\n") == 1 and said in err
    code, _, err = cli(capsys, "review", tmp_path, "--verdict", "valid")
    assert code == 3 and "no episode here" in err
    (batch.episode_dir(batch.cells[1]) / "trace.jsonl.review.json").write_text("{not json")
    code, _, err = cli(capsys, "review", batch.cell_dir(batch.cells[1]), "--verdict", "valid")
    assert code == 3 and "not a review file" in err and err.count("\n") == 1
    # The batch's queue: the judged run gave way, so the 0.5 run is the best to review now.
    (batch.episode_dir(batch.cells[1]) / "trace.jsonl.review.json").unlink()
    code, out, _ = cli(capsys, "review", batch.root)
    lines = out.splitlines()
    assert code == 0 and lines[0].endswith("0 of 1 best runs reviewed; 2 runs finished")
    assert lines[1].startswith("best galtee-basic__a__r2") and "integrity by al: edited the spec" in lines[2]
    code, _, _ = cli(capsys, "review", batch.cell_dir(batch.cells[0]), "--clear")
    assert code == 0 and load_review(batch.episode_dir(batch.cells[0])) is None


def test_the_queue_starts_with_each_tasks_best_run() -> None:
    runs = [ScoredRun("t1", "a", "t1-a-1", Fraction(1, 2), 9), ScoredRun("t1", "a", "t1-a-2", Fraction(1), 30),
            ScoredRun("t1", "a", "t1-a-3", Fraction(1), 20), ScoredRun("t2", "a", "t2-a-1", Fraction(1), 5, "infra-failure"),
            ScoredRun("t2", "a", "t2-a-2", Fraction(0), 7), ScoredRun("t1", "b", "t1-b-1", Fraction(1), 3, "integrity"),
            ScoredRun("t1", "b", "t1-b-2", Fraction(1, 4), 3)]
    order = [(q.run.run, q.best) for q in review_queue(runs)]
    assert order == [("t1-a-3", True), ("t2-a-2", True), ("t1-b-2", True),  # fewest turns on a tie; infra left out
                     ("t1-a-2", False), ("t1-a-1", False), ("t2-a-1", False), ("t1-b-1", False)]


def test_reports_honour_verdicts_and_carry_them(tmp_path: Path) -> None:
    batch = make_batch(tmp_path / "b", [("galtee-basic", "a", 1, 1.0, 10), ("galtee-basic", "a", 2, 1.0, 12),
                                        ("galtee-invoicing", "a", 1, 1.0, 40), ("galtee-invoicing", "a", 2, 1.0, 44)])
    # The sample trace scores 1.0 in every cell; the verdicts alone change the numbers.
    before = build_report(batch)
    assert before["review"] == {"best_runs": 2, "best_reviewed": 0, "gave_way": 0, "infra_failure_left_out": 0}
    first = {(c.env, c.run): c for c in batch.cells}
    save_review(batch.episode_dir(first[("galtee-basic", 1)]), "integrity", "x", "r")
    save_review(batch.episode_dir(first[("galtee-basic", 2)]), "integrity", "y", "r")  # no valid run left: 0
    save_review(batch.episode_dir(first[("galtee-invoicing", 1)]), "infra-failure", "", "r")
    save_review(batch.episode_dir(first[("galtee-invoicing", 2)]), "valid", "", "r")
    report = build_report(batch)
    [backend] = report["categories"]
    assert backend["best_of_k"] == 0.5 and backend["tasks"] == 2
    assert report["review"] == {"best_runs": 1, "best_reviewed": 1, "gave_way": 2, "infra_failure_left_out": 1}
    tasks = {t["env"]: t for t in report["tasks"]}
    assert (tasks["galtee-invoicing"]["runs"], tasks["galtee-invoicing"]["left_out"]) == (1, 1)
    assert tasks["galtee-basic"]["best"] == 0.0 and tasks["galtee-basic"]["best_run"] is None
    md = render(report, "md")
    assert "Review: 1 of 1 best runs reviewed; 2 judged not valid gave way to the next best; 1 runs left out" in md
    rows = list(csv.DictReader(io.StringIO(render(report, "csv"))))
    assert sorted(r["verdict"] for r in rows) == ["infra-failure", "integrity", "integrity", "valid"]


def test_sdk_problems_count_toward_their_languages_task_in_a_sweep_and_beside_the_published(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Ours: ruby's three problems score 1, 1/13 (the 400 mutant's sample trace), 1: one task at 0.69; with galtee at
    # 1.0 the category is 85 % by the published rule, where eval by eval it would be 77 %.
    cells = [(f"{RUBY}-{p}", "a", 1, 1.0, 4) for p in PROBLEMS] + [("galtee-basic", "a", 1, 1.0, 4)]
    batch = make_batch(tmp_path / "b", cells, {f"{RUBY}-{PROBLEMS[1]}__a__r1": "checkout-migration-400"})
    report = build_report(batch)
    [backend] = report["categories"]
    assert (backend["tasks"], backend["of_tasks"], backend["best_percent"]) == (2, 2, 85)
    assert backend["best_turns"] == [4, 11]  # each problem's best run counts in the turn range
    results = tmp_path / "results.csv"
    results.write_text("eval name,model,run ID,score,turn count\n"
                       + "".join(f"ruby-{p},pub,r,{s},{t}\n" for p, s, t in zip(PROBLEMS, (1, 0, 0.5), (5, 6, 7), strict=True))
                       + "galtee,pub,r,1,10\ngaltee-invoices,pub,r,0.2,50\n")
    cmp = compare(report, read_results(results))
    rows = [(c["scope"], c["tasks"], c["of_tasks"], c["best_percent"], c["best_turns"]) for c in cmp["categories"]]
    assert rows == [("same tasks", 2, 3, 75, [5, 10]), ("whole category", 3, 3, 57, [5, 50])]  # (0.5+1+0.2)/3
    code, out, _ = cli(capsys, "batch", "report", batch.root, "--compare", results, "--format", "json")
    assert code == 0 and json.loads(out)["compare"]["categories"][0]["scope"] == "same tasks"


def test_the_html_report_shows_the_scorecard_the_published_scopes_and_the_review_counts(tmp_path: Path) -> None:
    import html

    from stripebench_tui.batch.html import render_sweep

    batch = make_batch(tmp_path / "b", [("galtee-basic", "a", 1, 1.0, 4), ("galtee-basic", "a", 2, 1.0, 4)],
                       {"galtee-basic__a__r2": "checkout-migration-400"})
    save_review(batch.episode_dir(batch.cells[0]), "integrity", "", "r")  # the 1.0 run: the 1/13 run stands
    results = tmp_path / "results.csv"
    results.write_text("eval name,model,run ID,score,turn count\ngaltee,pub,r,0.5,9\ngaltee-invoices,pub,r,0,3\n")
    report = build_report(batch)
    report["compare"] = compare(report, read_results(results))
    page = html.unescape(render_sweep(report, {r["cell"]: "x.html" for r in report["runs"]}))
    assert ">8 %</a>" in page and "turns 11 · mean 4 % · pass^k 0 %" in page  # 1/13 best; (0 + 1/13) / 2 mean
    assert "Review: 0 of 1 best runs reviewed; 1 judged not valid gave way to the next best" in page
    assert "published, same 1 of 2 tasks as this sweep" in page and "published, whole category (2 of 2 tasks)" in page


def test_our_report_csv_goes_through_the_scorecard_with_its_verdicts(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    batch = make_batch(tmp_path / "b", [("checkout-migration", "a", 1, 1.0, 4), ("checkout-migration", "a", 2, 1.0, 4),
                                        ("galtee-basic", "a", 1, 1.0, 4)],
                       {"checkout-migration__a__r2": "checkout-migration-400"})
    save_review(batch.episode_dir(batch.cells[0]), "integrity", "", "r")
    ours = tmp_path / "ours.csv"
    ours.write_text(render(build_report(batch), "csv"))
    code, out, err = cli(capsys, "scorecard", ours, "--format", "json")
    assert code == 0, err
    card = json.loads(out)
    # checkout-migration (ours: full-stack by its manifest) falls to its 1/13 run; galtee-basic is the published
    # galtee (backend) through its overlay.
    assert {(c["category"], c["best_average"]) for c in card["categories"]} == {("full-stack", 8), ("backend", 100)}
    assert card["review"]["gave_way"] == 1 and card["unmatched"] == {}
