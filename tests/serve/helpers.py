"""Starting ``stripebench serve`` as a user would, and reading what a browser page was sent."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit

ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[=>78MDEc]")


@contextmanager
def serving(*args: str, operator: bool = False) -> Iterator[tuple[subprocess.Popen, str, str | None]]:
    """``stripebench serve ARGS --port 0``; yields the process, the viewer URL and the operator URL; stops it after."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "stripebench_tui", "serve", *args, "--port", "0"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = proc.stdout.readline()  # blocks until the server listens (or exits)
        assert first.startswith("serving on http://127.0.0.1:"), (first, proc.stderr.read() if proc.poll() else "")
        operator_url = proc.stdout.readline().split()[1] if operator else None
        yield proc, first.split()[2], operator_url
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)  # what Ctrl+C does: a live episode is stopped and reaped first
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


class PageText:
    """Everything the server sent a page's terminal, as text (the terminal draws on a canvas, not in the DOM)."""

    def __init__(self, page) -> None:  # type: ignore[no-untyped-def]
        self.text = ""
        self._changed = asyncio.Event()
        self.size: tuple[int, int] | None = None  # (columns, rows) the page last told the app
        self.hosts: set[str] = set()  # every host the page asked for something
        page.on("websocket", self._socket)
        page.on("request", lambda request: self.hosts.add(urlsplit(request.url).hostname or ""))

    def _socket(self, ws) -> None:  # type: ignore[no-untyped-def]
        ws.on("framereceived", self._frame)
        ws.on("framesent", self._sent)

    def _sent(self, payload) -> None:  # type: ignore[no-untyped-def]
        if isinstance(payload, str) and payload.startswith('["resize"'):
            size = json.loads(payload)[1]
            self.size = (int(size["width"]), int(size["height"]))

    def _frame(self, payload) -> None:  # type: ignore[no-untyped-def]
        data = payload if isinstance(payload, str) else payload.decode("utf-8", "replace")
        self.text += ANSI.sub("", data)
        self._changed.set()

    def mark(self) -> int:
        return len(self.text)

    async def wait_for(self, needle: str, since: int = 0, timeout: float = 60.0) -> None:
        """Until ``needle`` was drawn after position ``since`` (woken by each frame, not by polling)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while needle not in self.text[since:]:
            self._changed.clear()
            left = deadline - loop.time()
            if left <= 0:
                raise AssertionError(f"{needle!r} never drawn; last text: {self.text[-600:]!r}")
            try:
                await asyncio.wait_for(self._changed.wait(), left)
            except TimeoutError:
                pass


async def click_cell(page, text: PageText, column: int, row: int) -> None:  # type: ignore[no-untyped-def]
    """Click the middle of one terminal cell (the canvas divided by the size the page reported)."""
    assert text.size is not None
    box = await page.locator(".xterm-screen").bounding_box()
    width, height = box["width"] / text.size[0], box["height"] / text.size[1]
    await page.mouse.click(box["x"] + (column + 0.5) * width, box["y"] + (row + 0.5) * height)


async def open_page(browser, url: str):  # type: ignore[no-untyped-def]
    """A page of its own (own context, so it keeps drawing while another is in front), focused on the terminal."""
    context = await browser.new_context(viewport={"width": 1280, "height": 760})
    page = await context.new_page()
    text = PageText(page)
    await page.goto(url)
    await page.wait_for_selector(".xterm-helper-textarea", state="attached")
    await page.focus(".xterm-helper-textarea")
    return page, text
