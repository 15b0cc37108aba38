"""The HTML report in Debian's Chromium with every network request blocked: turns, chart and screenshots all there."""

from __future__ import annotations

import io
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stripebench_tui.chromium import launch_options
from stripebench_tui.core.annotations import Annotations
from stripebench_tui.formats.episode_report import build_report
from stripebench_tui.formats.open import open_episode
from stripebench_tui.formats.report_html import render_report
from tests.formats.report_fixtures import SECRETS, write_raw_trace

pytestmark = [pytest.mark.browser, pytest.mark.timeout(120)]
REPLAYS = Path(__file__).resolve().parents[2] / "replays"
ORIGIN = "http://report.invalid"  # the report is handed to the page at this address; nothing else is answered


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(**launch_options())
        yield chromium
        chromium.close()


def open_offline(browser: Any, html: str) -> tuple[Any, list[str]]:
    """A page showing ``html`` where every request but the report itself is refused and recorded."""
    context = browser.new_context(viewport={"width": 1200, "height": 1000}, offline=True)
    attempted: list[str] = []

    def route(r: Any) -> None:
        if r.request.url == f"{ORIGIN}/report.html":
            r.fulfill(status=200, content_type="text/html; charset=utf-8", body=html)
        else:
            attempted.append(r.request.url)
            r.abort()

    context.route("**/*", route)
    page = context.new_page()
    page.set_default_timeout(15000)
    page.goto(f"{ORIGIN}/report.html", wait_until="load")
    return page, attempted


def test_report_opens_offline_with_every_turn_the_chart_and_the_screenshots(browser: Any, tmp_path: Path) -> None:
    episode = tmp_path / "oracle"
    shutil.copytree(REPLAYS / "checkout-migration-oracle", episode)
    Annotations(episode / "trace.jsonl").add(31, "the session is paid here")
    trace = open_episode(episode)
    turns = trace.index().turns
    page, attempted = open_offline(browser, render_report(build_report(trace)))
    try:
        assert page.eval_on_selector_all("section.turn", "els => els.map(e => e.id)") == [f"turn-{n}" for n in turns]
        bands = page.eval_on_selector_all("#verdict-chart rect.band",
                                          "els => els.map(e => [e.dataset.status, e.getBBox().width])")
        assert {s for s, _ in bands} >= {"pending", "pass"} and all(w > 0 for _, w in bands)
        shots = page.eval_on_selector_all("img.screenshot", "els => els.map(e => [e.complete, e.naturalWidth, e.naturalHeight])")
        assert len(shots) == 2 and all(done and w > 100 and h > 100 for done, w, h in shots), shots
        # A link per turn: following one scrolls its turn into view.
        page.click('section#turn-31 h3 a')
        assert page.evaluate("location.hash") == "#turn-31"
        assert page.evaluate("(() => { const r = document.getElementById('turn-31').getBoundingClientRect();"
                             " return r.top >= 0 && r.top < innerHeight; })()")
        assert page.locator("section#turn-31 .note").inner_text() == "✎ the session is paid here"
        # A long output's rest is built when its <details> is opened, and holds what the report model kept.
        report = build_report(open_episode(episode))
        call = next(c for t in report.turns for c in t.calls if c.output and c.output.body)
        more = page.locator(f"section#turn-{next(t.index for t in report.turns if call in t.calls)} details.more").first
        assert more.locator("pre").count() == 0
        more.locator("summary").click()
        assert more.locator("pre.out").inner_text() == call.output.body
        # The chart as drawn: green (pass) and grey (pending) pixels, not a blank box.
        from PIL import Image

        chart = Image.open(io.BytesIO(page.locator("#verdict-chart").screenshot(path=str(tmp_path / "chart.png")))).convert("RGB")
        colours = {rgb for _, rgb in chart.getcolors(maxcolors=1 << 20)}
        assert (0x23, 0x88, 0x4A) in colours and (0x9A, 0xA0, 0xA6) in colours
        page.locator("section#turn-30").screenshot(path=str(tmp_path / "screenshot-turn.png"))
    finally:
        page.context.close()
    assert attempted == []  # nothing was fetched: no CDN, no font, no image from the network


def test_report_in_the_browser_shows_no_secret(browser: Any, tmp_path: Path) -> None:
    trace = write_raw_trace(tmp_path / "ep")
    page, attempted = open_offline(browser, render_report(build_report(open_episode(trace))))
    try:
        page.eval_on_selector_all("details", "els => els.forEach(e => e.open = true)")
        page.wait_for_function("[...document.querySelectorAll('details.more')].every(d => d.querySelector('pre'))")
        text, markup = page.inner_text("body"), page.content()
        for secret in SECRETS:
            assert secret not in text and secret not in markup
        # The hostile title stayed text: the only scripts are the report's own.
        assert page.eval_on_selector_all("script", "els => els.map(e => e.id)") == ["report-outputs", "report-expand"]
        assert "<script>alert('x')</script>" in page.title()
    finally:
        page.context.close()
    assert attempted == []  # the hostile <img src=http://…> in the title was never loaded
