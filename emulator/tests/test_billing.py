"""Billing through stripe-python: subscriptions with trials, anchors, prorations and payment behaviours, test
clocks (the event sequence of an advance), metered usage, schedules, previews, a version difference, bad input."""

from __future__ import annotations

import calendar
from datetime import UTC, datetime

import pytest
import stripe

DAY = 86400
T0 = int(datetime(2026, 1, 10, 12, tzinfo=UTC).timestamp())
OLD = {"stripe_version": "2024-06-20"}
# Field names of Stripe's published example objects (the OpenAPI fixtures) that the emulator renders.
SUBSCRIPTION_FIELDS = {
    "application", "application_fee_percent", "automatic_tax", "billing_cycle_anchor", "billing_cycle_anchor_config",
    "billing_mode", "billing_thresholds", "cancel_at", "cancel_at_period_end", "canceled_at", "cancellation_details",
    "collection_method", "created", "currency", "customer", "customer_account", "days_until_due",
    "default_payment_method", "default_source", "default_tax_rates", "description", "discounts", "ended_at", "id",
    "invoice_settings", "items", "latest_invoice", "livemode", "metadata", "next_pending_invoice_item_invoice",
    "object", "on_behalf_of", "pause_collection", "payment_settings", "pending_invoice_item_interval",
    "pending_setup_intent", "pending_update", "schedule", "start_date", "status", "test_clock", "transfer_data",
    "trial_end", "trial_settings", "trial_start"}
ITEM_FIELDS = {"billing_thresholds", "created", "current_period_end", "current_period_start", "discounts", "id",
               "metadata", "object", "plan", "price", "quantity", "subscription", "tax_rates"}
CLOCK_FIELDS = {"created", "deletes_after", "frozen_time", "id", "livemode", "name", "object", "status",
                "status_details"}
METER_FIELDS = {"created", "customer_mapping", "default_aggregation", "display_name", "event_name",
                "event_time_window", "id", "livemode", "object", "status", "status_transitions", "updated",
                "value_settings"}
METER_EVENT_FIELDS = {"created", "event_name", "identifier", "livemode", "object", "payload", "timestamp"}
SCHEDULE_FIELDS = {"application", "billing_mode", "canceled_at", "completed_at", "created", "current_phase",
                   "customer", "customer_account", "default_settings", "end_behavior", "id", "livemode", "metadata",
                   "object", "phases", "released_at", "released_subscription", "status", "subscription",
                   "test_clock"}


def _price(client, amount, interval="month", name="Pro", **recurring):
    return client.v1.prices.create(params={"currency": "usd", "unit_amount": amount, "product_data": {"name": name},
                                           "recurring": {"interval": interval, **recurring}})


def _customer(client, clock=None, pm="pm_card_visa"):
    params = {"payment_method": pm, "invoice_settings": {"default_payment_method": pm}}
    if clock:
        params["test_clock"] = clock.id
    return client.v1.customers.create(params=params)


def _types_since(client, marker):
    """Event types after the event ``marker`` (oldest first)."""
    events = client.v1.events.list(params={"limit": 100, "ending_before": marker}).data if marker else \
        client.v1.events.list(params={"limit": 100}).data
    return [e.type for e in reversed(events)]


def _month_after(moment):
    when = datetime.fromtimestamp(moment, UTC)
    year, month = (when.year + 1, 1) if when.month == 12 else (when.year, when.month + 1)
    return int(when.replace(year=year, month=month, day=min(when.day, calendar.monthrange(year, month)[1])).timestamp())


def _renewed_after_trial(client, sub_id, trial_end, amount, clock_id):
    """Asserts the subscription is active on its first monthly period since ``trial_end``, its latest invoice that
    period's, paid; returns the item and that invoice."""
    sub = client.v1.subscriptions.retrieve(sub_id, params={"expand": ["latest_invoice"]})
    item = sub["items"].data[0]
    assert sub.status == "active" and item.current_period_start == trial_end
    assert item.current_period_end == _month_after(trial_end)
    invoice = sub.latest_invoice
    assert (invoice.status, invoice.amount_paid, invoice.billing_reason, invoice.test_clock) == (
        "paid", amount, "subscription_cycle", clock_id)
    return item, invoice


