"""One API request from raw HTTP parts to a Stripe-shaped response: auth, version, params, idempotency, expand."""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import logging
import traceback
from dataclasses import dataclass, field
from typing import Any, cast

import orjson

from stripebench_emulator.model.context import RequestContext
from stripebench_emulator.model.engine import Emulator
from stripebench_emulator.model.errors import ParamError, StripeError, invalid
from stripebench_emulator.model.forms import parse_form
from stripebench_emulator.model.params import Array, Str, validate
from stripebench_emulator.model.registry import match
from stripebench_emulator.model.render import expand, render
from stripebench_emulator.model.versions import check_version
from stripebench_emulator.web import sdk_params

log = logging.getLogger(__name__)

_NO_KEY = ("You did not provide an API key. You need to provide your API key in the Authorization header, using "
           "Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY'). See https://stripe.com/docs/api#authentication "
           "for details, or we can help at https://support.stripe.com/.")
_EXPAND = Array(Str(), max_items=100)
IDEMPOTENCY_TTL = 24 * 3600
# The largest request body served (form or query): far above any real request (a Checkout Session with 100 line
# items and full metadata is a few tens of KB), small enough that one request cannot take the emulator's memory.
MAX_BODY_BYTES = 1024 * 1024
_PK_REFUSED = ("This API call cannot be made with a publishable API key. Please use a secret API key. You can find a "
               "list of your API keys at https://dashboard.stripe.com/account/apikeys.")


@dataclass(slots=True)
class Reply:
    """An HTTP response as plain data."""

    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)

    def encoded(self) -> bytes:
        # Pretty like Stripe's responses; orjson indents in C (the standard library's indent path is pure Python,
        # about a third of the emulator's CPU per request).
        try:
            return orjson.dumps(self.body, option=orjson.OPT_INDENT_2)
        except (TypeError, orjson.JSONEncodeError):  # e.g. an integer beyond 64 bits
            return json.dumps(self.body, indent=2).encode()


def handle(emulator: Emulator, method: str, path: str, query: str, body: bytes, headers: dict[str, str],
           lowered: bool = False) -> Reply:
    """Serve one ``/v1`` request; never raises (bugs become Stripe's ``api_error`` 500 and a log line).

    ``lowered``: the header names are lower case already (ASGI's are), so no lower-cased copy is made.
    """
    if not lowered:
        headers = {k.lower(): v for k, v in headers.items()}
    request_id = "req_" + emulator.ids.token("req", 14)
    version = emulator.api_version
    try:
        if len(body) > MAX_BODY_BYTES:
            raise too_large(len(body))
        key = _authenticate(headers.get("authorization"))
        if headers.get("stripe-version"):
            version = check_version(headers["stripe-version"].strip())
        reply = _serve(emulator, method, path, query, body, headers, request_id, version, key)
    except StripeError as exc:
        reply = Reply(exc.status, exc.body(request_id))
    except Exception:  # noqa: BLE001 - a bug in the emulator: report it like Stripe would, keep the traceback for the log
        log.error("emulator bug on %s %s\n%s", method, path, traceback.format_exc())
        reply = Reply(500, StripeError("An unknown error occurred", status=500, type="api_error").body(request_id))
    return finish(reply, request_id, version)


def too_large(size: int | None = None) -> StripeError:
    """The 413 for a request body over ``MAX_BODY_BYTES`` (``size`` when it is known)."""
    told = f"is {size:,} bytes" if size is not None else "is longer"
    return StripeError(f"The request body {told}; at most {MAX_BODY_BYTES:,} bytes (1 MiB) are accepted.", status=413)


def finish(reply: Reply, request_id: str, version: str) -> Reply:
    """Add the headers every response carries (``Request-Id``, ``Stripe-Version``)."""
    reply.headers.setdefault("Request-Id", request_id)
    reply.headers.setdefault("Stripe-Version", version)
    return reply


@functools.lru_cache(maxsize=256)  # a client sends the same header every time; refusals raise, so are not kept
def _authenticate(authorization: str | None) -> str:
    if not authorization:
        raise StripeError(_NO_KEY, status=401)
    scheme, _, value = authorization.strip().partition(" ")
    value = value.strip()
    if scheme.lower() == "basic":
        try:
            value = base64.b64decode(value, validate=True).decode().partition(":")[0]
        except (ValueError, UnicodeDecodeError):
            raise StripeError("Invalid API Key provided: " + _mask(value), status=401) from None
    elif scheme.lower() != "bearer":
        raise StripeError(_NO_KEY, status=401)
    if not value:
        raise StripeError(_NO_KEY, status=401)
    if value.startswith(("sk_live_", "rk_live_")):
        raise StripeError("Invalid API Key provided: " + _mask(value) + ". This emulator only accepts test mode keys "
                          "(sk_test_… or rk_test_…).", status=401, code="api_key_invalid")
    if value.startswith("pk_live_"):
        raise StripeError("Invalid API Key provided: " + _mask(value) + ". This emulator only accepts test mode keys.",
                          status=401, code="api_key_invalid")
    if value.startswith("pk_test_") and len(value) > len("pk_test_"):
        return value  # only routes marked publishable accept it (checked once the route is known)
    if not value.startswith(("sk_test_", "rk_test_")) or len(value) <= len("sk_test_"):
        raise StripeError("Invalid API Key provided: " + _mask(value), status=401, code="api_key_invalid")
    return value


