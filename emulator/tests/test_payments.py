"""Payment methods, payment intents, charges, refunds and setup intents through the official stripe-python SDK."""

from __future__ import annotations

import httpx
import pytest
import stripe

from stripebench_emulator.api import setup_intents
from stripebench_emulator.model.context import RequestContext
from stripebench_emulator.rules import cards, intents

CARD_ONLY = {"payment_method_types": ["card"]}


def _pi(client: stripe.StripeClient, pm: str, **extra) -> stripe.PaymentIntent:
    return client.v1.payment_intents.create(params={"amount": 2000, "currency": "usd", "payment_method": pm,
                                                    "confirm": True, **CARD_ONLY, **extra})


def test_visa_payment_succeeds_with_a_captured_charge(stripe_client):
    customer = stripe_client.v1.customers.create(params={"email": "a@example.com"})
    pi = _pi(stripe_client, "pm_card_visa", customer=customer.id, metadata={"order": "42"})
    assert pi.status == "succeeded" and pi.amount_received == 2000
    assert pi.client_secret.startswith(pi.id + "_secret_")
    charge = stripe_client.v1.charges.retrieve(pi.latest_charge)
    assert charge.paid and charge.captured and charge.status == "succeeded"
    assert charge.payment_method_details.card.last4 == "4242" and charge.payment_method_details.card.brand == "visa"
    assert charge.customer == customer.id and charge.payment_intent == pi.id
    listed = stripe_client.v1.charges.list(params={"payment_intent": pi.id})
    assert [c.id for c in listed.data] == [charge.id]
    assert [c.id for c in stripe_client.v1.charges.list(params={"customer": "cus_other"}).data] == []


@pytest.mark.parametrize("pm, code, decline_code", [
    ("pm_card_chargeDeclined", "card_declined", "generic_decline"),
    ("pm_card_chargeDeclinedInsufficientFunds", "card_declined", "insufficient_funds"),
    ("pm_card_chargeDeclinedExpiredCard", "expired_card", "expired_card"),
    ("pm_card_chargeDeclinedIncorrectCvc", "incorrect_cvc", "incorrect_cvc"),
    ("pm_card_chargeDeclinedLostCard", "card_declined", "lost_card"),
    ("pm_card_visa_chargeDeclinedProcessingError", "processing_error", "processing_error"),
])
def test_declines_are_card_errors_with_stripes_codes(stripe_client, pm, code, decline_code):
    with pytest.raises(stripe.CardError) as caught:
        _pi(stripe_client, pm)
    err = caught.value
    assert err.http_status == 402 and err.code == code and err.error.decline_code == decline_code
    pi = stripe_client.v1.payment_intents.retrieve(err.error.payment_intent.id)
    assert pi.status == "requires_payment_method" and pi.payment_method is None
    assert pi.last_payment_error.decline_code == decline_code and pi.last_payment_error.type == "card_error"
    charge = stripe_client.v1.charges.retrieve(pi.last_payment_error.charge)
    assert charge.status == "failed" and charge.failure_code == code and not charge.paid
    types = [e.type for e in stripe_client.v1.events.list().data]
    assert types[:3] == ["payment_intent.payment_failed", "charge.failed", "payment_intent.created"]


def test_card_numbers_and_tokens_map_to_the_same_cards():
    assert cards.card_for_number("4242 4242 4242 4242").brand == "visa"
    assert cards.card_for_number("5555555555554444").brand == "mastercard"
    assert cards.card_for_number("4242424242424241") is None  # fails the checksum
    assert cards.card_for_magic_id("tok_chargeDeclined").decline == "generic_decline"
    assert cards.card_for_magic_id("pm_card_threeDSecure2Required").number == "4000000000003220"
    assert cards.card_for_magic_id("pm_card_nonsense") is None


