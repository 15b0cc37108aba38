"""`stripebench serve` in Debian's Chromium: the replay drawn in the page and driven by its keys; a live episode
watched by several viewers, steered only through the operator's link, surviving a viewer who leaves."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from stripebench_tui.chromium import launch_options
from tests.serve.helpers import click_cell, open_page, serving

pytestmark = [pytest.mark.slow, pytest.mark.browser]

REPLAY = Path(__file__).resolve().parents[2] / "replays" / "checkout-migration-400"


def not_blank(png: bytes) -> bool:
    """A screenshot with many colours where no single colour covers 95% of it."""
    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGB")
    colors = image.getcolors(maxcolors=1 << 20) or []
    return len(colors) > 20 and max(n for n, _ in colors) < 0.95 * image.width * image.height


async def test_the_replay_is_drawn_in_the_page_and_its_keys_move_the_selection() -> None:
    from playwright.async_api import async_playwright

    with serving(str(REPLAY)) as (_proc, url, _):
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(**launch_options())
            try:
                page, text = await open_page(browser, url)
                await text.wait_for("turn 0/11")
                for tool in ("view_file", "create_file", "replace_in_file", "shell"):  # the timeline's rows
                    assert tool in text.text
                first = await page.screenshot()
                assert not_blank(first)
                since = text.mark()
                await page.keyboard.press("ArrowRight")
                await page.keyboard.press("l")
                await text.wait_for("turn 2/11", since)
                assert await page.screenshot() != first
                # The mouse: a click on the timeline's row of turn 5 (below its border row) selects it.
                since = text.mark()
                await click_cell(page, text, 6, 1 + 5)
                await text.wait_for("turn 5/11", since)
                # Resizing the window re-lays the app out at the new size, as a terminal would.
                since = text.mark()
                await page.set_viewport_size({"width": 900, "height": 600})
                await text.wait_for("turn 5/11", since)
                assert text.hosts == {"127.0.0.1"}  # the page needs no network: nothing asked of any other host
            finally:
                await browser.close()


def descendant_cmdlines(root: int) -> list[str]:
    """The command lines (from /proc/PID/cmdline) of every live process descended from ``root``."""
    parent: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parent[int(stat.parent.name)] = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
    mine, grew = {root}, True
    while grew:
        new = {pid for pid, ppid in parent.items() if ppid in mine} - mine
        mine |= new
        grew = bool(new)
    lines = []
    for pid in sorted(mine - {root}):
        try:
            lines.append((Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace"))
        except OSError:
            continue
    return lines


def operator_actions(trace: Path) -> list[str]:
    out = []
    for line in trace.read_text(encoding="utf-8").splitlines()[1:]:
        event = json.loads(line)
        if event.get("type") == "operator":
            out.append(event["action"])
    return out


@pytest.mark.drill
async def test_viewers_of_a_live_episode_see_the_same_turn_and_only_the_operator_steers_it(tmp_path: Path) -> None:
    import httpx
    from playwright.async_api import async_playwright

    episode = tmp_path / "ep"
    with serving("tiny-shop", "--paused", "--episode-dir", str(episode), operator=True) as (_proc, url, operator_url):
        assert operator_url is not None and "?operator=" in operator_url
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(**launch_options())
            try:
                viewer, seen = await open_page(browser, url)
                op, op_seen = await open_page(browser, operator_url)
                for text in (seen, op_seen):
                    await text.wait_for("paused")
                # Both apps run (one an operator's), yet no process the server started has the token on its
                # command line, where `ps` would show it to every user of the machine.
                token = operator_url.split("?operator=", 1)[1]
                commands = descendant_cmdlines(_proc.pid)
                assert sum("stripebench_tui.tui.apps.serve_app" in c for c in commands) >= 2, commands
                assert not [c for c in commands if token in c]
                # A viewer's Space is refused in its own app; nothing reaches the episode.
                since = seen.mark()
                await viewer.keyboard.press(" ")
                await seen.wait_for("View only", since)
                async with httpx.AsyncClient() as client:
                    refused = await client.post(url.rstrip("/") + "/control/not-the-token", json={"method": "resume"})
                assert refused.status_code == 403
                assert "resume" not in operator_actions(episode / "trace.jsonl")
                # The operator steps one agent turn: the viewer sees that same turn, still paused.
                marks = [t.mark() for t in (seen, op_seen)]
                await op.keyboard.press("s")
                for text, since in zip((seen, op_seen), marks, strict=True):
                    await text.wait_for("turn 1/1", since)
                assert operator_actions(episode / "trace.jsonl").count("step") == 1
                # The viewer leaves mid-episode; the operator resumes; the episode runs on to its end.
                await viewer.context.close()
                since = op_seen.mark()
                await op.keyboard.press(" ")
                await op_seen.wait_for("ended: agent_done", since)
                last = json.loads((episode / "trace.jsonl").read_text().splitlines()[-1])
                assert last["type"] == "episode_end" and last["passed"] is True
                # A second viewer (or the first, coming back) sees where the episode is now: the operator's turn.
                _again, again_seen = await open_page(browser, url)
                await again_seen.wait_for("ended: agent_done")
                assert f"turn {last['turn']}/{last['turn']}" in again_seen.text
                assert f"turn {last['turn']}/{last['turn']}" in op_seen.text
            finally:
                await browser.close()



@pytest.mark.drill
async def test_viewers_see_why_a_live_episode_failed_during_setup(tmp_path: Path) -> None:
    """broken-health's service never answers its health check: each viewer, and one who comes later, reads why."""
    from playwright.async_api import async_playwright

    episode = tmp_path / "ep"
    with serving("broken-health", "--episode-dir", str(episode)) as (_proc, url, _):
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(**launch_options())
            try:
                _viewer, seen = await open_page(browser, url)
                await seen.wait_for("problem: service sleeper failed its health check", timeout=90)
                assert "ended: error" in seen.text
                _later, later_seen = await open_page(browser, url)
                await later_seen.wait_for("problem: service sleeper failed its health check")
            finally:
                await browser.close()


