"""An event's ``data.object`` is the object as it was when the event was made, at the event's API version.

These tests read events every way they can be read (the API at another version, a webhook, a restarted emulator's
state file) and check that what comes out is the object of the event's moment: no internal fields, no later
changes, no later charges or refunds embedded at an old version.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import stripe
from test_webhooks import receiver  # noqa: F401  (the fixture)

from stripebench_emulator.web.server import running_emulator

KEY = "sk_test_emulator_123"
OLD = "2020-08-27"  # before latest_charge: a payment intent embeds its charges, a charge its refunds


def _raw_events(url: str, version: str | None = None) -> list[dict]:
    """The events list as JSON off the wire (newest first), so every key the emulator sends is seen."""
    headers = {"Authorization": f"Bearer {KEY}", **({"Stripe-Version": version} if version else {})}
    answer = httpx.get(f"{url}/v1/events", params={"limit": 100}, headers=headers, timeout=10)
    answer.raise_for_status()
    return answer.json()["data"]


def _internal_keys(value: object) -> list[str]:
    if isinstance(value, dict):
        return [k for k in value if k.startswith("_")] + [k for v in value.values() for k in _internal_keys(v)]
    if isinstance(value, list):
        return [k for v in value for k in _internal_keys(v)]
    return []


def test_events_keep_the_object_as_it_was_and_show_no_internal_fields(stripe_client, emulator):
    customer = stripe_client.v1.customers.create(params={"email": "first@example.com"})
    pi = stripe_client.v1.payment_intents.create(params={"amount": 700, "currency": "usd", "customer": customer.id,
                                                         "payment_method": "pm_card_visa"})
    stripe_client.v1.payment_intents.confirm(pi.id)
    stripe_client.v1.customers.update(customer.id, params={"email": "second@example.com"})
    stripe_client.v1.refunds.create(params={"payment_intent": pi.id, "amount": 200})
    events = {e["type"]: e for e in _raw_events(emulator.url)}
    assert events["customer.created"]["data"]["object"]["email"] == "first@example.com"
    assert events["customer.updated"]["data"]["object"]["email"] == "second@example.com"
    assert events["payment_intent.created"]["data"]["object"]["status"] == "requires_confirmation"
    assert events["payment_intent.succeeded"]["data"]["object"]["status"] == "succeeded"
    assert events["charge.succeeded"]["data"]["object"]["amount_refunded"] == 0
    for event in events.values():
        assert _internal_keys(event) == [], event["type"]
    # retrieving one gives the same as listing
    one = httpx.get(f"{emulator.url}/v1/events/{events['customer.created']['id']}",
                    headers={"Authorization": f"Bearer {KEY}"}, timeout=10).json()
    assert one == events["customer.created"]


def test_an_event_renders_at_its_own_version_whatever_the_reader_asks(stripe_client, emulator):
    pi = stripe_client.v1.payment_intents.create(params={"amount": 900, "currency": "usd",
                                                         "payment_method": "pm_card_visa", "confirm": True,
                                                         "payment_method_types": ["card"]})
    for version in (None, OLD):
        succeeded = next(e for e in _raw_events(emulator.url, version) if e["type"] == "payment_intent.succeeded")
        assert succeeded["api_version"] == stripe.api_version
        assert succeeded["data"]["object"]["latest_charge"] == pi.latest_charge
        assert "charges" not in succeeded["data"]["object"]


def test_at_an_old_version_an_event_holds_the_charges_and_refunds_of_its_moment(stripe_client, emulator,
                                                                                 monkeypatch):
    """Before latest_charge the snapshot embeds other objects (charges, refunds): it must be taken at once, since
    a payment intent confirmed later would otherwise show its charge in its own ``payment_intent.created``."""
    monkeypatch.setattr(emulator.emulator, "api_version", OLD)  # the session's emulator: restored afterwards
    pi = stripe_client.v1.payment_intents.create(params={"amount": 1200, "currency": "usd",
                                                         "payment_method": "pm_card_visa",
                                                         "payment_method_types": ["card"]})
    stripe_client.v1.payment_intents.confirm(pi.id)
    charge = stripe_client.v1.payment_intents.retrieve(pi.id).latest_charge
    stripe_client.v1.refunds.create(params={"charge": charge, "amount": 300})
    events = {e["type"]: e for e in _raw_events(emulator.url, OLD)}
    assert events["payment_intent.created"]["api_version"] == OLD
    assert events["payment_intent.created"]["data"]["object"]["charges"]["data"] == []
    assert [c["id"] for c in events["payment_intent.succeeded"]["data"]["object"]["charges"]["data"]] == [charge]
    assert events["charge.succeeded"]["data"]["object"]["refunds"]["data"] == []
    assert events["charge.succeeded"]["data"]["object"]["amount_refunded"] == 0


def test_a_webhook_gets_the_rendered_snapshot(stripe_client, emulator, receiver):  # noqa: F811 - pytest fixtures imported above, requested by name
    stripe_client.v1.webhook_endpoints.create(params={"url": receiver.url, "enabled_events": ["customer.created"]})
    customer = stripe_client.v1.customers.create(params={"email": "hook@example.com"})
    stripe_client.v1.customers.update(customer.id, params={"email": "later@example.com"})
    receiver.wait_for(1)
    assert emulator.emulator.webhooks.wait_idle()
    delivered = [httpx.Response(200, content=body).json() for _, body in receiver.received]
    assert [e["type"] for e in delivered] == ["customer.created"]
    listed = next(e for e in _raw_events(emulator.url) if e["type"] == "customer.created")
    assert delivered[0]["data"] == listed["data"]
    assert delivered[0]["data"]["object"]["email"] == "hook@example.com"
    assert _internal_keys(delivered[0]) == []


def test_events_read_back_from_the_state_file_render_the_same(tmp_path: Path):
    state = tmp_path / "stripe.db"
    with running_emulator(seed=3, state=state) as emu:
        client = stripe.StripeClient(KEY, base_addresses={"api": emu.url}, max_network_retries=0)
        customer = client.v1.customers.create(params={"email": "kept@example.com"})
        client.v1.payment_intents.create(params={"amount": 500, "currency": "usd", "customer": customer.id,
                                                 "payment_method": "pm_card_visa", "confirm": True,
                                                 "payment_method_types": ["card"]})
        client.v1.customers.update(customer.id, params={"email": "changed@example.com"})
        before = _raw_events(emu.url)
    with running_emulator(seed=3, state=state) as emu:
        after = _raw_events(emu.url)
    assert after == before
    created = next(e for e in after if e["type"] == "customer.created")
    assert created["data"]["object"]["email"] == "kept@example.com"
