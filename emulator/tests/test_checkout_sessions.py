"""Checkout Sessions through the official stripe-python SDK: modes, ui_mode names by version, errors, line items,
discounts, expire and list filters; completion through the page endpoints (payment, subscription, setup)."""

from __future__ import annotations

import httpx
import pytest
import stripe

OLD = "2025-09-30.clover"
NEW = "2026-03-25.dahlia"


@pytest.fixture
def price(stripe_client: stripe.StripeClient) -> stripe.Price:
    return stripe_client.v1.prices.create(params={"currency": "usd", "unit_amount": 1500,
                                                  "product_data": {"name": "T-shirt"}})


@pytest.fixture
def monthly(stripe_client: stripe.StripeClient) -> stripe.Price:
    return stripe_client.v1.prices.create(params={"currency": "usd", "unit_amount": 900, "recurring": {"interval": "month"},
                                                  "product_data": {"name": "Pro plan"}})


def _create(client: stripe.StripeClient, version: str | None = None, **params):
    options = {"stripe_version": version} if version else None
    return client.v1.checkout.sessions.create(params=params, options=options)


def _error(client: stripe.StripeClient, version: str | None = None, **params) -> stripe.StripeError:
    with pytest.raises(stripe.InvalidRequestError) as info:
        _create(client, version, **params)
    return info.value


def test_hosted_payment_session_has_url_totals_and_no_secret(stripe_client, price, emulator):
    s = _create(stripe_client, mode="payment", success_url="https://shop.test/ok?s={CHECKOUT_SESSION_ID}",
                cancel_url="https://shop.test/cart", line_items=[{"price": price.id, "quantity": 2}],
                metadata={"order": "42"}, customer_email="ada@example.com")
    assert s.id.startswith("cs_test_") and s.object == "checkout.session"
    assert s.url == f"{emulator.url}/c/pay/{s.id}"
    assert s.client_secret is None
    assert (s.status, s.payment_status, s.mode) == ("open", "unpaid", "payment")
    assert (s.amount_subtotal, s.amount_total, s.currency) == (3000, 3000, "usd")
    assert s.total_details.amount_discount == 0
    assert s.metadata.to_dict() == {"order": "42"} and s.customer_email == "ada@example.com"
    assert s.payment_intent is None
    page = httpx.get(s.url)
    assert page.status_code == 200
    # the fixed email is in the HTML itself, read-only, before any script runs
    assert '<input id="email" name="email" type="email" autocomplete="email" value="ada@example.com" readonly>' \
        in page.text
    other = _create(stripe_client, mode="payment", success_url="https://shop.test/ok",
                    line_items=[{"price": price.id, "quantity": 1}])
    assert 'autocomplete="email">' in httpx.get(other.url).text


@pytest.mark.parametrize("version,hosted,embedded", [(OLD, "hosted", "embedded"), (NEW, "hosted_page", "embedded_page")])
def test_ui_mode_names_follow_the_api_version(stripe_client, price, version, hosted, embedded):
    items = [{"price": price.id, "quantity": 1}]
    default = _create(stripe_client, version, mode="payment", success_url="https://a.test/s", line_items=items)
    assert default.ui_mode == hosted
    emb = _create(stripe_client, version, mode="payment", ui_mode=embedded, return_url="https://a.test/r?s={CHECKOUT_SESSION_ID}",
                  line_items=items)
    assert emb.ui_mode == embedded and emb.url is None
    assert emb.client_secret.startswith(emb.id + "_secret_")
    assert emb.redirect_on_completion == "always" and emb.return_url.startswith("https://a.test/r")
    # the same stored session renders with the other version's name
    other = NEW if version == OLD else OLD
    again = stripe_client.v1.checkout.sessions.retrieve(emb.id, options={"stripe_version": other})
    assert again.ui_mode == ("embedded_page" if other == NEW else "embedded")


