"""The ``browser`` tool server: one Chromium page an agent drives by names, labels and text.

Run it as ``python -m stripebench_tui.tools.browser --workspace DIR --screenshots DIR``.
Chromium (the system's, via ``stripebench_tui.chromium``) starts at the first tool
call and stops with the server. Every failure says what the page showed.
"""

from __future__ import annotations

import asyncio
import os
import re
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult
from playwright.async_api import Browser as PlaywrightBrowser
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Locator, Page, Playwright, async_playwright

from stripebench_tui.chromium import launch_options
from stripebench_tui.errors import UserError
from stripebench_tui.stripejs import route_stripe_js
from stripebench_tui.tools import browser_page as bp
from stripebench_tui.tools.page_requests import LIMIT_S, PageRequests
from stripebench_tui.tools.serving import Served, argument_parser, new_server, run, tool_error, tool_result, workspace_dir

WEB_SCHEMES = ("http", "https", "about")  # never file:, view-source:, chrome: …


class Browser:
    """The browser tool's state: Playwright, one page, where screenshots go."""

    def __init__(self, screenshots: Path, timeout_s: float, headed: bool) -> None:
        self.screenshots = screenshots
        self.timeout_ms = timeout_s * 1000
        # how long a click or key press waits for the page requests it started: no longer than an action may take
        self.settle_limit_s = min(LIMIT_S, timeout_s)
        self.headed = headed
        self._playwright: Playwright | None = None
        self._browser: PlaywrightBrowser | None = None
        self._page: Page | None = None
        self._lock = asyncio.Lock()
        self._shots = 0
        self.startup_s = 0.0  # seconds the current call spent starting Chromium and its page (reported, then reset)

    async def page(self) -> Page:
        """The page, launching Chromium on first use."""
        async with self._lock:
            if self._page is None or self._page.is_closed():
                started = time.monotonic()
                if self._playwright is None:
                    self._playwright = await async_playwright().start()
                if self._browser is None:
                    self._browser = await self._playwright.chromium.launch(**launch_options(headless=not self.headed))
                context = await self._browser.new_context(viewport={"width": 1280, "height": 900})
                context.set_default_timeout(self.timeout_ms)
                await route_stripe_js(context, os.environ.get("STRIPE_JS_URL"))  # the emulator's, offline
                self._page = await context.new_page()
                self.startup_s += time.monotonic() - started
            return self._page

    async def close(self) -> None:
        """Stop Chromium and Playwright; called when the server exits."""
        if self._browser is not None:
            await self._browser.close()
        if self._playwright is not None:
            await self._playwright.stop()
        self._browser = self._playwright = self._page = None

    async def act(self, what: str, action) -> CallToolResult:
        """Run ``action(page)`` and turn any failure into an error that quotes the page."""
        self.startup_s = 0.0
        result = await self._act(what, action)
        if self.startup_s:  # the harness's time, not the agent's: the driver counts it apart from the tool's
            result.structured_content = {**(result.structured_content or {}), "startup_s": round(self.startup_s, 6)}
        return result

    async def _act(self, what: str, action) -> CallToolResult:
        try:
            page = await self.page()
        except (UserError, PlaywrightError) as exc:
            return tool_error(f"the browser will not start: {_first_line(exc)}")
        try:
            return await action(page)
        except bp.NotFound as exc:
            return tool_error(f"{exc}; the page shows: {await bp.page_excerpt(page)}")
        except PlaywrightError as exc:
            return tool_error(f"{what} failed: {_first_line(exc)}; the page shows: {await bp.page_excerpt(page)}")

    async def describe(self, page: Page, done: str) -> CallToolResult:
        """A short result: what was done and where the page is now."""
        try:
            title = await page.title()
        except PlaywrightError:
            title = ""
        return tool_result(f"{done}\npage: {title!r} at {page.url}", {"url": page.url, "title": title})

    def screenshot_path(self, name: str | None) -> Path:
        """A fresh numbered file name in the screenshots directory."""
        self._shots += 1
        slug = re.sub(r"[^A-Za-z0-9_-]+", "-", name or "page").strip("-")[:40] or "page"
        self.screenshots.mkdir(parents=True, exist_ok=True)
        return self.screenshots / f"{self._shots:03d}-{slug}.png"


