"""Checkout in Debian's Chromium: hosted page, embedded Checkout through the stripe.js stand-in, and the card element.

A tiny merchant site (on a free port) plays the app: it loads ``/v3`` from the emulator, creates sessions and
payment intents with stripe-python, and is where success/return URLs land. Everything is found by its label.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest
import stripe

from stripebench_emulator.testing import TEST_KEY
from stripebench_tui.chromium import launch_options

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(120)]
NEW = "2026-03-25.dahlia"


class Merchant:
    """The merchant's site: /embedded, /secret (creates an embedded session), /card?secret=…, /return."""

    def __init__(self, emulator_url: str) -> None:
        self.emulator_url = emulator_url
        self.session_params: dict[str, Any] = {}
        self.created: list[str] = []
        merchant = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, body: str, kind: str = "text/html") -> None:
                data = body.encode()
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                url = urlparse(self.path)
                self._send(merchant.page(url.path, parse_qs(url.query)))

            def do_POST(self) -> None:
                self._send(json.dumps({"clientSecret": merchant.new_session()}), "application/json")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def client(self) -> stripe.StripeClient:
        return stripe.StripeClient(TEST_KEY, base_addresses={"api": self.emulator_url}, max_network_retries=0)

    def new_session(self) -> str:
        params = {"mode": "payment", "ui_mode": "embedded_page", **self.session_params,
                  "return_url": self.url + "/return?session_id={CHECKOUT_SESSION_ID}"}
        session = self.client().v1.checkout.sessions.create(params=params, options={"stripe_version": NEW})
        self.created.append(session.id)
        return session.client_secret

    def page(self, path: str, query: dict[str, list[str]]) -> str:
        script = f'<script src="{self.emulator_url}/v3"></script>'
        if path == "/embedded":
            method = query.get("method", ["createEmbeddedCheckoutPage"])[0]
            return f"""<!doctype html><title>Shop</title>{script}<h1>Shop checkout</h1><p id="status"></p>
<div id="checkout"></div>
<script>
const stripe = Stripe("pk_test_merchant");
stripe.{method}({{fetchClientSecret: () =>
  fetch("/secret", {{method: "POST"}}).then((r) => r.json()).then((j) => j.clientSecret),
  onComplete: () => {{ document.getElementById("status").textContent = "Checkout complete"; }}}})
  .then((checkout) => checkout.mount("#checkout"));
</script>"""
        if path == "/card":
            secret = json.dumps(query["secret"][0])
            return f"""<!doctype html><title>Card</title>{script}<h1>Pay by card</h1>
<div id="card"></div><button id="pay">Pay now</button><p id="result"></p><p id="change"></p>
<script>
const stripe = Stripe("pk_test_merchant");
const card = stripe.elements().create("card");
card.mount("#card");
card.on("change", (e) => {{ document.getElementById("change").textContent = e.complete ? "complete" : "incomplete"; }});
document.getElementById("pay").onclick = async () => {{
  const r = await stripe.confirmCardPayment({secret}, {{payment_method: {{card, billing_details: {{name: "Ada"}}}}}});
  document.getElementById("result").textContent = r.error ? "error: " + r.error.message : "status: " + r.paymentIntent.status;
}};
</script>"""
        if path == "/payment-element":
            secret = json.dumps(query["secret"][0])
            confirm = "confirmSetup" if query["secret"][0].startswith("seti_") else "confirmPayment"
            return f"""<!doctype html><title>Pay</title>{script}<form id="form"><div id="payment"></div>
<button>Submit</button></form><p id="result"></p>
<script>
const stripe = Stripe("pk_test_merchant");
const elements = stripe.elements({{clientSecret: {secret}}});
elements.create("payment").mount("#payment");
document.getElementById("form").addEventListener("submit", async (event) => {{
  event.preventDefault();
  const {{error: invalid}} = await elements.submit();
  if (invalid) {{ document.getElementById("result").textContent = "invalid: " + invalid.message; return; }}
  const r = await stripe.{confirm}({{elements, confirmParams: {{return_url: location.origin + "/return"}},
                                     redirect: new URLSearchParams(location.search).get("redirect") || "always"}});
  const outcome = r.error ? "error: " + r.error.message : "done: " + (r.setupIntent || r.paymentIntent).status;
  document.getElementById("result").textContent = outcome;
}});
</script>"""
        return "<!doctype html><title>Returned</title><h1>Thanks!</h1>"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(**launch_options())
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    tab = context.new_page()
    tab.set_default_timeout(15000)
    yield tab
    context.close()


