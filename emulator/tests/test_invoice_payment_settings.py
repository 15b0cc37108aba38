"""An invoice's ``payment_settings`` and the PaymentIntent finalising makes, through the official stripe-python SDK.

Stripe's reference: ``payment_settings.payment_method_types`` is the list of payment method types to provide to
the invoice's PaymentIntent (unset: Stripe picks them); ``default_mandate`` and ``payment_method_options`` are
stored with the invoice. A subscription's ``send_invoice`` invoice gets its PaymentIntent when Billing finalises
it (an hour after making it: here on a test clock), as an invoice finalised through the API does, so its hosted
page or stripe.js can pay it.
"""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest
import stripe

OLD = "2020-08-27"  # an old version: payment_settings renders the same
PK = "pk_test_emulator_123"
OPTION_TYPES = ["acss_debit", "bancontact", "card", "customer_balance", "konbini", "payto", "pix", "sepa_debit",
                "upi", "us_bank_account"]
T0 = int(datetime(2026, 3, 2, 9, tzinfo=UTC).timestamp())
DAY = 86400


def _types(client: stripe.StripeClient, after: str | None = None) -> list[str]:
    params = {"limit": 100, **({"ending_before": after} if after else {})}
    return [e.type for e in reversed(client.v1.events.list(params=params).data)]


def _marker(client: stripe.StripeClient) -> str:
    return client.v1.events.list(params={"limit": 1}).data[0].id


@pytest.fixture
def customer(stripe_client):
    return stripe_client.v1.customers.create(params={"email": "ada@example.com"})


@pytest.fixture
def browser(emulator) -> stripe.StripeClient:
    return stripe.StripeClient(PK, base_addresses={"api": emulator.url}, max_network_retries=0)


def _with_item(client: stripe.StripeClient, invoice: stripe.Invoice, amount: int = 2500) -> None:
    client.v1.invoice_items.create(params={"customer": invoice.customer, "invoice": invoice.id, "amount": amount,
                                           "currency": "usd", "description": "Consulting"})


SETTINGS = {"payment_method_types": ["card", "us_bank_account"], "default_mandate": "mandate_123",
            "payment_method_options": {"card": {"request_three_d_secure": "any"},
                                       "us_bank_account": {"verification_method": "instant"}}}


def test_payment_settings_are_stored_and_rendered_in_stripes_shape_at_each_version(stripe_client, customer):
    made = stripe_client.v1.invoices.create(params={"customer": customer.id, "payment_settings": SETTINGS})
    for version in (None, OLD):
        options = {"stripe_version": version} if version else {}
        settings = stripe_client.v1.invoices.retrieve(made.id, options=options).payment_settings.to_dict()
        assert sorted(settings) == ["default_mandate", "payment_method_options", "payment_method_types"]
        assert (settings["default_mandate"], settings["payment_method_types"]) == (
            "mandate_123", ["card", "us_bank_account"])
        assert sorted(settings["payment_method_options"]) == OPTION_TYPES
        assert settings["payment_method_options"]["card"] == {"request_three_d_secure": "any"}
        assert settings["payment_method_options"]["us_bank_account"] == {"verification_method": "instant"}
        assert [name for name, value in settings["payment_method_options"].items() if value is not None] == [
            "card", "us_bank_account"]
    plain = stripe_client.v1.invoices.create(params={"customer": customer.id})
    assert plain.payment_settings.to_dict() == {"default_mandate": None, "payment_method_options": None,
                                                "payment_method_types": None}


def test_updating_a_draft_replaces_only_the_settings_passed(stripe_client, customer):
    draft = stripe_client.v1.invoices.create(params={"customer": customer.id, "payment_settings": SETTINGS})
    changed = stripe_client.v1.invoices.update(draft.id, params={"payment_settings": {
        "payment_method_types": ["card"], "payment_method_options": {"bancontact": {"preferred_language": "fr"},
                                                                     "us_bank_account": ""}}})
    settings = changed.payment_settings
    assert (settings.payment_method_types, settings.default_mandate) == (["card"], "mandate_123")
    assert settings.payment_method_options.card.request_three_d_secure == "any"
    assert settings.payment_method_options.bancontact.preferred_language == "fr"
    assert settings.payment_method_options.us_bank_account is None
    cleared = stripe_client.v1.invoices.update(draft.id, params={"payment_settings": {"payment_method_types": "",
                                                                                      "default_mandate": ""}})
    assert (cleared.payment_settings.payment_method_types, cleared.payment_settings.default_mandate) == (None, None)