def _requests_note(started: int, running: int) -> str:
    """What a result says of the page requests its action started: nothing when none is left running."""
    if not running:
        return ""
    return (f"\n{running} of the {started} page request(s) it started still running after the wait for them "
            "(check the page again before relying on their outcome)")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    # Playwright appends a multi-line call log; its first line is the message.
    return text.splitlines()[0] if text else type(exc).__name__


async def _focus_field(page: Page, field: str | None, frame: str | None) -> tuple[Locator | None, str]:
    """Focus ``field`` (when given) so that keyboard input goes there; returns it and what was focused."""
    if field is None:
        return None, ""
    element, found = await bp.locate_field(page, field, frame)
    await element.focus()
    return element, found


# The line browser_type adds to its result; findings/lost_focus.py reads it (typing that landed elsewhere).
KEPT, MOVED, LOST = "focus after typing: still in", "focus after typing: moved to", "focus after typing: lost"


async def _where_keys_went(page: Page, element: Locator, found: str) -> str:
    """Whether the field typed into still has the keyboard, else what took it (a page may move focus mid-typing)."""
    try:
        kept = await element.evaluate("e => e === document.activeElement || e.contains(document.activeElement)",
                                      timeout=2000)
    except PlaywrightError:  # the field was redrawn or removed while typing
        kept = False
    if kept:
        return f"{KEPT} {found}"
    info = await bp.focused_element(page)
    if info is None:
        return f"{LOST} (nothing has focus): the keys after that went nowhere"
    name = info["accessible_name"] or info["name"] or info["id"]
    attrs = " ".join(f"{k}={info[k]}" for k in ("id", "name") if info[k])
    where = f" in iframe {info['frame']}" if info["frame"] else ""
    return f"{MOVED} {info['role'] or info['tag']} {name!r} (<{info['tag']}{' ' + attrs if attrs else ''}>){where}: " \
           "the keys after that went there"


