"""The published scorecard's rule (``stripebench scorecard``) on results files these tests write: best of k with the
fewest turns on a tie, each language's SDK-upgrade problems coalesced, half-up rounding on exact sums, partial
categories, review verdicts, and the check of a README's printed cells."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from stripebench_tui.batch.printed_tables import printed_rows
from stripebench_tui.batch.published import published_scorecard
from stripebench_tui.batch.scorecard import ScoredRun, TaskUnit, percent, score_runs
from stripebench_tui.cli import main

HEADER = "eval name,model,run ID,score,turn count"


def write_csv(path: Path, rows: list[str], header: str = HEADER) -> Path:
    path.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    return path


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as ended:
        main([str(a) for a in args])
    out = capsys.readouterr()
    return int(ended.value.code or 0), out.out, out.err


def row_of(card_json: dict[str, object], category: str, model: str) -> dict[str, object]:
    rows = [c for c in card_json["categories"] if c["category"] == category and c["model"] == model]  # type: ignore[index,union-attr]
    assert len(rows) == 1, card_json
    return rows[0]


def scorecard_json(capsys: pytest.CaptureFixture[str], csv_path: Path, *extra: str) -> dict[str, object]:
    code, out, err = cli(capsys, "scorecard", csv_path, "--format", "json", *extra)
    assert code == 0, err
    return json.loads(out)


def test_each_languages_sdk_problems_count_as_one_task(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # galtee 1.0; ruby's three problems 1.0, 0.0, 0.5 → one task at 0.5: backend (1.0 + 0.5) / 2 = 75 %. Averaged
    # eval by eval it would be (1 + 1 + 0 + 0.5) / 4 = 62.5 %.
    results = write_csv(tmp_path / "r.csv", [
        "galtee,m,a,1,40",
        "ruby-charges-on-payment-intent,m,b,1,12",
        "ruby-invoice-partial-payments,m,c,0,200",
        "ruby-subscription-billing-migration,m,d,0.5,9",
    ])
    backend = row_of(scorecard_json(capsys, results), "backend", "m")
    assert backend["best_average"] == 75 and backend["tasks"] == 2
    assert backend["turn_range"] == [9, 200]  # each problem's best run still counts in the turn range


def test_best_of_k_breaks_a_tie_by_fewest_turns(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = write_csv(tmp_path / "r.csv", [
        "galtee,m,a,1,50",
        "galtee,m,b,1,31",
        "galtee,m,c,0.5,5",  # fewer turns, lower score: never the best
        "galtee,m,d,1,44",
    ])
    backend = row_of(scorecard_json(capsys, results), "backend", "m")
    assert backend["best_average"] == 100 and backend["turn_range"] == [31, 31]
    assert backend["mean_average"] == 88  # (1 + 1 + 0.5 + 1) / 4 = 87.5 → 88, half up
    assert backend["pass_k"] == 0  # one run scored 0.5


def test_percentages_round_half_up_on_exact_sums(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert round(60.5) == 60 and percent(Fraction(121, 200)) == 61  # Python rounds half to even; the README does not
    # checkout-gym 0.86, subscription gym 0.35 → 60.5 %; a lone 0.145 → 14.5 %, which float arithmetic makes 14.4999…
    assert 0.145 * 100 < 14.5
    results = write_csv(tmp_path / "r.csv", [
        "checkout-gym,m,a,0.86,70",
        "subscription gym,m,b,0.35,90",
        "galtee-invoices,m,c,0.145,20",
    ])
    card = scorecard_json(capsys, results)
    assert row_of(card, "gym", "m")["best_average"] == 61
    assert row_of(card, "backend", "m")["best_average"] == 15


def test_a_model_with_part_of_a_category_is_named_partial(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = write_csv(tmp_path / "r.csv", [
        "galtee,full,a,1,10", "galtee-invoices,full,b,0.5,20",
        "dotnet-charges-on-payment-intent,full,c,1,30", "dotnet-invoice-partial-payments,full,d,1,30",
        "galtee,part,e,0,10", "dotnet-charges-on-payment-intent,part,f,1,12",
    ])
    card = scorecard_json(capsys, results)
    full, part = row_of(card, "backend", "full"), row_of(card, "backend", "part")
    assert (full["tasks"], full["of_tasks"], full["missing"]) == (3, 3, [])
    assert (part["tasks"], part["of_tasks"]) == (2, 3)
    # galtee-invoicing missing, and dotnet's task lacks one problem the other model ran
    assert part["missing"] == ["galtee-invoicing", "sdk-upgrades-dotnet/dotnet-invoice-partial-payments"]
    assert part["best_average"] == 50  # over its own tasks: galtee 0, dotnet 1.0
    _, text, _ = cli(capsys, "scorecard", results)
    assert "2 of 3*" in text and "partial: backend · part has 2 of 3 tasks" in text


def test_review_verdicts_change_the_best_run_and_the_counts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [
        "galtee,m,a,1,10,integrity",  # the best, judged not valid: the next best stands
        "galtee,m,b,0.75,30,valid",
        "galtee,m,c,0.5,5,",
        "galtee-invoices,m,d,1,40,infra-failure",  # left out, counted
        "galtee-invoices,m,e,0.25,22,",
    ]
    results = write_csv(tmp_path / "r.csv", rows, HEADER + ",verdict")
    card = scorecard_json(capsys, results)
    backend = row_of(card, "backend", "m")
    assert backend["best_average"] == 50  # (0.75 + 0.25) / 2
    assert backend["turn_range"] == [22, 30]
    assert backend["mean_average"] == 33  # (galtee (0 + 0.75 + 0.5) / 3 + galtee-invoices 0.25) / 2 = 1/3
    assert card["review"] == {"best_runs": 2, "best_reviewed": 1, "gave_way": 1, "infra_failure_left_out": 1}
    # Without the verdicts the same runs give the best run the integrity failure had, and the infra failure's 1.0.
    plain = write_csv(tmp_path / "plain.csv", [",".join(r.split(",")[:5]) for r in rows])
    assert row_of(scorecard_json(capsys, plain), "backend", "m")["best_average"] == 100
    # Every run of a task judged infra-failure: the task has no runs for that model.
    only_infra = write_csv(tmp_path / "infra.csv", ["galtee,m,a,1,10,infra-failure", "galtee,n,b,1,10,",
                                                    "galtee-invoices,m,c,1,10,"], HEADER + ",verdict")
    assert row_of(scorecard_json(capsys, only_infra), "backend", "m")["missing"] == ["galtee-basic"]


def test_all_runs_judged_not_valid_score_zero() -> None:
    unit = {"galtee": TaskUnit("galtee-basic", "backend")}
    card = score_runs([ScoredRun("galtee", "m", "a", Fraction(1), 10, "integrity"),
                       ScoredRun("galtee", "m", "b", Fraction(1), 12, "other")], unit)
    assert card.categories[0].best == 0 and card.categories[0].turn_range is None
    assert card.gave_way == 2 and card.best_runs == 0


README = """# Results

