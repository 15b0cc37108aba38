"""Transactions: a failed request leaves nothing behind, and the events of overlapping transactions never mix.

The overlap tests do not hope for a scheduling accident: the store's lock is wrapped so that the moment the first
thread gives it up for the last time, a second thread runs its transaction (or part of it) before the first goes
on. That is exactly the window in which a shared event batch could be emptied or stolen.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from stripebench_emulator.model.context import RequestContext, emit_event
from stripebench_emulator.model.engine import Emulator
from stripebench_emulator.model.store import OwnershipError

WAIT = 10  # seconds; only reached if a thread is stuck, which fails the test


class HandOverLock:
    """A reentrant lock that calls ``on_final_release()`` once, right after ``owner`` gives it up for the last time."""

    def __init__(self, inner: Any, owner: threading.Thread | None = None) -> None:
        self.inner = inner
        self.owner = owner
        self.on_final_release: Callable[[], None] | None = None
        self._depth = threading.local()

    def __enter__(self) -> HandOverLock:
        self.inner.acquire()
        self._depth.n = getattr(self._depth, "n", 0) + 1
        return self

    def __exit__(self, *exc: object) -> None:
        self._depth.n -= 1
        self.inner.release()
        hook = self.on_final_release
        if self._depth.n == 0 and threading.current_thread() is self.owner and hook is not None:
            self.on_final_release = None
            hook()


def _customer(n: int) -> dict[str, Any]:
    return {"id": f"cus_overlap{n}", "object": "customer", "created": 0, "email": None, "metadata": {}}


def _overlap(emu: Emulator, second: Callable[[], None], on_release: Callable[[], None]) -> list[str]:
    """Run a transaction on thread A emitting one event; ``on_release`` runs on A when A lets go of the lock and
    should start ``second`` (a transaction on thread B) as the test needs. Returns the ids listeners saw."""
    seen: list[str] = []
    emu.on_event(lambda event: seen.append(event["data"]["object"]["id"]))
    lock = HandOverLock(emu.store.lock)
    emu.store.lock = lock
    errors: list[BaseException] = []

    def first() -> None:
        try:
            with emu.transaction():
                emit_event(emu, "customer.created", emu.store.put(_customer(1)))
        except BaseException as exc:  # noqa: BLE001 - reported by the test thread
            errors.append(exc)

    a = threading.Thread(target=first, name="tx-A")
    b = threading.Thread(target=second, name="tx-B")
    lock.owner = a

    def hand_over() -> None:
        b.start()
        on_release()

    lock.on_final_release = hand_over
    a.start()
    a.join(WAIT)
    b.join(WAIT)
    assert not a.is_alive() and not b.is_alive(), "a transaction thread is stuck"
    assert not errors, errors
    return seen


def test_a_transaction_starting_as_another_commits_does_not_lose_its_events() -> None:
    emu = Emulator(seed=1)
    b_done = threading.Event()

    def second() -> None:
        with emu.transaction():
            emit_event(emu, "customer.created", emu.store.put(_customer(2)))
        b_done.set()

    seen = _overlap(emu, second, on_release=lambda: b_done.wait(WAIT))
    assert b_done.is_set()
    assert seen == ["cus_overlap1", "cus_overlap2"]  # both delivered, each once, in commit order
    emu.close()


def test_events_of_a_transaction_still_running_are_not_delivered_with_another() -> None:
    emu = Emulator(seed=1)
    b_inside, a_done = threading.Event(), threading.Event()

    def second() -> None:
        with pytest.raises(RuntimeError):
            with emu.transaction():
                emit_event(emu, "customer.created", emu.store.put(_customer(2)))
                b_inside.set()
                assert a_done.wait(WAIT)
                raise RuntimeError("B fails: its event must never reach a listener")

    def on_release() -> None:
        assert b_inside.wait(WAIT)

    emu.on_event(lambda event: a_done.set())  # A's delivery is done once A's event reached listeners
    seen = _overlap(emu, second, on_release)
    assert seen == ["cus_overlap1"]
    assert emu.store.get("customer", "cus_overlap2") is None  # B rolled back
    assert [e["data"]["object"]["id"] for e in emu.store.all("event")] == ["cus_overlap1"]
    emu.close()


def test_a_failed_request_leaves_no_partial_state(stripe_client, emulator) -> None:
    """A confirm that fails half way (after its charge and payment method were saved) keeps none of it."""
    emu = emulator.emulator
    pi = stripe_client.v1.payment_intents.create(params={"amount": 2000, "currency": "usd",
                                                         "payment_method": "pm_card_visa"})
    counts = {kind: len(emu.store.scan(kind)) for kind in ("charge", "payment_method", "event", "balance_transaction")}
    before = emu.store.get("payment_intent", pi.id)
    listened: list[dict[str, Any]] = []
    emu.on_event(listened.append)
    with pytest.raises(RuntimeError):
        with emu.transaction():
            ctx = RequestContext(emu, emu.api_version)
            from stripebench_emulator.rules import intents

            done, error = intents.confirm_intent(ctx, ctx.get("payment_intent", pi.id))
            assert error is None and done["status"] == "succeeded"
            assert len(emu.store.scan("charge")) == counts["charge"] + 1  # written inside the transaction...
            raise RuntimeError("fail after the writes")
    # ...and gone after it
    assert {kind: len(emu.store.scan(kind)) for kind in counts} == counts
    assert emu.store.get("payment_intent", pi.id) == before
    assert listened == []
    assert stripe_client.v1.payment_intents.retrieve(pi.id).status == "requires_confirmation"
    listed = stripe_client.v1.charges.list(params={"payment_intent": pi.id})
    assert listed.data == []


def test_responses_and_events_never_change_the_stored_objects_they_share_values_with(stripe_client, emulator) -> None:
    """Stored objects are rendered from shallow copies (``Resource.shallow_render``, ``ctx.peek``) and event
    snapshots share the stored copy's nested values: none of that may write back into storage."""
    emu = emulator.emulator
    customer = stripe_client.v1.customers.create(params={"email": "a@example.com", "metadata": {"k": "v"}})
    pi = stripe_client.v1.payment_intents.create(params={"amount": 2000, "currency": "usd", "customer": customer.id,
                                                         "payment_method": "pm_card_visa", "confirm": True})
    stored = {kind: emu.store.get(kind, oid) for kind, oid in
              (("payment_intent", pi.id), ("charge", pi.latest_charge), ("customer", customer.id))}
    # renderers that add, replace and remove top-level keys: an old version embeds charges and drops
    # latest_charge, a publishable key drops customer and metadata, expand writes into the response
    old = stripe_client.v1.payment_intents.retrieve(pi.id, options={"stripe_version": "2020-08-27"})
    assert "latest_charge" not in old and old.charges.data[0].id == pi.latest_charge
    assert old.charges.data[0].refunds.total_count == 0  # the charge's renderer ran on the embedded charge
    expanded = stripe_client.v1.payment_intents.retrieve(pi.id, params={"expand": ["customer", "latest_charge"]})
    assert expanded.customer.email == "a@example.com" and expanded.latest_charge.amount == 2000
    publishable = stripe_client.v1.payment_intents.retrieve(
        pi.id, params={"client_secret": pi.client_secret}, options={"api_key": "pk_test_shared"})
    assert "customer" not in publishable and "metadata" not in publishable
    stripe_client.v1.charges.list(options={"stripe_version": "2020-08-27"})
    assert {kind: emu.store.get(kind, oid) for kind, oid in
            (("payment_intent", pi.id), ("charge", pi.latest_charge), ("customer", customer.id))} == stored
    assert "_apm_default" in stored["payment_intent"] and "latest_charge" in stored["payment_intent"]

    # a handler that replaces values after saving and emitting (the rule for saved objects): the event and the
    # store keep what was saved
    with emu.transaction():
        ctx = RequestContext(emu, emu.api_version)
        obj = ctx.get("customer", customer.id)
        before = emu.store.get("customer", customer.id)
        obj["metadata"] = {"k": "changed"}
        ctx.save(obj)
        event = ctx.emit("customer.updated", obj, previous=before)
        obj["metadata"] = {"k": "after the event"}
        obj["email"] = "unsaved@example.com"
    assert event is not None
    assert emu.store.get("event", event["id"])["data"]["object"]["metadata"] == {"k": "changed"}
    assert emu.store.get("customer", customer.id)["metadata"] == {"k": "changed"}
    assert stripe_client.v1.customers.retrieve(customer.id).email == "a@example.com"


