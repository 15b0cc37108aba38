"""Signed webhook deliveries: every committed event goes to each matching endpoint on a background thread.

Each POST carries ``Stripe-Signature: t=<unix>,v1=<HMAC-SHA256(secret, "<t>.<payload>")>`` so the official
SDKs' ``construct_event`` verifies it. Non-2xx answers and connection errors are retried with exponential backoff
(``retry_base_seconds * 2**(attempt-1)``, up to ``max_attempts``; scaled down through ``/_emulator/webhook_settings``
so tests are fast). ``/_emulator/webhook_deliveries`` is the delivery log; an event's ``pending_webhooks`` counts
the endpoints still waiting for a successful delivery; ``Emulator.delivery_hooks`` hear every attempt as it is
answered (the episode's trace records them). Faults (``faults.py``) can make the next N events be
delivered twice or held and sent in reverse order.
"""

from __future__ import annotations

import hashlib
import heapq
import hmac
import itertools
import json
import logging
import threading
import time
from typing import Any

import httpx
from starlette.requests import Request
from starlette.responses import JSONResponse

from stripebench_emulator.model.context import RequestContext
from stripebench_emulator.model.engine import SERVICES, Emulator
from stripebench_emulator.model.registry import page_route
from stripebench_emulator.model.render import render
from stripebench_emulator.web.bodies import invalid_body, json_object, real_number, whole_number

log = logging.getLogger(__name__)
MAX_LOG = 5000  # delivery records kept (oldest dropped first)
ANSWER_CAP = 2000  # characters of the endpoint's answer a delivery hook hears
CHECKPOINT_META = "checkpoint_webhooks"  # the state file's metadata key a checkpoint keeps the deliveries under


def sign(payload: str, secret: str, timestamp: int | None = None) -> str:
    """The ``Stripe-Signature`` header value for ``payload``."""
    t = int(time.time()) if timestamp is None else timestamp
    mac = hmac.new(secret.encode(), f"{t}.{payload}".encode(), hashlib.sha256).hexdigest()
    return f"t={t},v1={mac}"


def event_matches(endpoint: dict[str, Any], event_type: str) -> bool:
    """True when an enabled endpoint subscribes to ``event_type`` (``*`` is every event)."""
    if endpoint.get("status") != "enabled" or endpoint.get("deleted"):
        return False
    return any(p == "*" or p == event_type or (p.endswith(".*") and event_type.startswith(p[:-1]))
               for p in endpoint.get("enabled_events", []))