@pytest.mark.parametrize("version,wrong", [(OLD, "embedded_page"), (OLD, "hosted_page"), (NEW, "embedded"), (NEW, "hosted")])
def test_the_other_versions_ui_mode_name_is_an_invalid_enum(stripe_client, price, version, wrong):
    err = _error(stripe_client, version, mode="payment", ui_mode=wrong, return_url="https://a.test/r",
                 line_items=[{"price": price.id, "quantity": 1}])
    assert err.param == "ui_mode" and "Invalid ui_mode: must be one of" in err.user_message


def test_required_and_conflicting_params(stripe_client, price, monthly):
    items = [{"price": price.id, "quantity": 1}]
    assert _error(stripe_client, line_items=items, success_url="https://a.test").param == "mode"
    err = _error(stripe_client, mode="payment", line_items=items)
    assert (err.param, err.code, err.user_message) == ("success_url", "parameter_missing",
                                                       "Missing required param: success_url.")
    assert _error(stripe_client, mode="payment", success_url="https://a.test").param == "line_items"
    err = _error(stripe_client, NEW, mode="payment", ui_mode="embedded_page", line_items=items)
    assert (err.param, err.code) == ("return_url", "parameter_missing")
    err = _error(stripe_client, NEW, mode="payment", ui_mode="embedded_page", line_items=items,
                 return_url="https://a.test", success_url="https://a.test")
    assert err.param == "success_url"
    never = _create(stripe_client, NEW, mode="payment", ui_mode="embedded_page", redirect_on_completion="never",
                    line_items=items)
    assert never.return_url is None
    err = _error(stripe_client, mode="payment", success_url="https://a.test", line_items=items,
                 allow_promotion_codes=True, discounts=[{"coupon": "nope"}])
    assert "allow_promotion_codes, discounts" in err.user_message
    err = _error(stripe_client, mode="payment", success_url="https://a.test", line_items=[{"price": price.id}])
    assert err.param == "line_items[0][quantity]"
    err = _error(stripe_client, mode="payment", success_url="https://a.test", line_items=[{"price": monthly.id, "quantity": 1}])
    assert "recurring price" in err.user_message
    err = _error(stripe_client, mode="subscription", success_url="https://a.test", line_items=items)
    assert "at least one recurring price" in err.user_message
    with pytest.raises(stripe.InvalidRequestError) as info:
        _create(stripe_client, mode="payment", success_url="https://a.test", line_items=[{"price": "price_nope", "quantity": 1}])
    assert info.value.http_status == 404 and info.value.param == "line_items[0][price]"
    with pytest.raises(stripe.InvalidRequestError) as info:
        stripe_client.v1.checkout.sessions.retrieve("cs_test_missing")
    assert info.value.user_message == "No such checkout.session: 'cs_test_missing'"
    assert _error(stripe_client, mode="payment", success_url="https://a.test", line_items=items,
                  surprise="1").code == "parameter_unknown"
    # nothing was saved by the failed requests
    assert [x.id for x in stripe_client.v1.checkout.sessions.list().data] == [never.id]


def test_price_data_line_items_and_expandable_products(stripe_client):
    s = _create(stripe_client, mode="payment", success_url="https://a.test",
                line_items=[{"price_data": {"currency": "eur", "unit_amount": 250, "product_data": {"name": "Sticker"}},
                             "quantity": 4, "adjustable_quantity": {"enabled": True, "maximum": 10}}])
    assert (s.amount_total, s.currency) == (1000, "eur")
    items = stripe_client.v1.checkout.sessions.line_items.list(s.id, params={"expand": ["data.price.product"]})
    item = items.data[0]
    assert item.object == "item" and item.description == "Sticker" and item.quantity == 4
    assert (item.amount_subtotal, item.amount_total, item.amount_discount) == (1000, 1000, 0)
    assert item.price.unit_amount == 250 and item.price.product.name == "Sticker"
    assert item.adjustable_quantity.enabled is True and item.adjustable_quantity.maximum == 10