@pytest.mark.parametrize("change", ["nested value", "appended line", "tuple"])
def test_the_checks_fail_a_transaction_that_changes_a_saved_object_in_place(emulator, change) -> None:
    """Saves keep shallow copies; the suite runs with ``Store.checks``, which catches a handler that breaks the rule
    (a stored object changed without a save, behind the event's back) and rolls the transaction back."""
    emu = emulator.emulator
    assert emu.store.checks, "the suite must run the emulator with its ownership checks (tests/conftest.py)"
    with emu.transaction():
        ctx = RequestContext(emu, emu.api_version)
        saved = ctx.save({"id": "cus_checks", "object": "customer", "created": 1, "metadata": {"k": "v"},
                          "_lines": []})
    with pytest.raises(OwnershipError, match="cus_checks"):
        with emu.transaction():
            ctx = RequestContext(emu, emu.api_version)
            obj = ctx.get("customer", "cus_checks")
            obj["email"] = "new@example.com"
            ctx.save(obj)
            if change == "nested value":
                obj["metadata"]["k"] = "changed in place"
            elif change == "appended line":
                obj["_lines"].append({"amount": 1})
            else:
                obj["period"] = (1, 2)
                ctx.save(obj)
    assert emu.store.get("customer", "cus_checks") == saved  # rolled back, email included