def test_trial_then_monthly_on_a_test_clock_emits_stripes_sequence(stripe_client):
    clock = stripe_client.v1.test_helpers.test_clocks.create(params={"frozen_time": T0, "name": "trial"})
    assert set(clock.to_dict()) == CLOCK_FIELDS and clock.status == "ready"
    customer = _customer(stripe_client, clock)
    price = _price(stripe_client, 2000)
    sub = stripe_client.v1.subscriptions.create(params={"customer": customer.id, "items": [{"price": price.id}],
                                                        "trial_period_days": 14})
    assert set(sub.to_dict()) == SUBSCRIPTION_FIELDS and set(sub["items"].data[0].to_dict()) == ITEM_FIELDS
    assert (sub.status, sub.trial_end, sub.test_clock, sub.start_date) == ("trialing", T0 + 14 * DAY, clock.id, T0)
    first = stripe_client.v1.invoices.retrieve(sub.latest_invoice)
    assert (first.status, first.total, first.billing_reason) == ("paid", 0, "subscription_create")
    marker = stripe_client.v1.events.list(params={"limit": 1}).data[0].id

    answer = stripe_client.v1.test_helpers.test_clocks.advance(clock.id, params={"frozen_time": T0 + 15 * DAY})
    assert answer.status == "advancing" and answer.status_details.advancing.target_frozen_time == T0 + 15 * DAY
    ready = stripe_client.v1.test_helpers.test_clocks.retrieve(clock.id)
    assert (ready.status, ready.frozen_time) == ("ready", T0 + 15 * DAY)
    assert _types_since(stripe_client, marker) == [  # the renewal notice 7 days ahead, the trial's 3 days ahead
        "test_helpers.test_clock.advancing", "invoice.upcoming", "customer.subscription.trial_will_end",
        "invoice.created",
        "customer.subscription.updated", "invoice.finalized", "payment_intent.created", "charge.succeeded",
        "payment_intent.succeeded", "invoice_payment.paid", "invoice.paid", "invoice.payment_succeeded",
        "test_helpers.test_clock.ready"]
    item, invoice = _renewed_after_trial(stripe_client, sub.id, T0 + 14 * DAY, 2000, clock.id)
    assert invoice.status_transitions.finalized_at == T0 + 14 * DAY + 3600  # the draft waited an hour
    # one more month: exactly one more paid renewal
    stripe_client.v1.test_helpers.test_clocks.advance(clock.id, params={"frozen_time": item.current_period_end + 7200})
    paid = stripe_client.v1.invoices.list(params={"subscription": sub.id, "status": "paid"}).data
    assert [i.billing_reason for i in paid] == ["subscription_cycle", "subscription_cycle", "subscription_create"]


def test_payment_behaviors_with_a_declining_card(stripe_client):
    price = _price(stripe_client, 1500)
    bare = stripe_client.v1.customers.create()
    with pytest.raises(stripe.InvalidRequestError) as err:
        stripe_client.v1.subscriptions.create(params={"customer": bare.id, "items": [{"price": price.id}]})
    assert "no attached payment source or default payment method" in err.value.user_message
    assert stripe_client.v1.subscriptions.list(params={"customer": bare.id}).data == []
    # default_incomplete: incomplete, the invoice open with an unconfirmed PaymentIntent; paying it activates
    sub = stripe_client.v1.subscriptions.create(params={
        "customer": bare.id, "items": [{"price": price.id}], "payment_behavior": "default_incomplete",
        "expand": ["latest_invoice.payments"]})
    assert sub.status == "incomplete" and sub.latest_invoice.status == "open"
    pi_id = sub.latest_invoice.payments.data[0].payment.payment_intent
    pi = stripe_client.v1.payment_intents.retrieve(pi_id)
    assert (pi.status, pi.amount, pi.customer) == ("requires_payment_method", 1500, bare.id)
    stripe_client.v1.payment_intents.confirm(pi_id, params={"payment_method": "pm_card_visa"})
    assert stripe_client.v1.subscriptions.retrieve(sub.id).status == "active"
    assert stripe_client.v1.invoices.retrieve(sub.latest_invoice.id).status == "paid"
    # allow_incomplete (the default) with a card that attaches but declines: incomplete, invoice open and unpaid
    declining = _customer(stripe_client, pm="pm_card_chargeCustomerFail")
    incomplete = stripe_client.v1.subscriptions.create(params={"customer": declining.id,
                                                               "items": [{"price": price.id}]})
    invoice = stripe_client.v1.invoices.retrieve(incomplete.latest_invoice)
    assert (incomplete.status, invoice.status, invoice.amount_paid, invoice.attempt_count) == (
        "incomplete", "open", 0, 1)
    # error_if_incomplete: the card error, and no subscription
    before = len(stripe_client.v1.subscriptions.list(params={"status": "all"}).data)
    with pytest.raises(stripe.CardError) as card_err:
        stripe_client.v1.subscriptions.create(params={"customer": declining.id, "items": [{"price": price.id}],
                                                      "payment_behavior": "error_if_incomplete"})
    assert card_err.value.http_status == 402 and card_err.value.code == "card_declined"
    assert len(stripe_client.v1.subscriptions.list(params={"status": "all"}).data) == before


