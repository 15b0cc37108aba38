"""The browser tool server on Chromium against a small local site, through a real MCP client."""

from __future__ import annotations

import functools
import http.server
import os
import threading
import time
from pathlib import Path

import pytest

from stripebench_tui.chromium import find_chromium
from stripebench_tui.tools.client import ToolServerHandle

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SHOP = """<!doctype html><html><head><title>Test shop</title></head><body>
<h1>Checkout</h1>
<form id="f" onsubmit="event.preventDefault();
  document.getElementById('done').textContent = 'Thanks, ' + document.getElementById('name').value +
  ' (' + document.getElementById('plan').value + ')';">
  <label for="name">Full name</label><input id="name">
  <label for="email">Email address</label><input id="email" type="email">
  <label for="plan">Plan</label>
  <select id="plan"><option value="basic">Basic</option><option value="pro">Pro plan</option></select>
  <button type="submit">Place order</button>
</form>
<p id="done"></p>
<div style="height:3000px"></div>
<iframe name="payment" src="/card.html" title="Secure payment"></iframe>
</body></html>"""

CARD = """<!doctype html><html><body>
<label for="card">Card number</label><input id="card" autocomplete="cc-number">
<button onclick="document.getElementById('s').textContent='Paid with ' +
  document.getElementById('card').value.slice(-4)">Pay</button>
<p id="s"></p></body></html>"""

# A page that moves the keyboard mid-typing: the third character of the email opens a promo box that takes focus.
THIEF = """<!doctype html><html><head><title>Thief</title></head><body>
<label for="email">Email</label><input id="email" oninput="if (this.value.length === 3) {
  document.getElementById('promo-box').hidden = false; document.getElementById('promo').focus(); }">
<div id="promo-box" hidden><label for="promo">Promo code</label><input id="promo" name="promo"></div>
</body></html>"""


# A page whose buttons pay through fetch, as a checkout page's script does: the answer comes after the click returned.
PAY = """<!doctype html><html><head><title>Pay</title></head><body>
<button onclick="fetch('/pay', {method: 'POST'}).then(r => r.text()).then(t => {
  document.getElementById('s').textContent = t; })">Pay now</button>
<button onclick="fetch('/hang', {method: 'POST'})">Pay slowly</button>
<p id="s"></p></body></html>"""
HUNG = threading.Event()  # set at teardown: /hang answers only then
ANSWERED: list[str] = []  # the paths the site has answered, in order


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> str:
    """A tiny site with a form and an iframe, served on a free port."""
    if find_chromium() is None:
        pytest.fail("no Chromium on this machine: install Debian's 'chromium' (scripts/setup.sh does)")
    root = tmp_path_factory.mktemp("site")
    (root / "index.html").write_text(SHOP)
    (root / "card.html").write_text(CARD)
    (root / "thief.html").write_text(THIEF)
    (root / "pay.html").write_text(PAY)

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):  # keep test output clean
            pass

        def do_POST(self):  # the page's payment: answered slowly, or only once the test lets it
            if self.path == "/hang":
                HUNG.wait(30)
            else:
                time.sleep(0.3)  # a slow backend (not a wait for anything): answers long after the click is dispatched
            ANSWERED.append(self.path)  # before the answer leaves: the browser may see it at once
            body = b"paid"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(root)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    HUNG.set()
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
async def browser(workspace: Path, tmp_path: Path):
    async with ToolServerHandle.builtin(
        "browser", str(workspace), "--screenshots", str(tmp_path / "shots"), "--timeout", "5"
    ) as handle:
        yield handle


