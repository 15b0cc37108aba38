"""Fault injection (emulator-only, ``/_emulator/faults``): make the next N matching API requests fail or slow down,
or the next N events' webhooks arrive twice or out of order.

``POST /_emulator/faults`` with JSON, one rule per call:

* ``{"kind": "status", "status": 429, "method": "POST", "path": "/v1/payment_intents*", "count": 2}`` — Stripe's
  429 ``rate_limit`` (or 500 ``api_error``, or any 4xx/5xx) instead of the real answer; ``"should_retry": true``
  adds ``Stripe-Should-Retry: true`` (the SDKs retry 429s only when told to).
* ``{"kind": "latency", "latency_ms": 250, "path": "/v1/customers*", "count": 5}`` — answer after a delay
  (asynchronous: other requests are not held up).
* ``{"kind": "webhook_duplicate", "count": 3}`` / ``{"kind": "webhook_out_of_order", "count": 3}``.

``method`` defaults to any, ``path`` is a glob (default ``*``), ``count`` defaults to 1 (at most 1,000,000).
``GET`` lists the active rules, ``DELETE`` clears them. Rules are consumed in the order they were added.
"""

from __future__ import annotations

import asyncio
import fnmatch
import threading
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse

from stripebench_emulator.model.engine import SERVICES, Emulator
from stripebench_emulator.model.errors import StripeError
from stripebench_emulator.model.registry import page_route
from stripebench_emulator.web.bodies import invalid_body, json_object, real_number, whole_number
from stripebench_emulator.web.dispatch import Reply

MAX_COUNT = 1_000_000  # the most requests or events one rule may cover
_RATE = ("Request rate limit exceeded. Learn more about rate limits here https://stripe.com/docs/rate-limits.")


def error_for(status: int) -> StripeError:
    """The Stripe-shaped error a status fault answers with."""
    if status == 429:
        return StripeError(_RATE, status=429, code="rate_limit")
    if status >= 500:
        return StripeError("An unknown error occurred", status=status, type="api_error")
    return StripeError("Injected fault", status=status)


class Faults:
    """The active rules and the request hook that applies them."""

    def __init__(self, emulator: Emulator) -> None:
        self.emulator = emulator
        self.rules: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._ids = 0
        # the hook is in emulator.request_hooks only while there are rules: with none, requests skip the hooks

    def add(self, spec: dict[str, Any]) -> dict[str, Any]:
        """Validate and add one rule; returns it (webhook faults go to the dispatcher)."""
        kind = spec.get("kind")
        count = whole_number(spec.get("count", 1), "count", 1, MAX_COUNT)
        if kind in ("webhook_duplicate", "webhook_out_of_order"):
            hooks = self.emulator.webhooks
            with hooks._cond:
                if kind == "webhook_duplicate":
                    hooks.duplicate_next += count
                else:
                    hooks.reorder_next += count
            return {"kind": kind, "count": count}
        if kind not in ("status", "latency"):
            raise ValueError("kind must be one of status, latency, webhook_duplicate, webhook_out_of_order")
        rule = {"kind": kind, "method": str(spec.get("method", "*")).upper(), "path": str(spec.get("path", "*")),
                "remaining": count}
        if kind == "status":
            rule["status"] = whole_number(spec.get("status", 500), "status (an HTTP error status)", 400, 599)
            rule["should_retry"] = spec.get("should_retry")
        else:
            rule["latency_ms"] = real_number(spec.get("latency_ms", 100), "latency_ms", 0, 60000)
        with self._lock:
            self._ids += 1
            rule["id"] = f"fault_{self._ids}"
            self.rules.append(rule)
            if self.hook not in self.emulator.request_hooks:
                self.emulator.request_hooks.append(self.hook)
        return rule

    def _unhook(self) -> None:  # with self._lock held, once no rule is left
        if self.hook in self.emulator.request_hooks:
            self.emulator.request_hooks.remove(self.hook)

    def _take(self, method: str, path: str) -> dict[str, Any] | None:
        if not self.rules:  # the common case costs one attribute read
            return None
        with self._lock:
            for rule in self.rules:
                if rule["method"] in ("*", method) and fnmatch.fnmatchcase(path, rule["path"]):
                    rule["remaining"] -= 1
                    if rule["remaining"] <= 0:
                        self.rules.remove(rule)
                        if not self.rules:
                            self._unhook()
                    return rule
        return None

    def hook(self, method: str, path: str, headers: dict[str, str]) -> Any:
        """Request hook: None (no rule matches, no await needed) or a coroutine that delays or answers."""
        rule = self._take(method, path)
        return None if rule is None else self._apply(rule)

    async def _apply(self, rule: dict[str, Any]) -> Reply | None:
        if rule["kind"] == "latency":
            await asyncio.sleep(rule["latency_ms"] / 1000)
            return None
        error = error_for(rule["status"])
        reply = Reply(error.status, error.body())
        if rule.get("should_retry") is not None:
            reply.headers["Stripe-Should-Retry"] = "true" if rule["should_retry"] in (True, "true") else "false"
        return reply

    def reset(self) -> None:
        """Drop every rule."""
        with self._lock:
            self.rules.clear()
            self._unhook()


@page_route("/_emulator/faults", methods=["GET", "POST", "DELETE"])
def _faults_page(emulator: Emulator):
    async def endpoint(request: Request) -> JSONResponse:
        faults = emulator.faults
        if request.method == "POST":
            try:
                rule = faults.add(json_object(await request.body()))
            except (ValueError, TypeError) as exc:
                return invalid_body(str(exc))
            return JSONResponse(rule)
        if request.method == "DELETE":
            faults.reset()
            with emulator.webhooks._cond:
                emulator.webhooks.duplicate_next = emulator.webhooks.reorder_next = 0
        hooks = emulator.webhooks
        return JSONResponse({"rules": list(faults.rules), "webhook_duplicate": hooks.duplicate_next,
                             "webhook_out_of_order": hooks.reorder_next})
    return endpoint


SERVICES["faults"] = Faults
