"""The sweep's HTML file in Debian's Chromium, offline: the tables are there and every link resolves."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stripebench_tui.chromium import launch_options
from tests.batch.test_insight import make_sweep

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(**launch_options())
        yield chromium
        chromium.close()


def test_the_sweep_opens_offline_and_every_number_and_run_links_somewhere_real(browser: Any, tmp_path: Path) -> None:
    batch = make_sweep(tmp_path / "sweep")
    out = tmp_path / "site" / "sweep.html"
    out.parent.mkdir()
    made = subprocess.run([sys.executable, "-m", "stripebench_tui", "batch", "report", str(batch.root), "--format",
                           "html", "-o", str(out)], capture_output=True, text=True, timeout=120)
    assert made.returncode == 0, made.stderr
    assert out.stat().st_size < 5 * 1024 * 1024
    context = browser.new_context(viewport={"width": 1200, "height": 1000}, offline=True)
    requested: list[str] = []
    context.on("request", lambda request: requested.append(request.url))
    page = context.new_page()
    try:
        page.goto(out.as_uri(), wait_until="load")
        page.screenshot(path=str(tmp_path / "sweep.png"), full_page=True)
        assert (tmp_path / "sweep.png").stat().st_size > 10_000
        heat = page.locator("#failure-modes + table")
        assert "400-as-success" in heat.inner_text() and "33 %" in heat.inner_text()
        hrefs = page.eval_on_selector_all("a[href]", "links => links.map(a => a.getAttribute('href'))")
        anchors = [h for h in hrefs if h.startswith("#")]
        files = sorted({h for h in hrefs if not h.startswith("#")})
        assert anchors and len(files) == len(batch.cells)  # every finished run has its report
        for anchor in set(anchors):
            assert page.locator(f"[id='{anchor[1:]}']").count() == 1, anchor
        for href in files:
            target = (out.parent / href).resolve()
            assert target.is_file() and target.is_relative_to(out.parent), href
        # The heat map's number for the mutant leads to exactly the run where the finding fired…
        page.locator("#failure-modes + table a").first.click()
        group = page.locator(":target")
        assert "checkout-migration__mutant-400__r1" in group.inner_text()
        # …and that run's link opens its episode report.
        group.locator("a", has_text="checkout-migration__mutant-400__r1").click()
        page.wait_for_load_state("load")
        assert page.url.endswith("sweep-episodes/checkout-migration__mutant-400__r1.html")
        assert "400-as-success" in page.content()
        assert [u for u in requested if not u.startswith("file://")] == []  # nothing fetched from a network
    finally:
        context.close()


def test_an_existing_output_is_not_overwritten(tmp_path: Path) -> None:
    batch = make_sweep(tmp_path / "sweep")
    out = tmp_path / "sweep.html"
    out.write_text("mine")
    refused = subprocess.run([sys.executable, "-m", "stripebench_tui", "batch", "report", str(batch.root), "-f", "html",
                              "-o", str(out)], capture_output=True, text=True, timeout=120)
    assert refused.returncode != 0 and "already exists" in refused.stderr and out.read_text() == "mine"
