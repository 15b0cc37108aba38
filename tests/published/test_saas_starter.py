"""The two Next.js + PostgreSQL SaaS-starter folders, run offline end to end as published (the long tier).

`stripebench validate` on each: our oracle 1.0 under the folder's own grader, the untouched app 0, every mutant
below 1.0 with its signature finding (400-as-success, lost focus); the folder byte for byte unchanged. Then both
in one batch by path, named in the report as the published results name them.
"""

from __future__ import annotations

import csv
import io
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.benchfolders.conftest import tree_hash
from tests.published.conftest import published_folder, validated_score

# Each validate is 4 or 5 episodes of a Next.js app: a few minutes alone, more beside the other drills.
pytestmark = [pytest.mark.drill, pytest.mark.timeout(1500)]

FOLDERS = {
    "saas-starter-embedded-checkout": ["promo-400-called-done", "hosted-not-embedded", "gives-up-on-the-pricing-page"],
    "saas-starter-partial-payments": ["second-payment-400-called-done", "stops-after-the-first-half"],
}


def _stripebench(*args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "stripebench_tui", *args], capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("name", sorted(FOLDERS))
def test_validate_runs_the_folder_as_published(name: str, tmp_path: Path) -> None:
    folder = published_folder(name, tmp_path)
    before = tree_hash(folder)
    done = _stripebench("validate", str(folder), timeout=1500)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    out = done.stdout
    assert validated_score(out, "oracle") == 1.0 and validated_score(out, "no-op") == 0.0
    for mutant in FOLDERS[name]:
        assert validated_score(out, f"mutant {mutant}") < 1.0
    assert "findings: precision 1.00" in out and "recall 1.00" in out, out[-2000:]
    assert re.search(r"mutant [a-z0-9-]*400[a-z0-9-]*: 400-as-success", out), "the 400-as-success mutant fires it"
    assert f"{name} findings: oracle: none;" in out
    assert tree_hash(folder) == before, "the published folder is byte for byte unchanged"


def test_both_folders_in_one_batch_by_path_under_their_published_names(tmp_path: Path) -> None:
    folders = [published_folder(name, tmp_path) for name in sorted(FOLDERS)]
    out = tmp_path / "sweep"
    ran = _stripebench("batch", "run", *map(str, folders), "--agents", "oracle", "--runs", "1", "--out", str(out),
                       timeout=1200)
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
    report = _stripebench("batch", "report", str(out), "--format", "csv", timeout=300)
    assert report.returncode == 0, report.stderr
    rows = {r["eval_name"]: r for r in csv.DictReader(io.StringIO(report.stdout.split("written:")[0]))}
    assert set(rows) == {"saas-starter", "saas-starter-partial-payments"}  # benchmarks-results-*.csv's names
    assert all(r["score"] == "1.0000" and r["passed"] == "true" for r in rows.values()), rows


def test_an_app_that_does_not_compile_ends_setup_with_the_compilers_error(tmp_path: Path) -> None:
    """A copy of the folder whose overlay (beside it, so it wins) also removes lib/utils.ts (the seed does not need it):
    `next dev` starts and answers its first page with 500; the episode ends at setup with that and the log's error, not after the
    health check's five minutes."""
    import shutil

    from stripebench_tui.envs.bench_overlay import published_dir

    name = "saas-starter-embedded-checkout"
    bench = tmp_path / "bench"
    shutil.copytree(published_folder(name, tmp_path / "src"), bench / name)
    (bench / "saas-starter").symlink_to(published_dir() / "saas-starter")
    shipped = (published_dir() / f"{name}.toml").read_text()
    last_setup = """  'bash "${BENCH_OVERLAY_DIR}/saas-starter/write-env.sh"',\n]"""
    assert last_setup in shipped
    (bench / f"{name}.stripebench.toml").write_text(
        shipped.replace(last_setup, last_setup[:-1] + "  'rm lib/utils.ts',\n]"))
    done = _stripebench("run", str(bench / name), "--headless", "--agent", "noop", "--episode-dir",
                        str(tmp_path / "episode"), timeout=600)
    assert done.returncode == 4, done.stdout[-2000:] + done.stderr[-2000:]
    [error] = [line for line in done.stderr.splitlines() if line.startswith("stripebench:")]
    assert "service app answered HTTP 500 at http://127.0.0.1:" in error and "it is up but broken" in error
    assert "Module not found: Can't resolve '@/lib/utils'" in error, error  # the compiler's words, from its log
    assert "Traceback" not in done.stderr