def test_anchor_proration_upgrade_and_preview(stripe_client):
    clock = stripe_client.v1.test_helpers.test_clocks.create(params={"frozen_time": T0})
    customer = _customer(stripe_client, clock)
    basic, pro = _price(stripe_client, 1000, name="Basic"), _price(stripe_client, 3000, name="Pro")
    sub = stripe_client.v1.subscriptions.create(params={
        "customer": customer.id, "items": [{"price": basic.id}], "billing_cycle_anchor_config": {"day_of_month": 1}})
    anchor = int(datetime(2026, 2, 1, 12, tzinfo=UTC).timestamp())
    assert sub.billing_cycle_anchor == anchor and sub["items"].data[0].current_period_end == anchor
    first = stripe_client.v1.invoices.retrieve(sub.latest_invoice)
    january = anchor - int(datetime(2026, 1, 1, 12, tzinfo=UTC).timestamp())
    assert first.total == round(1000 * (anchor - T0) / january) and first.lines.data[0].parent.\
        subscription_item_details.proration is True
    # halfway through February's period: a preview of the upgrade, then the upgrade invoiced at once
    middle = anchor + 14 * DAY
    stripe_client.v1.test_helpers.test_clocks.advance(clock.id, params={"frozen_time": middle})
    item = stripe_client.v1.subscriptions.retrieve(sub.id)["items"].data[0]
    change = {"items": [{"id": item.id, "price": pro.id}], "proration_behavior": "always_invoice"}
    preview = stripe_client.v1.invoices.create_preview(params={"subscription": sub.id,
                                                               "subscription_details": change})
    share = (item.current_period_end - middle) / (item.current_period_end - item.current_period_start)
    expected = [-round(1000 * share), round(3000 * share)]
    assert [line.amount for line in preview.lines.data] == expected and preview.total == sum(expected)
    assert stripe_client.v1.invoices.list(params={"subscription": sub.id}).data[0].id != preview.id
    updated = stripe_client.v1.subscriptions.update(sub.id, params=change)
    invoice = stripe_client.v1.invoices.retrieve(updated.latest_invoice)
    assert (invoice.billing_reason, invoice.status, invoice.total) == ("subscription_update", "paid", sum(expected))
    assert [line.description.split(" after ")[0] for line in invoice.lines.data] == [
        "Unused time on Basic", "Remaining time on Pro"]
    # create_prorations instead: nothing billed now, the lines wait for the renewal (shown by the preview)
    stripe_client.v1.subscriptions.update(sub.id, params={"items": [{"id": item.id, "quantity": 2}]})
    assert stripe_client.v1.subscriptions.retrieve(sub.id).latest_invoice == invoice.id
    renewal = stripe_client.v1.invoices.create_preview(params={"customer": customer.id})
    assert renewal.billing_reason == "subscription_cycle"
    assert [line.parent.subscription_item_details.proration for line in renewal.lines.data] == [True, True, False]
    assert renewal.lines.data[-1].amount == 6000


def test_metered_usage_is_billed_in_arrears(stripe_client):
    clock = stripe_client.v1.test_helpers.test_clocks.create(params={"frozen_time": T0})
    customer = _customer(stripe_client, clock)
    meter = stripe_client.v1.billing.meters.create(params={
        "display_name": "API calls", "event_name": "api_call", "default_aggregation": {"formula": "sum"},
        "customer_mapping": {"event_payload_key": "stripe_customer_id", "type": "by_id"}})
    assert set(meter.to_dict()) == METER_FIELDS
    price = _price(stripe_client, 5, name="Calls", usage_type="metered", meter=meter.id)
    sub = stripe_client.v1.subscriptions.create(params={"customer": customer.id, "items": [{"price": price.id}]})
    assert sub.status == "active" and sub["items"].data[0].quantity is None
    stripe_client.v1.test_helpers.test_clocks.advance(clock.id, params={"frozen_time": T0 + 3 * DAY})
    for value, offset in (("120", DAY), ("30", 2 * DAY)):  # events may be dated back into the period
        event = stripe_client.v1.billing.meter_events.create(params={
            "event_name": "api_call", "payload": {"stripe_customer_id": customer.id, "value": value},
            "timestamp": T0 + offset})
    assert set(event.to_dict()) == METER_EVENT_FIELDS
    stripe_client.v1.test_helpers.test_clocks.advance(clock.id, params={"frozen_time": _month_after(T0) + 7200})
    stripe_client.v1.billing.meter_events.create(params={  # the next period's usage waits for the next invoice
        "event_name": "api_call", "payload": {"stripe_customer_id": customer.id, "value": "7"}})
    invoice = stripe_client.v1.invoices.retrieve(stripe_client.v1.subscriptions.retrieve(sub.id).latest_invoice)
    line = invoice.lines.data[0]
    assert (invoice.status, line.quantity, line.amount, line.period.start, line.period.end) == (
        "paid", 150, 750, T0, _month_after(T0))
    summary = stripe_client.v1.billing.meters.event_summaries.list(meter.id, params={
        "customer": customer.id, "start_time": T0, "end_time": T0 + 40 * DAY})
    assert summary.data[0].aggregated_value == 157


def test_schedule_phases_then_cancel(stripe_client):
    clock = stripe_client.v1.test_helpers.test_clocks.create(params={"frozen_time": T0})
    customer = _customer(stripe_client, clock)
    intro, full = _price(stripe_client, 500, name="Intro"), _price(stripe_client, 2500, name="Full")
    sched = stripe_client.v1.subscription_schedules.create(params={
        "customer": customer.id, "start_date": "now", "end_behavior": "cancel",
        "phases": [{"items": [{"price": intro.id}], "iterations": 1}, {"items": [{"plan": full.id}],  # plan = price
                                                                       "iterations": 1}]})
    assert set(sched.to_dict()) == SCHEDULE_FIELDS
    assert sched.status == "active" and [p.start_date for p in sched.phases] == [T0, _month_after(T0)]
    sub = stripe_client.v1.subscriptions.retrieve(sched.subscription)
    assert sub.schedule == sched.id and sub["items"].data[0].price.id == intro.id
    stripe_client.v1.test_helpers.test_clocks.advance(clock.id, params={"frozen_time": _month_after(T0) + 7200})
    sub = stripe_client.v1.subscriptions.retrieve(sub.id, params={"expand": ["latest_invoice"]})
    assert sub["items"].data[0].price.id == full.id and sub.latest_invoice.amount_paid == 2500
    stripe_client.v1.test_helpers.test_clocks.advance(clock.id, params={
        "frozen_time": _month_after(_month_after(T0)) + 60})
    assert stripe_client.v1.subscriptions.retrieve(sub.id).status == "canceled"
    assert stripe_client.v1.subscription_schedules.retrieve(sched.id).status == "completed"
    # from_subscription, then release: the subscription keeps running on its own
    other = stripe_client.v1.subscriptions.create(params={"customer": customer.id, "items": [{"price": full.id}]})
    wrapped = stripe_client.v1.subscription_schedules.create(params={"from_subscription": other.id})
    assert wrapped.phases[0].items[0].price == full.id and wrapped.subscription == other.id
    released = stripe_client.v1.subscription_schedules.release(wrapped.id)
    assert released.status == "released" and released.released_subscription == other.id
    assert stripe_client.v1.subscriptions.retrieve(other.id).schedule is None