@pytest.fixture
def merchant(emulator: Any) -> Iterator[Merchant]:
    site = Merchant(emulator.url)
    yield site
    site.close()


@pytest.fixture
def price(stripe_client: stripe.StripeClient) -> stripe.Price:
    return stripe_client.v1.prices.create(params={"currency": "usd", "unit_amount": 2000,
                                                  "product_data": {"name": "Emulator hoodie"}})


def _hosted(client: stripe.StripeClient, merchant: Merchant, **params: Any) -> stripe.checkout.Session:
    return client.v1.checkout.sessions.create(params={
        "mode": "payment", "success_url": merchant.url + "/return?session_id={CHECKOUT_SESSION_ID}",
        "cancel_url": merchant.url + "/cart", **params})


def _fill_card(scope: Any, number: str, email: str | None = "ada@example.com") -> None:
    if email is not None:
        scope.get_by_label("Email").fill(email)
    scope.get_by_label("Card number").fill(number)
    scope.get_by_label("Expiration").fill("1234")
    scope.get_by_label("CVC").fill("123")
    scope.get_by_label("Cardholder name").fill("Ada Lovelace")


def test_hosted_success_redirects_with_the_session_id(page, stripe_client, merchant, price, tmp_path):
    session = _hosted(stripe_client, merchant, line_items=[{"price": price.id, "quantity": 2}])
    page.goto(session.url)
    page.get_by_text("Emulator hoodie").wait_for()
    assert "$40.00" in page.locator("#total").inner_text()
    _fill_card(page, "4242 4242 4242 4242")
    assert not page.locator("#discount-row").is_visible()  # no discount line without a discount
    page.screenshot(path=str(tmp_path / "hosted_checkout.png"), full_page=True)
    page.get_by_role("button", name="Pay").click()
    page.wait_for_url(f"{merchant.url}/return?session_id={session.id}")
    done = stripe_client.v1.checkout.sessions.retrieve(session.id)
    assert (done.status, done.payment_status, done.amount_total) == ("complete", "paid", 4000)
    assert done.customer_details.email == "ada@example.com" and done.customer_details.name == "Ada Lovelace"
    assert stripe_client.v1.payment_intents.retrieve(done.payment_intent).status == "succeeded"
    events = stripe_client.v1.events.list(params={"type": "checkout.session.completed"}).data
    assert [e.data.object.id for e in events] == [session.id]


def test_hosted_decline_shows_message_and_session_stays_open(page, stripe_client, merchant, price):
    session = _hosted(stripe_client, merchant, line_items=[{"price": price.id, "quantity": 1}])
    page.goto(session.url)
    _fill_card(page, "4000 0000 0000 0002")
    page.get_by_role("button", name="Pay").click()
    alert = page.locator("#error")
    alert.filter(has_text="Your card was declined.").wait_for()
    assert stripe_client.v1.checkout.sessions.retrieve(session.id).status == "open"
    assert page.url == session.url


@pytest.mark.parametrize("choice", ["Complete", "Fail"])
def test_hosted_three_d_secure(page, stripe_client, merchant, price, choice):
    session = _hosted(stripe_client, merchant, line_items=[{"price": price.id, "quantity": 1}])
    page.goto(session.url)
    _fill_card(page, "4000 0025 0000 3155")
    page.get_by_role("button", name="Pay").click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_text("Authentication required").wait_for()
    dialog.get_by_role("button", name=choice, exact=True).click()
    done = None
    if choice == "Complete":
        page.wait_for_url(f"{merchant.url}/return?session_id={session.id}")
        done = stripe_client.v1.checkout.sessions.retrieve(session.id)
        assert (done.status, done.payment_status) == ("complete", "paid")
    else:
        page.locator("#error").filter(has_text="unable to authenticate").wait_for()
        done = stripe_client.v1.checkout.sessions.retrieve(session.id)
        assert (done.status, done.payment_status) == ("open", "unpaid")
        assert stripe_client.v1.payment_intents.retrieve(done.payment_intent).status == "requires_payment_method"