def test_payment_method_from_card_details_then_attach_list_detach(stripe_client):
    customer = stripe_client.v1.customers.create()
    pm = stripe_client.v1.payment_methods.create(params={
        "type": "card", "card": {"number": "5555555555554444", "exp_month": 4, "exp_year": 2031, "cvc": "123"},
        "billing_details": {"name": "Ada"}})
    assert pm.card.brand == "mastercard" and pm.card.last4 == "4444" and pm.card.exp_year == 2031
    assert pm.billing_details.name == "Ada" and pm.customer is None
    stripe_client.v1.payment_methods.attach(pm.id, params={"customer": customer.id})
    listed = stripe_client.v1.payment_methods.list(params={"customer": customer.id, "type": "card"})
    assert [p.id for p in listed.data] == [pm.id]
    updated = stripe_client.v1.payment_methods.update(pm.id, params={"metadata": {"k": "v"}})
    assert updated.metadata["k"] == "v"
    detached = stripe_client.v1.payment_methods.detach(pm.id)
    assert detached.customer is None
    types = [e.type for e in stripe_client.v1.events.list().data]
    assert "payment_method.attached" in types and "payment_method.detached" in types
    with pytest.raises(stripe.CardError) as caught:
        stripe_client.v1.payment_methods.create(params={
            "type": "card", "card": {"number": "4242424242424241", "exp_month": 1, "exp_year": 2030}})
    assert caught.value.code == "incorrect_number"


def test_declining_card_fails_to_attach_but_0341_attaches(stripe_client):
    customer = stripe_client.v1.customers.create()
    with pytest.raises(stripe.CardError):
        stripe_client.v1.payment_methods.attach("pm_card_chargeDeclined", params={"customer": customer.id})
    pm = stripe_client.v1.payment_methods.attach("pm_card_chargeCustomerFail", params={"customer": customer.id})
    assert pm.customer == customer.id
    with pytest.raises(stripe.CardError):
        _pi(stripe_client, pm.id, customer=customer.id)


def test_3ds_card_requires_action_then_completes(stripe_client, emulator):
    pi = _pi(stripe_client, "pm_card_authenticationRequired", return_url="https://shop.test/done")
    assert pi.status == "requires_action" and pi.next_action.type == "redirect_to_url"
    assert pi.next_action.redirect_to_url.return_url == "https://shop.test/done"
    types = [e.type for e in stripe_client.v1.events.list().data]
    assert types[0] == "payment_intent.requires_action"
    emu = emulator.emulator
    with emu.transaction():
        ctx = RequestContext(emu, emu.api_version)
        done = intents.complete_authentication(ctx, ctx.get("payment_intent", pi.id), success=True)
    assert done["status"] == "succeeded"
    assert stripe_client.v1.payment_intents.retrieve(pi.id).status == "succeeded"


def test_3ds_failure_and_sdk_style_next_action(stripe_client, emulator):
    pi = _pi(stripe_client, "pm_card_threeDSecure2Required")
    assert pi.status == "requires_action" and pi.next_action.type == "use_stripe_sdk"
    emu = emulator.emulator
    with emu.transaction():
        ctx = RequestContext(emu, emu.api_version)
        intents.complete_authentication(ctx, ctx.get("payment_intent", pi.id), success=False)
    failed = stripe_client.v1.payment_intents.retrieve(pi.id)
    assert failed.status == "requires_payment_method"
    assert failed.last_payment_error.code == "payment_intent_authentication_failure"


def test_off_session_payment_with_authentication_card_declines(stripe_client):
    customer = stripe_client.v1.customers.create()
    stripe_client.v1.payment_methods.attach("pm_card_authenticationRequired", params={"customer": customer.id})
    pm = stripe_client.v1.payment_methods.list(params={"customer": customer.id}).data[0]
    with pytest.raises(stripe.CardError) as caught:
        _pi(stripe_client, pm.id, customer=customer.id, off_session=True)
    assert caught.value.code == "authentication_required"