@pytest.mark.drill
async def test_serve_env_present_opens_the_live_presenter_for_viewers_and_the_operator(tmp_path: Path) -> None:
    """`serve ENV --present`: every page starts in the live presenter; P leaves it (and the operator steers)."""
    from playwright.async_api import async_playwright

    episode = tmp_path / "ep"
    with serving("tiny-shop", "--present", "--paused", "--episode-dir", str(episode),
                 operator=True) as (_proc, url, operator_url):
        assert operator_url is not None
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(**launch_options())
            try:
                viewer, seen = await open_page(browser, url)
                op, op_seen = await open_page(browser, operator_url)
                for text in (seen, op_seen):
                    await text.wait_for("Turns (live)")
                    await text.wait_for("Turn 0")
                # The operator leaves presenter mode with P, and steps one agent turn from the live screen.
                since = op_seen.mark()
                await op.keyboard.press("P")
                await op_seen.wait_for("paused", since)
                since = op_seen.mark()
                await op.keyboard.press("s")
                await op_seen.wait_for("turn 1/1", since)
                # The viewer's presenter, still up, moves on to that turn once turn 0 has been held.
                await seen.wait_for("Turn 1 · ")
                # The viewer leaves it too: its live screen is view only; P opens the presenter again.
                since = seen.mark()
                await viewer.keyboard.press("P")
                await seen.wait_for("turn 1/1", since)
                since = seen.mark()
                await viewer.keyboard.press(" ")
                await seen.wait_for("View only", since)
                since = seen.mark()
                await viewer.keyboard.press("P")
                await seen.wait_for("Turns (live)", since)
                assert operator_actions(episode / "trace.jsonl").count("step") == 1
            finally:
                await browser.close()