def test_hosted_promotion_code(page, stripe_client, merchant, price):
    coupon = stripe_client.v1.coupons.create(params={"percent_off": 25})
    promo = stripe_client.v1.promotion_codes.create(params={"promotion": {"type": "coupon", "coupon": coupon.id},
                                                            "code": "SPRING25"})
    session = _hosted(stripe_client, merchant, allow_promotion_codes=True, customer_email="fixed@example.com",
                      line_items=[{"price": price.id, "quantity": 2}])
    page.goto(session.url)
    email = page.get_by_label("Email")
    email.wait_for()
    assert email.input_value() == "fixed@example.com" and not email.is_editable()
    page.get_by_label("Promotion code").fill("WINTER")
    page.get_by_role("button", name="Apply").click()
    page.get_by_text("This code is invalid.").wait_for()
    page.get_by_label("Promotion code").fill("spring25")
    page.get_by_role("button", name="Apply").click()
    page.locator("#total").filter(has_text="$30.00").wait_for()
    _fill_card(page, "4242424242424242", email=None)
    page.get_by_role("button", name="Pay").click()
    page.wait_for_url(f"{merchant.url}/return?session_id={session.id}")
    done = stripe_client.v1.checkout.sessions.retrieve(session.id)
    assert (done.amount_total, done.total_details.amount_discount) == (3000, 1000)
    assert done.discounts[0].promotion_code == promo.id
    assert stripe_client.v1.payment_intents.retrieve(done.payment_intent).amount == 3000


def test_hosted_subscription_with_address_and_phone(page, stripe_client, merchant):
    monthly = stripe_client.v1.prices.create(params={"currency": "usd", "unit_amount": 1200,
                                                     "recurring": {"interval": "month"},
                                                     "product_data": {"name": "Team plan"}})
    session = _hosted(stripe_client, merchant, mode="subscription", billing_address_collection="required",
                      shipping_address_collection={"allowed_countries": ["US", "CA"]},
                      phone_number_collection={"enabled": True}, line_items=[{"price": monthly.id, "quantity": 1}])
    page.goto(session.url)
    _fill_card(page, "4242424242424242")
    shipping = page.get_by_role("group", name="Shipping address")
    shipping.get_by_label("Country").select_option("CA")
    shipping.get_by_label("Address line 1").fill("1 Main St")
    shipping.get_by_label("City").fill("Toronto")
    shipping.get_by_label("Postal code").fill("M5V 2T6")
    billing = page.get_by_role("group", name="Billing address")
    billing.get_by_label("Country").select_option("US")
    billing.get_by_label("Address line 1").fill("2 Side St")
    billing.get_by_label("City").fill("Boston")
    billing.get_by_label("Postal code").fill("02110")
    page.get_by_label("Phone number").fill("+1 555 0100")
    page.get_by_role("button", name="Subscribe").click()
    page.wait_for_url(f"{merchant.url}/return?session_id={session.id}")
    done = stripe_client.v1.checkout.sessions.retrieve(session.id)
    assert (done.status, done.payment_status) == ("complete", "paid")
    assert done.customer_details.address.city == "Boston" and done.customer_details.phone == "+1 555 0100"
    assert done.collected_information.shipping_details.address.country == "CA"
    assert stripe_client.v1.subscriptions.retrieve(done.subscription).status == "active"
    invoice = stripe_client.v1.invoices.retrieve(done.invoice)
    assert (invoice.status, invoice.amount_paid) == ("paid", 1200)


def test_embedded_checkout_success_and_three_d_secure(page, stripe_client, merchant, price):
    merchant.session_params = {"line_items": [{"price": price.id, "quantity": 1}]}
    page.goto(merchant.url + "/embedded")
    frame = page.frame_locator("iframe[name=embedded-checkout]")
    frame.get_by_text("Emulator hoodie").wait_for()
    _fill_card(frame, "4000002500003155")
    frame.get_by_role("button", name="Pay").click()
    frame.get_by_role("dialog").get_by_role("button", name="Complete", exact=True).click()
    session_id = merchant.created[-1]
    page.wait_for_url(f"{merchant.url}/return?session_id={session_id}")
    done = stripe_client.v1.checkout.sessions.retrieve(session_id, options={"stripe_version": NEW})
    assert (done.ui_mode, done.status, done.payment_status) == ("embedded_page", "complete", "paid")
    assert stripe_client.v1.payment_intents.retrieve(done.payment_intent).status == "succeeded"


