"""A response may be the snapshot its request's last event took, only when that is what rendering would give."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from stripebench_emulator.model import registry
from stripebench_emulator.model.context import RequestContext
from stripebench_emulator.model.engine import Emulator
from stripebench_emulator.model.params import Str
from stripebench_emulator.model.registry import Resource
from stripebench_emulator.model.render import render
from stripebench_emulator.web.dispatch import handle

HOST = "127.0.0.1:9"
HEADERS = {"authorization": "Bearer sk_test_reuse", "content-type": "application/x-www-form-urlencoded",
           "host": HOST}


@pytest.fixture
def emulator() -> Emulator:
    emu = Emulator()
    emu.base_url = f"http://{HOST}"
    return emu


def call(emu: Emulator, method: str, path: str, body: str = "", query: str = "", **headers: str) -> Any:
    reply = handle(emu, method, path, query, body.encode(), {**HEADERS, **headers}, lowered=True)
    assert reply.status == 200, reply.body
    return reply.body


def fresh(emu: Emulator, kind: str, object_id: str, version: str | None = None) -> Any:
    ctx = RequestContext(emu, version or emu.api_version, base_url=emu.base_url)
    return render(emu.store.peek(kind, object_id), ctx)


def latest_event(emu: Emulator) -> dict[str, Any]:
    return emu.store.scan("event")[0]


def test_a_confirmed_intent_answers_with_its_event_snapshot(emulator: Emulator) -> None:
    customer = call(emulator, "POST", "/v1/customers", "email=a%40b.c")
    assert customer is latest_event(emulator)["data"]["object"]
    pi = call(emulator, "POST", "/v1/payment_intents",
              f"amount=2000&currency=usd&customer={customer['id']}&payment_method=pm_card_visa")
    confirmed = call(emulator, "POST", f"/v1/payment_intents/{pi['id']}/confirm")
    event = latest_event(emulator)
    assert event["type"] == "payment_intent.succeeded" and confirmed is event["data"]["object"]
    assert confirmed == fresh(emulator, "payment_intent", pi["id"]) and confirmed["status"] == "succeeded"


def test_expand_another_version_or_another_address_render_afresh(emulator: Emulator) -> None:
    customer = call(emulator, "POST", "/v1/customers", "email=a%40b.c")
    body = f"amount=2000&currency=usd&customer={customer['id']}&payment_method=pm_card_visa"
    expanded = call(emulator, "POST", "/v1/payment_intents", body + "&expand[]=customer")
    assert expanded["customer"]["id"] == customer["id"]
    assert latest_event(emulator)["data"]["object"]["customer"] == customer["id"]

    old = "2022-08-01"
    pi = call(emulator, "POST", "/v1/payment_intents", body, **{"stripe-version": old})
    assert pi is not latest_event(emulator)["data"]["object"]
    assert "charges" in pi and "charges" not in latest_event(emulator)["data"]["object"]
    assert pi == fresh(emulator, "payment_intent", pi["id"], old)

    elsewhere = call(emulator, "POST", "/v1/customers", "email=a%40b.c", host="example.test:1")
    assert elsewhere is not latest_event(emulator)["data"]["object"]


@pytest.fixture
def widgets() -> Iterator[Resource]:
    resource = Resource("test_reuse_widget", prefix="wid", noun="widget")

    def new(ctx: RequestContext, name: str) -> dict[str, Any]:
        return {"id": ctx.new_id("wid"), "object": "test_reuse_widget", "created": ctx.now(), "name": name,
                "rendered_peers": None}

    @resource.renderer
    def render_widget(obj: dict[str, Any], ctx: RequestContext) -> dict[str, Any]:
        # reads other stored objects, as a customer's sources or an old intent's charges do
        obj["rendered_peers"] = len(ctx.store.scan("test_reuse_widget"))
        return obj

    @resource.route("POST", "/v1/test_reuse_widgets", params={"then": Str()})
    def create(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
        widget = new(ctx, "first")
        ctx.save(widget)
        ctx.emit("test_reuse_widget.created", widget)
        if params.get("then") == "save_another":  # a write after the event, which the renderer reads
            ctx.save(new(ctx, "second"))
        elif params.get("then") == "rename":  # the object itself changes after its event
            widget["name"] = "renamed"
            ctx.save(widget)
        elif params.get("then") == "annotate":  # the answer differs from what was stored, nothing is written
            return {**widget, "name": "annotated"}
        return widget

    yield resource
    registry.ROUTES[:] = [r for r in registry.ROUTES if r.resource is not resource]
    del registry.RESOURCES["test_reuse_widget"]


def test_a_write_after_the_event_or_a_changed_object_renders_afresh(emulator: Emulator, widgets: Resource) -> None:
    plain = call(emulator, "POST", "/v1/test_reuse_widgets")
    assert plain is latest_event(emulator)["data"]["object"] and plain["rendered_peers"] == 1

    after = call(emulator, "POST", "/v1/test_reuse_widgets", "then=save_another")
    snapshot = latest_event(emulator)["data"]["object"]
    assert snapshot["rendered_peers"] == 2 and after["rendered_peers"] == 3  # the response sees the second one
    assert after == fresh(emulator, "test_reuse_widget", after["id"])

    renamed = call(emulator, "POST", "/v1/test_reuse_widgets", "then=rename")
    assert renamed["name"] == "renamed" and latest_event(emulator)["data"]["object"]["name"] == "first"
    annotated = call(emulator, "POST", "/v1/test_reuse_widgets", "then=annotate")
    assert annotated["name"] == "annotated" and latest_event(emulator)["data"]["object"]["name"] == "first"


def test_a_later_request_renders_afresh_even_when_nothing_changed(emulator: Emulator) -> None:
    customer = call(emulator, "POST", "/v1/customers", "email=a%40b.c")
    event = latest_event(emulator)
    assert customer is event["data"]["object"]
    again = call(emulator, "GET", f"/v1/customers/{customer['id']}")  # another request: its own render and clock
    assert again == customer and again is not event["data"]["object"]
    coupon = call(emulator, "POST", "/v1/coupons", f"percent_off=10&redeem_by={emulator.clock.now() + 60}")
    assert coupon["valid"] is True
    emulator.clock.advance(120)
    assert call(emulator, "GET", f"/v1/coupons/{coupon['id']}")["valid"] is False


def test_a_publishable_key_gets_its_own_smaller_answer(emulator: Emulator) -> None:
    customer = call(emulator, "POST", "/v1/customers", "email=a%40b.c")
    pi = call(emulator, "POST", "/v1/payment_intents",
              f"amount=2000&currency=usd&customer={customer['id']}&payment_method=pm_card_visa")
    confirmed = call(emulator, "POST", f"/v1/payment_intents/{pi['id']}/confirm", f"client_secret={pi['client_secret']}",
                     authorization="Bearer pk_test_reuse")
    event = latest_event(emulator)
    assert event["type"] == "payment_intent.succeeded" and event["data"]["object"]["customer"] == customer["id"]
    assert confirmed["status"] == "succeeded" and "customer" not in confirmed and "metadata" not in confirmed
