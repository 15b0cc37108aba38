"""Wait, with a bound, for the requests a browser action started (a click's payment ``fetch``, a form post).

A click returns as soon as it is dispatched, but what it sets off — the page's script paying a Checkout Session, an
app's form submission — goes on after it. Had the tool returned then, the agent's next look at the page (and the
episode's end-of-turn view of the Stripe account) could come before the payment had reached Stripe. So a click
watches the page's requests: it returns once none is in flight and none has started for a short quiet spell, or once
the bound is reached (then saying how many are still running).

Only requests that a user would wait for count: documents, ``fetch`` and XHR. Streams (EventSource, WebSocket) and
subresources (images, fonts, scripts) never hold a click back.
"""

from __future__ import annotations

import asyncio

from playwright.async_api import Page, Request

QUIET_S = 0.15  # a page's next request in a chain (tokenise, then confirm) starts within milliseconds of the last
LIMIT_S = 5.0  # never wait longer than this for what an action started
AWAITED_TYPES = frozenset({"document", "fetch", "xhr"})


class PageRequests:
    """``with PageRequests(page) as requests: await click(); await requests.settle()``: counts the page's awaited
    requests in flight (every frame's) while the block runs."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.started = 0  # awaited requests seen starting
        self.running: set[Request] = set()
        self._changed = asyncio.Event()

    def __enter__(self) -> PageRequests:
        self.page.on("request", self._on_start)
        self.page.on("requestfinished", self._on_end)
        self.page.on("requestfailed", self._on_end)
        return self

    def __exit__(self, *exc: object) -> None:
        self.page.remove_listener("request", self._on_start)
        self.page.remove_listener("requestfinished", self._on_end)
        self.page.remove_listener("requestfailed", self._on_end)

    def _on_start(self, request: Request) -> None:
        if request.resource_type in AWAITED_TYPES:
            self.started += 1
            self.running.add(request)
            self._changed.set()

    def _on_end(self, request: Request) -> None:
        if request in self.running:
            self.running.discard(request)
            self._changed.set()

    async def settle(self, quiet_s: float = QUIET_S, limit_s: float = LIMIT_S) -> int:
        """Return once no awaited request is running and none started for ``quiet_s``, or after ``limit_s``;
        returns how many are still running (0 unless the bound was reached)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + limit_s
        while True:
            remaining = deadline - loop.time()
            if remaining <= 0:
                return len(self.running)
            self._changed.clear()
            try:
                # with requests running, wait for one to end (or start); else for the quiet spell to pass
                await asyncio.wait_for(self._changed.wait(), remaining if self.running else min(quiet_s, remaining))
            except TimeoutError:
                if not self.running:
                    return 0