def test_upcoming_invoice_exists_only_before_basil(stripe_client):
    customer = _customer(stripe_client)
    sub = stripe_client.v1.subscriptions.create(params={"customer": customer.id,
                                                        "items": [{"price": _price(stripe_client, 900).id}]},
                                                options=OLD)
    assert "current_period_end" in sub and "current_period_end" not in sub["items"].data[0]
    plan = sub["items"].data[0].plan  # a recurring price is also a plan, named on items and (before basil) lines
    assert (plan.object, plan.id, plan.amount) == ("plan", sub["items"].data[0].price.id, 900)
    line = stripe_client.v1.invoices.retrieve(sub.latest_invoice, options=OLD).lines.data[0]
    assert (line.type, line.plan.id) == ("subscription", plan.id)
    upcoming = stripe_client.raw_request("get", "/v1/invoices/upcoming", customer=customer.id,
                                         stripe_version=OLD["stripe_version"])
    body = stripe_client.deserialize(upcoming, api_mode="V1")
    assert body.amount_due == 900 and body.subscription == sub.id and body.period_start == sub.current_period_end
    with pytest.raises(stripe.InvalidRequestError) as err:
        stripe_client.raw_request("get", "/v1/invoices/upcoming", customer=customer.id)
    assert err.value.http_status == 400 and "create_preview" in err.value.user_message


def test_bad_input_is_answered_like_stripe_and_changes_nothing(stripe_client):
    clock = stripe_client.v1.test_helpers.test_clocks.create(params={"frozen_time": T0})
    customer = _customer(stripe_client, clock)
    sub = stripe_client.v1.subscriptions.create(params={"customer": customer.id,
                                                        "items": [{"price": _price(stripe_client, 700).id}]})
    count = len(stripe_client.v1.events.list(params={"limit": 100}).data)
    cases = [
        (lambda: stripe_client.v1.test_helpers.test_clocks.advance(clock.id, params={"frozen_time": T0 - 60}),
         "frozen_time", "can only be advanced forward"),
        (lambda: stripe_client.v1.test_helpers.test_clocks.advance(clock.id, params={"frozen_time": T0 + 90 * DAY}),
         "frozen_time", "at most two intervals"),
        (lambda: stripe_client.v1.billing.meter_events.create(params={
            "event_name": "nope", "payload": {"stripe_customer_id": customer.id, "value": "1"}}),
         "event_name", "No active meter"),
        (lambda: stripe_client.v1.subscriptions.update(sub.id, params={"proration_behavior": "sometimes"}),
         "proration_behavior", "Invalid proration_behavior: must be one of always_invoice, create_prorations, or none"),
        (lambda: stripe_client.v1.subscriptions.create(params={"customer": customer.id, "items": [
            {"price": sub["items"].data[0].price.id}], "payment_behavior": "hopeful"}),
         "payment_behavior", "Invalid payment_behavior"),
    ]
    for call, param, message in cases:
        with pytest.raises(stripe.InvalidRequestError) as err:
            call()
        assert err.value.http_status == 400 and err.value.param == param and message in err.value.user_message
        assert err.value.json_body["error"]["type"] == "invalid_request_error"
    assert stripe_client.v1.test_helpers.test_clocks.retrieve(clock.id).frozen_time == T0
    assert len(stripe_client.v1.events.list(params={"limit": 100}).data) == count
    stripe_client.v1.subscriptions.cancel(sub.id)
    with pytest.raises(stripe.InvalidRequestError) as err:
        stripe_client.v1.subscriptions.update(sub.id, params={"items": [{"id": sub["items"].data[0].id,
                                                                         "quantity": 3}]})
    assert err.value.user_message == "A canceled subscription can only update its cancellation_details and metadata."
    assert stripe_client.v1.subscriptions.retrieve(sub.id)["items"].data[0].quantity == 1
    assert stripe_client.v1.subscriptions.update(sub.id, params={"metadata": {"why": "moved"}}).metadata.why == "moved"