def build_server(browser: Browser) -> MCPServer:
    """The MCP server exposing the browser tools."""
    server = new_server("browser", "Drive a Chromium page: navigate, click, fill, read.")

    @server.tool()
    async def browser_navigate(url: str) -> CallToolResult:
        """Open a URL in the page and wait for it to load."""
        # This browser runs on the host, beside the environment's solution and graders: web pages only.
        scheme = urlsplit(url.strip()).scheme.lower()
        if scheme not in WEB_SCHEMES:
            return tool_error(f"the browser opens only http(s) URLs, not {url[:200]!r}; "
                              "give the app's address, e.g. http://127.0.0.1:PORT/")

        async def go(page: Page) -> CallToolResult:
            response = await page.goto(url, wait_until="load")
            status = f"HTTP {response.status}" if response is not None else "no response"
            text = await bp.page_text(page, 1500)
            return await browser.describe(page, f"opened {url} ({status})\n{text}")

        return await browser.act(f"opening {url}", go)

    @server.tool()
    async def browser_click(target: str, role: str | None = None, frame: str | None = None) -> CallToolResult:
        """Click an element named by its accessible name or visible text (optionally with its role, e.g. 'button'), or by CSS selector; iframes are searched too unless frame (an iframe name or URL part) is given."""  # noqa: E501 - the tool's description as the model reads it: one line

        async def click(page: Page) -> CallToolResult:
            element, found = await bp.locate(page, bp.click_strategies(target, role), frame,
                                             f"element to click matching {target!r}")
            with PageRequests(page) as requests:
                await element.click()
                running = await requests.settle(limit_s=browser.settle_limit_s)  # what the click set off lands first
            return await browser.describe(page, f"clicked {found}" + _requests_note(requests.started, running))

        return await browser.act(f"clicking {target!r}", click)

    @server.tool()
    async def browser_fill(field: str, value: str, frame: str | None = None) -> CallToolResult:
        """Fill a form field found by its label, placeholder or accessible name (or a CSS selector), replacing its value."""

        async def fill(page: Page) -> CallToolResult:
            element, found = await bp.locate_field(page, field, frame)
            await element.fill(value)
            return await browser.describe(page, f"filled {found}")

        return await browser.act(f"filling {field!r}", fill)

    @server.tool()
    async def browser_type(text: str, field: str | None = None, frame: str | None = None) -> CallToolResult:
        """Type text key by key into a field (found like browser_fill) or, without field, into whatever has focus. With a field, the result says whether the keyboard was still in it afterwards, or which element took it (pages may move focus while you type)."""  # noqa: E501 - the tool's description as the model reads it: one line

        async def type_(page: Page) -> CallToolResult:
            element, found = await _focus_field(page, field, frame)
            await page.keyboard.type(text)
            done = f"typed {len(text)} characters into {found or 'the focused element'}"
            if element is not None:
                done += "\n" + await _where_keys_went(page, element, found)
            return await browser.describe(page, done)

        return await browser.act("typing", type_)

    @server.tool()
    async def browser_press(key: str, field: str | None = None, frame: str | None = None) -> CallToolResult:
        """Press a key or chord (e.g. 'Enter', 'Tab', 'Shift+Tab', 'Control+a') on a field or on whatever has focus."""

        async def press(page: Page) -> CallToolResult:
            where = (await _focus_field(page, field, frame))[1] or "the focused element"
            with PageRequests(page) as requests:
                await page.keyboard.press(key)
                running = await requests.settle(limit_s=browser.settle_limit_s)  # Enter may submit a form
            return await browser.describe(page, f"pressed {key} on {where}" + _requests_note(requests.started, running))

        return await browser.act(f"pressing {key}", press)

    @server.tool()
    async def browser_select(field: str, option: str, frame: str | None = None) -> CallToolResult:
        """Choose an option (by its visible label or value) in a select box found by label or selector."""

        async def select(page: Page) -> CallToolResult:
            element, found = await bp.locate_field(page, field, frame, "select box")
            try:
                chosen = await element.select_option(label=option, timeout=2000)
            except PlaywrightError:
                chosen = await element.select_option(value=option)
            return await browser.describe(page, f"selected {', '.join(chosen)} in {found}")

        return await browser.act(f"selecting {option!r}", select)

    @server.tool()
    async def browser_scroll(direction: str = "down", pixels: int = 600, target: str | None = None) -> CallToolResult:
        """Scroll the page up or down by pixels, or bring an element (found like browser_click) into view."""

        async def scroll(page: Page) -> CallToolResult:
            if target is not None:
                element, found = await bp.locate(page, bp.click_strategies(target, None), None, f"element matching {target!r}")
                await element.scroll_into_view_if_needed()
                return await browser.describe(page, f"scrolled {found} into view")
            if direction not in ("up", "down"):
                return tool_error(f"direction must be 'up' or 'down', not {direction!r}")
            # scrollBy rather than a mouse wheel: the wheel scrolls asynchronously, so the
            # position read right after it would still be the old one.
            delta = pixels if direction == "down" else -pixels
            offset = await page.evaluate("(dy) => { window.scrollBy(0, dy); return Math.round(window.scrollY); }", delta)
            return await browser.describe(page, f"scrolled {direction} {pixels} px (now {offset} px from the top)")

        return await browser.act("scrolling", scroll)

    @server.tool()
    async def browser_wait_for_text(text: str, timeout_s: float = 10.0) -> CallToolResult:
        """Wait until text is visible on the page or in one of its iframes."""

        async def wait(page: Page) -> CallToolResult:
            deadline = asyncio.get_running_loop().time() + timeout_s
            while True:
                for f in bp.frames_to_search(page, None):
                    try:
                        if await f.get_by_text(text).first.is_visible():
                            return await browser.describe(page, f"{text!r} is visible{bp.frame_label(page, f)}")
                    except PlaywrightError:
                        continue  # the frame navigated while we looked
                if asyncio.get_running_loop().time() >= deadline:
                    raise bp.NotFound(f"{text!r} did not appear within {timeout_s:g} s")
                await asyncio.sleep(0.1)

        return await browser.act(f"waiting for {text!r}", wait)

    @server.tool()
    async def browser_page_text(max_chars: int = 20000) -> CallToolResult:
        """The visible text of the page and its iframes."""

        async def read(page: Page) -> CallToolResult:
            text = await bp.page_text(page, max_chars)
            return tool_result(f"{page.url}\n{text}", {"url": page.url, "chars": len(text)})

        return await browser.act("reading the page", read)

    @server.tool()
    async def browser_snapshot() -> CallToolResult:
        """The page's accessibility tree (roles, names, states) as YAML, iframes included."""

        async def snap(page: Page) -> CallToolResult:
            parts = []
            for f in bp.frames_to_search(page, None):
                tree = await f.locator("body").aria_snapshot()
                if f is not page.main_frame:
                    tree = f"# iframe {f.name or f.url}\n{tree}"
                parts.append(tree)
            return tool_result("\n".join(parts), {"url": page.url})

        return await browser.act("taking an accessibility snapshot", snap)

    @server.tool()
    async def browser_screenshot(name: str | None = None, full_page: bool = False) -> CallToolResult:
        """Save a PNG screenshot of the page and return its file path."""

        async def shoot(page: Page) -> CallToolResult:
            path = browser.screenshot_path(name)
            await page.screenshot(path=str(path), full_page=full_page)
            return tool_result(f"saved screenshot {path}", {"path": str(path), "url": page.url})

        return await browser.act("taking a screenshot", shoot)

    @server.tool()
    async def browser_focus() -> CallToolResult:
        """Which element has keyboard focus: its role, accessible name and tag (looking inside iframes)."""

        async def focus(page: Page) -> CallToolResult:
            info = await bp.focused_element(page)
            if info is None:
                return tool_result("nothing has focus (the page body)", {"focused": None})
            where = f" in iframe {info['frame']}" if info["frame"] else ""
            text = f"focus: {info['role'] or info['tag']} {info['accessible_name']!r} (<{info['tag']}>){where}"
            return tool_result(text, {"focused": info})

        return await browser.act("finding the focus", focus)

    @server.tool()
    async def browser_reload() -> CallToolResult:
        """Reload the current page."""

        async def reload(page: Page) -> CallToolResult:
            await page.reload(wait_until="load")
            return await browser.describe(page, "reloaded")

        return await browser.act("reloading", reload)

    return server


def prepare(argv: list[str] | None = None) -> Served:
    """Parse arguments; the server and its cleanups, ready to serve."""
    parser = argument_parser("browser", "MCP server that drives a Chromium page through Playwright.")
    parser.add_argument("--screenshots", help="directory for screenshots (default: WORKSPACE/../screenshots)")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds an action waits for its element")
    parser.add_argument("--headed", action="store_true", help="show the browser window")
    args = parser.parse_args(argv)
    workspace = workspace_dir(args.workspace)
    screenshots = Path(args.screenshots).resolve() if args.screenshots else workspace.parent / "screenshots"
    browser = Browser(screenshots, args.timeout, args.headed)
    print(f"browser tool: screenshots go to {screenshots}", file=sys.stderr)
    return build_server(browser), [browser.close]


def main(argv: list[str] | None = None) -> None:
    """Entry point: parse arguments and serve over stdio."""
    run(*prepare(argv))


if __name__ == "__main__":
    main()