def test_coupon_discount_splits_over_line_items(stripe_client, price):
    cheap = stripe_client.v1.prices.create(params={"currency": "usd", "unit_amount": 500, "product_data": {"name": "Socks"}})
    coupon = stripe_client.v1.coupons.create(params={"amount_off": 1000, "currency": "usd"})
    s = _create(stripe_client, mode="payment", success_url="https://a.test", discounts=[{"coupon": coupon.id}],
                line_items=[{"price": price.id, "quantity": 1}, {"price": cheap.id, "quantity": 1}])
    assert (s.amount_subtotal, s.amount_total, s.total_details.amount_discount) == (2000, 1000, 1000)
    assert s.discounts[0].coupon == coupon.id
    items = stripe_client.v1.checkout.sessions.line_items.list(s.id, params={"expand": ["data.discounts"]}).data
    assert sum(i.amount_discount for i in items) == 1000
    assert [i.amount_total for i in items] == [i.amount_subtotal - i.amount_discount for i in items]
    assert items[0].discounts[0].amount == items[0].amount_discount


def test_promotion_code_discount_at_create(stripe_client, price):
    coupon = stripe_client.v1.coupons.create(params={"percent_off": 25})
    promo = stripe_client.v1.promotion_codes.create(params={"promotion": {"type": "coupon", "coupon": coupon.id},
                                                            "code": "QUARTER"})
    s = _create(stripe_client, mode="payment", success_url="https://a.test", discounts=[{"promotion_code": promo.id}],
                line_items=[{"price": price.id, "quantity": 2}])
    assert (s.amount_total, s.total_details.amount_discount) == (2250, 750)
    assert s.discounts[0].promotion_code == promo.id


def test_expire_and_status_filters(stripe_client, price):
    items = [{"price": price.id, "quantity": 1}]
    a = _create(stripe_client, mode="payment", success_url="https://a.test", line_items=items)
    b = _create(stripe_client, mode="payment", success_url="https://a.test", line_items=items)
    expired = stripe_client.v1.checkout.sessions.expire(a.id)
    assert expired.status == "expired" and expired.url is None
    with pytest.raises(stripe.InvalidRequestError) as info:
        stripe_client.v1.checkout.sessions.expire(a.id)
    assert "status of \"expired\"" in info.value.user_message
    assert [s.id for s in stripe_client.v1.checkout.sessions.list(params={"status": "open"}).data] == [b.id]
    assert [s.id for s in stripe_client.v1.checkout.sessions.list(params={"status": "expired"}).data] == [a.id]
    assert [e.data.object.id for e in stripe_client.v1.events.list(params={"type": "checkout.session.expired"}).data] == [a.id]


def test_expires_at_bounds(stripe_client, price):
    import time

    items = [{"price": price.id, "quantity": 1}]
    err = _error(stripe_client, mode="payment", success_url="https://a.test", line_items=items,
                 expires_at=int(time.time()) + 60)
    assert err.param == "expires_at"
    s = _create(stripe_client, mode="payment", success_url="https://a.test", line_items=items,
                expires_at=int(time.time()) + 3600)
    assert s.expires_at > s.created


# -- completion through the page endpoints -----------------------------------------------------------------------
CARD = {"email": "ada@example.com", "card_number": "4242 4242 4242 4242", "expiry": "12 / 34", "cvc": "123",
        "name": "Ada Lovelace"}


def _page(emulator, session, action, body=None, secret=None):
    url = f"{emulator.url}/_checkout/{session.id}/{action}" + (f"?secret={secret}" if secret else "")
    return (httpx.post(url, json=body) if body is not None else httpx.get(url)).json()