def test_renewal_decline_goes_past_due_then_recovers_and_period_end_cancels(stripe_client):
    clock = stripe_client.v1.test_helpers.test_clocks.create(params={"frozen_time": T0})
    customer = _customer(stripe_client, clock)
    price = _price(stripe_client, 1200)
    marker = stripe_client.v1.events.list(params={"limit": 1}).data[0].id
    sub = stripe_client.v1.subscriptions.create(params={"customer": customer.id, "items": [{"price": price.id}]})
    assert _types_since(stripe_client, marker) == [
        "customer.subscription.created", "invoice.created", "invoice.finalized", "payment_intent.created",
        "charge.succeeded", "payment_intent.succeeded", "invoice_payment.paid", "invoice.paid",
        "invoice.payment_succeeded", "customer.subscription.updated"]
    # the card on file starts declining: the renewal fails and the subscription is past_due
    failing = stripe_client.v1.payment_methods.attach("pm_card_chargeCustomerFail", params={"customer": customer.id})
    stripe_client.v1.customers.update(customer.id, params={"invoice_settings": {"default_payment_method": failing.id}})
    marker = stripe_client.v1.events.list(params={"limit": 1}).data[0].id
    stripe_client.v1.test_helpers.test_clocks.advance(clock.id, params={"frozen_time": _month_after(T0) + 7200})
    types = _types_since(stripe_client, marker)
    assert types.index("invoice.finalized") < types.index("charge.failed") < types.index("invoice.payment_failed")
    assert "invoice.paid" not in types
    sub = stripe_client.v1.subscriptions.retrieve(sub.id, params={"expand": ["latest_invoice.payments"]})
    assert sub.status == "past_due" and sub.latest_invoice.status == "open"
    # paying the open invoice's PaymentIntent with a good card brings it back
    pi_id = sub.latest_invoice.payments.data[0].payment.payment_intent
    stripe_client.v1.payment_intents.confirm(pi_id, params={"payment_method": "pm_card_visa"})
    assert stripe_client.v1.subscriptions.retrieve(sub.id).status == "active"
    assert stripe_client.v1.invoices.retrieve(sub.latest_invoice.id).status == "paid"
    # cancel_at_period_end: deleted when the period ends, with no further invoice
    ending = stripe_client.v1.subscriptions.update(sub.id, params={"cancel_at_period_end": True})
    end = ending["items"].data[0].current_period_end
    assert ending.cancel_at == end and ending.status == "active"
    invoices = len(stripe_client.v1.invoices.list(params={"subscription": sub.id}).data)
    stripe_client.v1.test_helpers.test_clocks.advance(clock.id, params={"frozen_time": end + 60})
    done = stripe_client.v1.subscriptions.retrieve(sub.id)
    assert (done.status, done.ended_at) == ("canceled", end)
    assert len(stripe_client.v1.invoices.list(params={"subscription": sub.id}).data) == invoices
    assert stripe_client.v1.events.list(params={"limit": 2}).data[1].type == "customer.subscription.deleted"


def test_items_endpoints_search_and_resume_after_a_paused_trial(stripe_client):
    clock = stripe_client.v1.test_helpers.test_clocks.create(params={"frozen_time": T0})
    customer = stripe_client.v1.customers.create(params={"test_clock": clock.id})
    seats, support = _price(stripe_client, 800, name="Seat"), _price(stripe_client, 300, name="Support")
    sub = stripe_client.v1.subscriptions.create(params={
        "customer": customer.id, "items": [{"price": seats.id, "quantity": 2}], "trial_period_days": 7,
        "trial_settings": {"end_behavior": {"missing_payment_method": "pause"}}, "metadata": {"plan": "team"}})
    added = stripe_client.v1.subscription_items.create(params={"subscription": sub.id, "price": support.id})
    assert (added.object, added.quantity, added.price.id, added.subscription) == (
        "subscription_item", 1, support.id, sub.id)
    listed = stripe_client.v1.subscription_items.list(params={"subscription": sub.id}).data
    assert sorted(i.price.id for i in listed) == sorted([seats.id, support.id])
    changed = stripe_client.v1.subscription_items.update(listed[0].id, params={"quantity": 5,
                                                                               "proration_behavior": "none"})
    assert changed.quantity == 5
    assert stripe_client.v1.subscription_items.delete(added.id).deleted is True
    with pytest.raises(stripe.InvalidRequestError) as err:  # the last item cannot go
        stripe_client.v1.subscription_items.delete(sub["items"].data[0].id)
    assert err.value.param == "items"
    found = stripe_client.v1.subscriptions.search(params={"query": "status:'trialing' AND metadata['plan']:'team'"})
    assert [s.id for s in found.data] == [sub.id]
    # no payment method when the trial ends: paused (no invoice charged), then resumed once there is one
    stripe_client.v1.test_helpers.test_clocks.advance(clock.id, params={"frozen_time": T0 + 8 * DAY})
    assert stripe_client.v1.subscriptions.retrieve(sub.id).status == "paused"
    pm = stripe_client.v1.payment_methods.attach("pm_card_visa", params={"customer": customer.id})
    stripe_client.v1.subscriptions.update(sub.id, params={"default_payment_method": pm.id})
    resumed = stripe_client.v1.subscriptions.resume(sub.id, params={"billing_cycle_anchor": "now"})
    invoice = stripe_client.v1.invoices.retrieve(resumed.latest_invoice)
    assert resumed.status == "active" and (invoice.status, invoice.total) == ("paid", 800 * 5)
    with pytest.raises(stripe.InvalidRequestError):
        stripe_client.v1.subscriptions.resume(sub.id)


