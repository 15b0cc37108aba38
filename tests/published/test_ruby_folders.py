"""The Ruby-graded folders as published, offline end to end (the long tier): RSpec graders run unchanged under their
Gemfiles — the two galtee folders (a Node server), subscription-gym (a Sinatra/Puma server under its own Gemfile) and
checkout-gym (a Sinatra/WEBrick server; its submission made by the folder's generate_solution.sh against the emulator).

`stripebench validate` on each folder: the grader's gems come from the Ruby registry where it answers, else from
local sources (``envs.ruby_gems``: Debian's gems where they fit, the rest built from their repositories at the
pinned tags, found through ``STRIPEBENCH_GEM_SOURCES`` or this machine's mirrors); the oracle (solution/ as
run_inside_docker.sh injects it) scores 1.0, the untouched workspace 0, each mutant below 1.0, the 400 mutant with
its signature finding; the folder byte for byte unchanged.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.benchfolders.conftest import tree_hash
from tests.published.conftest import published_folder, ruby_envs_path, validate, validated_score

# One validate is four episodes of a server graded by RSpec; the first builds the gems (puma and json compile C
# extensions) and sqlite3 for the galtee servers (minutes on a busy machine), later ones reuse them from the cache.
pytestmark = [pytest.mark.drill, pytest.mark.timeout(2400)]

FOLDERS = {
    "galtee-basic": ["purchase-400-called-done", "bookings-not-migrated"],
    "galtee-invoicing": ["invoice-item-400-called-done", "migration-not-run"],
    "subscription-gym": ["trial-400-called-done", "upgrade-without-proration-invoice"],
    "checkout-gym": ["proration-400-called-done", "hoodie-size-misread"],
}


@pytest.mark.parametrize("name", sorted(FOLDERS))
def test_validate_runs_the_folder_as_published(name: str, tmp_path: Path) -> None:
    folder = published_folder(name, tmp_path)
    before = tree_hash(folder)
    ruby_envs_path(folder)
    out = validate(folder)
    assert validated_score(out, "oracle") == 1.0 and validated_score(out, "no-op") == 0.0
    for mutant in FOLDERS[name]:
        assert validated_score(out, f"mutant {mutant}") < 1.0
    assert f"mutant {FOLDERS[name][0]}: 400-as-success" in out, out[-2000:]
    assert f"{name} findings: oracle: none;" in out, out[-2000:]
    assert tree_hash(folder) == before, "the published folder is byte for byte unchanged"


def test_the_ruby_folders_in_one_batch_by_path_under_their_published_names(tmp_path: Path) -> None:
    """The four servers all listen on 4242: their episodes take turns holding it (fixed_ports), whatever -j says."""
    import csv
    import io

    folders = [published_folder(name, tmp_path) for name in sorted(FOLDERS)]
    out = tmp_path / "sweep"
    ran = subprocess.run([sys.executable, "-m", "stripebench_tui", "batch", "run", *map(str, folders), "--agents", "oracle",
                          "--runs", "1", "-j", "1", "--out", str(out)], capture_output=True, text=True, timeout=1800,
                         stdin=subprocess.DEVNULL)
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
    report = subprocess.run([sys.executable, "-m", "stripebench_tui", "batch", "report", str(out), "--format", "csv"],
                            capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert report.returncode == 0, report.stderr
    rows = {r["eval_name"]: r for r in csv.DictReader(io.StringIO(report.stdout.split("written:")[0]))}
    assert set(rows) == {"checkout-gym", "galtee", "galtee-invoices", "subscription gym"}  # benchmarks-results-*.csv's names
    assert all(r["score"] == "1.0000" and r["passed"] == "true" for r in rows.values()), rows
