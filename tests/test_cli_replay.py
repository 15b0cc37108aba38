"""`stripebench replay --headless/--summary` and `stripebench export` through the real CLI (subprocess)."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from stripebench_tui.errors import EXIT_BAD_FILE, EXIT_EPISODE_FAILED, EXIT_OK

REPLAYS = Path(__file__).resolve().parent.parent / "replays"
PASS = REPLAYS / "checkout-migration-oracle"  # recorded episode directories (trace.jsonl inside)
FAIL = REPLAYS / "checkout-migration-400"
# the same story recorded before the detectors existed: its trace has no findings and no request log
BEFORE_DETECTORS = REPLAYS.parent / "tests" / "fixtures" / "traces" / "checkout-migration-400-before-detectors"
KEY = re.compile(r"(sk|rk|pk)_test_[A-Za-z0-9]{8,}")


def stripebench(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "stripebench_tui", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=60)


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_headless_passing_episode_exits_0_and_reads_like_the_episode() -> None:
    r = stripebench("replay", PASS, "--headless")
    assert r.returncode == EXIT_OK, r.stderr
    out = r.stdout
    for expected in ("── setup", "── turn 9", "→ view_file", "→ browser_fill", "◆ checkout.session cs_test_",
                     "payment_status=paid", "ui_mode=embedded_page", "✓ verdict promotion code applied: pass",
                     "Final score: 1.00 · PASSED"):
        assert expected in out, expected
    assert not KEY.search(out)
    # green over time: the live verdicts before the checks that only run at the end
    assert out.index("✓ verdict paid: pass") < out.index("✓ verdict card element removed: pass")


def test_headless_failed_episode_exits_1() -> None:
    r = stripebench("replay", FAIL, "--headless")
    assert r.returncode == EXIT_EPISODE_FAILED
    assert "Invalid ui_mode" in r.stdout and "HTTP 400" in r.stdout
    assert "migration is complete" in r.stdout and "Final score: 0.08 · FAILED" in r.stdout
    assert not KEY.search(r.stdout)


def test_summary_table() -> None:
    r = stripebench("replay", FAIL, "--summary")
    assert r.returncode == EXIT_EPISODE_FAILED
    for expected in ("Episode", "Tools used", "view_file", "Verdict timeline", "0: pending → 11: fail", "Final score: 0.08"):
        assert expected in r.stdout, expected
    assert "──" not in r.stdout.split("Episode")[0]  # no headless log before the tables
    r = stripebench("replay", PASS, "--summary")
    assert r.returncode == EXIT_OK and re.search(r"0: pending → \d+: pass", r.stdout)


@pytest.mark.parametrize(
    "content, reason",
    [
        (None, "no such file"),
        (b"", "empty file"),
        (b"not json at all\n", ":1: not a stripebench trace"),
        (b'{"type": "header", "schema": "stripebench.trace/7"}\n', "written by a newer stripebench"),
        (b'{"type": "header", "schema": "stripebench.trace/1"}\n{"seq": 0, "t": 0, "turn": 1, "type": "model_message"}\n{oops\n'
         b'{"seq": 2, "t": 0, "turn": 1, "type": "model_message"}\n', ":3: not JSON"),
        (b'{"schema_version": "ATIF-v1.4", "session_id": "s", "agent": {"name": "a", "version": "1"}, "steps": [], "bonus": 1}',
         "ATIF root: unknown field 'bonus'"),
    ],
)
@pytest.mark.parametrize("mode", ["--headless", "--summary"])
def test_bad_files_exit_3_with_one_line_and_stay_untouched(tmp_path: Path, content: bytes | None, reason: str, mode: str) -> None:
    path = tmp_path / "bad.jsonl"
    if content is not None:
        path.write_bytes(content)
    before = sha(path) if content is not None else None
    r = stripebench("replay", path, mode)
    assert r.returncode == EXIT_BAD_FILE
    assert r.stderr.startswith("stripebench: ") and reason in r.stderr
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    if before is not None:
        assert sha(path) == before


def test_truncated_trace_still_replays(tmp_path: Path) -> None:
    path = tmp_path / "cut.jsonl"
    data = (PASS / "trace.jsonl").read_bytes()
    path.write_bytes(data[: len(data) - 30])
    r = stripebench("replay", path, "--headless")
    assert r.returncode == EXIT_EPISODE_FAILED  # the episode_end line was cut off: not a pass
    assert "cut-off line" in r.stdout and "did not finish" in r.stdout


def test_export_atif_then_replay_it(tmp_path: Path) -> None:
    r = stripebench("export", PASS, "--format", "atif", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    out = tmp_path / "checkout-migration-oracle.atif.json"
    doc = json.loads(out.read_text())
    assert doc["schema_version"].startswith("ATIF-v1.") and doc["agent"]["name"] == "oracle"
    assert any(s.get("tool_calls") for s in doc["steps"])
    before = sha(out)
    again = stripebench("export", PASS, "-o", out)
    assert again.returncode != 0 and "already exists" in again.stderr and "Traceback" not in again.stderr
    assert sha(out) == before
    assert stripebench("export", FAIL, "-o", out, "--force").returncode == 0
    assert sha(out) != before
    replay = stripebench("replay", out, "--headless")
    assert replay.returncode == EXIT_EPISODE_FAILED and "Final score: 0.08 · FAILED" in replay.stdout
    piped = stripebench("export", PASS, "-o", "-")
    assert piped.returncode == 0 and json.loads(piped.stdout)["steps"]


def test_a_trace_that_recorded_no_findings_is_exported_and_printed_with_derived_ones() -> None:
    """checkout-migration-400 predates the detectors: the ATIF export and the headless log carry what they find now,
    labelled derived (⚐, as in the TUI); the oracle's episode gets none."""
    doc = json.loads(stripebench("export", BEFORE_DETECTORS, "--format", "atif", "-o", "-").stdout)
    ours = doc["extra"]["stripebench"]
    assert ours["findings_derived"] is True
    assert ("400-as-success", 11) in [(f["detector"], f["turn"]) for f in ours["findings"]]
    assert all(f["derived"] is True and f["seq"] is None for f in ours["findings"])
    assert not any(e["type"] == "finding" for e in ours["events"])  # derived, not passed off as recorded events
    turn_11 = next(s for s in doc["steps"] if s["extra"]["stripebench"]["turn"] == 11 and s["source"] == "agent")
    assert "400-as-success" in turn_11["extra"]["stripebench"]["derived_findings"]
    assert not any("findings" in s["extra"]["stripebench"] for s in doc["steps"])
    assert "derived" in doc["notes"]

    out = stripebench("replay", BEFORE_DETECTORS, "--headless").stdout
    turn_11_log = out[out.index("── turn 11 "):]
    assert re.search(r"^⚐ finding 400-as-success: agent says the work is done .* · derived now, not recorded$",
                     turn_11_log, re.M)
    assert "⚑" not in out

    assert "Findings ⚐ derived now: the trace recorded none" in stripebench("replay", BEFORE_DETECTORS, "--summary").stdout

    clean = json.loads(stripebench("export", PASS, "--format", "atif", "-o", "-").stdout)["extra"]["stripebench"]
    assert clean["findings"] == [] and "findings_derived" not in clean
    out = stripebench("replay", PASS, "--headless").stdout
    assert "⚐" not in out and "⚑" not in out


def test_help_teaches() -> None:
    r = stripebench("replay", "--help")
    assert r.returncode == 0 and "--headless" in r.stdout and "Example" in r.stdout
    r = stripebench("export", "--help")
    assert r.returncode == 0 and "ATIF" in r.stdout