def test_payment_completion_by_customer_filter_and_payment_intent_filter(stripe_client, price, emulator):
    customer = stripe_client.v1.customers.create(params={"email": "c@example.com"})
    s = _create(stripe_client, mode="payment", success_url="https://a.test/ok?id={CHECKOUT_SESSION_ID}",
                customer=customer.id, line_items=[{"price": price.id, "quantity": 1}],
                payment_intent_data={"metadata": {"order": "7"}})
    state = _page(emulator, s, "state")["state"]
    assert state["email"] == "c@example.com" and state["email_locked"] is True
    reply = _page(emulator, s, "submit", dict(CARD))
    assert reply["status"] == "complete" and reply["redirect"] == f"https://a.test/ok?id={s.id}"
    done = stripe_client.v1.checkout.sessions.retrieve(s.id)
    assert (done.status, done.payment_status) == ("complete", "paid")
    pi = stripe_client.v1.payment_intents.retrieve(done.payment_intent)
    assert (pi.status, pi.amount, pi.customer, pi.metadata.to_dict()) == ("succeeded", 1500, customer.id, {"order": "7"})
    assert [x.id for x in stripe_client.v1.checkout.sessions.list(params={"customer": customer.id}).data] == [s.id]
    assert [x.id for x in stripe_client.v1.checkout.sessions.list(params={"payment_intent": pi.id}).data] == [s.id]
    assert _page(emulator, s, "submit", dict(CARD))["error"]["message"].startswith("This Checkout Session is no longer")
    completed = stripe_client.v1.events.list(params={"type": "checkout.session.completed"}).data
    assert [e.data.object.id for e in completed] == [s.id]
    assert completed[0].request.id is None  # caused by the customer, not by an API request
    assert completed[0].data.object.customer_details.email == "c@example.com"


def test_subscription_completion_creates_customer_subscription_and_paid_invoice(stripe_client, monthly, price,
                                                                                emulator):
    s = _create(stripe_client, mode="subscription", success_url="https://a.test/ok",
                line_items=[{"price": monthly.id, "quantity": 2}, {"price": price.id, "quantity": 1}],
                subscription_data={"metadata": {"plan": "pro"}})
    assert s.customer is None and s.amount_total == 3300
    assert _page(emulator, s, "submit", dict(CARD))["status"] == "complete"
    done = stripe_client.v1.checkout.sessions.retrieve(s.id)
    assert (done.status, done.payment_status) == ("complete", "paid") and done.customer.startswith("cus_")
    sub = stripe_client.v1.subscriptions.retrieve(done.subscription)
    assert (sub.status, sub.customer, sub.metadata.to_dict()) == ("active", done.customer, {"plan": "pro"})
    assert len(sub["items"].data) == 1  # the one-time price is billed once, not subscribed to
    item = sub["items"].data[0]
    assert (item.price.id, item.quantity) == (monthly.id, 2)
    assert item.current_period_end > item.current_period_start  # on items in 2025-03-31+ versions
    invoice = stripe_client.v1.invoices.retrieve(done.invoice)
    assert (invoice.status, invoice.amount_paid, invoice.customer) == ("paid", 3300, done.customer)
    assert [line.amount for line in invoice.lines.data] == [1800, 1500]
    assert invoice.lines.data[1].parent.type == "invoice_item_details"
    receipt = httpx.get(invoice.hosted_invoice_url)
    assert receipt.status_code == 200 and "Pro plan" in receipt.text and "33.00 USD" in receipt.text
    assert sub.latest_invoice == invoice.id
    assert [i.id for i in stripe_client.v1.invoices.list(params={"subscription": sub.id}).data] == [invoice.id]
    customer = stripe_client.v1.customers.retrieve(done.customer)
    assert customer.email == "ada@example.com"
    types = [e.type for e in stripe_client.v1.events.list(params={"limit": 100}).data]
    for wanted in ("customer.created", "customer.subscription.created", "invoice.created", "invoice.finalized",
                   "invoice.paid", "invoice.payment_succeeded", "checkout.session.completed"):
        assert wanted in types
    old = stripe_client.v1.subscriptions.retrieve(sub.id, options={"stripe_version": "2024-06-20"})
    assert old.current_period_end == item.current_period_end  # on the subscription in older versions
    updated = stripe_client.v1.subscriptions.update(sub.id, params={"cancel_at_period_end": True})
    assert updated.cancel_at_period_end is True and updated.cancel_at == item.current_period_end
    canceled = stripe_client.v1.subscriptions.cancel(sub.id)
    assert canceled.status == "canceled"
    assert stripe_client.v1.subscriptions.list(params={"customer": done.customer}).data == []
    assert len(stripe_client.v1.subscriptions.list(params={"status": "canceled"}).data) == 1