def _mask(key: str) -> str:
    prefix = key[:8] if key[:3] in ("sk_", "rk_", "pk_") else ""
    return prefix + "*" * max(len(key) - len(prefix) - 4, 0) + key[-4:]


def _serve(emulator: Emulator, method: str, path: str, query: str, body: bytes, headers: dict[str, str],
           request_id: str, version: str, key: str = "sk_test_") -> Reply:
    route, path_params, path_exists = match(method, path)
    if route is None:
        raise StripeError(f"Unrecognized request URL ({method}: {path}). Please see https://stripe.com/docs or we can "
                          "help at https://support.stripe.com/.", status=404)
    publishable = key.startswith("pk_")
    if publishable and not route.publishable:
        raise StripeError(_PK_REFUSED, status=401, code="secret_key_required")
    raw = parse_form(query)
    if method == "POST" and body:
        if "json" in headers.get("content-type", ""):
            raise invalid("Invalid request: the Stripe API takes form-encoded bodies "
                          "(Content-Type: application/x-www-form-urlencoded), not JSON.")
        try:
            text = body.decode()
        except UnicodeDecodeError:
            raise invalid("Invalid request body: it is not valid UTF-8 form data.") from None
        raw.update(parse_form(text))
    expand_paths = _EXPAND.clean(raw.pop("expand"), "expand") if "expand" in raw else []

    idem_key = headers.get("idempotency-key") if method == "POST" else None
    fingerprint = ""
    if idem_key:  # only keyed requests need it (the hash of the whole request is a noticeable cost)
        fingerprint = hashlib.sha256(json.dumps([method, path, raw, expand_paths], sort_keys=True).encode()).hexdigest()
        if len(idem_key) > 255:
            raise invalid("Idempotency-Key must be at most 255 characters long.", param="Idempotency-Key")
        stored = emulator.store.idempotency.get(idem_key)
        if stored is not None:
            if stored["fingerprint"] != fingerprint:
                raise StripeError(
                    "Keys for idempotent requests can only be used with the same parameters they were first used "
                    f"with. Try using a key other than '{idem_key}' if you meant to execute a different request.",
                    type="idempotency_error")
            return Reply(stored["status"], stored["body"],
                         {"Idempotent-Replayed": "true", "Original-Request": stored["request_id"],
                          "Idempotency-Key": idem_key})

    try:
        params = validate(route.params, raw)
    except ParamError as exc:  # a parameter Stripe declares but we do not model is not "unknown" (sdk_params)
        raise sdk_params.refine(route, exc) from None
    host = headers.get("host")
    ctx = RequestContext(emulator, version, request_id, idem_key, method, path,
                         base_url=f"http://{host}" if host else None)
    ctx.expand_paths = expand_paths
    ctx.publishable = publishable
    try:
        with emulator.transaction():
            result = route.handler(ctx, params, **path_params)
            if isinstance(result, StripeError):  # an error whose side effects stay (a declined charge is kept)
                committed_error = result
            else:
                committed_error = None
                # a handler's result shares nested values with stored objects (ctx.get/find borrow shallow copies,
                # saves keep shallow copies, ctx.peek and lists give stored objects): render copies what it changes
                rendered = reusable_snapshot(emulator, result, ctx)
                if rendered is None:
                    rendered = expand(render(result, ctx), expand_paths, ctx)
        reply = (Reply(committed_error.status, committed_error.body(request_id)) if committed_error
                 else Reply(200, cast("dict[str, Any]", rendered)))
    except ParamError:
        raise  # failed validation inside a handler: like Stripe, not saved under the idempotency key
    except StripeError as exc:
        reply = Reply(exc.status, exc.body(request_id))
    if idem_key:
        with emulator.store.lock:
            emulator.store.put_idempotent(idem_key, {"fingerprint": fingerprint, "status": reply.status,
                                                     "body": reply.body, "request_id": request_id,
                                                     "created": emulator.clock.now()})
            emulator.store.flush_idempotency()
            if len(emulator.store.idempotency) % 1000 == 0:  # the SDKs send a key with every POST
                emulator.store.prune_idempotency(emulator.clock.now() - IDEMPOTENCY_TTL)
        reply.headers["Idempotency-Key"] = idem_key
    return reply


def reusable_snapshot(emulator: Emulator, result: object, ctx: RequestContext) -> dict[str, Any] | None:
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
