"""What older integrations still call, through stripe-python: card sources and direct charges, Plans, Tax Rates,
customer Tax IDs, Payouts and the balance; each with Stripe's fields and errors."""

from __future__ import annotations

import httpx
import pytest
import stripe

DAY = 86400

# Field names of Stripe's published example objects (its OpenAPI fixtures).
REFERENCE_FIELDS = {
    "card": "address_city address_country address_line1 address_line1_check address_line2 address_state address_zip "
            "address_zip_check brand country customer cvc_check dynamic_last4 exp_month exp_year fingerprint funding "
            "id last4 metadata name object regulated_status tokenization_method",
    "plan": "active amount amount_decimal billing_scheme created currency id interval interval_count livemode "
            "metadata meter nickname object product tiers_mode transform_usage trial_period_days usage_type",
    "tax_rate": "active country created description display_name effective_percentage flat_amount id inclusive "
                "jurisdiction jurisdiction_level livemode metadata object percentage rate_type state tax_type",
    "tax_id": "country created customer customer_account id livemode object owner type value verification",
    "payout": "amount application_fee application_fee_amount arrival_date automatic balance_transaction created "
              "currency description destination failure_balance_transaction failure_code failure_message id "
              "livemode metadata method object original_payout payout_method reconciliation_status reversed_by "
              "source_type statement_descriptor status trace_id type",
}


def _fields(obj: stripe.StripeObject) -> set[str]:
    return set(obj.to_dict())


def _advance(emulator, seconds: int) -> None:
    httpx.post(f"{emulator.url}/_emulator/clock", json={"advance": seconds}, headers=emulator.control_headers,
               timeout=10).raise_for_status()


def test_card_sources_and_direct_charges_with_capture(stripe_client):
    customer = stripe_client.v1.customers.create(params={"email": "old@example.com"})
    card = stripe_client.v1.customers.payment_sources.create(customer.id, params={"source": "tok_visa"})
    assert (card.object, card.brand, card.last4, card.customer) == ("card", "Visa", "4242", customer.id)
    assert _fields(card) == set(REFERENCE_FIELDS["card"].split())
    assert stripe_client.v1.customers.retrieve(customer.id).default_source == card.id
    token = stripe_client.v1.tokens.create(params={"card": {"number": "5555555555554444", "exp_month": 4,
                                                            "exp_year": 2031, "cvc": "314"}})
    second = stripe_client.v1.customers.payment_sources.create(customer.id, params={"source": token.id})
    assert (second.brand, second.last4) == ("MasterCard", "4444")
    with pytest.raises(stripe.InvalidRequestError) as reused:
        stripe_client.v1.customers.payment_sources.create(customer.id, params={"source": token.id})
    assert reused.value.code == "token_already_used"
    with pytest.raises(stripe.CardError) as declined:  # cards are checked when added, as on Stripe
        stripe_client.v1.customers.payment_sources.create(customer.id, params={"source": "tok_chargeDeclined"})
    assert declined.value.code == "card_declined"
    listed = stripe_client.v1.customers.payment_sources.list(customer.id, params={"object": "card"}).data
    assert [s.id for s in listed] == [second.id, card.id]

    held = stripe_client.v1.charges.create(params={"amount": 2000, "currency": "usd", "customer": customer.id,
                                                   "capture": False})  # the default source
    assert (held.captured, held.amount_captured, held.payment_method, held.source.id) == (False, 0, card.id, card.id)
    captured = stripe_client.v1.charges.capture(held.id, params={"amount": 1500})
    assert (captured.captured, captured.amount_captured, captured.amount_refunded) == (True, 1500, 500)
    with pytest.raises(stripe.InvalidRequestError) as twice:
        stripe_client.v1.charges.capture(held.id)
    assert twice.value.code == "charge_already_captured"
    by_token = stripe_client.v1.charges.create(params={"amount": 700, "currency": "usd", "source": "tok_mastercard"})
    assert by_token.paid and by_token.payment_method_details.card.brand == "mastercard"
    stranger = stripe_client.v1.customers.create(params={})
    with pytest.raises(stripe.InvalidRequestError) as not_theirs:
        stripe_client.v1.charges.create(params={"amount": 700, "currency": "usd", "customer": stranger.id,
                                                "source": card.id})
    assert not_theirs.value.http_status == 404 and not_theirs.value.param == "source"

    gone = stripe_client.v1.customers.payment_sources.delete(customer.id, card.id)
    assert gone.deleted is True
    assert stripe_client.v1.customers.retrieve(customer.id).default_source == second.id
    types = [e.type for e in stripe_client.v1.events.list(params={"limit": 50}).data]
    assert types.count("customer.source.created") == 2 and "customer.source.deleted" in types
    assert "charge.captured" in types


