"""The account's own clock (``POST /_emulator/clock``): moving it forward runs the billing that falls due on the way
for customers on no test clock, at its own times and in Stripe's order; moving it back or freezing it runs nothing;
objects on a test clock keep to their clock."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
from test_billing import DAY, _customer, _month_after, _price, _renewed_after_trial, _types_since

T0 = int(datetime(2026, 3, 2, 9, tzinfo=UTC).timestamp())


def _clock(emulator, **body) -> dict:
    reply = httpx.post(f"{emulator.url}/_emulator/clock", headers=emulator.control_headers, json=body, timeout=30)
    reply.raise_for_status()
    return reply.json()


def test_advancing_the_account_clock_ends_a_trial_and_renews_at_their_own_times(stripe_client, emulator):
    _clock(emulator, set=T0, freeze="true")
    customer = _customer(stripe_client)  # no test clock
    sub = stripe_client.v1.subscriptions.create(params={"customer": customer.id,
                                                        "items": [{"price": _price(stripe_client, 2000).id}],
                                                        "trial_period_days": 14})
    assert (sub.status, sub.trial_end, sub.test_clock) == ("trialing", T0 + 14 * DAY, None)
    marker = stripe_client.v1.events.list(params={"limit": 1}).data[0].id

    assert _clock(emulator, advance=15 * DAY) == {"now": T0 + 15 * DAY, "frozen": True, "offset": 0.0}
    # the test clock's sequence for the same subscription, without the clock's own events
    assert _types_since(stripe_client, marker) == [
        "invoice.upcoming", "customer.subscription.trial_will_end", "invoice.created",
        "customer.subscription.updated", "invoice.finalized", "payment_intent.created", "charge.succeeded",
        "payment_intent.succeeded", "invoice_payment.paid", "invoice.paid", "invoice.payment_succeeded"]
    events = {e.type: e for e in stripe_client.v1.events.list(params={"limit": 20, "ending_before": marker}).data}
    # each step happened at its own time, not at the time the clock was moved to
    assert events["customer.subscription.trial_will_end"].created == T0 + 11 * DAY
    assert events["invoice.created"].created == T0 + 14 * DAY
    assert events["invoice.paid"].created == T0 + 14 * DAY + 3600  # the draft waited an hour
    item, _ = _renewed_after_trial(stripe_client, sub.id, T0 + 14 * DAY, 2000, None)

    # set to a later time: exactly one more renewal on the way
    _clock(emulator, set=item.current_period_end + 7200, freeze="true")
    paid = stripe_client.v1.invoices.list(params={"subscription": sub.id, "status": "paid"}).data
    assert [i.billing_reason for i in paid] == ["subscription_cycle", "subscription_cycle", "subscription_create"]
    assert paid[0].created == item.current_period_end


def test_moving_it_back_or_freezing_runs_nothing_and_test_clock_objects_keep_to_their_clock(stripe_client, emulator):
    _clock(emulator, set=T0, freeze="true")
    price = _price(stripe_client, 1000)
    plain = stripe_client.v1.subscriptions.create(params={"customer": _customer(stripe_client).id,
                                                          "items": [{"price": price.id}]})
    clock = stripe_client.v1.test_helpers.test_clocks.create(params={"frozen_time": T0})
    clocked = stripe_client.v1.subscriptions.create(params={"customer": _customer(stripe_client, clock).id,
                                                            "items": [{"price": price.id}]})
    marker = stripe_client.v1.events.list(params={"limit": 1}).data[0].id

    _clock(emulator, set=T0 - 40 * DAY, freeze="true")  # back
    _clock(emulator, freeze="false")
    _clock(emulator, freeze="true")
    assert _types_since(stripe_client, marker) == []

    _clock(emulator, set=T0 + 40 * DAY, freeze="true")  # forward again, past the first renewal
    renewed = stripe_client.v1.subscriptions.retrieve(plain.id)["items"].data[0]
    assert renewed.current_period_start == _month_after(T0)
    untouched = stripe_client.v1.subscriptions.retrieve(clocked.id)["items"].data[0]
    assert untouched.current_period_start == T0  # its test clock has not moved
    assert [i.billing_reason for i in stripe_client.v1.invoices.list(params={"subscription": clocked.id}).data] == [
        "subscription_create"]
