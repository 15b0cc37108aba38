"""Test clocks: create, retrieve, list, delete, advance — simulated time for customers and their subscriptions.

``advance`` answers at once with the clock ``advancing`` (as Stripe does) and has already run, in the same request,
everything that falls due up to the new frozen time in time order — renewal and trial notices, trial ends, renewals,
the hour-later finalisation and payment of their invoices, cancellations, expiries of incomplete subscriptions,
schedule phases — then the clock is ``ready``. Events:
``test_helpers.test_clock.advancing``, the billing events in order, ``test_helpers.test_clock.ready``. No wall time
passes: a year of monthly renewals costs what its objects cost to make.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import Any

from stripebench_emulator.api import subscription_schedules as schedules
from stripebench_emulator.model.context import LIST_PARAMS, RequestContext
from stripebench_emulator.model.errors import invalid
from stripebench_emulator.model.fields import deleted_stub
from stripebench_emulator.model.params import Int, Str
from stripebench_emulator.model.registry import Resource
from stripebench_emulator.rules import billing_clock, billing_time
from stripebench_emulator.rules import billing_cycle as cycle

resource = Resource(billing_time.CLOCK_KIND, prefix="clock", noun="test clock")
DELETES_AFTER = 30 * billing_time.DAY
MAX_AHEAD_WITHOUT_SUBSCRIPTIONS = ("year", 2)


@resource.route("POST", "/v1/test_helpers/test_clocks", params={"frozen_time": Int(required=True),
                                                                "name": Str(max_length=300)})
def create(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Create a clock frozen at ``frozen_time``."""
    now = ctx.now()
    obj = {"id": ctx.new_id("clock"), "object": billing_time.CLOCK_KIND, "created": now, "deletes_after": now + DELETES_AFTER,
           "frozen_time": params["frozen_time"], "livemode": False, "name": params.get("name"), "status": "ready",
           "status_details": {}}
    ctx.save(obj)
    ctx.emit("test_helpers.test_clock.created", obj)
    return obj


