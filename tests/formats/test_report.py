"""The episode report's content: every turn with an anchor, the chart, screenshots, notes, findings, no secret."""

from __future__ import annotations

import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest

from stripebench_tui.core.annotations import Annotations
from stripebench_tui.formats.episode_report import HEAD_LINES, TAIL_LINES, build_report
from stripebench_tui.formats.open import open_episode
from stripebench_tui.formats.report_html import _fence, render_report, unpack_outputs
from tests.formats.report_fixtures import HOSTILE, LONG_LINES, SECRETS, write_raw_trace

REPLAYS = Path(__file__).resolve().parents[2] / "replays"
OWN_SCRIPTS = [
    {"type": "application/octet-stream", "id": "report-outputs", "data-encoding": "base64 gzip json"},  # long outputs' rest
    {"id": "report-expand"},  # its expander
]


class Tags(HTMLParser):
    """Every start tag with its attributes, as a browser's parser sees them."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def all(self, tag: str) -> list[dict[str, str | None]]:
        return [a for t, a in self.tags if t == tag]


@pytest.fixture
def raw(tmp_path: Path) -> Path:
    path = write_raw_trace(tmp_path / "ep")
    Annotations(path).add(2, f"the 400 starts here, key {SECRETS[0]}")
    return path


def test_sample_replay_report_has_every_turn_the_chart_and_its_screenshots(tmp_path: Path) -> None:
    episode = tmp_path / "oracle"
    shutil.copytree(REPLAYS / "checkout-migration-oracle", episode)
    Annotations(episode / "trace.jsonl").add(31, "paid here")
    trace = open_episode(episode)
    turns = trace.index().turns
    html = render_report(build_report(trace))
    tags = Tags(html)
    sections = [a["id"] for a in tags.all("section")]
    assert sections == [f"turn-{n}" for n in turns]
    links = {a.get("href") for a in tags.all("a")}
    assert all(f"#turn-{n}" in links for n in turns)  # a link per turn
    bands = [a for a in tags.all("rect") if "band" in (a.get("class") or "")]
    statuses = {a["data-status"] for a in bands}
    assert {"pending", "pass"} <= statuses and len(bands) >= 2 * len(trace.state_at(None).verdicts)
    images = [a["src"] for a in tags.all("img")]
    assert len(images) == 2 and all(src.startswith("data:image/png;base64,") for src in images)
    # No resource is fetched: no external src/href, no stylesheet link, no script but the report's own two.
    assert not [a for t, a in tags.tags if t in ("link", "iframe")]
    assert tags.all("script") == OWN_SCRIPTS
    external = [v for _, a in tags.tags for k, v in a.items() if k in ("src", "href") and v and not v.startswith(("#", "data:"))]
    assert external == []
    assert "paid here" in html and 'id="notes"' in html


def test_report_redacts_secrets_escapes_markup_and_cuts_long_outputs(raw: Path) -> None:
    report = build_report(open_episode(raw))
    html, md = render_report(report, "html"), render_report(report, "md")
    for secret in SECRETS:
        assert secret not in html and secret not in md
    assert "sk_test_[REDACTED]" in html  # the kind of key is still visible
    assert HOSTILE not in html and "&lt;script&gt;" in html
    assert Tags(html).all("script") == OWN_SCRIPTS and "http://evil.test" not in {a.get("src") for a in Tags(html).all("img")}
    # The 5000-line output keeps its head and tail; the middle is left to the trace.
    assert "line 00000 " in html and "line 02500 " not in html
    outputs = unpack_outputs(re.search(r'<script [^>]*id="report-outputs"[^>]*>(.*?)</script>', html, re.S)[1])
    assert f"{LONG_LINES + 1 - HEAD_LINES - TAIL_LINES} lines not included" in "".join(outputs)
    assert "line 02500 " not in "".join(outputs)
    # The rest of a long output is in the JSON block its <details> names, tail included.
    more = [int(a["data-output"]) for a in Tags(html).all("details") if a.get("class") == "more"]
    assert more and sorted(more) == list(range(len(outputs)))
    assert any(f"line {LONG_LINES - 1:05d} " in outputs[i] for i in more)
    for secret in SECRETS:
        assert all(secret not in body for body in outputs)
    # The finding, with its evidence linked to the turns it names; the note on its turn.
    assert "400-as-success" in html and 'href="#turn-2">request_id req_400</a>' in html
    assert 'href="#turn-4">seq 11</a>' in html
    assert re.search(r'id="turn-2".*?the 400 starts here', html, re.S)
    assert "POST /v1/checkout/sessions → 400 invalid_request_error parameter_missing (agent)" in html
    facts = dict(report.facts)
    assert facts["score"] == "0.00" and facts["cost"] == "$0.0125" and facts["agent"] == "anthropic"


def test_markdown_report_for_an_issue(raw: Path) -> None:
    md = render_report(build_report(open_episode(raw)), "md")
    assert md.startswith("## Report test ")
    for n in range(1, 5):
        assert f"#### turn {n} " in md
    assert "| paid | fail | 0: pending → 3: fail |" in md
    assert "**error** 400-as-success (turn 4): the agent called it done" in md
    assert re.search(r"Verdicts: paid fail\n\n+---\n", md)  # a rule, not a heading underline
    assert "- turn 2: the 400 starts here" in md
    assert "<script>" not in md  # markup in untrusted text is escaped for Markdown too
    assert "screenshot: screenshots/001-page.png" in md


def test_a_trace_that_recorded_no_findings_gets_the_detectors_findings_marked_derived() -> None:
    """A trace recorded before the detectors: its report runs them and says so; a recorded one does not."""
    report = build_report(open_episode(REPLAYS.parent / "tests/fixtures/traces/checkout-migration-400-before-detectors"))
    assert report.findings_derived
    assert ("400-as-success", 11) in [(f.detector, f.turn) for f in report.findings]
    assert any(f.detector == "400-as-success" for f in next(t for t in report.turns if t.index == 11).findings)
    html, md = render_report(report, "html"), render_report(report, "md")
    assert 'id="findings"' in html and "Derived when this report was built" in html
    assert "Derived when this report was built" in md and "400-as-success (turn 11)" in md
    clean = build_report(open_episode(REPLAYS / "checkout-migration-oracle"))
    assert clean.findings == [] and not clean.findings_derived


def test_recorded_findings_are_shown_as_recorded(raw: Path) -> None:
    report = build_report(open_episode(raw))
    assert [f.detector for f in report.findings] == ["400-as-success"] and not report.findings_derived
    assert "Derived when this report was built" not in render_report(report, "html")


def test_a_fence_cannot_be_closed_by_its_content() -> None:
    block = _fence("before\n````\nafter")
    assert block.startswith("`````\n") and block.endswith("\n`````")