def test_setup_mode_saves_the_card(stripe_client, emulator):
    customer = stripe_client.v1.customers.create(params={"email": "s@example.com"})
    s = _create(stripe_client, NEW, mode="setup", ui_mode="embedded_page", currency="usd", customer=customer.id,
                return_url="https://a.test/done?s={CHECKOUT_SESSION_ID}")
    assert s.payment_status == "no_payment_required" and s.amount_total is None
    assert _page(emulator, s, "state")["error"]  # embedded sessions need their client secret
    assert _page(emulator, s, "state", secret=s.client_secret)["state"]["submit_label"] == "Save"
    reply = _page(emulator, s, "submit", dict(CARD), secret=s.client_secret)
    assert reply["redirect"] == f"https://a.test/done?s={s.id}"
    done = stripe_client.v1.checkout.sessions.retrieve(s.id)
    si = stripe_client.v1.setup_intents.retrieve(done.setup_intent)
    assert si.status == "succeeded" and si.customer == customer.id
    assert stripe_client.v1.payment_methods.retrieve(si.payment_method).customer == customer.id


def test_decline_keeps_session_open_then_retry_succeeds_on_same_intent(stripe_client, price, emulator):
    s = _create(stripe_client, mode="payment", success_url="https://a.test", line_items=[{"price": price.id, "quantity": 1}])
    reply = _page(emulator, s, "submit", {**CARD, "card_number": "4000000000000002"})
    assert reply["error"]["decline_code"] == "generic_decline" and reply["error"]["message"] == "Your card was declined."
    opened = stripe_client.v1.checkout.sessions.retrieve(s.id)
    assert opened.status == "open" and opened.payment_intent
    assert _page(emulator, s, "submit", dict(CARD))["status"] == "complete"
    done = stripe_client.v1.checkout.sessions.retrieve(s.id)
    assert done.payment_intent == opened.payment_intent
    assert stripe_client.v1.payment_intents.retrieve(done.payment_intent).status == "succeeded"


def test_page_promotion_code_apply_and_redeem(stripe_client, price, emulator):
    coupon = stripe_client.v1.coupons.create(params={"percent_off": 50})
    promo = stripe_client.v1.promotion_codes.create(params={"promotion": {"type": "coupon", "coupon": coupon.id},
                                                            "code": "HALF"})
    s = _create(stripe_client, mode="payment", success_url="https://a.test", allow_promotion_codes=True,
                line_items=[{"price": price.id, "quantity": 2}])
    assert _page(emulator, s, "promotion", {"code": "NOPE"})["error"]["message"] == "This code is invalid."
    state = _page(emulator, s, "promotion", {"code": "half"})["state"]
    assert (state["total"], state["discount"], state["promotion_code"]) == (1500, 1500, "HALF")
    assert _page(emulator, s, "submit", dict(CARD))["status"] == "complete"
    done = stripe_client.v1.checkout.sessions.retrieve(s.id)
    assert (done.amount_total, done.total_details.amount_discount) == (1500, 1500)
    assert done.discounts[0].promotion_code == promo.id
    assert stripe_client.v1.payment_intents.retrieve(done.payment_intent).amount == 1500
    assert stripe_client.v1.promotion_codes.retrieve(promo.id).times_redeemed == 1


def test_payment_mode_customer_creation_always(stripe_client, price, emulator):
    s = _create(stripe_client, mode="payment", success_url="https://a.test", customer_creation="always",
                line_items=[{"price": price.id, "quantity": 1}])
    assert _page(emulator, s, "submit", dict(CARD))["status"] == "complete"
    done = stripe_client.v1.checkout.sessions.retrieve(s.id)
    assert done.customer and stripe_client.v1.customers.retrieve(done.customer).email == "ada@example.com"
    plain = _create(stripe_client, mode="payment", success_url="https://a.test", line_items=[{"price": price.id, "quantity": 1}])
    assert _page(emulator, plain, "submit", dict(CARD))["status"] == "complete"
    assert stripe_client.v1.checkout.sessions.retrieve(plain.id).customer is None  # if_required: no customer


