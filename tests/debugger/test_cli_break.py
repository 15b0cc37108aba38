"""`--break` on the command line: a bad expression is one line and exit 2; a replay lists its hits."""

from __future__ import annotations

from pathlib import Path

import pytest

from stripebench_tui.cli import main

MUTANT = Path(__file__).resolve().parents[2] / "replays" / "checkout-migration-400"


def cli(capsys, *args: str) -> tuple[int, str, str]:
    """Run the real entry point in-process (no interpreter start per call): (exit code, stdout, stderr)."""
    with pytest.raises(SystemExit) as ended:
        main([str(a) for a in args])
    out = capsys.readouterr()
    return int(ended.value.code or 0), out.out, out.err


def test_break_on_the_command_line(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # help tables at full width
    code, _, err = cli(capsys, "run", "checkout-migration", "--headless", "--break", "request PUTS /v1/x")
    assert code == 2 and err.count("\n") == 1 and "--break: breakpoint" in err
    for command in ("run", "replay"):  # an unknown detector: one line naming the known ones, before anything starts
        code, _, err = cli(capsys, command, "checkout-migration" if command == "run" else MUTANT, "--headless",
                           "--break", "finding nope")
        assert code == 2 and err.count("\n") == 1 and "no detector matches 'nope'" in err
        assert "400-as-success" in err and "secret-exposure" in err
    code, out, _ = cli(capsys, "replay", MUTANT, "--headless", "--break", "tool replace_in_file", "--break", "verdict fail paid")
    assert code == 1  # the episode failed; the hits are listed after it
    tail = out.split("Breakpoint hits:")[1]
    assert [line.split(":")[0].strip() for line in tail.strip().splitlines()] == ["turn 5", "turn 6", "turn 11"]
    assert "verdict paid: pending → fail" in tail
    _, out, _ = cli(capsys, "replay", MUTANT, "--summary", "--break", "tokens>=1")
    assert "Where the time went" in out and "no breakpoint matched" in out  # the oracle agent spends no tokens
    _, out, _ = cli(capsys, "run", "--help")
    assert "tool shell command=*curl*" in out  # the globs survive the help's markdown