def test_manual_capture_partial_then_refunds(stripe_client):
    pi = _pi(stripe_client, "pm_card_visa", capture_method="manual")
    assert pi.status == "requires_capture" and pi.amount_capturable == 2000
    assert not stripe_client.v1.charges.retrieve(pi.latest_charge).captured
    with pytest.raises(stripe.InvalidRequestError):
        stripe_client.v1.payment_intents.capture(pi.id, params={"amount_to_capture": 5000})
    pi = stripe_client.v1.payment_intents.capture(pi.id, params={"amount_to_capture": 1500})
    assert pi.status == "succeeded" and pi.amount_received == 1500
    refund = stripe_client.v1.refunds.create(params={"payment_intent": pi.id, "amount": 1000})
    assert refund.status == "succeeded" and refund.amount == 1000 and refund.charge == pi.latest_charge
    charge = stripe_client.v1.charges.retrieve(pi.latest_charge)
    assert charge.amount_refunded == 1500 and not charge.refunded  # 500 never captured + 1000 refunded
    rest = stripe_client.v1.refunds.create(params={"charge": charge.id})
    assert rest.amount == 500 and stripe_client.v1.charges.retrieve(charge.id).refunded
    with pytest.raises(stripe.InvalidRequestError) as caught:
        stripe_client.v1.refunds.create(params={"charge": charge.id})
    assert caught.value.code == "charge_already_refunded"
    assert {r.id for r in stripe_client.v1.refunds.list(params={"payment_intent": pi.id}).data} == {refund.id, rest.id}
    types = [e.type for e in stripe_client.v1.events.list(params={"limit": 100}).data]
    assert types.count("charge.refunded") == 2 and types.count("refund.created") == 2
    assert "charge.captured" in types and "payment_intent.amount_capturable_updated" in types


def test_cancel_and_state_errors(stripe_client):
    pi = stripe_client.v1.payment_intents.create(params={"amount": 1000, "currency": "usd", **CARD_ONLY})
    assert pi.status == "requires_payment_method"
    with pytest.raises(stripe.InvalidRequestError) as caught:
        stripe_client.v1.payment_intents.confirm(pi.id)
    assert caught.value.code == "payment_intent_unexpected_state"
    pi = stripe_client.v1.payment_intents.update(pi.id, params={"payment_method": "pm_card_mastercard"})
    assert pi.status == "requires_confirmation"
    canceled = stripe_client.v1.payment_intents.cancel(pi.id, params={"cancellation_reason": "abandoned"})
    assert canceled.status == "canceled" and canceled.cancellation_reason == "abandoned"
    with pytest.raises(stripe.InvalidRequestError):
        stripe_client.v1.payment_intents.cancel(pi.id)
    with pytest.raises(stripe.InvalidRequestError) as small:
        stripe_client.v1.payment_intents.create(params={"amount": 10, "currency": "usd"})
    assert small.value.code == "amount_too_small"


def test_charges_list_before_2022_11_15_latest_charge_after(emulator):
    old = stripe.StripeClient("sk_test_x", base_addresses={"api": emulator.url}, stripe_version="2020-08-27",
                              max_network_retries=0)
    new = stripe.StripeClient("sk_test_x", base_addresses={"api": emulator.url}, stripe_version="2022-11-15",
                              max_network_retries=0)
    pi = _pi(new, "pm_card_visa")
    assert "charges" not in pi and pi.latest_charge.startswith("ch_")
    old_pi = old.v1.payment_intents.retrieve(pi.id)
    assert "latest_charge" not in old_pi
    assert old_pi.charges.object == "list" and [c.id for c in old_pi.charges.data] == [pi.latest_charge]
    expanded = new.v1.payment_intents.retrieve(pi.id, params={"expand": ["latest_charge"]})
    assert expanded.latest_charge.object == "charge" and expanded.latest_charge.amount == 2000


def test_idempotent_payment_intent_create(emulator):
    client = stripe.StripeClient("sk_test_x", base_addresses={"api": emulator.url}, max_network_retries=0)
    params = {"amount": 1234, "currency": "usd", "payment_method": "pm_card_visa", "confirm": True, **CARD_ONLY}
    first = client.v1.payment_intents.create(params=params, options={"idempotency_key": "order-1"})
    again = client.v1.payment_intents.create(params=params, options={"idempotency_key": "order-1"})
    assert first.id == again.id
    assert len(client.v1.payment_intents.list().data) == 1 and len(client.v1.charges.list().data) == 1
    with pytest.raises(stripe.IdempotencyError):
        client.v1.payment_intents.create(params={**params, "amount": 999}, options={"idempotency_key": "order-1"})