@resource.route("GET", "/v1/test_helpers/test_clocks/{id}")
def retrieve(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Retrieve a clock (a deleted one as its stub)."""
    found = ctx.find(billing_time.CLOCK_KIND, id)
    if found is not None and found.get("deleted"):
        return deleted_stub(found)
    return ctx.get(billing_time.CLOCK_KIND, id, param="test_clock")


@resource.route("GET", "/v1/test_helpers/test_clocks", params=LIST_PARAMS)
def list_clocks(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """List clocks, newest first."""
    return ctx.list_page(billing_time.CLOCK_KIND, params, "/v1/test_helpers/test_clocks")


@resource.route("DELETE", "/v1/test_helpers/test_clocks/{id}")
def delete(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Delete a clock and, as on Stripe, the customers (and so subscriptions) attached to it.

    Stripe documents that the clock's objects go with it, not the events: here each customer goes as a customer
    deletion does on Stripe — its subscriptions still running end first (``customer.subscription.deleted``, at the
    clock's time), then ``customer.deleted`` — and ``test_helpers.test_clock.deleted`` comes last."""
    clock = ctx.get(billing_time.CLOCK_KIND, id, param="test_clock")
    moment = clock["frozen_time"]
    subs = [ctx.get("subscription", s["id"]) for s in ctx.store.scan("subscription") if s.get("test_clock") == id]
    for customer in [c for c in ctx.store.scan("customer") if c.get("test_clock") == id and not c.get("deleted")]:
        for sub in subs:
            if sub["customer"] == customer["id"] and sub["status"] not in ("canceled", "incomplete_expired"):
                cycle.end(billing_time.at(ctx, moment), sub, moment, "cancellation_requested")
        ctx.save({**deleted_stub(customer), "created": customer["created"]})
        ctx.emit("customer.deleted", customer)
    for sub in subs:
        ctx.remove("subscription", sub["id"])
    ctx.save({**deleted_stub(clock), "created": clock["created"]})
    ctx.emit("test_helpers.test_clock.deleted", clock)
    return deleted_stub(clock)


def _limit(ctx: RequestContext, clock: dict[str, Any], subs: list[dict[str, Any]]) -> int:
    """How far one advance may go: two intervals of the shortest subscription, or two years without any."""
    start = clock["frozen_time"]
    if not subs:
        return billing_time.period_end(start, *MAX_AHEAD_WITHOUT_SUBSCRIPTIONS)
    return min(billing_time.period_end(start, interval, 2 * count)
               for interval, count in (cycle.interval_of(ctx, s) for s in subs))


def _due(ctx: RequestContext, clock_id: str | None) -> tuple[list[tuple[int, int, str, str, str]], list[dict[str, Any]]]:
    """A heap of (time, order, kind, id, action) for the clock's subscriptions, drafts and schedules (with
    ``clock_id`` None, those on no test clock)."""
    heap: list[tuple[int, int, str, str, str]] = []
    subs = [s for s in ctx.store.scan("subscription") if s.get("test_clock") == clock_id]
    for sub in subs:
        nxt = billing_clock.next_action(sub)
        if nxt:
            heap.append((nxt[0], 2, "subscription", sub["id"], nxt[1]))
    for invoice in ctx.store.scan("invoice"):
        if invoice.get("test_clock") == clock_id and invoice["status"] == "draft" \
                and invoice.get("automatically_finalizes_at"):
            heap.append((invoice["automatically_finalizes_at"], 1, "invoice", invoice["id"], "finalize"))
    for sched in ctx.store.scan("subscription_schedule"):
        if sched.get("test_clock") == clock_id:
            phase_at = schedules.next_action(sched)
            if phase_at:
                heap.append((phase_at, 0, "subscription_schedule", sched["id"], "phase"))
    heapq.heapify(heap)
    return heap, [s for s in subs if s["status"] not in ("canceled", "incomplete_expired")]


def run_until(ctx: RequestContext, clock_id: str | None, target: int, move: Callable[[int], None]) -> None:
    """Run what falls due on the clock ``clock_id`` up to ``target``, in time order; ``move(moment)`` first sets the
    time to each step's. ``clock_id`` None: the objects on no test clock, on the account's own clock."""
    heap, _ = _due(ctx, clock_id)
    while heap and heap[0][0] <= target:
        moment, order, kind, obj_id, action = heapq.heappop(heap)
        move(moment)  # objects made now (intents, charges) read that time, through clock_now or ctx.now
        moved = billing_time.at(ctx, moment)
        if kind == "invoice":
            invoice = ctx.get("invoice", obj_id)
            if invoice["status"] == "draft":
                cycle.finalize_due(moved, invoice, moment)
            continue
        if kind == "subscription_schedule":
            sched = ctx.get("subscription_schedule", obj_id)
            schedules.run_phase(moved, sched, moment)
        else:
            sub = ctx.get("subscription", obj_id)
            if billing_clock.next_action(sub) != (moment, action):
                continue  # changed by something that ran first; its current next step was queued then
            billing_clock.run_action(moved, sub, action, moment)
        for entry in _due(ctx, clock_id)[0] if kind == "subscription_schedule" else _requeue(ctx, obj_id):
            if entry not in heap:
                heapq.heappush(heap, entry)


def _requeue(ctx: RequestContext, sub_id: str) -> list[tuple[int, int, str, str, str]]:
    """The subscription's next step, and the draft its renewal may just have made."""
    sub = ctx.get("subscription", sub_id)
    entries = []
    nxt = billing_clock.next_action(sub)
    if nxt:
        entries.append((nxt[0], 2, "subscription", sub_id, nxt[1]))
    invoice = ctx.find("invoice", sub.get("latest_invoice") or "")
    if invoice and invoice["status"] == "draft" and invoice.get("automatically_finalizes_at"):
        entries.append((invoice["automatically_finalizes_at"], 1, "invoice", invoice["id"], "finalize"))
    return entries


@resource.route("POST", "/v1/test_helpers/test_clocks/{id}/advance", params={"frozen_time": Int(required=True)})
def advance(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Advance to ``frozen_time`` (after the current one, at most two intervals of the shortest subscription)."""
    clock = ctx.get(billing_time.CLOCK_KIND, id, param="test_clock")
    target = params["frozen_time"]
    if target <= clock["frozen_time"]:
        raise invalid(f"The test clock's frozen_time can only be advanced forward. The new frozen_time ({target}) "
                      f"must be after the current frozen_time ({clock['frozen_time']}).", param="frozen_time")
    _, subs = _due(ctx, id)
    limit = _limit(ctx, clock, subs)
    if target > limit:
        raise invalid(f"Cannot advance the test clock to {target}: a test clock can advance at most two intervals "
                      f"of its shortest subscription (or two years without subscriptions), here until {limit}.",
                      param="frozen_time")
    start = clock["frozen_time"]
    clock.update(status="advancing", status_details={"advancing": {"target_frozen_time": target}})
    ctx.save(clock)
    ctx.emit("test_helpers.test_clock.advancing", clock)
    answer = dict(clock)

    def move(moment: int) -> None:
        clock["frozen_time"] = moment
        ctx.save(clock)

    run_until(ctx, id, target, move)
    clock = ctx.get(billing_time.CLOCK_KIND, id)
    clock.update(frozen_time=target, status="ready", status_details={})
    ctx.save(clock)
    ctx.emit("test_helpers.test_clock.ready", clock)
    answer["frozen_time"] = start
    return answer
