"""Webhook endpoints: create (returns ``secret`` once), retrieve, update (``disabled``), delete, list.

Deliveries themselves are ``stripebench_emulator.web.webhooks``.
"""

from __future__ import annotations

from typing import Any

from stripebench_emulator.model.context import LIST_PARAMS, RequestContext
from stripebench_emulator.model.errors import invalid
from stripebench_emulator.model.fields import apply_metadata, deleted_stub
from stripebench_emulator.model.params import Array, Bool, Metadata, Str
from stripebench_emulator.model.registry import Resource
from stripebench_emulator.model.versions import check_version

resource = Resource("webhook_endpoint", prefix="we", noun="webhook endpoint")

EDITABLE = {"url": Str(), "enabled_events": Array(Str(), max_items=500), "description": Str(emptyable=True),
            "metadata": Metadata()}


def _check(params: dict[str, Any]) -> None:
    url = params.get("url")
    if url is not None and not url.startswith(("http://", "https://")):
        raise invalid(f"Invalid URL: {url}. URLs must begin with http:// or https://", param="url", code="url_invalid")
    if "enabled_events" in params and not params["enabled_events"]:
        raise invalid("enabled_events must contain at least one event type, or '*'.", param="enabled_events")


@resource.route("POST", "/v1/webhook_endpoints", params={**EDITABLE, "url": Str(required=True),
                                                        "enabled_events": Array(Str(), required=True, max_items=500),
                                                        "api_version": Str(), "connect": Bool()})
def create(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """Create an endpoint; the response is the only place its ``whsec_`` secret appears."""
    _check(params)
    if params.get("api_version"):
        check_version(params["api_version"], param="api_version")
    obj = {"id": ctx.new_id("we"), "object": "webhook_endpoint", "api_version": params.get("api_version"),
           "application": None, "created": ctx.now(), "description": params.get("description"),
           "enabled_events": params["enabled_events"], "livemode": False,
           "metadata": apply_metadata({}, params.get("metadata") or {}), "status": "enabled", "url": params["url"],
           "_secret": "whsec_" + ctx.emulator.ids.secret("whsec", 32)}
    ctx.save(obj)
    return {**obj, "secret": obj["_secret"]}


@resource.route("GET", "/v1/webhook_endpoints/{id}")
def retrieve(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Retrieve an endpoint (without its secret)."""
    return ctx.get("webhook_endpoint", id)


@resource.route("POST", "/v1/webhook_endpoints/{id}", params={**EDITABLE, "disabled": Bool()})
def update(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Update url, events, description, metadata; ``disabled=true`` stops deliveries."""
    obj = ctx.get("webhook_endpoint", id)
    _check(params)
    for key in ("url", "enabled_events", "description"):
        if key in params:
            obj[key] = params[key]
    if "metadata" in params:
        obj["metadata"] = apply_metadata(obj.get("metadata"), params["metadata"])
    if "disabled" in params:
        obj["status"] = "disabled" if params["disabled"] else "enabled"
    ctx.save(obj)
    return obj


@resource.route("DELETE", "/v1/webhook_endpoints/{id}")
def delete(ctx: RequestContext, params: dict[str, Any], id: str) -> dict[str, Any]:
    """Delete an endpoint."""
    obj = ctx.get("webhook_endpoint", id)
    ctx.remove("webhook_endpoint", id)
    return deleted_stub(obj)


@resource.route("GET", "/v1/webhook_endpoints", params=LIST_PARAMS)
def list_endpoints(ctx: RequestContext, params: dict[str, Any]) -> dict[str, Any]:
    """List endpoints."""
    return ctx.list_page("webhook_endpoint", params, "/v1/webhook_endpoints")