def test_publishable_key_needs_the_client_secret(stripe_client, emulator):
    pi = stripe_client.v1.payment_intents.create(params={"amount": 1000, "currency": "usd", **CARD_ONLY})
    pk = {"Authorization": "Bearer pk_test_123"}
    with httpx.Client(base_url=emulator.url, headers=pk) as http:
        assert http.get(f"/v1/payment_intents/{pi.id}").status_code == 400
        got = http.get(f"/v1/payment_intents/{pi.id}", params={"client_secret": pi.client_secret})
        assert got.status_code == 200 and got.json()["status"] == "requires_payment_method"
        assert "customer" not in got.json()
        pm = http.post("/v1/payment_methods", data={"type": "card", "card[number]": "4242424242424242",
                                                   "card[exp_month]": "12", "card[exp_year]": "2030"})
        assert pm.status_code == 200
        done = http.post(f"/v1/payment_intents/{pi.id}/confirm",
                         data={"client_secret": pi.client_secret, "payment_method": pm.json()["id"]})
        assert done.status_code == 200 and done.json()["status"] == "succeeded"
        refused = http.get("/v1/customers")
        assert refused.status_code == 401 and refused.json()["error"]["code"] == "secret_key_required"


def test_setup_intent_attaches_the_card(stripe_client, emulator):
    customer = stripe_client.v1.customers.create()
    si = stripe_client.v1.setup_intents.create(params={"customer": customer.id, "payment_method": "pm_card_visa",
                                                       "confirm": True, **CARD_ONLY})
    assert si.status == "succeeded" and si.usage == "off_session"
    assert stripe_client.v1.payment_methods.retrieve(si.payment_method).customer == customer.id
    off = _pi(stripe_client, si.payment_method, customer=customer.id, off_session=True)
    assert off.status == "succeeded"
    auth = stripe_client.v1.setup_intents.create(params={"customer": customer.id, **CARD_ONLY,
                                                         "payment_method": "pm_card_authenticationRequiredOnSetup"})
    auth = stripe_client.v1.setup_intents.confirm(auth.id)
    assert auth.status == "requires_action"
    emu = emulator.emulator
    with emu.transaction():
        ctx = RequestContext(emu, emu.api_version)
        setup_intents.complete_authentication(ctx, ctx.get("setup_intent", auth.id), success=True)
    assert stripe_client.v1.setup_intents.retrieve(auth.id).status == "succeeded"
    bad = stripe_client.v1.setup_intents.create(params={"customer": customer.id, **CARD_ONLY})
    with pytest.raises(stripe.CardError):
        stripe_client.v1.setup_intents.confirm(bad.id, params={"payment_method": "pm_card_chargeDeclined"})
    assert stripe_client.v1.setup_intents.retrieve(bad.id).last_setup_error.code == "card_declined"
    canceled = stripe_client.v1.setup_intents.cancel(bad.id)
    assert canceled.status == "canceled"
    types = {e.type for e in stripe_client.v1.events.list(params={"limit": 100}).data}
    assert {"setup_intent.created", "setup_intent.succeeded", "setup_intent.requires_action",
            "setup_intent.setup_failed", "setup_intent.canceled"} <= types


def test_unknown_ids_and_params_are_stripe_errors(stripe_client):
    with pytest.raises(stripe.InvalidRequestError) as caught:
        stripe_client.v1.payment_intents.retrieve("pi_missing")
    assert caught.value.http_status == 404 and caught.value.code == "resource_missing"
    with pytest.raises(stripe.InvalidRequestError) as unknown:
        stripe_client.v1.payment_intents.create(params={"amount": 100, "currency": "usd", "colour": "red"})
    assert unknown.value.code == "parameter_unknown"
    with pytest.raises(stripe.InvalidRequestError):
        _pi(stripe_client, "pm_does_not_exist")
    assert stripe_client.v1.payment_intents.list().data == []


def test_legacy_charge_create_with_tokens(stripe_client):
    charge = stripe_client.v1.charges.create(params={"amount": 700, "currency": "usd", "source": "tok_visa",
                                                     "metadata": {"order": "7"}})
    assert charge.status == "succeeded" and charge.captured and charge.payment_intent is None
    assert charge.metadata["order"] == "7" and charge.payment_method_details.card.last4 == "4242"
    with pytest.raises(stripe.CardError) as caught:
        stripe_client.v1.charges.create(params={"amount": 700, "currency": "usd", "source": "tok_chargeDeclined"})
    failed = stripe_client.v1.charges.retrieve(caught.value.error.charge)
    assert failed.status == "failed" and failed.failure_code == "card_declined"
    uncaptured = stripe_client.v1.charges.create(params={"amount": 900, "currency": "usd", "source": "tok_mastercard",
                                                         "capture": False})
    assert not uncaptured.captured
    customer = stripe_client.v1.customers.create()
    with pytest.raises(stripe.CardError):
        stripe_client.v1.charges.create(params={"amount": 700, "currency": "usd", "customer": customer.id})


