"""`stripebench report --cast/--recording`: the TUI's recording played inside the one-file report, synced with it.

The browser test opens the report in Debian's Chromium with every request refused, clicks the finding's link to
its turn and checks that asciinema's player moved to that turn's marker and shows it, and that the turn is marked.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from stripebench_tui.errors import EXIT_BAD_FILE, EXIT_USAGE, BadFileError
from stripebench_tui.formats.report_recording import embed_recording
from tests.formats.cast_screens import read_cast
from tests.formats.test_report_browser import browser, open_offline  # noqa: F401 (browser: a fixture used here)

REPLAYS = Path(__file__).resolve().parents[2] / "replays"
SAMPLE = REPLAYS / "checkout-migration-400"
BUDGET = 600 * 1024  # bytes: the sample's report with its recording (player ~250 KB, cast ~30 KB packed)


def stripebench(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "stripebench_tui", *map(str, args)], capture_output=True, text=True,
                          timeout=300)


@pytest.fixture(scope="module")
def sample_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("report")
    cast, html = folder / "s.cast", folder / "s.html"
    done = stripebench("export", SAMPLE, "--format", "cast", "--speed", "6", "--size", "120x36", "-o", cast)
    assert done.returncode == 0, done.stderr
    done = stripebench("report", SAMPLE, "--cast", cast, "-o", html)
    assert done.returncode == 0, done.stderr
    return cast, html


def test_the_report_carries_player_cast_and_markers_within_its_budget(sample_report: tuple[Path, Path]) -> None:
    cast, html = sample_report
    text = html.read_text(encoding="utf-8")
    assert len(text.encode("utf-8")) < BUDGET
    assert 'id="recording-player"' in text and "AsciinemaPlayer" in text and 'id="player-css"' in text
    assert "<script src" not in text and "<link" not in text  # everything inline
    embedded = embed_recording(cast)
    _, events = read_cast(cast)
    assert embedded.markers == {int(e[2].split()[1]): e[0] for e in events if e[1] == "m"}
    assert json.loads(embedded.markers_json)[-1][1] == 11


def test_a_foreign_cast_is_redacted_on_the_way_in_and_a_non_cast_refused(tmp_path: Path) -> None:
    key = "sk_live_" + "Q" * 30
    cast = tmp_path / "foreign.cast"
    cast.write_text(json.dumps({"version": 2, "width": 80, "height": 24, "title": f"demo {key}"}) + "\n"
                    + json.dumps([0.5, "o", f"\x1b[1mexport STRIPE_KEY={key}\x1b[0m\r\n"]) + "\n"
                    + json.dumps([1.0, "m", "turn 1"]) + "\n", encoding="utf-8")
    html = tmp_path / "r.html"
    done = stripebench("report", SAMPLE, "--cast", cast, "-o", html)
    assert done.returncode == 0, done.stderr
    import base64
    import gzip
    import re

    text = html.read_text(encoding="utf-8")
    packed = re.search(r'id="recording-cast"[^>]*>([^<]*)<', text).group(1)
    inner = gzip.decompress(base64.b64decode(packed)).decode("utf-8")
    assert key not in text and key not in inner and "sk_live_[REDACTED]" in inner
    bad = tmp_path / "bad.cast"
    bad.write_text("not a cast\n")
    done = stripebench("report", SAMPLE, "--cast", bad, "-o", tmp_path / "x.html")
    assert done.returncode == EXIT_BAD_FILE and "not an asciicast v2 recording" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and not (tmp_path / "x.html").exists()
    done = stripebench("report", SAMPLE, "--cast", cast, "--format", "md", "-o", "-")
    assert done.returncode == EXIT_USAGE and "HTML" in done.stderr
    with pytest.raises(BadFileError):
        embed_recording(bad)


@pytest.mark.browser
@pytest.mark.timeout(180)
def test_clicking_the_finding_seeks_the_player_to_its_turn(browser: Any, sample_report: tuple[Path, Path]) -> None:  # noqa: F811 - pytest fixtures imported above, requested by name
    cast, html = sample_report
    marker = embed_recording(cast).markers[11]
    page, attempted = open_offline(browser, html.read_text(encoding="utf-8"))
    page.set_default_timeout(30000)
    try:
        page.wait_for_function("window.stripebenchPlayer !== undefined")
        assert page.evaluate("window.stripebenchPlayer.getCurrentTime()") < marker
        assert page.locator("section.turn.playing#turn-11").count() == 0
        page.locator('#findings ~ .finding a[href="#turn-11"]').first.click()
        page.wait_for_function(f"Math.abs(window.stripebenchPlayer.getCurrentTime() - {marker}) < 0.05")
        page.wait_for_selector('#recording-player[data-turn="11"]')
        page.wait_for_selector("section.turn.playing#turn-11")
        # the player draws that turn: the presenter's "Now" pane says so
        page.wait_for_function("document.getElementById('recording-player').innerText.includes('Turn 11 ·')")
        # a verdict band of the chart seeks too (turn 0 set every criterion pending)
        page.locator('#verdict-chart a[href="#turn-0"]').first.click()
        page.wait_for_selector('#recording-player[data-turn="0"]')
        # playing moves the highlight along the turns by itself
        page.evaluate("window.stripebenchPlayer.play()")
        # (each turn is on screen a fraction of a second at --speed 6: wait for progress, not for one turn)
        page.wait_for_function("Number(document.getElementById('recording-player').dataset.turn) >= 2")
        playing = page.evaluate("[...document.querySelectorAll('section.turn.playing')].map((s) => s.id)")
        now = page.evaluate("document.getElementById('recording-player').dataset.turn")
        assert len(playing) == 1 and playing[0] in (f"turn-{now}", f"turn-{int(now) - 1}", f"turn-{int(now) + 1}")
        assert attempted == []
    finally:
        page.context.close()