def test_setup_mode_three_d_secure_challenge(stripe_client, emulator):
    s = _create(stripe_client, mode="setup", currency="usd", success_url="https://a.test/ok")
    reply = _page(emulator, s, "submit", {**CARD, "card_number": "4000002500003155"})
    assert reply["requires_action"] is True
    assert stripe_client.v1.checkout.sessions.retrieve(s.id).status == "open"
    assert _page(emulator, s, "authenticate", {"success": True})["status"] == "complete"
    done = stripe_client.v1.checkout.sessions.retrieve(s.id)
    assert (done.status, done.payment_status) == ("complete", "no_payment_required")
    assert stripe_client.v1.setup_intents.retrieve(done.setup_intent).status == "succeeded"


def test_three_d_secure_page_with_return_url(stripe_client, emulator):
    pi = stripe_client.v1.payment_intents.create(params={
        "amount": 700, "currency": "usd", "payment_method": "pm_card_authenticationRequired", "confirm": True,
        "payment_method_types": ["card"], "return_url": "https://shop.test/back"})
    assert pi.status == "requires_action" and pi.next_action.type == "redirect_to_url"
    page = httpx.get(pi.next_action.redirect_to_url.url)
    assert page.status_code == 200 and "Complete" in page.text and "Fail" in page.text
    assert httpx.post(f"{emulator.url}/3ds/authenticate/{pi.id}", data={"client_secret": "wrong"}).status_code == 404
    reply = httpx.post(f"{emulator.url}/3ds/authenticate/{pi.id}",
                       data={"client_secret": pi.client_secret, "success": "true"}).json()
    assert reply["status"] == "succeeded"
    assert reply["return_url"].startswith(f"https://shop.test/back?payment_intent={pi.id}&")
    assert reply["return_url"].endswith("redirect_status=succeeded")
    assert stripe_client.v1.payment_intents.retrieve(pi.id).status == "succeeded"


def test_adjustable_quantity_on_the_page(stripe_client, price, emulator):
    s = _create(stripe_client, mode="payment", success_url="https://a.test",
                line_items=[{"price": price.id, "quantity": 1,
                             "adjustable_quantity": {"enabled": True, "minimum": 1, "maximum": 3}}])
    assert _page(emulator, s, "quantity", {"item": 0, "quantity": 4})["error"]["message"] == "Choose a quantity from 1 to 3."
    state = _page(emulator, s, "quantity", {"item": 0, "quantity": 3})["state"]
    assert state["total"] == 4500 and state["items"][0]["adjustable"] == {"minimum": 1, "maximum": 3}
    assert _page(emulator, s, "submit", dict(CARD))["status"] == "complete"
    done = stripe_client.v1.checkout.sessions.retrieve(s.id)
    assert done.amount_total == 4500
    assert stripe_client.v1.checkout.sessions.line_items.list(s.id).data[0].quantity == 3
    fixed = _create(stripe_client, mode="payment", success_url="https://a.test", line_items=[{"price": price.id, "quantity": 1}])
    assert _page(emulator, fixed, "quantity", {"item": 0, "quantity": 2})["error"]["message"] == "This item's quantity is fixed."


