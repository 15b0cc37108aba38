"""Graders read state through public means only: no emulator-only endpoint, so they also run on real Stripe."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BANNED = "/_emulator"


def offending_lines(root: Path, base: Path = REPO) -> list[str]:
    """'file:line' (relative to ``base``) for every line under ``root`` that mentions an emulator-only path."""
    hits = []
    for path in sorted(root.rglob("*")):
        if not path.is_file() or "__pycache__" in path.parts:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        hits += [f"{path.relative_to(base)}:{n}" for n, line in enumerate(text.splitlines(), 1) if BANNED in line]
    return hits


def test_no_grader_or_grading_module_uses_an_emulator_only_endpoint():
    roots = [REPO / "graders", REPO / "stripebench_tui" / "grading"]
    assert roots[1].is_dir()
    hits = [h for root in roots if root.is_dir() for h in offending_lines(root)]
    assert hits == [], f"emulator-only endpoints in graders: {hits}"


def test_the_scan_would_notice_one(tmp_path):
    (tmp_path / "g.py").write_text('ok = 1\nhttpx.post(base + "/_emulator/clock")\n')
    assert offending_lines(tmp_path, tmp_path) == ["g.py:2"]