def test_payment_intent_list_by_customer_and_search(stripe_client):
    a = stripe_client.v1.customers.create()
    b = stripe_client.v1.customers.create()
    mine = _pi(stripe_client, "pm_card_visa", customer=a.id, metadata={"order": "a1"})
    _pi(stripe_client, "pm_card_visa", customer=b.id)
    assert [p.id for p in stripe_client.v1.payment_intents.list(params={"customer": a.id}).data] == [mine.id]
    found = stripe_client.v1.payment_intents.search(params={"query": "metadata['order']:'a1'"})
    assert [p.id for p in found.data] == [mine.id]
    found = stripe_client.v1.payment_intents.search(params={"query": "status:'succeeded' AND amount>1999"})
    assert len(found.data) == 2


def test_customer_create_with_a_magic_payment_method_as_default(stripe_client):
    customer = stripe_client.v1.customers.create(params={
        "email": "sub@example.com", "payment_method": "pm_card_visa",
        "invoice_settings": {"default_payment_method": "pm_card_visa"}})
    default = customer.invoice_settings.default_payment_method
    assert default.startswith("pm_") and default != "pm_card_visa"
    pm = stripe_client.v1.payment_methods.retrieve(default)
    assert pm.customer == customer.id and pm.card.last4 == "4242"
    with pytest.raises(stripe.CardError):
        stripe_client.v1.customers.create(params={"payment_method": "pm_card_chargeDeclined"})
    assert len(stripe_client.v1.customers.list().data) == 1  # the failed create left nothing behind


def test_balance_transactions_carry_fees_for_captures_and_refunds(stripe_client):
    pi = _pi(stripe_client, "pm_card_visa")
    charge = stripe_client.v1.charges.retrieve(pi.latest_charge, params={"expand": ["balance_transaction"]})
    txn = charge.balance_transaction
    assert txn.object == "balance_transaction" and txn.amount == 2000 and txn.fee == 88 and txn.net == 1912
    assert txn.source == charge.id and txn.type == "charge"
    refund = stripe_client.v1.refunds.create(params={"charge": charge.id, "amount": 500})
    back = stripe_client.v1.balance_transactions.retrieve(refund.balance_transaction)
    assert back.amount == -500 and back.type == "refund" and back.source == refund.id
    listed = stripe_client.v1.balance_transactions.list(params={"type": "charge"})
    assert [t.id for t in listed.data] == [txn.id]
    uncaptured = _pi(stripe_client, "pm_card_visa", capture_method="manual")
    assert stripe_client.v1.charges.retrieve(uncaptured.latest_charge).balance_transaction is None


def test_manual_confirmation_returns_to_requires_confirmation_after_3ds(stripe_client, emulator):
    pi = _pi(stripe_client, "pm_card_authenticationRequired", confirmation_method="manual")
    assert pi.status == "requires_action"
    emu = emulator.emulator
    with emu.transaction():
        ctx = RequestContext(emu, emu.api_version)
        after = intents.complete_authentication(ctx, ctx.get("payment_intent", pi.id), success=True)
    assert after["status"] == "requires_confirmation"
    assert stripe_client.v1.payment_intents.confirm(pi.id).status == "succeeded"


def test_created_tokens_work_like_test_tokens(stripe_client):
    token = stripe_client.v1.tokens.create(params={"card": {"number": "4000000000009995", "exp_month": 1,
                                                            "exp_year": 2031, "cvc": "314"}})
    assert token.id.startswith("tok_") and token.card.last4 == "9995" and token.card.brand == "Visa"
    with pytest.raises(stripe.CardError) as caught:
        stripe_client.v1.charges.create(params={"amount": 500, "currency": "usd", "source": token.id})
    assert caught.value.error.decline_code == "insufficient_funds"
    pm = stripe_client.v1.payment_methods.create(params={"type": "card", "card": {"token": "tok_mastercard"}})
    assert pm.card.brand == "mastercard"