def test_items_name_plans_by_id_on_create_update_and_item_create(stripe_client):
    customer = _customer(stripe_client)
    basic = stripe_client.v1.plans.create(params={"amount": 1500, "currency": "usd", "interval": "month",
                                                  "product": {"name": "Basic"}})
    pro = stripe_client.v1.plans.create(params={"amount": 4000, "currency": "usd", "interval": "month",
                                                "product": basic.product})
    sub = stripe_client.v1.subscriptions.create(params={"customer": customer.id, "items": [{"plan": basic.id}]})
    item = sub["items"].data[0]
    assert set(item.to_dict()) == ITEM_FIELDS and (item.price.id, item.plan.id) == (basic.id, basic.id)
    assert (item.plan.object, item.plan.amount, item.plan.interval) == ("plan", 1500, "month")
    assert stripe_client.v1.invoices.retrieve(sub.latest_invoice).total == 1500
    moved = stripe_client.v1.subscriptions.update(sub.id, params={"items": [{"id": item.id, "plan": pro.id}],
                                                                 "proration_behavior": "none"})
    assert moved["items"].data[0].plan.id == pro.id and moved["items"].data[0].price.unit_amount == 4000
    # any recurring price is a plan too, on every version; lines before 2025-03-31 name it as well
    price = _price(stripe_client, 700, name="Extra")
    added = stripe_client.v1.subscription_items.create(params={"subscription": sub.id, "plan": price.id,
                                                               "proration_behavior": "none"})
    assert (added.plan.id, added.plan.amount) == (price.id, 700)
    old = stripe_client.v1.subscriptions.retrieve(sub.id, options=OLD)
    assert sorted(i.plan.id for i in old["items"].data) == sorted([pro.id, price.id])
    line = stripe_client.v1.invoices.retrieve(sub.latest_invoice, options=OLD).lines.data[0]
    assert (line.type, line.plan.id, line.plan.amount) == ("subscription", basic.id, 1500)
    with pytest.raises(stripe.InvalidRequestError) as err:
        stripe_client.v1.subscriptions.create(params={"customer": customer.id, "items": [{"plan": "plan_nope"}]})
    assert (err.value.http_status, err.value.code, err.value.param, err.value.user_message) == (
        404, "resource_missing", "items[0][plan]", "No such plan: 'plan_nope'")
    one_time = stripe_client.v1.prices.create(params={"currency": "usd", "unit_amount": 100,
                                                      "product": basic.product})
    with pytest.raises(stripe.InvalidRequestError) as err:  # a one-time price is no plan
        stripe_client.v1.subscriptions.create(params={"customer": customer.id, "items": [{"plan": one_time.id}]})
    assert err.value.http_status == 404 and err.value.param == "items[0][plan]"
    with pytest.raises(stripe.InvalidRequestError) as err:
        stripe_client.v1.subscriptions.create(params={"customer": customer.id,
                                                      "items": [{"plan": basic.id, "price": basic.id}]})
    assert err.value.http_status == 400 and err.value.param == "items[0][price]"


def test_an_unpaid_incomplete_subscription_expires_after_23_hours(stripe_client):
    clock = stripe_client.v1.test_helpers.test_clocks.create(params={"frozen_time": T0})
    customer = stripe_client.v1.customers.create(params={"test_clock": clock.id})
    sub = stripe_client.v1.subscriptions.create(params={
        "customer": customer.id, "items": [{"price": _price(stripe_client, 1500).id}],
        "payment_behavior": "default_incomplete"})
    assert sub.status == "incomplete"
    stripe_client.v1.test_helpers.test_clocks.advance(clock.id, params={"frozen_time": T0 + 23 * 3600 - 1})
    assert stripe_client.v1.subscriptions.retrieve(sub.id).status == "incomplete"
    marker = stripe_client.v1.events.list(params={"limit": 1}).data[0].id
    stripe_client.v1.test_helpers.test_clocks.advance(clock.id, params={"frozen_time": T0 + 2 * DAY})
    assert _types_since(stripe_client, marker) == [
        "test_helpers.test_clock.advancing", "customer.subscription.updated", "invoice.voided",
        "payment_intent.canceled", "test_helpers.test_clock.ready"]  # voiding cancels the invoice's PaymentIntent
    updated = stripe_client.v1.events.list(params={"type": "customer.subscription.updated", "limit": 1}).data[0]
    assert updated.data.previous_attributes["status"] == "incomplete"
    expired = stripe_client.v1.subscriptions.retrieve(sub.id, params={"expand": ["latest_invoice"]})
    assert (expired.status, expired.ended_at) == ("incomplete_expired", T0 + 23 * 3600)
    assert (expired.latest_invoice.status, expired.latest_invoice.status_transitions.voided_at) == (
        "void", T0 + 23 * 3600)
    # terminal: no further invoices however far the clock goes
    stripe_client.v1.test_helpers.test_clocks.advance(clock.id, params={"frozen_time": T0 + 70 * DAY})
    assert [i.id for i in stripe_client.v1.invoices.list(params={"subscription": sub.id}).data] == [
        expired.latest_invoice.id]
    assert stripe_client.v1.subscriptions.retrieve(sub.id).status == "incomplete_expired"