@pytest.mark.parametrize("where", ["create", "update"])
def test_an_unknown_payment_method_type_is_refused_naming_the_param_and_changes_nothing(stripe_client, customer,
                                                                                        where):
    draft = stripe_client.v1.invoices.create(params={"customer": customer.id})
    marker = _marker(stripe_client)
    bad = {"payment_settings": {"payment_method_types": ["card", "carrier_pigeon"]}}
    with pytest.raises(stripe.InvalidRequestError) as caught:
        if where == "create":
            stripe_client.v1.invoices.create(params={"customer": customer.id, **bad})
        else:
            stripe_client.v1.invoices.update(draft.id, params=bad)
    error = caught.value
    assert (error.http_status, error.error.type, error.param) == (
        400, "invalid_request_error", "payment_settings[payment_method_types][1]")
    assert error.user_message.startswith("Invalid payment_settings[payment_method_types][1]: must be one of ")
    assert "us_bank_account" in error.user_message
    assert [i.id for i in stripe_client.v1.invoices.list().data] == [draft.id]
    assert stripe_client.v1.invoices.retrieve(draft.id).payment_settings.payment_method_types is None
    assert _types(stripe_client, marker) == []


def test_an_unknown_option_is_refused_like_stripe(stripe_client, customer):
    with pytest.raises(stripe.InvalidRequestError) as caught:
        stripe_client.v1.invoices.create(params={"customer": customer.id, "payment_settings": {
            "payment_method_options": {"card": {"request_three_d_secure": "always"}}}})
    assert caught.value.param == "payment_settings[payment_method_options][card][request_three_d_secure]"
    assert stripe_client.v1.invoices.list().data == []


def test_finalizing_gives_the_invoice_intent_the_invoice_payment_method_types(stripe_client, customer):
    typed = stripe_client.v1.invoices.create(params={"customer": customer.id, "payment_settings": {
        "payment_method_types": ["us_bank_account", "card"]}})
    plain = stripe_client.v1.invoices.create(params={"customer": customer.id})
    for invoice in (typed, plain):
        _with_item(stripe_client, invoice)
    intents = {}
    for invoice in (typed, plain):
        opened = stripe_client.v1.invoices.finalize_invoice(invoice.id, params={"expand": ["payments"]})
        intents[invoice.id] = stripe_client.v1.payment_intents.retrieve(opened.payments.data[0].payment.payment_intent)
    assert intents[typed.id].payment_method_types == ["us_bank_account", "card"]
    assert intents[typed.id].automatic_payment_methods is None
    assert intents[plain.id].payment_method_types == ["card"]  # the PaymentIntent's own default, as before


def test_an_open_invoice_can_change_its_types_and_its_unconfirmed_intent_follows(stripe_client, customer):
    draft = stripe_client.v1.invoices.create(params={"customer": customer.id})
    _with_item(stripe_client, draft)
    opened = stripe_client.v1.invoices.finalize_invoice(draft.id, params={"expand": ["payments"]})
    pi_id = opened.payments.data[0].payment.payment_intent
    stripe_client.v1.invoices.update(draft.id, params={"payment_settings": {"payment_method_types": ["link",
                                                                                                     "card"]}})
    assert stripe_client.v1.payment_intents.retrieve(pi_id).payment_method_types == ["link", "card"]
    stripe_client.v1.invoices.update(draft.id, params={"payment_settings": {"payment_method_types": ""}})
    assert stripe_client.v1.payment_intents.retrieve(pi_id).payment_method_types == ["card"]

    paid = stripe_client.v1.invoices.pay(draft.id, params={"payment_method": "pm_card_visa"})
    assert paid.status == "paid"
    with pytest.raises(stripe.InvalidRequestError) as caught:
        stripe_client.v1.invoices.update(draft.id, params={"payment_settings": {"payment_method_types": ["card"]}})
    assert (caught.value.code, caught.value.param) == ("invoice_not_editable", "payment_settings")
    assert stripe_client.v1.invoices.retrieve(draft.id).payment_settings.payment_method_types is None


