"""The per-request context handlers receive: version, request id, clock, ids, storage, events and list pages.

Events: every state change appends an ``evt_`` object through ``emit_event``, the one place events are made.
Listeners registered with ``Emulator.on_event`` (webhook delivery, the episode watcher) are called after the
request's transaction commits, never for rolled-back work. ``api/events.py`` lists and retrieves them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from stripebench_emulator.model.engine import Emulator
from stripebench_emulator.model.errors import no_such
from stripebench_emulator.model.params import Int, Param, Range, Str, matches_range
from stripebench_emulator.model.registry import RESOURCES
from stripebench_emulator.model.render import render
from stripebench_emulator.model.store import clone
from stripebench_emulator.model.versions import at_least

# Every list endpoint accepts these; add resource filters next to them: ``params={**LIST_PARAMS, "customer": Str()}``.
LIST_PARAMS: dict[str, Param] = {
    "limit": Int(min=1, max=100),
    "starting_after": Str(),
    "ending_before": Str(),
    "created": Range(),
}


class RequestContext:
    """What a handler may use; all writes go through ``save``/``remove``/``emit`` so a failed request rolls back."""

    def __init__(self, emulator: Emulator, api_version: str, request_id: str | None = None,
                 idempotency_key: str | None = None, method: str = "GET", path: str = "",
                 base_url: str | None = None) -> None:
        self.emulator = emulator
        self.store = emulator.store
        self.api_version = api_version
        self.request_id = request_id
        self.idempotency_key = idempotency_key
        self.method = method
        self.path = path
        self.expand_paths: list[str] = []
        # True when the caller used a pk_test_ key (routes marked publishable must then check a client_secret).
        self.publishable = False
        # The address the caller reached us at (for URLs such as a Checkout Session's ``url``).
        self.base_url = base_url or emulator.base_url

    # -- time, ids, versions ---------------------------------------------------------------------------------------
    def now(self) -> int:
        """The emulator clock, in Unix seconds (use for ``created``)."""
        return self.emulator.clock.now()

    def new_id(self, prefix: str) -> str:
        """A new Stripe-style id (seeded when the emulator has a seed)."""
        return self.emulator.ids.new(prefix)

    def version_at_least(self, date: str) -> bool:
        """True when this request's API version is on or after ``date`` (``YYYY-MM-DD``)."""
        return at_least(self.api_version, date)

    # -- objects ----------------------------------------------------------------------------------------------------
    def get(self, kind: str, object_id: str, param: str = "id", noun: str | None = None) -> dict[str, Any]:
        """The object, or Stripe's 404 ``No such <noun>: '<id>'`` naming ``param``."""
        obj = self.store.borrow(kind, object_id)
        if obj is None or obj.get("deleted"):
            resource = RESOURCES.get(kind)
            raise no_such(noun or (resource.noun if resource else kind), object_id, param=param)
        return obj

    def peek(self, kind: str, object_id: str, param: str = "id", noun: str | None = None) -> dict[str, Any]:
        """Like ``get`` but the stored object itself, not a copy: read it, never change it (a handler may return
        it as its response)."""
        obj = self.store.peek(kind, object_id)
        if obj is None or obj.get("deleted"):
            resource = RESOURCES.get(kind)
            raise no_such(noun or (resource.noun if resource else kind), object_id, param=param)
        return obj

    def find(self, kind: str, object_id: str) -> dict[str, Any] | None:
        """The object or None (no error)."""
        return self.store.borrow(kind, object_id)

    def save(self, obj: dict[str, Any]) -> dict[str, Any]:
        """Store a new or changed object; returns it."""
        return self.store.put(obj)

    def remove(self, kind: str, object_id: str) -> None:
        """Delete an object from storage."""
        self.store.delete(kind, object_id)

    def emit(self, event_type: str, obj: dict[str, Any], previous: dict[str, Any] | None = None) -> dict[str, Any] | None:
        """Record an event for a state change; for ``*.updated`` pass the object as it was before (``previous``)."""
        return emit_event(self.emulator, event_type, obj, previous=previous,
                           request_id=self.request_id, idempotency_key=self.idempotency_key)

    def render(self, obj: object) -> Any:
        """Render an object for this request's version (for embedding a full object inside another)."""
        return render(obj, self)

    # -- lists ------------------------------------------------------------------------------------------------------
    def list_page(self, kind: str, params: dict[str, Any], url: str,
                  where: Callable[[dict[str, Any]], bool] | None = None,
                  items: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """A Stripe list page over ``kind`` (newest first), applying ``created``, cursors, ``limit`` and ``where``.

        Return it as it is: its ``data`` holds the stored objects themselves (not copies), read only.
        """
        rows = items if items is not None else self.store.newest_first(kind)
        bounds = params.get("created")

        def wanted(o: dict[str, Any]) -> bool:
            return (not o.get("deleted") and (not bounds or matches_range(o.get("created", 0), bounds))
                    and (where is None or where(o)))

        limit = params.get("limit") or 10
        noun = RESOURCES[kind].noun if kind in RESOURCES else kind
        # Walk newest first and stop once the page is full: a list costs O(page), not O(all objects).
        if params.get("starting_after"):
            cursor, seen, page = params["starting_after"], False, []
            for o in rows:
                if not wanted(o):
                    continue
                if seen:
                    page.append(o)
                    if len(page) > limit:
                        break
                elif o["id"] == cursor:
                    seen = True
            if not seen:
                raise no_such(noun, cursor, param="starting_after")
            page, has_more = page[:limit], len(page) > limit
        elif params.get("ending_before"):
            cursor, before = params["ending_before"], []
            for o in rows:
                if wanted(o):
                    if o["id"] == cursor:
                        break
                    before.append(o)
            else:
                raise no_such(noun, cursor, param="ending_before")
            page, has_more = before[-limit:], len(before) > limit
        else:
            page = []
            check = wanted if bounds or where is not None else None  # else only deleted ones are left out
            for o in rows:
                if not o.get("deleted") if check is None else check(o):
                    page.append(o)
                    if len(page) > limit:
                        break
            page, has_more = page[:limit], len(page) > limit
        # The stored objects themselves: the page is only ever rendered (which copies) and returned.
        return {"object": "list", "data": page, "has_more": has_more, "url": url}


# -- events ------------------------------------------------------------------------------------------------------

def emit_event(emulator: Emulator, event_type: str, obj: dict[str, Any], *, previous: dict[str, Any] | None = None,
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


def _request_hash(emulator: Emulator, request_id: str | None, idempotency_key: str | None) -> dict[str, Any]:
    """An event's ``request``: the previous event's own hash when it came from the same request (confirming a
    PaymentIntent emits two events, and so on; events are read only once stored)."""
    last = emulator.last_request_hash
    if last is None or last["id"] != request_id or last["idempotency_key"] != idempotency_key:
        last = emulator.last_request_hash = {"id": request_id, "idempotency_key": idempotency_key}
    return last


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