def test_customer_create_and_update_take_a_card_source(stripe_client):
    customer = stripe_client.v1.customers.create(params={"email": "old@example.com", "source": "tok_visa"})
    first = customer.default_source
    assert first.startswith("card_")
    card = stripe_client.v1.customers.payment_sources.retrieve(customer.id, first)
    assert (card.brand, card.last4, card.customer) == ("Visa", "4242", customer.id)
    created = [e.type for e in reversed(stripe_client.v1.events.list(params={"limit": 10}).data)]
    assert created == ["customer.created", "customer.source.created"]

    token = stripe_client.v1.tokens.create(params={"card": {"number": "5555555555554444", "exp_month": 4,
                                                            "exp_year": 2031, "cvc": "314"}})
    updated = stripe_client.v1.customers.update(customer.id, params={"source": token.id})
    assert updated.default_source not in (None, first)
    # the new card replaces the old default, which is deleted (Stripe's documented behaviour of ``source``)
    listed = stripe_client.v1.customers.payment_sources.list(customer.id, params={"object": "card"}).data
    assert [(c.id, c.last4) for c in listed] == [(updated.default_source, "4444")]
    with pytest.raises(stripe.InvalidRequestError) as gone:
        stripe_client.v1.customers.payment_sources.retrieve(customer.id, first)
    assert gone.value.http_status == 404
    types = [e.type for e in reversed(stripe_client.v1.events.list(params={"limit": 10}).data)]
    assert types[2:] == ["customer.source.created", "customer.source.deleted", "customer.updated"]

    # the sources endpoint's errors, and nothing is kept when they happen
    with pytest.raises(stripe.InvalidRequestError) as reused:
        stripe_client.v1.customers.update(customer.id, params={"source": token.id})
    assert (reused.value.code, reused.value.param) == ("token_already_used", "source")
    with pytest.raises(stripe.InvalidRequestError) as unknown:
        stripe_client.v1.customers.create(params={"email": "x@example.com", "source": "tok_nope"})
    assert (unknown.value.http_status, unknown.value.code, unknown.value.param) == (404, "resource_missing", "source")
    with pytest.raises(stripe.CardError) as declined:
        stripe_client.v1.customers.create(params={"email": "declined@example.com", "source": "tok_chargeDeclined"})
    assert (declined.value.code, declined.value.error.decline_code) == ("card_declined", "generic_decline")
    assert stripe_client.v1.customers.list(params={"email": "declined@example.com"}).data == []
    with pytest.raises(stripe.CardError):
        stripe_client.v1.customers.update(customer.id, params={"source": "tok_chargeDeclined"})
    assert stripe_client.v1.customers.retrieve(customer.id).default_source == updated.default_source


def test_plans_are_recurring_prices(stripe_client):
    plan = stripe_client.v1.plans.create(params={"id": "gold-monthly", "amount": 900, "currency": "usd",
                                                 "interval": "month", "product": {"name": "Gold"}})
    assert (plan.id, plan.amount, plan.interval, plan.interval_count, plan.usage_type) == (
        "gold-monthly", 900, "month", 1, "licensed")
    assert _fields(plan) == set(REFERENCE_FIELDS["plan"].split())
    price = stripe_client.v1.prices.retrieve("gold-monthly")
    assert (price.unit_amount, price.recurring.interval, price.product) == (900, "month", plan.product)
    assert stripe_client.v1.plans.update(plan.id, params={"nickname": "Gold"}).nickname == "Gold"
    assert [p.id for p in stripe_client.v1.plans.list(params={"product": plan.product}).data] == ["gold-monthly"]
    with pytest.raises(stripe.InvalidRequestError) as again:
        stripe_client.v1.plans.create(params={"id": "gold-monthly", "amount": 1, "currency": "usd",
                                              "interval": "month", "product": plan.product})
    assert again.value.code == "resource_already_exists"
    with pytest.raises(stripe.InvalidRequestError) as bad_interval:
        stripe_client.v1.plans.create(params={"amount": 1, "currency": "usd", "interval": "fortnight",
                                              "product": plan.product})
    assert bad_interval.value.param == "interval"
    assert stripe_client.v1.plans.delete(plan.id).deleted is True
    with pytest.raises(stripe.InvalidRequestError) as missing:
        stripe_client.v1.plans.retrieve(plan.id)
    assert missing.value.http_status == 404
    assert [e.type for e in stripe_client.v1.events.list(params={"type": "plan.*"}).data] == [
        "plan.deleted", "plan.updated", "plan.created"]


