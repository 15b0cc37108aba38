"""The CLI on benchmark folders: `envs --path` says how to run each and what it needs; bad folders are one line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.benchfolders.conftest import FOLDERS


def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "stripebench_tui", *args], capture_output=True, text=True, timeout=60,
                          cwd=cwd)


def test_envs_path_lists_folders_with_how_to_run_them() -> None:
    done = _cli("envs", "--path", str(FOLDERS), "--json")
    assert done.returncode == 0, done.stderr
    rows = {r["id"]: r for r in json.loads(done.stdout)}
    assert set(rows) == {"config-gym", "pi-script", "order-api-node", "tea-checkout"}
    assert (rows["order-api-node"]["category"], rows["tea-checkout"]["category"]) == ("backend", "full-stack")
    assert rows["pi-script"]["run"] == f"stripebench run {FOLDERS / 'pi-script'}" and rows["config-gym"]["category"] == "gym"
    table = _cli("envs", "--path", str(FOLDERS)).stdout
    assert "run: stripebench run" in table and "Checkout configuration gym" in table


def test_a_published_overlay_says_what_it_needs(tmp_path: Path) -> None:
    folder = tmp_path / "sdk-upgrades-java"  # named like a published folder: our overlay applies
    for problem in ("charges-on-payment-intent", "invoice-partial-payments"):
        (folder / "environment" / problem).mkdir(parents=True)
        (folder / "environment" / problem / "PROBLEM.md").write_text("# Your Task\n")
    (folder / "grader").mkdir()
    rows = json.loads(_cli("envs", "--path", str(tmp_path), "--json").stdout)
    assert [r["id"] for r in rows] == ["sdk-upgrades-java-charges-on-payment-intent",
                                       "sdk-upgrades-java-invoice-partial-payments"]
    assert rows[0]["title"] == "SDK upgrade (java): charges-on-payment-intent" and not rows[0]["offline"]
    assert any("Maven" in need for need in rows[0]["needs"]) and rows[0]["overlay"].endswith("published/sdk-upgrades-java.toml")
    assert rows[0]["run"].endswith("sdk-upgrades-java/environment/charges-on-payment-intent")


def test_bad_folders_are_one_line_errors(tmp_path: Path) -> None:
    (tmp_path / "half" / "environment").mkdir(parents=True)
    done = _cli("run", str(tmp_path / "half"), "--headless", cwd=tmp_path)
    assert done.returncode == 3 and done.stderr.count("\n") == 1 and "no grader/" in done.stderr
    empty = _cli("envs", "--path", str(tmp_path / "half" / "environment"))
    assert empty.returncode == 2 and "no benchmark folders there" in empty.stderr and "Traceback" not in empty.stderr