def test_embedded_decline_stays_in_the_frame(page, stripe_client, merchant, price):
    merchant.session_params = {"line_items": [{"price": price.id, "quantity": 1}]}
    page.goto(merchant.url + "/embedded")
    frame = page.frame_locator("iframe[name=embedded-checkout]")
    _fill_card(frame, "4000000000000002")
    frame.get_by_role("button", name="Pay").click()
    frame.locator("#error").filter(has_text="Your card was declined.").wait_for()
    assert page.url == merchant.url + "/embedded"
    assert stripe_client.v1.checkout.sessions.retrieve(merchant.created[-1]).status == "open"


@pytest.mark.parametrize("number,result,status", [
    ("4242424242424242", "status: succeeded", "succeeded"),
    ("4000000000000002", "error: Your card was declined.", "requires_payment_method"),
    ("4000002500003155", "status: succeeded", "succeeded"),
])
def test_card_element_confirm_card_payment(page, stripe_client, merchant, number, result, status):
    pi = stripe_client.v1.payment_intents.create(params={"amount": 1999, "currency": "usd",
                                                         "payment_method_types": ["card"]})
    page.goto(f"{merchant.url}/card?secret={pi.client_secret}")
    card = page.frame_locator("iframe[name=stripe-card-element]")
    card.get_by_label("Card number").fill(number)
    card.get_by_label("Expiration").fill("1234")
    card.get_by_label("CVC").fill("123")
    page.get_by_text("complete", exact=True).wait_for()
    page.get_by_role("button", name="Pay now").click()
    if number == "4000002500003155":
        challenge = page.frame_locator("iframe[name=stripe-challenge-frame]")
        challenge.get_by_role("button", name="Complete", exact=True).click()
    page.locator("#result").filter(has_text=result).wait_for()
    after = stripe_client.v1.payment_intents.retrieve(pi.id)
    assert after.status == status
    if status == "succeeded":
        assert stripe_client.v1.payment_methods.retrieve(after.payment_method).billing_details.name == "Ada"


def test_embedded_if_required_calls_on_complete_without_redirect(page, stripe_client, merchant, price):
    merchant.session_params = {"line_items": [{"price": price.id, "quantity": 1}],
                               "redirect_on_completion": "if_required"}
    page.goto(merchant.url + "/embedded?method=initEmbeddedCheckout")
    frame = page.frame_locator("iframe[name=embedded-checkout]")
    _fill_card(frame, "4242424242424242")
    frame.get_by_role("button", name="Pay").click()
    page.get_by_text("Checkout complete").wait_for()
    assert page.url == merchant.url + "/embedded?method=initEmbeddedCheckout"
    done = stripe_client.v1.checkout.sessions.retrieve(merchant.created[-1])
    assert (done.status, done.payment_status) == ("complete", "paid")