def test_tax_rates_and_customer_tax_ids(stripe_client):
    rate = stripe_client.v1.tax_rates.create(params={"display_name": "VAT", "percentage": "19", "inclusive": False,
                                                     "country": "DE", "tax_type": "vat"})
    assert (rate.percentage, rate.inclusive, rate.active) == (19, False, True)
    assert _fields(rate) == set(REFERENCE_FIELDS["tax_rate"].split())
    assert stripe_client.v1.tax_rates.update(rate.id, params={"active": False}).active is False
    with pytest.raises(stripe.InvalidRequestError) as fixed:
        stripe_client.v1.tax_rates.update(rate.id, params={"percentage": "20"})
    assert fixed.value.param == "percentage"
    assert stripe_client.v1.tax_rates.retrieve(rate.id).percentage == 19
    assert stripe_client.v1.tax_rates.list(params={"active": True}).data == []

    customer = stripe_client.v1.customers.create(params={"name": "Ada GmbH"})
    vat = stripe_client.v1.customers.tax_ids.create(customer.id, params={"type": "eu_vat", "value": "DE123456789"})
    assert (vat.country, vat.value, vat.verification.status, vat.owner.customer) == (
        "DE", "DE123456789", "pending", customer.id)
    assert _fields(vat) == set(REFERENCE_FIELDS["tax_id"].split())
    ein = stripe_client.v1.customers.tax_ids.create(customer.id, params={"type": "us_ein", "value": "12-3456789"})
    assert (ein.country, ein.verification.status) == ("US", "unavailable")
    with pytest.raises(stripe.InvalidRequestError) as invalid_value:
        stripe_client.v1.customers.tax_ids.create(customer.id, params={"type": "eu_vat", "value": "123"})
    assert (invalid_value.value.code, invalid_value.value.param) == ("tax_id_invalid", "value")
    with pytest.raises(stripe.InvalidRequestError) as bad_type:
        stripe_client.v1.customers.tax_ids.create(customer.id, params={"type": "moon_vat", "value": "1"})
    assert bad_type.value.param == "type"
    stripe_client.v1.customers.tax_ids.delete(customer.id, ein.id)
    assert [t.id for t in stripe_client.v1.customers.tax_ids.list(customer.id).data] == [vat.id]


def test_payouts_come_from_the_available_balance(stripe_client, emulator):
    stripe_client.v1.payment_intents.create(params={"amount": 10000, "currency": "usd",
                                                    "payment_method": "pm_card_visa", "confirm": True})
    balance = stripe_client.v1.balance.retrieve()
    assert (balance.available[0].amount, balance.pending[0].amount) == (0, 10000 - 320)  # 2.9 % + 30 ¢
    with pytest.raises(stripe.InvalidRequestError) as early:
        stripe_client.v1.payouts.create(params={"amount": 5000, "currency": "usd"})
    assert early.value.code == "balance_insufficient"
    assert stripe_client.v1.payouts.list().data == []

    _advance(emulator, 2 * DAY)  # funds become available
    payout = stripe_client.v1.payouts.create(params={"amount": 5000, "currency": "usd"})
    assert (payout.status, payout.amount) == ("pending", 5000)
    assert _fields(payout) == set(REFERENCE_FIELDS["payout"].split())
    assert stripe_client.v1.balance.retrieve().available[0].amount == 10000 - 320 - 5000
    canceled = stripe_client.v1.payouts.cancel(payout.id)
    assert canceled.status == "canceled"
    assert stripe_client.v1.balance.retrieve().available[0].amount == 10000 - 320
    second = stripe_client.v1.payouts.create(params={"amount": 1000, "currency": "usd"})
    _advance(emulator, DAY)
    assert stripe_client.v1.payouts.retrieve(second.id).status == "paid"
    with pytest.raises(stripe.InvalidRequestError) as late:
        stripe_client.v1.payouts.cancel(second.id)
    assert late.value.param == "payout"
    assert [p.id for p in stripe_client.v1.payouts.list(params={"status": "paid"}).data] == [second.id]