def test_shipping_options_add_to_the_total_and_settings_are_reflected(stripe_client, price, emulator):
    rate = stripe_client.v1.shipping_rates.create(params={"display_name": "Ground", "type": "fixed_amount",
                                                          "fixed_amount": {"amount": 500, "currency": "usd"}})
    s = _create(stripe_client, mode="payment", success_url="https://a.test", line_items=[{"price": price.id, "quantity": 1}],
                shipping_options=[{"shipping_rate": rate.id},
                                  {"shipping_rate_data": {"display_name": "Express", "type": "fixed_amount",
                                                          "fixed_amount": {"amount": 1500, "currency": "usd"}}}],
                automatic_tax={"enabled": True}, invoice_creation={"enabled": True},
                custom_text={"submit": {"message": "Thanks!"}}, tax_id_collection={"enabled": True})
    assert (s.amount_subtotal, s.amount_total, s.total_details.amount_shipping) == (1500, 2000, 500)
    assert s.shipping_cost.shipping_rate == rate.id and len(s.shipping_options) == 2
    assert s.shipping_options[1].shipping_amount == 1500
    assert s.automatic_tax.enabled is True and s.invoice_creation.enabled is True
    assert s.custom_text.submit.message == "Thanks!" and s.tax_id_collection.enabled is True
    expanded = stripe_client.v1.checkout.sessions.retrieve(s.id, params={"expand": ["shipping_cost.shipping_rate"]})
    assert expanded.shipping_cost.shipping_rate.display_name == "Ground"
    state = _page(emulator, s, "state")["state"]
    assert state["shipping"] == {"name": "Ground", "amount": 500} and state["total"] == 2000
    assert _page(emulator, s, "submit", dict(CARD))["status"] == "complete"
    done = stripe_client.v1.checkout.sessions.retrieve(s.id)
    assert stripe_client.v1.payment_intents.retrieve(done.payment_intent).amount == 2000
    invoice = stripe_client.v1.invoices.retrieve(done.invoice)  # invoice_creation: a paid invoice for the customer
    assert (invoice.status, invoice.customer, invoice.amount_paid) == ("paid", done.customer, 1500)
    eur = stripe_client.v1.shipping_rates.create(params={"display_name": "EU", "fixed_amount": {"amount": 1, "currency": "eur"}})
    err = _error(stripe_client, mode="payment", success_url="https://a.test", line_items=[{"price": price.id, "quantity": 1}],
                 shipping_options=[{"shipping_rate": eur.id}])
    assert err.param == "shipping_options[0]"
    err = _error(stripe_client, mode="payment", success_url="https://a.test", line_items=[{"price": price.id, "quantity": 1}],
                 payment_method_collection="if_required")
    assert err.param == "payment_method_collection"


def _invoice_amounts(client: stripe.StripeClient, invoice_id: str) -> tuple:
    """(subtotal, total, discounts, [line discount_amounts]) of an invoice."""
    invoice = client.v1.invoices.retrieve(invoice_id)
    return (invoice.subtotal, invoice.total, invoice.discounts,
            [[d.to_dict() for d in line.discount_amounts] for line in invoice.lines.data])


def test_subscription_checkout_coupon_becomes_the_subscriptions_discount_for_its_duration(stripe_client, emulator):
    start = 1767614400  # 2026-01-05 12:00 UTC
    clock = stripe_client.v1.test_helpers.test_clocks.create(params={"frozen_time": start})
    customer = stripe_client.v1.customers.create(params={"email": "ada@example.com", "test_clock": clock.id})
    plan = stripe_client.v1.prices.create(params={"currency": "usd", "unit_amount": 2000,
                                                 "recurring": {"interval": "month"}, "product_data": {"name": "Team"}})
    coupon = stripe_client.v1.coupons.create(params={"percent_off": 25, "duration": "repeating",
                                                     "duration_in_months": 2})
    s = _create(stripe_client, mode="subscription", success_url="https://a.test/ok", customer=customer.id,
                line_items=[{"price": plan.id, "quantity": 1}], discounts=[{"coupon": coupon.id}])
    assert s.amount_total == 1500
    assert _page(emulator, s, "submit", dict(CARD))["status"] == "complete"
    done = stripe_client.v1.checkout.sessions.retrieve(s.id)
    sub = stripe_client.v1.subscriptions.retrieve(done.subscription, params={"expand": ["discounts"]})
    assert sub.test_clock == clock.id and len(sub.discounts) == 1
    discount = sub.discounts[0]
    assert (discount.source.coupon, discount.subscription, discount.start) == (coupon.id, sub.id, start)
    assert _invoice_amounts(stripe_client, done.invoice) == (
        2000, 1500, [discount.id], [[{"amount": 500, "discount": discount.id}]])
    assert stripe_client.v1.coupons.retrieve(coupon.id).times_redeemed == 1
    created = [e.type for e in reversed(stripe_client.v1.events.list(params={"limit": 100}).data)]
    assert created.index("customer.discount.created") < created.index("customer.subscription.created")

    renewals = []
    for _month in (1, 2):  # the coupon lasts two months: the first renewal is discounted, the second is not
        period_end = stripe_client.v1.subscriptions.retrieve(sub.id)["items"].data[0].current_period_end
        stripe_client.v1.test_helpers.test_clocks.advance(clock.id, params={"frozen_time": period_end + 2 * 3600})
        latest = stripe_client.v1.subscriptions.retrieve(sub.id).latest_invoice
        assert stripe_client.v1.invoices.retrieve(latest).status == "paid"
        renewals.append(_invoice_amounts(stripe_client, latest))
    assert renewals == [(2000, 1500, [discount.id], [[{"amount": 500, "discount": discount.id}]]),
                        (2000, 2000, [], [[]])]