async def test_fill_form_by_labels_click_and_wait(browser, site):
    opened = await browser.call("browser_navigate", {"url": f"{site}/index.html"})
    assert not opened.is_error, opened.text
    assert "Checkout" in opened.text and opened.data["title"] == "Test shop"
    assert not (await browser.call("browser_fill", {"field": "Full name", "value": "Ada Lovelace"})).is_error
    assert not (await browser.call("browser_fill", {"field": "Email address", "value": "ada@example.com"})).is_error
    selected = await browser.call("browser_select", {"field": "Plan", "option": "Pro plan"})
    assert not selected.is_error and "pro" in selected.text
    clicked = await browser.call("browser_click", {"target": "Place order"})
    assert not clicked.is_error and "button named 'Place order'" in clicked.text
    waited = await browser.call("browser_wait_for_text", {"text": "Thanks, Ada Lovelace (pro)", "timeout_s": 5})
    assert not waited.is_error, waited.text
    text = await browser.call("browser_page_text", {})
    assert "Thanks, Ada Lovelace (pro)" in text.text


async def test_the_call_that_starts_chromium_says_how_long_that_took(browser, site):
    first = await browser.call("browser_navigate", {"url": f"{site}/index.html"})
    second = await browser.call("browser_navigate", {"url": f"{site}/card.html"})
    assert not first.is_error and not second.is_error
    assert first.data["startup_s"] > 0 and "startup_s" not in second.data  # the harness's time, told apart once


async def test_focus_type_and_press(browser, site):
    await browser.call("browser_navigate", {"url": f"{site}/index.html"})
    await browser.call("browser_click", {"target": "Full name"})
    focus = await browser.call("browser_focus", {})
    assert focus.data["focused"]["role"] == "textbox"
    assert focus.data["focused"]["accessible_name"] == "Full name"
    await browser.call("browser_type", {"text": "Grace"})
    await browser.call("browser_press", {"key": "Tab"})
    focus = await browser.call("browser_focus", {})
    assert focus.data["focused"]["accessible_name"] == "Email address"
    typed = await browser.call("browser_type", {"text": "grace@example.com", "field": "Email address"})
    assert "into field labelled 'Email address'" in typed.text
    assert "focus after typing: still in field labelled 'Email address'" in typed.text
    await browser.call("browser_click", {"target": "Checkout"})  # move focus away from the fields
    await browser.call("browser_type", {"text": "!", "field": "Full name"})
    assert (await browser.call("browser_focus", {})).data["focused"]["accessible_name"] == "Full name"
    pressed = await browser.call("browser_press", {"key": "Enter", "field": "Email address"})
    assert "on field labelled 'Email address'" in pressed.text
    assert not (await browser.call("browser_wait_for_text", {"text": "Thanks, Grace!"})).is_error


async def test_typing_says_which_element_got_the_keys_when_the_page_moves_focus(browser, site):
    await browser.call("browser_navigate", {"url": f"{site}/thief.html"})
    typed = await browser.call("browser_type", {"text": "jenny@example.com", "field": "Email"})
    assert not typed.is_error, typed.text
    assert "typed 17 characters into field labelled 'Email'" in typed.text
    assert "focus after typing: moved to textbox 'Promo code' (<input id=promo name=promo>)" in typed.text
    snapshot = (await browser.call("browser_snapshot", {})).text
    assert "jen" in snapshot and "ny@example.com" in snapshot  # the rest really went to the promo box
    again = await browser.call("browser_type", {"text": "X", "field": "Promo code"})
    assert "focus after typing: still in field labelled 'Promo code'" in again.text


async def test_iframe_fields_are_found_automatically(browser, site):
    await browser.call("browser_navigate", {"url": f"{site}/index.html"})
    filled = await browser.call("browser_fill", {"field": "Card number", "value": "4242424242424242"})
    assert not filled.is_error, filled.text
    assert "in iframe payment" in filled.text
    assert not (await browser.call("browser_click", {"target": "Pay", "role": "button", "frame": "payment"})).is_error
    waited = await browser.call("browser_wait_for_text", {"text": "Paid with 4242"})
    assert not waited.is_error and "iframe" in waited.text
    focus = await browser.call("browser_focus", {})
    assert focus.data["focused"]["frame"] == "payment"
    snapshot = await browser.call("browser_snapshot", {})
    assert 'textbox "Card number"' in snapshot.text and 'button "Place order"' in snapshot.text


