"""The episode report draws the fork tree: the episode, its forks at each turn, their forks, each with its outcome
and first finding; the text in it is escaped and redacted like the rest of the report."""

from __future__ import annotations

import re
from pathlib import Path

from stripebench_tui.core.events import Finding
from stripebench_tui.formats.bisect_record import BisectRecord, write_bisect
from stripebench_tui.formats.episode_report import build_report
from stripebench_tui.formats.open import open_episode
from stripebench_tui.formats.report_html import render_report
from tests.formats.lineage_family import _events, _forked, write_family, write_trace
from tests.formats.report_fixtures import SECRETS


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html))


def test_the_html_report_draws_the_tree_with_the_fork_of_a_fork_inside_its_parent(tmp_path: Path) -> None:
    family = write_family(tmp_path)
    write_bisect(family.original, BisectRecord("oracle", 2, []))
    report = build_report(open_episode(family.original))
    assert report.lineage is not None and report.lineage.forks == 4
    assert [(b.name, b.turn, b.outcome) for b in report.lineage.children] == [
        ("late", 1, "did not end"), ("original-fork-2", 2, "passed 1.00"), ("at-3", 3, "failed 0.25")]
    assert report.lineage.children[1].where == "../original-fork-2"
    html = render_report(report, "html")
    forks = html[html.index('<h2 id="forks">'):html.index('<h2 id="objects">')]
    assert "Forks (4)" in forks
    assert 'the last turn from which a fork still passes is <a href="#turn-2">2</a>' in forks
    # the fork of the fork is a list inside its parent's item, before the next fork at the top level
    parent, grandchild, later = (forks.index(s) for s in ("<b>original-fork-2</b>", "<b>again</b>", "<b>at-3</b>"))
    assert parent < grandchild < later
    assert forks[parent:grandchild].count("<ul>") == 1 and "</li>" not in forks[parent:grandchild]
    assert "turn 4 · 400-as-success: the key was logged" in _text(forks)
    md = render_report(report, "md")
    assert "### Forks (4)" in md
    assert "- this episode: failed 0.50 — ⚑ turn 2 · 400-as-success: a 400 called a success\n  - turn 1 → **late**" in md
    assert "  - turn 2 → **original-fork-2** passed 1.00 (restored)" in md
    assert "    - turn 3 → **again** passed 1.00 (restored)" in md


def test_a_fork_names_its_parent_and_a_plain_run_has_no_tree(tmp_path: Path) -> None:
    family = write_family(tmp_path)
    html = render_report(build_report(open_episode(family.grandchild)), "html")
    assert f"Forked at turn 3 from {family.beside.resolve()}" in _text(html)
    plain = write_trace(tmp_path / "alone" / "trace.jsonl", _events(2, end=(1.0, True))).path
    report = build_report(open_episode(plain))
    assert report.lineage is None and 'id="forks"' not in render_report(report, "html")


def test_a_forks_text_is_escaped_and_redacted(tmp_path: Path) -> None:
    family = write_family(tmp_path)
    hostile = _events(2, end=(0.0, False))
    hostile.insert(3, Finding(t=1.5, turn=1, detector="secrets", message=f"<script>alert(1)</script> {SECRETS[0]}"))
    write_trace(tmp_path / "episodes" / "x<b>y" / "trace.jsonl", hostile, _forked(family.original, 1))
    html = render_report(build_report(open_episode(family.original)), "html")
    forks = html[html.index('<h2 id="forks">'):html.index('<h2 id="objects">')]
    assert "<script>" not in forks and "&lt;script&gt;" in forks and "x&lt;b&gt;y" in forks
    assert SECRETS[0] not in html