def test_stand_in_payment_method_ids_next_actions_and_redirect(page, stripe_client, merchant, price):
    """confirmCardPayment with a pm id, retrievePaymentIntent, createPaymentMethod, handleNextAction, redirectToCheckout."""
    pi = stripe_client.v1.payment_intents.create(params={"amount": 500, "currency": "usd",
                                                         "payment_method_types": ["card"]})
    page.goto(f"{merchant.url}/card?secret={pi.client_secret}")
    status = page.evaluate("""async (secret) => {
        const stripe = Stripe("pk_test_merchant");
        const confirmed = await stripe.confirmCardPayment(secret, {payment_method: "pm_card_visa"});
        const again = await stripe.retrievePaymentIntent(secret);
        return [confirmed.paymentIntent.status, again.paymentIntent.status];
    }""", pi.client_secret)
    assert status == ["succeeded", "succeeded"]
    bad = page.evaluate("""async (secret) => (await Stripe("pk_test_merchant").retrievePaymentIntent(secret)).error.param""",
                        pi.id + "_secret_wrong")
    assert bad == "client_secret"

    card = page.frame_locator("iframe[name=stripe-card-element]")
    card.get_by_label("Card number").fill("4242424242424242")
    card.get_by_label("Expiration").fill("1234")
    card.get_by_label("CVC").fill("123")
    pm_id = page.evaluate("""async () => {
        const r = await stripe.createPaymentMethod({type: "card", card, billing_details: {name: "Grace"}});
        return r.paymentMethod.id;
    }""")
    pm = stripe_client.v1.payment_methods.retrieve(pm_id)
    assert (pm.card.last4, pm.billing_details.name) == ("4242", "Grace")

    action = stripe_client.v1.payment_intents.create(params={
        "amount": 900, "currency": "usd", "payment_method": "pm_card_authenticationRequired", "confirm": True,
        "payment_method_types": ["card"]})
    assert action.status == "requires_action"
    page.evaluate("""(secret) => { window.nextAction = Stripe("pk_test_merchant").handleNextAction({clientSecret: secret}); }""",
                  action.client_secret)
    page.frame_locator("iframe[name=stripe-challenge-frame]").get_by_role("button", name="Fail", exact=True).click()
    code = page.evaluate("async () => (await window.nextAction).error.code")
    assert code == "payment_intent_authentication_failure"
    assert stripe_client.v1.payment_intents.retrieve(action.id).status == "requires_payment_method"

    session = _hosted(stripe_client, merchant, line_items=[{"price": price.id, "quantity": 1}])
    page.evaluate("(id) => { Stripe('pk_test_merchant').redirectToCheckout({sessionId: id}); }", session.id)
    page.wait_for_url(session.url)
    page.get_by_role("button", name="Pay").wait_for()


def test_payment_element_confirm_payment_redirects_and_confirm_setup_if_required(page, stripe_client, merchant):
    pi = stripe_client.v1.payment_intents.create(params={"amount": 2500, "currency": "usd",
                                                         "automatic_payment_methods": {"enabled": True}})
    page.goto(f"{merchant.url}/payment-element?secret={pi.client_secret}")
    form = page.frame_locator("iframe[name=stripe-card-element]")
    form.get_by_label("Card number").fill("4242")
    page.get_by_role("button", name="Submit").click()
    page.locator("#result").filter(has_text="invalid: Your card number is incomplete.").wait_for()
    form.get_by_label("Card number").fill("4000002500003155")
    form.get_by_label("Expiration").fill("1234")
    form.get_by_label("CVC").fill("123")
    page.get_by_role("button", name="Submit").click()
    page.frame_locator("iframe[name=stripe-challenge-frame]").get_by_role("button", name="Complete", exact=True).click()
    page.wait_for_url(f"{merchant.url}/return?payment_intent={pi.id}&payment_intent_client_secret="
                      f"{pi.client_secret}&redirect_status=succeeded")
    assert stripe_client.v1.payment_intents.retrieve(pi.id).status == "succeeded"

    customer = stripe_client.v1.customers.create(params={"email": "setup@example.com"})
    si = stripe_client.v1.setup_intents.create(params={"customer": customer.id, "payment_method_types": ["card"]})
    page.goto(f"{merchant.url}/payment-element?secret={si.client_secret}&redirect=if_required")
    form = page.frame_locator("iframe[name=stripe-card-element]")
    form.get_by_label("Card number").fill("4242424242424242")
    form.get_by_label("Expiration").fill("1234")
    form.get_by_label("CVC").fill("123")
    page.get_by_role("button", name="Submit").click()
    page.locator("#result").filter(has_text="done: succeeded").wait_for()
    saved = stripe_client.v1.setup_intents.retrieve(si.id)
    assert saved.status == "succeeded"
    assert stripe_client.v1.payment_methods.retrieve(saved.payment_method).customer == customer.id


def test_hosted_adjustable_quantity(page, stripe_client, merchant, price):
    session = _hosted(stripe_client, merchant, line_items=[{
        "price": price.id, "quantity": 1, "adjustable_quantity": {"enabled": True, "maximum": 5}}])
    page.goto(session.url)
    quantity = page.get_by_label("Quantity of Emulator hoodie")
    quantity.fill("3")
    quantity.press("Tab")
    page.locator("#total").filter(has_text="$60.00").wait_for()
    assert stripe_client.v1.checkout.sessions.retrieve(session.id).amount_total == 6000
