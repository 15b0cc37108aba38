"""Events: every state change appends an ``evt_`` object; ``/v1/events`` lists and retrieves them.

``emit_event`` is the one place events are made. Listeners registered with ``Emulator.on_event`` (webhook
delivery, the episode watcher) are called after the request's transaction commits, never for rolled-back work.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from stripebench_emulator.context import LIST_PARAMS, RequestContext
from stripebench_emulator.params import Array, Str
from stripebench_emulator.registry import Resource
from stripebench_emulator.render import render
from stripebench_emulator.store import clone

if TYPE_CHECKING:
    from stripebench_emulator.engine import Emulator

resource = Resource("event", prefix="evt", noun="event")


def emit_event(emulator: "Emulator", event_type: str, obj: dict[str, Any], *, previous: dict[str, Any] | None = None,
               request_id: str | None = None, idempotency_key: str | None = None) -> dict[str, Any] | None:
    """Append an event whose ``data.object`` is ``obj`` rendered at the account's API version.

    For updates pass ``previous`` (the object before the change); ``data.previous_attributes`` then holds the old
    values of what changed, and no event is made when nothing changed.
    """
    version = emulator.api_version
    snapshot_ctx = emulator.snapshot_ctx
    if snapshot_ctx is None or snapshot_ctx.api_version != version or snapshot_ctx.base_url != emulator.base_url:
        # a plain context at the account's version (no expand, secret key); renderers only read it, so one serves
        # every event until the version or address changes
        snapshot_ctx = emulator.snapshot_ctx = RequestContext(emulator, version)
    # The handler may go on changing ``obj`` after emitting, and the event is stored as is: snapshot the stored
    # copy when ``obj`` was just saved (stored objects never change in place, so sharing their nested values is
    # safe and saves a deep copy), else a deep copy of ``obj``.
    stored = emulator.store.peek(obj.get("object", ""), obj.get("id", ""))
    if stored is not None and stored == obj:
        snapshot = render(stored, snapshot_ctx)
    else:
        stored, snapshot = None, render(clone(obj), snapshot_ctx, private=True)
    data: dict[str, Any] = {"object": snapshot}
    if previous is not None:
        changes = previous_attributes(render(clone(previous), snapshot_ctx, private=True), snapshot)
        if not changes:
            return None
        data["previous_attributes"] = changes
    event = {
        "id": emulator.ids.new("evt"),
        "object": "event",
        "api_version": version,
        "created": emulator.clock.now(),
        "data": data,
        "livemode": False,
        "pending_webhooks": 0,
        "request": _request_hash(emulator, request_id, idempotency_key),
        "type": event_type,
    }
    event["pending_webhooks"] = pending = emulator.pending_webhooks_for(event)
    webhooks = getattr(emulator, "webhooks", None)
    # an endpoint pinned to another API version (only an endpoint the event goes to counts: none when none pends)
    if pending and webhooks is not None and webhooks.wants_raw(event):
        event["_raw"] = clone(obj)
    emulator.store.put(event, copy=False)  # built here from copies; listeners only read it
    emulator.queue_event(event)
    # what ``reusable_snapshot`` may give as the response, if the request ends with no other write
    emulator.last_snapshot = (stored, snapshot, snapshot_ctx, emulator.store.writes, request_id) \
        if stored is not None and request_id is not None else None
    return event


def _request_hash(emulator: "Emulator", request_id: str | None, idempotency_key: str | None) -> dict[str, Any]:
    """An event's ``request``: the previous event's own hash when it came from the same request (confirming a
    PaymentIntent emits two events, and so on; events are read only once stored)."""
    last = emulator.last_request_hash
    if last is None or last["id"] != request_id or last["idempotency_key"] != idempotency_key:
        last = emulator.last_request_hash = {"id": request_id, "idempotency_key": idempotency_key}
    return last


def reusable_snapshot(emulator: "Emulator", result: Any, ctx: RequestContext) -> dict[str, Any] | None:
    """The last event's ``data.object`` when it is what rendering ``result`` for ``ctx`` would give: the event is
    this request's own (a renderer may read the clock), ``result`` is the stored object that snapshot was rendered
    from, unchanged, nothing was written since, and ``ctx`` renders as events do (their API version and address,
    no ``expand[]``, a secret key). Saves rendering a just-saved object twice (the event's copy and the response);
    the response shares the event's values, read only."""
    if emulator.last_snapshot is None or ctx.expand_paths or ctx.publishable:
        return None
    stored, snapshot, snapshot_ctx, writes, request_id = emulator.last_snapshot
    if request_id != ctx.request_id or writes != emulator.store.writes:
        return None
    if ctx.api_version != snapshot_ctx.api_version or ctx.base_url != snapshot_ctx.base_url:
        return None
    if type(result) is not dict or result.get("id") != stored.get("id") or result != stored:
        return None
    return snapshot


def previous_attributes(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """Old values of the fields that differ; nested hashes (metadata, address) list only their changed keys."""
    changed: dict[str, Any] = {}
    for key in before.keys() | after.keys():
        old, new = before.get(key), after.get(key)
        if old == new:
            continue
        if isinstance(old, dict) and isinstance(new, dict) and "object" not in old:
            changed[key] = previous_attributes(old, new)
        else:
            changed[key] = old
    return changed


@resource.route("GET", "/v1/events", params={**LIST_PARAMS, "type": Str(), "types": Array(Str(), max_items=20),
                                            "delivery_success": Str()})
def list_events(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """List events, newest first; ``type`` accepts a ``*`` wildcard (``customer.*``)."""
    if params.get("type") and params.get("types"):
        from stripebench_emulator.errors import invalid

        raise invalid("You may only specify one of these parameters: type, types.", param="type")
    wanted = [params["type"]] if params.get("type") else params.get("types") or []

    def matches(event: dict[str, Any]) -> bool:
        return not wanted or any(_type_matches(event["type"], pattern) for pattern in wanted)

    return ctx.list_page("event", params, "/v1/events", where=matches)


@resource.route("GET", "/v1/events/{id}")
def retrieve_event(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Retrieve one event."""
    return ctx.get("event", id)


def _type_matches(event_type: str, pattern: str) -> bool:
    if pattern.endswith("*"):
        return event_type.startswith(pattern[:-1])
    return event_type == pattern
