"""`stripebench scorecard` on the published results and README of github.com/stripe/ai (the checkout or the mirror
tests/published/conftest.py finds): every printed cell recomputes, except the one the README itself gets wrong."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from stripebench_tui.cli import main
from tests.published.conftest import CHECKOUT_VAR, MIRROR

pytestmark = pytest.mark.drill


def published_benchmarks(scratch: Path) -> Path:
    """A folder with the published README.md and results CSV (the checkout's benchmarks/, or both from the mirror)."""
    checkout = os.environ.get(CHECKOUT_VAR)
    if checkout:
        return Path(checkout).expanduser() / "benchmarks"
    if not (MIRROR / "HEAD").is_file():
        pytest.fail(f"no checkout of github.com/stripe/ai: set {CHECKOUT_VAR} to one (or keep a mirror at {MIRROR})")
    git = ["git", f"--git-dir={MIRROR}"]
    names = subprocess.run([*git, "ls-tree", "--name-only", "HEAD", "benchmarks/"], capture_output=True, text=True,
                           check=True, timeout=60).stdout.split()
    wanted = [n for n in names if n.endswith(".csv") or n == "benchmarks/README.md"]
    scratch.mkdir(parents=True, exist_ok=True)
    for name in wanted:
        blob = subprocess.run([*git, "show", f"HEAD:{name}"], capture_output=True, check=True, timeout=60).stdout
        (scratch / Path(name).name).write_bytes(blob)
    return scratch


def test_the_published_scorecard_recomputes_but_for_the_readmes_own_slip(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    folder = published_benchmarks(tmp_path / "benchmarks")
    results = sorted(folder.glob("benchmarks-results-*.csv"))
    assert results and (folder / "README.md").is_file(), sorted(p.name for p in folder.iterdir())
    with pytest.raises(SystemExit) as ended:
        main(["scorecard", str(results[-1]), "--format", "json"])
    out = capsys.readouterr()
    assert ended.value.code in (0, None), out.err
    card = json.loads(out.out)
    printed = [c for c in card["categories"] if c["printed"] is not None]
    assert len(printed) == 12  # four models × backend, full-stack, gym
    assert {c["category"] for c in printed} == {"backend", "full-stack", "gym"}
    # Every printed turn range recomputes; every printed average but one. The README prints 80 % for sonnet-4.5's
    # full-stack, while its own CSV gives (0.75 + 1 + 0.8 + 0.625) / 4 = 79.375 %, 79 % rounded half up.
    assert card["differences"] == [{"category": "full-stack", "model": "sonnet-4.5", "column": "average",
                                    "printed": "80%", "recomputed": "79% (79.4%)"}]
    agree = [c for c in printed if c["printed"]["agrees"]]
    assert len(agree) == 11
    for c in printed:
        assert c["printed"]["turn_range"] == f"{c['turn_range'][0]} - {c['turn_range'][1]}"
        if c["printed"]["agrees"]:
            assert c["printed"]["average"] == f"{c['best_average']}%"
        assert c["tasks"] == c["of_tasks"] == {"backend": 5, "full-stack": 4, "gym": 2}[c["category"]]
    assert card["unmatched"] == {}  # every published eval name maps to a task through our overlays
    # The model the README leaves out is computed and said to be left out, not compared.
    assert {(n["category"], n["model"]) for n in card["not_printed"]} == {
        ("backend", "sonnet-4"), ("full-stack", "sonnet-4"), ("gym", "sonnet-4")}
    # The text table names the same single difference.
    with pytest.raises(SystemExit):
        main(["scorecard", str(results[-1])])
    text = capsys.readouterr().out
    assert text.count("≠ ") == 1 and "full-stack · sonnet-4.5: average printed 80%, recomputed 79% (79.4%)" in text


def test_a_sweep_of_ours_shows_the_published_categories_as_printed(tmp_path: Path) -> None:
    """The issue's new user: a sweep of two environments of ours beside the published CSV. The published models'
    backend rows appear (over the whole category, labelled), at the README's figures, not averaged eval by eval."""
    from stripebench_tui.batch.published import compare, read_results
    from stripebench_tui.batch.sweep_report import build_report
    from tests.batch.test_insight import make_sweep

    folder = published_benchmarks(tmp_path / "benchmarks")
    report = build_report(make_sweep(tmp_path / "sweep"))  # checkout-migration and bookings-payments, backend
    cmp = compare(report, read_results(sorted(folder.glob("benchmarks-results-*.csv"))[-1]))
    rows = {c["model"]: (c["scope"], c["tasks"], c["best_percent"], c["best_turns"]) for c in cmp["categories"]}
    assert rows["opus-4.5"] == ("whole category", 5, 85, [19, 148])
    assert rows["gpt-5"] == ("whole category", 5, 73, [18, 71])
    assert rows["sonnet-4.5"] == ("whole category", 5, 75, [27, 101])