async def test_screenshot_scroll_reload(browser, site, tmp_path: Path):
    await browser.call("browser_navigate", {"url": f"{site}/index.html"})
    shot = await browser.call("browser_screenshot", {"name": "after load"})
    path = Path(shot.data["path"])
    assert path.parent == tmp_path / "shots" and path.name == "001-after-load.png"
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    scrolled = await browser.call("browser_scroll", {"direction": "down", "pixels": 500})
    assert "500 px from the top" in scrolled.text
    assert not (await browser.call("browser_reload", {})).is_error


async def test_errors_say_what_the_page_shows(browser, site):
    await browser.call("browser_navigate", {"url": f"{site}/index.html"})
    missing = await browser.call("browser_fill", {"field": "Postal code", "value": "12345"})
    assert missing.is_error
    assert "no field with label 'Postal code'" in missing.text
    assert "the page shows: Checkout" in missing.text
    late = await browser.call("browser_wait_for_text", {"text": "Never shown", "timeout_s": 0.3})
    assert late.is_error and "did not appear" in late.text
    bad_frame = await browser.call("browser_click", {"target": "Pay", "frame": "nope"})
    assert bad_frame.is_error and "no iframe named or at 'nope'" in bad_frame.text
    unreachable = await browser.call("browser_navigate", {"url": "http://127.0.0.1:9/"})
    assert unreachable.is_error and "opening http://127.0.0.1:9/ failed" in unreachable.text


async def test_only_web_pages_open_never_files_here(browser, site, tmp_path: Path):
    secret = tmp_path / "solution.txt"
    secret.write_text("the answer is 42")
    for url in (secret.as_uri(), f"view-source:{secret.as_uri()}", str(secret)):
        refused = await browser.call("browser_navigate", {"url": url})
        assert refused.is_error and "the browser opens only http(s) URLs" in refused.text, url
        assert "the answer" not in refused.text
    opened = await browser.call("browser_navigate", {"url": f"{site}/index.html"})
    assert not opened.is_error and "Checkout" in opened.text


async def test_a_browser_that_will_not_start_is_a_clear_tool_error(workspace: Path, tmp_path: Path):
    env = dict(os.environ, STRIPEBENCH_CHROMIUM=str(tmp_path / "no-chromium"))
    async with ToolServerHandle.builtin("browser", str(workspace), env=env) as browser:
        result = await browser.call("browser_navigate", {"url": "http://127.0.0.1:9/"})
    assert result.is_error
    assert result.text.startswith("the browser will not start: no Chromium found")


async def test_click_returns_once_the_request_it_started_is_answered(browser, site):
    opened = await browser.call("browser_navigate", {"url": f"{site}/pay.html"})
    assert not opened.is_error, opened.text
    ANSWERED.clear()
    clicked = await browser.call("browser_click", {"target": "Pay now", "role": "button"})
    assert not clicked.is_error, clicked.text
    assert ANSWERED == ["/pay"], "the click returned before the payment it started was answered"
    assert "still running" not in clicked.text
    page = await browser.call("browser_page_text", {})
    assert "paid" in page.text


async def test_click_waits_for_its_requests_no_longer_than_the_action_timeout(workspace: Path, tmp_path: Path, site):
    async with ToolServerHandle.builtin("browser", str(workspace), "--screenshots", str(tmp_path / "shots"),
                                        "--timeout", "1") as browser:
        opened = await browser.call("browser_navigate", {"url": f"{site}/pay.html"})
        assert not opened.is_error, opened.text
        clicked = await browser.call("browser_click", {"target": "Pay slowly", "role": "button"})
    assert not clicked.is_error, clicked.text
    assert "1 of the 1 page request(s) it started still running" in clicked.text, clicked.text
    assert "/hang" not in ANSWERED
