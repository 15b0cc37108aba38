"""``/v1/events``: list and retrieve the events every state change appends (made by ``context.emit_event``)."""

from __future__ import annotations

from typing import Any

from stripebench_emulator.model.context import LIST_PARAMS, RequestContext
from stripebench_emulator.model.errors import invalid
from stripebench_emulator.model.params import Array, Str
from stripebench_emulator.model.registry import Resource

resource = Resource("event", prefix="evt", noun="event")


@resource.route("GET", "/v1/events", params={**LIST_PARAMS, "type": Str(), "types": Array(Str(), max_items=20),
                                            "delivery_success": Str()})
def list_events(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """List events, newest first; ``type`` accepts a ``*`` wildcard (``customer.*``)."""
    if params.get("type") and params.get("types"):
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