def test_invoice_upcoming_comes_a_week_before_each_automatic_renewal(stripe_client):
    clock = stripe_client.v1.test_helpers.test_clocks.create(params={"frozen_time": T0})
    customer = _customer(stripe_client, clock)
    sub = stripe_client.v1.subscriptions.create(params={"customer": customer.id,
                                                        "items": [{"price": _price(stripe_client, 1200).id}]})
    renewal = sub["items"].data[0].current_period_end
    marker = stripe_client.v1.events.list(params={"limit": 1}).data[0].id
    stripe_client.v1.test_helpers.test_clocks.advance(clock.id, params={"frozen_time": renewal - 7 * DAY - 1})
    assert "invoice.upcoming" not in _types_since(stripe_client, marker)
    stripe_client.v1.test_helpers.test_clocks.advance(clock.id, params={"frozen_time": renewal - 7 * DAY})
    event = stripe_client.v1.events.list(params={"type": "invoice.upcoming"}).data
    assert len(event) == 1  # sent at renewal - 7 days exactly: not one second earlier (above)
    upcoming = event[0].data.object
    assert "id" not in upcoming and upcoming.object == "invoice"  # Stripe sends it without an invoice id
    assert (upcoming.billing_reason, upcoming.amount_due, upcoming.customer) == (
        "subscription_cycle", 1200, customer.id)
    assert upcoming.parent.subscription_details.subscription == sub.id
    assert upcoming.lines.data[0].period.start == renewal
    # the renewal itself, in Stripe's order; the next notice comes a week before the following one
    marker = stripe_client.v1.events.list(params={"limit": 1}).data[0].id
    stripe_client.v1.test_helpers.test_clocks.advance(clock.id, params={"frozen_time": renewal + 7200})
    assert _types_since(stripe_client, marker) == [
        "test_helpers.test_clock.advancing", "invoice.created", "customer.subscription.updated", "invoice.finalized",
        "payment_intent.created", "charge.succeeded", "payment_intent.succeeded", "invoice_payment.paid",
        "invoice.paid", "invoice.payment_succeeded", "test_helpers.test_clock.ready"]
    stripe_client.v1.test_helpers.test_clocks.advance(clock.id, params={"frozen_time": _month_after(renewal)})
    assert len(stripe_client.v1.events.list(params={"type": "invoice.upcoming"}).data) == 2
    # none for a subscription ending at the period's end, nor for one whose invoices are sent, not charged
    quiet = stripe_client.v1.test_helpers.test_clocks.create(params={"frozen_time": T0})
    other = _customer(stripe_client, quiet)
    ending = stripe_client.v1.subscriptions.create(params={"customer": other.id, "cancel_at_period_end": True,
                                                           "items": [{"price": _price(stripe_client, 500).id}]})
    stripe_client.v1.subscriptions.create(params={"customer": other.id, "collection_method": "send_invoice",
                                                  "days_until_due": 30,
                                                  "items": [{"price": _price(stripe_client, 600).id}]})
    stripe_client.v1.test_helpers.test_clocks.advance(quiet.id, params={"frozen_time": _month_after(T0) - DAY})
    assert len(stripe_client.v1.events.list(params={"type": "invoice.upcoming"}).data) == 2
    assert stripe_client.v1.subscriptions.retrieve(ending.id).status == "active"


def test_deleting_a_test_clock_deletes_its_customers_and_subscriptions_with_their_events(stripe_client):
    clock = stripe_client.v1.test_helpers.test_clocks.create(params={"frozen_time": T0})
    customer = _customer(stripe_client, clock)
    price = _price(stripe_client, 1000)
    running = stripe_client.v1.subscriptions.create(params={"customer": customer.id, "items": [{"price": price.id}]})
    ended = stripe_client.v1.subscriptions.create(params={"customer": customer.id, "items": [{"price": price.id}]})
    stripe_client.v1.subscriptions.cancel(ended.id)
    bare = stripe_client.v1.customers.create(params={"test_clock": clock.id})
    elsewhere = stripe_client.v1.customers.create()
    stripe_client.v1.test_helpers.test_clocks.advance(clock.id, params={"frozen_time": T0 + 5 * DAY})
    marker = stripe_client.v1.events.list(params={"limit": 1}).data[0].id
    assert stripe_client.v1.test_helpers.test_clocks.delete(clock.id).deleted is True
    events = list(reversed(stripe_client.v1.events.list(params={"limit": 100, "ending_before": marker}).data))
    seen = [(e.type, e.data.object.id) for e in events]
    assert sorted(seen[:-1]) == sorted([("customer.subscription.deleted", running.id),
                                        ("customer.deleted", customer.id), ("customer.deleted", bare.id)])
    assert seen.index(("customer.subscription.deleted", running.id)) < seen.index(("customer.deleted", customer.id))
    assert seen[-1] == ("test_helpers.test_clock.deleted", clock.id)
    gone = events[seen.index(("customer.subscription.deleted", running.id))].data.object
    assert (gone.status, gone.ended_at, gone.canceled_at) == ("canceled", T0 + 5 * DAY, T0 + 5 * DAY)
    assert stripe_client.v1.customers.retrieve(customer.id).deleted is True
    with pytest.raises(stripe.InvalidRequestError) as err:
        stripe_client.v1.subscriptions.retrieve(running.id)
    assert err.value.http_status == 404
    assert stripe_client.v1.test_helpers.test_clocks.retrieve(clock.id).deleted is True
    assert "deleted" not in stripe_client.v1.customers.retrieve(elsewhere.id).to_dict()  # other customers stay