def test_subscription_checkout_promotion_code_typed_on_the_page_discounts_the_subscription(stripe_client, monthly,
                                                                                          emulator):
    coupon = stripe_client.v1.coupons.create(params={"amount_off": 400, "currency": "usd", "duration": "forever"})
    promo = stripe_client.v1.promotion_codes.create(params={"promotion": {"type": "coupon", "coupon": coupon.id},
                                                            "code": "FOUR"})
    s = _create(stripe_client, mode="subscription", success_url="https://a.test/ok", allow_promotion_codes=True,
                line_items=[{"price": monthly.id, "quantity": 1}])
    assert _page(emulator, s, "promotion", {"code": "four"})["state"]["total"] == 500
    assert _page(emulator, s, "submit", dict(CARD))["status"] == "complete"
    done = stripe_client.v1.checkout.sessions.retrieve(s.id)
    sub = stripe_client.v1.subscriptions.retrieve(done.subscription, params={"expand": ["discounts"]})
    assert [(d.promotion_code, d.source.coupon) for d in sub.discounts] == [(promo.id, coupon.id)]
    assert _invoice_amounts(stripe_client, done.invoice) == (
        900, 500, [sub.discounts[0].id], [[{"amount": 400, "discount": sub.discounts[0].id}]])
    assert stripe_client.v1.promotion_codes.retrieve(promo.id).times_redeemed == 1
    assert stripe_client.v1.coupons.retrieve(coupon.id).times_redeemed == 1  # once, not once per path


def test_the_page_lists_the_payment_methods_a_session_names_beyond_cards(stripe_client, emulator):
    """checkout-gym's Korean page: payment_method_types card, kr_card, payco, naver_pay are shown, in that order, by
    Checkout's names (only cards are paid here); a session of cards alone shows the card form only."""
    won = stripe_client.v1.prices.create(params={"currency": "krw", "unit_amount": 160000,
                                                 "product_data": {"name": "Backpack"}})
    s = _create(stripe_client, mode="payment", success_url="https://a.test", locale="ko",
                line_items=[{"price": won.id, "quantity": 5}],
                payment_method_types=["card", "kr_card", "payco", "naver_pay"])
    assert s.payment_method_types == ["card", "kr_card", "payco", "naver_pay"] and s.locale == "ko"
    page = httpx.get(s.url).text
    assert ('<ul class="methods" id="payment-methods" aria-label="Payment methods"><li data-type="card">Card</li>'
            '<li data-type="kr_card">Korean card</li><li data-type="payco">PAYCO</li>'
            '<li data-type="naver_pay">Naver Pay</li></ul>') in page
    assert '<html lang="ko">' in page
    cards = _create(stripe_client, mode="payment", success_url="https://a.test", payment_method_types=["card"],
                    line_items=[{"price": won.id, "quantity": 1}])
    assert 'id="payment-methods"' not in httpx.get(cards.url).text