def test_a_send_invoice_subscription_invoice_is_finalised_with_an_intent_stripe_js_can_pay(stripe_client, browser):
    clock = stripe_client.v1.test_helpers.test_clocks.create(params={"frozen_time": T0})
    customer = stripe_client.v1.customers.create(params={"email": "ada@example.com", "test_clock": clock.id})
    price = stripe_client.v1.prices.create(params={"currency": "usd", "unit_amount": 3300,
                                                  "recurring": {"interval": "month"}, "product_data": {"name": "Desk"}})
    sub = stripe_client.v1.subscriptions.create(params={
        "customer": customer.id, "items": [{"price": price.id}], "collection_method": "send_invoice",
        "days_until_due": 30})
    marker = _marker(stripe_client)
    # Billing finalises the first invoice an hour after making it
    stripe_client.v1.test_helpers.test_clocks.advance(clock.id, params={"frozen_time": T0 + 7200})
    types = _types(stripe_client, marker)
    assert types.index("payment_intent.created") == types.index("invoice.finalized") - 1
    invoice = stripe_client.v1.invoices.retrieve(sub.latest_invoice, params={"expand": ["confirmation_secret",
                                                                                        "payments"]})
    [default] = invoice.payments.data
    assert (invoice.status, default.is_default, default.status, default.amount_requested) == (
        "open", True, "open", 3300)
    pi = stripe_client.v1.payment_intents.retrieve(default.payment.payment_intent)
    assert (pi.status, pi.amount, pi.customer, pi.description) == (
        "requires_payment_method", 3300, customer.id, f"Payment for Invoice {invoice.number}")
    assert invoice.confirmation_secret.client_secret == pi.client_secret

    done = browser.v1.payment_intents.confirm(pi.id, params={"client_secret": pi.client_secret,
                                                             "payment_method": "pm_card_visa"})
    assert done.status == "succeeded"
    paid = stripe_client.v1.invoices.retrieve(invoice.id)
    assert (paid.status, paid.amount_paid, paid.amount_remaining) == ("paid", 3300, 0)
    assert stripe_client.v1.subscriptions.retrieve(sub.id).status == "active"


def test_the_hosted_page_pays_a_send_invoice_subscription_invoice_through_the_intent_finalising_made(
        stripe_client, emulator, customer):
    price = stripe_client.v1.prices.create(params={"currency": "usd", "unit_amount": 1900,
                                                  "recurring": {"interval": "month"}, "product_data": {"name": "Desk"}})
    sub = stripe_client.v1.subscriptions.create(params={
        "customer": customer.id, "items": [{"price": price.id}], "collection_method": "send_invoice",
        "days_until_due": 14})
    stripe_client.v1.invoices.finalize_invoice(sub.latest_invoice)  # a draft for an hour otherwise
    invoice = stripe_client.v1.invoices.retrieve(sub.latest_invoice, params={"expand": ["payments"]})
    made = invoice.payments.data[0].payment.payment_intent
    page = httpx.post(f"{emulator.url}/i/{invoice.id}/pay", data={
        "card_number": "4242 4242 4242 4242", "card_expiry": "12 / 34", "card_cvc": "123"})
    assert (page.status_code, page.headers["location"]) == (303, f"/i/{invoice.id}")  # no error shown
    paid = stripe_client.v1.invoices.retrieve(invoice.id, params={"expand": ["payments"]})
    assert paid.status == "paid"
    assert [(p.payment.payment_intent, p.status) for p in paid.payments.data] == [(made, "paid")]
    assert [pi.id for pi in stripe_client.v1.payment_intents.list().data] == [made]


def test_a_send_invoice_renewal_is_finalised_with_an_intent_and_not_charged(stripe_client):
    clock = stripe_client.v1.test_helpers.test_clocks.create(params={"frozen_time": T0})
    customer = stripe_client.v1.customers.create(params={
        "test_clock": clock.id, "payment_method": "pm_card_visa",
        "invoice_settings": {"default_payment_method": "pm_card_visa"}})  # a card on file is not used
    price = stripe_client.v1.prices.create(params={"currency": "usd", "unit_amount": 700,
                                                  "recurring": {"interval": "day"}, "product_data": {"name": "Daily"}})
    sub = stripe_client.v1.subscriptions.create(params={
        "customer": customer.id, "items": [{"price": price.id}], "collection_method": "send_invoice",
        "days_until_due": 7})
    first = sub.latest_invoice
    # past the first invoice's finalisation, an hour after it was made: what follows is the renewal's alone
    stripe_client.v1.test_helpers.test_clocks.advance(clock.id, params={"frozen_time": T0 + 7200})
    assert stripe_client.v1.invoices.retrieve(first).status == "open"
    marker = _marker(stripe_client)
    stripe_client.v1.test_helpers.test_clocks.advance(clock.id, params={"frozen_time": T0 + DAY + 7200})
    renewed = stripe_client.v1.subscriptions.retrieve(sub.id)
    assert renewed.latest_invoice != first and renewed.status == "active"
    invoice = stripe_client.v1.invoices.retrieve(renewed.latest_invoice, params={"expand": ["payments"]})
    assert (invoice.status, invoice.collection_method, invoice.amount_paid, invoice.attempt_count) == (
        "open", "send_invoice", 0, 0)
    [default] = invoice.payments.data
    assert (default.is_default, default.status) == (True, "open")
    pi = stripe_client.v1.payment_intents.retrieve(default.payment.payment_intent)
    assert (pi.status, pi.amount) == ("requires_payment_method", 700)
    types = _types(stripe_client, marker)
    assert types.index("payment_intent.created") == types.index("invoice.finalized") - 1
    assert not {"charge.succeeded", "invoice.payment_failed", "invoice.paid"} & set(types)