## Backend

| Model | Average Score (Best Run) | Turn Count Range (Best Run) |
|-------|---|---|
| m | 75% | 9 - 200 |
| n | 40% | 3 - 4 |

## Gym

| Model | Average Score (Best Run) | Turn Count Range (Best Run) |
|---|---|---|
| m | 61% | 70 - 90 |
"""


def test_every_printed_cell_is_checked_and_differences_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = write_csv(tmp_path / "results.csv", [
        "galtee,m,a,1,40", "ruby-charges-on-payment-intent,m,b,1,12", "ruby-invoice-partial-payments,m,c,0,200",
        "ruby-subscription-billing-migration,m,d,0.5,9",
        "checkout-gym,m,e,0.86,70", "subscription gym,m,f,0.35,90  ",
        "galtee,n,g,0.4,3", "galtee,n,h,0.4,4", "galtee,x,i,1,1",
    ])
    (tmp_path / "README.md").write_text(README, encoding="utf-8")  # beside the CSV: read without --readme
    card = scorecard_json(capsys, results)
    assert card["readme"] == str(tmp_path / "README.md")
    # n's two runs tie at 0.4: the best is the 3-turn one, so the printed "3 - 4" is a difference; gym's 61 % and
    # backend m's cells agree; x is computed but not printed.
    assert card["differences"] == [{"category": "backend", "model": "n", "column": "turn range", "printed": "3 - 4",
                                    "recomputed": "3 - 3"}]
    assert card["not_printed"] == [{"category": "backend", "model": "x"}]
    assert row_of(card, "gym", "m")["printed"] == {"average": "61%", "turn_range": "70 - 90", "agrees": True}
    assert row_of(card, "backend", "n")["printed"] == {"average": "40%", "turn_range": "3 - 4", "agrees": False}
    code, text, _ = cli(capsys, "scorecard", results)
    assert code == 0 and "≠ backend · n: turn range printed 3 - 4, recomputed 3 - 3" in text
    # A printed average that differs is shown with its tenth, never replaced by the recomputed one.
    (tmp_path / "README.md").write_text(README.replace("| m | 75% |", "| m | 80% |"), encoding="utf-8")
    card = scorecard_json(capsys, results)
    assert {"category": "backend", "model": "m", "column": "average", "printed": "80%",
            "recomputed": "75% (75.0%)"} in card["differences"]
    assert row_of(card, "backend", "m")["best_average"] == 75
    card = scorecard_json(capsys, results, "--no-readme")
    assert card["readme"] is None and card["differences"] == []


def test_printed_tables_are_read_by_heading_and_column() -> None:
    rows = printed_rows(README + "\n## Other\n\n| Model | Average | Turn |\n|---|---|---|\n| q | 1% | 1 - 2 |\n"
                        "\n## Full stack\n\n| Turn Count | Model | Average |\n|---|---|---|\n| 4 – 9 | z | n/a |\n")
    # "Other" names no category: its table is not a score table. Columns are found by their headers, in any order;
    # a cell that cannot be read is kept as printed with no value (the comparison then flags it).
    assert [(r.category, r.model, r.average_text, r.average, r.turns) for r in rows] == [
        ("backend", "m", "75%", 75, (9, 200)), ("backend", "n", "40%", 40, (3, 4)), ("gym", "m", "61%", 61, (70, 90)),
        ("full-stack", "z", "n/a", None, (4, 9))]


def test_a_bad_row_is_one_line_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for body, said in [("galtee,m,a,1,10\ngaltee,m,b,1.5,10", "line 3: score 1.5 is outside 0..1"),
                       ("galtee,m,a,one,10", "line 2: score 'one' or turn count '10' is not a number"),
                       ("galtee,m,a,1", "line 2: 4 fields where the header has 5")]:
        bad = tmp_path / "bad.csv"
        bad.write_text(HEADER + "\n" + body + "\n", encoding="utf-8")
        code, out, err = cli(capsys, "scorecard", bad)
        assert (code, out) == (3, "") and err.count("\n") == 1 and said in err, err
    code, _, err = cli(capsys, "scorecard", write_csv(tmp_path / "v.csv", ["galtee,m,a,1,10,maybe"],
                                                       HEADER + ",verdict"))
    assert code == 3 and "line 2: verdict 'maybe'" in err
    code, _, err = cli(capsys, "scorecard", write_csv(tmp_path / "u.csv", ["nothing-we-know,m,a,1,10"]))
    assert code == 3 and "no run matches a published task" in err
    code, _, err = cli(capsys, "scorecard", tmp_path / "u.csv", "--format", "xml")
    assert code == 2 and "unknown --format" in err


def test_the_loader_maps_published_names_through_the_overlays(tmp_path: Path) -> None:
    results = write_csv(tmp_path / "r.csv", ["subscription gym,m,a ,1,5", "saas-starter,m,b,0.5,7",
                                             "java-invoice-partial-payments,m,c,1,3"])
    card, read = published_scorecard(results)
    assert [r.run for r in read.runs] == ["a", "b", "c"]  # trailing spaces of run ids dropped
    assert {(p.eval_name, p.task, p.category) for p in card.problems} == {
        ("subscription gym", "subscription-gym", "gym"),
        ("saas-starter", "saas-starter-embedded-checkout", "full-stack"),
        ("java-invoice-partial-payments", "sdk-upgrades-java", "backend")}