class WebhookDispatcher:
    """Queues deliveries for committed events and sends them from one daemon thread."""

    def __init__(self, emulator: Emulator) -> None:
        self.emulator = emulator
        self.settings = {"retry_base_seconds": 60.0, "max_attempts": 8, "timeout_seconds": 10.0,
                         "hold_seconds": 2.0}
        self.deliveries: list[dict[str, Any]] = []  # the log, oldest first
        self._heap: list[tuple[float, int, dict[str, Any]]] = []
        self._counter = itertools.count()
        self._cond = threading.Condition()
        self._held: list[dict[str, Any]] = []  # out-of-order fault: events waiting to be released reversed
        self._held_since = 0.0
        self.duplicate_next = 0
        self.reorder_next = 0
        self._stop = False
        self._thread: threading.Thread | None = None
        emulator.pending_webhooks_for = self.count_endpoints
        emulator.on_event(self.on_event)
        saved = emulator.store.take_meta(CHECKPOINT_META)  # a checkpoint's deliveries (see ``saved_state``)
        if saved:
            self.restore(saved)

    # -- checkpoints --------------------------------------------------------------------------------------------------
    def saved_state(self) -> dict[str, Any]:
        """The delivery log, the deliveries still to be attempted (with their signed payloads), the settings and the
        pending faults, as JSON: what a checkpoint keeps beside the store (``checkpoint.save_checkpoint``)."""
        with self._cond:
            # queued, held for a fault, or being attempted right now: each is attempted again after a restore
            waiting = [r["id"] for r in self.deliveries if r["status"] == "pending"]
            return {"deliveries": [{**r, "attempts": list(r["attempts"])} for r in self.deliveries],
                    "waiting": waiting, "settings": dict(self.settings),
                    "duplicate_next": self.duplicate_next, "reorder_next": self.reorder_next}

    def restore(self, saved: dict[str, Any]) -> None:
        """Take back what ``saved_state`` returned: the log, and every delivery that was waiting is due now."""
        with self._cond:
            self.deliveries = [dict(r) for r in saved.get("deliveries", [])]
            self.settings.update(saved.get("settings", {}))
            self.duplicate_next = int(saved.get("duplicate_next", 0))
            self.reorder_next = int(saved.get("reorder_next", 0))
            by_id = {r["id"]: r for r in self.deliveries}
            now = time.monotonic()
            for record_id in saved.get("waiting", []):
                if record_id in by_id:
                    self._schedule(by_id[record_id], now)
            if self._heap:
                self._ensure_thread()
                self._cond.notify()

    # -- called on request threads ------------------------------------------------------------------------------
    def count_endpoints(self, event: dict[str, Any]) -> int:
        """How many endpoints ``event`` will go to (becomes its ``pending_webhooks``)."""
        endpoints = self.emulator.store.scan("webhook_endpoint")
        return sum(1 for ep in endpoints if event_matches(ep, event["type"])) if endpoints else 0

    def wants_raw(self, event: dict[str, Any]) -> bool:
        """True when a matching endpoint is pinned to an API version other than the event's (needs re-rendering)."""
        endpoints = self.emulator.store.scan("webhook_endpoint")
        return bool(endpoints) and any(ep.get("api_version") and ep["api_version"] != event["api_version"]
                                       for ep in endpoints if event_matches(ep, event["type"]))

    def _payload(self, event: dict[str, Any], endpoint: dict[str, Any]) -> str:
        """The event as JSON, rendered at the endpoint's pinned API version when it has one."""
        body = {k: v for k, v in event.items() if not k.startswith("_")}
        version = endpoint.get("api_version")
        if version and version != event["api_version"] and event.get("_raw") is not None:
            body["api_version"] = version
            body["data"] = {**body["data"], "object": render(event["_raw"], RequestContext(self.emulator, version))}
        return json.dumps(body, indent=2)

    def on_event(self, event: dict[str, Any]) -> None:
        """Queue deliveries for a committed event; never blocks on the network."""
        endpoints = self.emulator.store.scan("webhook_endpoint")
        endpoints = [ep for ep in endpoints if event_matches(ep, event["type"])] if endpoints else endpoints
        if not endpoints:
            return
        with self._cond:
            copies = 1
            if self.duplicate_next > 0:
                self.duplicate_next -= 1
                copies = 2
            records = [self._record(event, ep) for ep in endpoints for _ in range(copies)]
            if self.reorder_next > 0:
                self.reorder_next -= 1
                if not self._held:
                    self._held_since = time.monotonic()
                self._held.append({"records": records})
                if self.reorder_next == 0:
                    self._release_held()
            else:
                for record in records:
                    self._schedule(record, time.monotonic())
            self._ensure_thread()
            self._cond.notify()

    def _record(self, event: dict[str, Any], endpoint: dict[str, Any]) -> dict[str, Any]:
        record = {"id": self.emulator.ids.new("whdel"), "event": event["id"], "event_type": event["type"],
                  "endpoint": endpoint["id"], "url": endpoint["url"], "status": "pending", "attempts": [],
                  "created": self.emulator.clock.now(), "_payload": self._payload(event, endpoint),
                  "_secret": endpoint["_secret"]}
        self.deliveries.append(record)
        if len(self.deliveries) > MAX_LOG:
            del self.deliveries[: len(self.deliveries) - MAX_LOG]
        return record

    def _release_held(self) -> None:
        now = time.monotonic()
        for group in reversed(self._held):
            for record in group["records"]:
                self._schedule(record, now)
        self._held = []

    def _schedule(self, record: dict[str, Any], due: float) -> None:
        heapq.heappush(self._heap, (due, next(self._counter), record))

    def _ensure_thread(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._stop = False
            self._thread = threading.Thread(target=self._run, name="stripe-emulator-webhooks", daemon=True)
            self._thread.start()

    # -- the worker -------------------------------------------------------------------------------------------------
    def _run(self) -> None:
        with httpx.Client() as client:
            while True:
                with self._cond:
                    while True:
                        if self._stop:
                            return
                        now = time.monotonic()
                        if self._held and now - self._held_since >= self.settings["hold_seconds"]:
                            self._release_held()  # fewer events came than the fault asked for: send what we hold
                        if self._heap and self._heap[0][0] <= now:
                            _, _, record = heapq.heappop(self._heap)
                            break
                        wait = self._heap[0][0] - now if self._heap else None
                        if self._held:
                            wait = min(wait or 1.0, 0.05)
                        self._cond.wait(timeout=wait)
                self._attempt(client, record)

    def _attempt(self, client: httpx.Client, record: dict[str, Any]) -> None:
        payload = record["_payload"]
        started = time.monotonic()
        attempt: dict[str, Any] = {"at": int(time.time()), "status_code": None, "error": None}
        answer = ""
        try:
            response = client.post(record["url"], content=payload.encode(), timeout=self.settings["timeout_seconds"],
                                   headers={"Content-Type": "application/json; charset=utf-8",
                                            "Stripe-Signature": sign(payload, record["_secret"]),
                                            "User-Agent": "Stripe/1.0 (+https://stripe.com/docs/webhooks)"})
            attempt["status_code"] = response.status_code
            answer = response.text[:ANSWER_CAP]
            ok = 200 <= response.status_code < 300
        except httpx.HTTPError as exc:
            attempt["error"] = f"{type(exc).__name__}: {exc}"
            ok = False
        attempt["duration_ms"] = round((time.monotonic() - started) * 1000, 1)
        # The hooks hear the attempt before the record moves on, so whoever waits for the deliveries to settle
        # (``wait_idle``) also waits for what the hooks were told.
        self._tell_hooks(record, attempt, answer)
        with self._cond:
            record["attempts"].append(attempt)
            if ok:
                record["status"] = "succeeded"
            elif len(record["attempts"]) >= int(self.settings["max_attempts"]):
                record["status"] = "failed"
            else:
                delay = float(self.settings["retry_base_seconds"]) * 2 ** (len(record["attempts"]) - 1)
                record["next_attempt_in"] = delay
                self._schedule(record, time.monotonic() + delay)
        if ok:
            self._delivered(record["event"])

    def _tell_hooks(self, record: dict[str, Any], attempt: dict[str, Any], answer: str) -> None:
        hooks = list(self.emulator.delivery_hooks)
        if not hooks:
            return
        with self._cond:
            number = len(record["attempts"]) + 1
        public = self.attempt_record(record, attempt, number, answer)
        for hook in hooks:
            try:
                hook(public)
            except Exception:  # a broken listener must not stop deliveries
                log.exception("delivery hook %r failed on %s", hook, record["id"])

    @staticmethod
    def attempt_record(record: dict[str, Any], attempt: dict[str, Any], number: int, answer: str) -> dict[str, Any]:
        """What a delivery hook hears of one attempt: the delivery's public fields, the attempt's number and
        answer (``status_code`` None when none came, then ``error``), and the app's answer body (capped)."""
        return {"id": record["id"], "event": record["event"], "event_type": record["event_type"],
                "endpoint": record["endpoint"], "url": record["url"], "attempt": number,
                "status_code": attempt["status_code"], "error": attempt["error"],
                "duration_ms": attempt["duration_ms"], "response_body": answer}

    def _delivered(self, event_id: str) -> None:
        store = self.emulator.store
        try:
            with store.transaction():
                event = store.get("event", event_id)
                if event is not None and event.get("pending_webhooks", 0) > 0:
                    event["pending_webhooks"] -= 1
                    store.put(event)
        except Exception:  # a reset raced us: nothing to count down
            log.debug("could not update pending_webhooks of %s", event_id, exc_info=True)

    # -- control ----------------------------------------------------------------------------------------------------
    def public_log(self, event: str | None = None, endpoint: str | None = None) -> list[dict[str, Any]]:
        """Delivery records without secrets, newest first."""
        with self._cond:
            rows = [{k: (list(v) if k == "attempts" else v) for k, v in r.items() if not k.startswith("_")}
                    for r in reversed(self.deliveries)
                    if (event is None or r["event"] == event) and (endpoint is None or r["endpoint"] == endpoint)]
        return rows

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """Block until nothing is queued, held or pending (tests); True if idle in time."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._cond:
                busy = self._heap or self._held or any(r["status"] == "pending" for r in self.deliveries)
            if not busy:
                return True
            time.sleep(0.01)
        return False

    def reset(self) -> None:
        """Forget queued deliveries, the log and webhook faults."""
        with self._cond:
            self._heap.clear()
            self._held.clear()
            self.deliveries.clear()
            self.duplicate_next = self.reorder_next = 0
            self.settings.update(retry_base_seconds=60.0, max_attempts=8, timeout_seconds=10.0, hold_seconds=2.0)

    def close(self) -> None:
        """Stop the worker thread."""
        with self._cond:
            self._stop = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=5)


@page_route("/_emulator/webhook_deliveries", methods=["GET"])
def _deliveries_page(emulator: Emulator):
    async def endpoint(request: Request) -> JSONResponse:
        q = request.query_params
        rows = emulator.webhooks.public_log(q.get("event"), q.get("endpoint"))
        return JSONResponse({"object": "list", "data": rows})
    return endpoint


# Each setting's range: the delivery thread does arithmetic with them (``2**attempt`` times the base, a timeout).
SETTING_RANGES: dict[str, tuple[float, float]] = {"retry_base_seconds": (0, 86400), "max_attempts": (1, 100),
                                                  "timeout_seconds": (0.001, 600), "hold_seconds": (0, 3600)}


@page_route("/_emulator/webhook_settings", methods=["GET", "POST"])
def _settings_page(emulator: Emulator):
    async def endpoint(request: Request) -> JSONResponse:
        hooks = emulator.webhooks
        if request.method == "POST":
            try:
                changes = {}
                for key, value in json_object(await request.body()).items():
                    if key not in SETTING_RANGES:
                        raise ValueError(f"Unknown setting {key!r}; known: {', '.join(hooks.settings)}")
                    lowest, highest = SETTING_RANGES[key]
                    changes[key] = (whole_number(value, key, int(lowest), int(highest)) if key == "max_attempts"
                                    else real_number(value, key, lowest, highest))
            except ValueError as exc:
                return invalid_body(f"Send a JSON object of settings: {exc}")
            hooks.settings.update(changes)  # all or nothing
        return JSONResponse(hooks.settings)
    return endpoint


SERVICES["webhooks"] = WebhookDispatcher
