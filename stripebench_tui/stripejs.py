"""stripe.js in our browsers: an unmodified page's ``https://js.stripe.com/v3`` is answered by the emulator.

Pages written for real Stripe load ``<script src="https://js.stripe.com/v3/">``. When the episode's backend is
the emulator (``STRIPE_JS_URL`` points somewhere other than js.stripe.com), the browser tool and graders' browser
flows route those requests (``/v3``, ``/v3/`` and ``/v3/…``, and the ``/<release>/stripe.js`` that
``@stripe/stripe-js`` loads, any query) to the emulator's stand-in through
Playwright's request routing, so the Card Element, Payment Element and embedded Checkout work offline. The
stand-in then talks to its own origin, the emulator, for everything else. Against real Stripe nothing is routed.
"""

from __future__ import annotations

import contextlib
import re
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:  # Playwright is loaded by whoever opens the browser
    from playwright.async_api import BrowserContext, Route

REAL_HOST = "js.stripe.com"
PREFIX = "/v3"
# newer @stripe/stripe-js versions load a release's script (https://js.stripe.com/basil/stripe.js, /clover/…)
RELEASE_SCRIPT = re.compile(r"/[a-z]+/stripe\.js")


def stand_in(js_url: str | None) -> str | None:
    """The emulator's stripe.js URL, or None when ``js_url`` is empty or the real one."""
    if not js_url or not js_url.strip():
        return None
    parts = urlsplit(js_url.strip())
    if parts.hostname == REAL_HOST or parts.scheme not in ("http", "https"):
        return None
    return js_url.strip().rstrip("/")


def is_stripe_js(url: str) -> bool:
    """Whether ``url`` is a js.stripe.com ``/v3`` request (the script, or a path below it)."""
    parts = urlsplit(url)
    return (parts.scheme == "https" and parts.hostname == REAL_HOST
            and (parts.path == PREFIX or parts.path.startswith(PREFIX + "/") or bool(RELEASE_SCRIPT.fullmatch(parts.path))))


def target_url(url: str, js_url: str) -> str:
    """Where a js.stripe.com request goes on the emulator: the same path below its stand-in (a release's
    ``stripe.js``: the stand-in itself), same query."""
    parts = urlsplit(url)
    rest = "" if RELEASE_SCRIPT.fullmatch(parts.path) else parts.path[len(PREFIX):]
    return js_url + rest + (f"?{parts.query}" if parts.query else "")


async def route_stripe_js(context: BrowserContext, js_url: str | None) -> bool:
    """Answer js.stripe.com ``/v3…`` in a Playwright BrowserContext from the emulator; False when nothing to route."""
    base = stand_in(js_url)
    if base is None:
        return False
    # Playwright is loaded by whoever opens the browser; graders import this module and may never open one
    from playwright.async_api import Error as PlaywrightError

    async def handle(route: Route) -> None:
        try:
            response = await context.request.get(target_url(route.request.url, base), max_redirects=0)
        except PlaywrightError:  # the emulator is gone (the episode is ending): the script fails as offline
            with contextlib.suppress(PlaywrightError):
                await route.abort("connectionrefused")
            return
        with contextlib.suppress(PlaywrightError):  # the page closed meanwhile
            await route.fulfill(response=response)

    await context.route(is_stripe_js, handle)
    return True


__all__ = ["REAL_HOST", "is_stripe_js", "route_stripe_js", "stand_in", "target_url"]