def test_transform_quantity_bills_packages_of_usage_and_of_seats(stripe_client):
    """A price with ``transform_quantity`` charges for the quantity divided and rounded (subscription-gym's metered
    charging price divides usage so); the line keeps the quantity itself."""
    clock = stripe_client.v1.test_helpers.test_clocks.create(params={"frozen_time": T0})
    customer = _customer(stripe_client, clock)
    meter = stripe_client.v1.billing.meters.create(params={
        "display_name": "Charging", "event_name": "kwh", "default_aggregation": {"formula": "sum"},
        "customer_mapping": {"event_payload_key": "stripe_customer_id", "type": "by_id"}})
    metered = stripe_client.v1.prices.create(params={
        "currency": "usd", "unit_amount": 40, "product_data": {"name": "Charging"}, "billing_scheme": "per_unit",
        "transform_quantity": {"divide_by": 10, "round": "up"},
        "recurring": {"interval": "month", "usage_type": "metered", "meter": meter.id}})
    assert metered.transform_quantity.divide_by == 10 and metered.transform_quantity.round == "up"
    seats = stripe_client.v1.prices.create(params={
        "currency": "usd", "unit_amount": 1000, "product_data": {"name": "Seat packs of 5"},
        "transform_quantity": {"divide_by": 5, "round": "down"}, "recurring": {"interval": "month"}})
    sub = stripe_client.v1.subscriptions.create(params={"customer": customer.id, "items": [
        {"price": seats.id, "quantity": 12}, {"price": metered.id}]})
    first = stripe_client.v1.invoices.retrieve(sub.latest_invoice)
    assert [(line.quantity, line.amount) for line in first.lines.data] == [(12, 2000)]  # 12 // 5 = 2 packs
    stripe_client.v1.test_helpers.test_clocks.advance(clock.id, params={"frozen_time": T0 + 2 * DAY})
    stripe_client.v1.billing.meter_events.create(params={
        "event_name": "kwh", "payload": {"stripe_customer_id": customer.id, "value": "123"}, "timestamp": T0 + DAY})
    stripe_client.v1.test_helpers.test_clocks.advance(clock.id, params={"frozen_time": _month_after(T0) + 7200})
    renewal = stripe_client.v1.invoices.retrieve(stripe_client.v1.subscriptions.retrieve(sub.id).latest_invoice)
    usage = next(line for line in renewal.lines.data if line.pricing.price_details.price == metered.id)
    assert (usage.quantity, usage.amount) == (123, 13 * 40)  # 123 / 10 rounded up
    plain = stripe_client.v1.prices.retrieve(_price(stripe_client, 5).id)
    assert plain.transform_quantity is None
    with pytest.raises(stripe.InvalidRequestError) as err:
        stripe_client.v1.prices.create(params={"currency": "usd", "unit_amount": 1, "product_data": {"name": "x"},
                                               "transform_quantity": {"divide_by": 0, "round": "up"}})
    assert err.value.param == "transform_quantity[divide_by]"


def test_a_schedules_subscription_starts_with_a_draft_invoice_the_page_can_pay_once_finalized(stripe_client):
    """subscription-gym's instalment plan: a schedule for a customer with no card yet; Stripe leaves the first
    invoice a draft (finalised an hour later), the app finalises it and hands its confirmation_secret to the page."""
    customer = stripe_client.v1.customers.create(params={"email": "sofa@example.com"})
    plan = _price(stripe_client, 20000, name="Sofa instalments")
    sched = stripe_client.v1.subscription_schedules.create(params={
        "customer": customer.id, "start_date": "now", "end_behavior": "cancel",
        "phases": [{"items": [{"price": plan.id, "quantity": 1}], "iterations": 6}],
        "expand": ["subscription.latest_invoice.confirmation_secret"]})
    draft = sched.subscription.latest_invoice
    assert sched.status == "active" and draft.status == "draft" and draft.amount_due == 20000
    assert draft.automatically_finalizes_at == draft.created + 3600
    opened = stripe_client.v1.invoices.finalize_invoice(draft.id, params={"expand": ["confirmation_secret"]})
    assert opened.status == "open" and opened.confirmation_secret.client_secret
    with pytest.raises(stripe.InvalidRequestError, match="no attached payment source or default payment method"):
        stripe_client.v1.subscriptions.create(params={"customer": customer.id, "items": [{"price": plan.id}]})


def test_an_anchored_subscriptions_first_part_period_is_discounted_too(stripe_client):
    """subscription-gym's task: a 20%-off coupon and an anchor on the 5th; the first invoice's prorated line for the
    part period up to the anchor takes the discount as well (the grader wants less than the full discounted month)."""
    clock = stripe_client.v1.test_helpers.test_clocks.create(params={"frozen_time": T0})
    customer = stripe_client.v1.customers.create(params={"test_clock": clock.id})
    price = _price(stripe_client, 6900, name="Home club")
    coupon = stripe_client.v1.coupons.create(params={"percent_off": 20, "duration": "forever"})
    anchor = T0 + 20 * DAY
    sub = stripe_client.v1.subscriptions.create(params={
        "customer": customer.id, "items": [{"price": price.id, "quantity": 1}], "discounts": [{"coupon": coupon.id}],
        "billing_cycle_anchor": anchor, "payment_behavior": "default_incomplete",
        "expand": ["latest_invoice.confirmation_secret"]})
    invoice = sub.latest_invoice
    line = invoice.lines.data[0]
    assert sub.status == "incomplete" and line.parent.subscription_item_details.proration is True
    assert invoice.subtotal == line.amount < 6900
    assert invoice.amount_due == invoice.subtotal - round(invoice.subtotal * 0.2)
    assert invoice.confirmation_secret.client_secret
