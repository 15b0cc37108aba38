"""An unmodified page that loads https://js.stripe.com/v3/ pays against the emulator in Chromium, offline.

The merchant page below is written for real Stripe: it names no emulator. The browser tool server (given the
episode's ``STRIPE_JS_URL``) and a grader's ``ctx.browser()`` route js.stripe.com to the emulator's stand-in.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from stripebench_emulator.testing import TEST_KEY, emulator, emulator_server, stripe_client  # noqa: F401 - pytest fixtures, requested by name below
from stripebench_tui.core.bus import EventBus
from stripebench_tui.core.events import StripeRequest
from stripebench_tui.envs.manifest import Environment, Manifest
from stripebench_tui.stripe_account.request_log import RequestLog
from stripebench_tui.stripejs import is_stripe_js, stand_in, target_url
from stripebench_tui.tools.client import ToolServerHandle

PAGE = """<!doctype html><html><head><title>Pay</title><script src="https://js.stripe.com/v3/"></script></head>
<body><h1>Pay for your order</h1><div id="card"></div><button id="pay">Pay now</button><p id="result"></p>
<script>
const stripe = Stripe("pk_test_merchant");
const card = stripe.elements().create("card");
card.mount("#card");
document.getElementById("pay").onclick = async () => {
  const secret = (await (await fetch("/secret", {method: "POST"})).json()).clientSecret;
  const r = await stripe.confirmCardPayment(secret, {payment_method: {card}});
  document.getElementById("result").textContent = r.error ? "error: " + r.error.message : "status: " + r.paymentIntent.status;
};
</script></body></html>"""


class Merchant:
    """Serves PAGE at / and creates a PaymentIntent on POST /secret (with stripe-python, as a backend would)."""

    def __init__(self, client: Any) -> None:
        self.intents: list[str] = []
        merchant = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, body: str, kind: str) -> None:
                data = body.encode()
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self._send(PAGE, "text/html")

            def do_POST(self) -> None:
                intent = client.v1.payment_intents.create(params={"amount": 1500, "currency": "usd",
                                                                  "payment_method_types": ["card"]})
                merchant.intents.append(intent.id)
                self._send(json.dumps({"clientSecret": intent.client_secret}), "application/json")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def merchant(stripe_client) -> Iterator[Merchant]:  # noqa: F811 - pytest fixtures imported above, requested by name
    site = Merchant(stripe_client)
    yield site
    site.close()


def test_which_requests_are_routed_and_where():
    assert stand_in("https://js.stripe.com/v3") is None and stand_in("") is None and stand_in(None) is None
    assert stand_in("http://127.0.0.1:5/v3/") == "http://127.0.0.1:5/v3"
    assert is_stripe_js("https://js.stripe.com/v3") and is_stripe_js("https://js.stripe.com/v3/?advancedFraudSignals=false")
    assert not is_stripe_js("https://js.stripe.com/v2/") and not is_stripe_js("https://js.stripe.com/v3x")
    assert not is_stripe_js("http://js.stripe.com/v3") and not is_stripe_js("https://m.stripe.network/v3")
    assert target_url("https://js.stripe.com/v3/?a=1", "http://e:1/v3") == "http://e:1/v3/?a=1"
    assert target_url("https://js.stripe.com/v3", "http://e:1/v3") == "http://e:1/v3"
    assert is_stripe_js("https://js.stripe.com/clover/stripe.js") and not is_stripe_js("https://js.stripe.com/x/y.js")
    assert target_url("https://js.stripe.com/basil/stripe.js", "http://e:1/v3") == "http://e:1/v3"


@pytest.mark.browser
@pytest.mark.slow
async def test_browser_tool_pays_with_the_card_element_of_a_page_written_for_stripe(emulator, stripe_client, merchant,  # noqa: F811 - pytest fixtures imported above, requested by name
                                                                                   tmp_path: Path):
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    env = {**os.environ, "STRIPE_JS_URL": f"{emulator.url}/v3"}
    # The episode's request log, as an episode attaches it: the page's stripe.js calls are logged as the browser's.
    bus = EventBus()
    logged: list[StripeRequest] = []
    bus.subscribe(lambda e: logged.append(e) if isinstance(e, StripeRequest) else None, name="test")
    log = RequestLog(bus, secrets=[TEST_KEY])
    log.attach(emulator.emulator)
    try:
        async with ToolServerHandle.builtin("browser", str(workspace), "--timeout", "10", env=env) as browser:
            opened = await browser.call("browser_navigate", {"url": merchant.url})
            assert not opened.is_error, opened.text
            for field, value in (("Card number", "4242 4242 4242 4242"), ("Expiration", "12 / 34"), ("CVC", "123")):
                filled = await browser.call("browser_fill", {"field": field, "value": value})
                assert not filled.is_error and "iframe" in filled.text, filled.text
            assert not (await browser.call("browser_click", {"target": "Pay now"})).is_error
            done = await browser.call("browser_wait_for_text", {"text": "status: succeeded", "timeout_s": 15})
            assert not done.is_error, done.text
        await log.turn_end_hook(None)
        await bus.drain()
    finally:
        await log.final_hook(None)
        await bus.close(timeout=2)
    assert [stripe_client.v1.payment_intents.retrieve(i).status for i in merchant.intents] == ["succeeded"]
    [intent] = merchant.intents
    made = [(r.method, r.path, r.source) for r in logged if r.status == 200]
    # the merchant's backend made the intent with stripe-python; the page confirmed it through stripe.js
    assert ("POST", "/v1/payment_intents", "app") in made
    assert ("POST", f"/v1/payment_intents/{intent}/confirm", "browser") in made
    confirm = next(r for r in logged if r.path.endswith("/confirm"))
    assert intent in confirm.object_ids and confirm.api_version


@pytest.mark.browser
@pytest.mark.slow
async def test_a_graders_browser_gets_the_stand_in_too(emulator, stripe_client, merchant, tmp_path: Path):  # noqa: F811 - pytest fixtures imported above, requested by name
    from stripebench_tui.grading import GradingContext

    env = Environment(tmp_path, Manifest(id="shop", title="Shop", category="full-stack"))
    ctx = GradingContext(env=env, episode_dir=tmp_path, workspace=tmp_path, stripe_api_base=emulator.url,
                         stripe_api_key=TEST_KEY, env_vars={"STRIPE_JS_URL": f"{emulator.url}/v3"})
    try:
        page = await ctx.browser()
        await page.goto(merchant.url)
        frame = page.frame_locator("#card iframe")
        await frame.get_by_label("Card number").fill("4000 0000 0000 0002")
        await frame.get_by_label("Expiration").fill("12 / 34")
        await frame.get_by_label("CVC").fill("123")
        await page.get_by_role("button", name="Pay now").click()
        await page.get_by_text("error: Your card was declined.").wait_for(timeout=15000)
    finally:
        await ctx.end_evaluation()
        ctx.close()
    assert [stripe_client.v1.payment_intents.retrieve(i).status for i in merchant.intents] == ["requires_payment_method"]