def test_an_event_made_outside_any_transaction_reaches_listeners_at_once() -> None:
    emu = Emulator(seed=1)
    seen: list[str] = []
    emu.on_event(lambda event: seen.append(event["type"]))
    emit_event(emu, "customer.created", emu.store.put(_customer(3)))
    assert seen == ["customer.created"]
    with emu.transaction():  # and a later transaction neither re-delivers nor keeps it
        emit_event(emu, "customer.updated", emu.store.put(_customer(4)))
    assert seen == ["customer.created", "customer.updated"]
    emu.close()


def test_an_event_snapshots_a_stored_object_with_no_internal_fields_by_sharing_it(stripe_client, emulator) -> None:
    """An object whose stored form is its public form at the account's version (a customer; a charge on current
    versions) is the event's ``data.object`` itself: an event costs no copy of it. The store never changes it in
    place, so the event still shows the object as it was when a later update replaces it."""
    emu = emulator.emulator
    customer = stripe_client.v1.customers.create(params={"email": "a@example.com"})
    pi = stripe_client.v1.payment_intents.create(params={"amount": 2000, "currency": "usd", "customer": customer.id,
                                                         "payment_method": "pm_card_visa", "confirm": True})
    events = {e["type"]: e for e in emu.store.scan("event")}
    created = events["customer.created"]["data"]["object"]
    assert created is emu.store.peek("customer", customer.id)
    assert events["charge.succeeded"]["data"]["object"] is emu.store.peek("charge", pi.latest_charge)
    stripe_client.v1.customers.update(customer.id, params={"name": "Later"})
    assert created["name"] is None and emu.store.peek("customer", customer.id)["name"] == "Later"
    assert stripe_client.v1.events.retrieve(events["customer.created"]["id"]).data.object.name is None
