"""The emulator's state and request pipeline, independent of HTTP: one ``Emulator`` per running server."""

from __future__ import annotations

import logging
import secrets
import threading
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, cast

from stripebench_emulator.model.determinism import Clock, IdFactory
from stripebench_emulator.model.errors import StripeError
from stripebench_emulator.model.problems import BadOption
from stripebench_emulator.model.store import Store
from stripebench_emulator.model.versions import check_version, default_api_version

if TYPE_CHECKING:
    from stripebench_emulator.model.hooks import DeliveryHook, ResponseHook

log = logging.getLogger(__name__)
EventListener = Callable[[dict[str, Any]], None]
TOKEN_PREFIX = "sbctl_"  # the control token's (control.CONTROL_HEADER carries it)
# Parts of an account that belong to the web layer (webhook deliveries, fault rules) register a maker here when
# their module is imported (the package's front imports them through the app), and every Emulator makes one of each
# under that name: the engine keeps them without importing upward. Each has reset(); close() when it has one.
SERVICES: dict[str, Callable[[Emulator], Any]] = {}


def new_control_token() -> str:
    """A fresh, unguessable control token."""
    return TOKEN_PREFIX + secrets.token_urlsafe(24)


class Emulator:
    """Stripe account state: objects, events, ids, clock, API version default and event listeners."""

    def __init__(self, seed: int | None = None, state: str | Path | None = None, api_version: str | None = None,
                 control_token: str | None = None) -> None:
        self.seed = seed
        # what every /_emulator/ request must carry (control.CONTROL_HEADER); made here unless given
        self.control_token = control_token or new_control_token()
        self.base_url = "http://127.0.0.1:12111"  # set to the real address by whoever starts serving
        self.store = Store(state)
        meta = self.store.meta
        self.ids = IdFactory(seed, meta.get("id_counters"))
        clock = meta.get("clock", {})
        self.clock = Clock(offset=clock.get("offset", 0.0), frozen_at=clock.get("frozen_at"))
        try:
            self.api_version = check_version(api_version or meta.get("api_version") or default_api_version())
        except StripeError:
            raise BadOption(f"{api_version!r} is not a Stripe API version (e.g. 2025-09-30.clover)") from None
        self.store.meta_source = self._meta
        self._listeners: list[EventListener] = []
        self._queued: list[dict[str, Any]] | None = None  # the running transaction's events
        self._listener_lock = threading.Lock()
        self.snapshot_ctx: Any = None  # the RequestContext context.emit_event renders snapshots with (kept by it)
        self.last_snapshot: Any = None  # the last event's snapshot, for dispatch.reusable_snapshot (kept by emit_event)
        self.last_request_hash: Any = None  # the last event's ``request`` hash, shared by the next of its request
        # Hooks later phases fill in. pending_webhooks_for: how many endpoints an event will be delivered to.
        # request_hooks (fault injection): called as hook(method, path, headers) before every /v1 request, may be
        # async (to add latency without blocking); returning a dispatch.Reply answers the request instead.
        self.pending_webhooks_for: Callable[[dict[str, Any]], int] = lambda event: 0
        self.request_hooks: list[Callable[[str, str, dict[str, str]], Any]] = []
        # response_hooks (the request log): hook(method, path, query, body, headers, reply, seconds) after every
        # answered request, on the serving thread; must be quick and must not raise.
        self.response_hooks: list[ResponseHook] = []  # the contract: model/hooks.py
        # delivery_hooks (the delivery log): hook(delivery) after every webhook delivery attempt, on the delivering
        # thread, with the delivery's public fields (webhooks.WebhookDispatcher.attempt_record); quick, never raising.
        self.delivery_hooks: list[DeliveryHook] = []
        # webhooks (signed deliveries of every committed event), faults (/_emulator/faults rules, applied through
        # request_hooks): see SERVICES
        self.webhooks: Any = None
        self.faults: Any = None
        for name, make in SERVICES.items():
            setattr(self, name, make(self))

    def _meta(self) -> dict[str, Any]:
        return {
            "id_counters": dict(self.ids.counters),
            "clock": {"offset": self.clock.offset, "frozen_at": self.clock.frozen_at},
            "api_version": self.api_version,
        }

    # -- events -----------------------------------------------------------------------------------------------------
    def on_event(self, listener: EventListener) -> None:
        """Call ``listener(event)`` for every committed event, in order, on the thread that handled the request."""
        with self._listener_lock:
            self._listeners.append(listener)

    def off_event(self, listener: EventListener) -> None:
        """Stop calling ``listener``."""
        with self._listener_lock:
            if listener in self._listeners:
                self._listeners.remove(listener)

    def queue_event(self, event: dict[str, Any]) -> None:
        """Hold an event until its transaction commits (called by ``emit_event``); outside a transaction the
        event is already stored for good, so listeners get it at once."""
        if self._queued is not None:
            self._queued.append(event)
            return
        with self.store.lock:
            self._deliver([event])

    def transaction(self) -> _Transaction:
        """All-or-nothing changes; committed events then go to listeners, in commit order.

        The whole of it, delivery included, holds the store lock: the batch being filled belongs to this
        transaction alone, and another thread's transaction can neither empty it nor have its own events (perhaps
        rolled back later) delivered with it, nor deliver its later commit ahead of this one. Listeners must
        therefore be quick and must not wait for another thread that uses the emulator.
        """
        return _Transaction(self)

    def _deliver(self, events: list[dict[str, Any]]) -> None:
        if not events:
            return
        listeners = list(self._listeners)  # the listeners when the batch commits: one copy per batch
        for event in events:
            for listener in listeners:
                try:
                    listener(event)
                except Exception:  # a broken listener must not fail the request that already committed
                    log.exception("event listener %r failed on %s", listener, event["id"])

    # -- control ----------------------------------------------------------------------------------------------------
    def reset(self) -> None:
        """Forget every object, event and idempotency key; seeded ids and the clock start over."""
        with self.store.lock:
            self.store.clear()
            self.ids.reset()
            self.clock.offset, self.clock.frozen_at = 0.0, None
        for name in SERVICES:
            getattr(self, name).reset()

    def close(self) -> None:
        """Stop webhook deliveries and release the state file."""
        for name in SERVICES:
            close = getattr(getattr(self, name), "close", None)
            if close is not None:
                close()
        self.store.close()


class _Transaction:
    """``with emulator.transaction():`` as a plain object (every API request opens one; a generator-based context
    manager costs twice as much)."""

    __slots__ = ("emulator", "outer", "seq_before")

    def __init__(self, emulator: Emulator) -> None:
        self.emulator = emulator
        self.outer: list[dict[str, Any]] | None = None
        self.seq_before = 0

    def __enter__(self) -> None:
        emulator = self.emulator
        emulator.store.lock.__enter__()  # held until the events are delivered (the store's own hold ends at commit)
        self.outer, emulator._queued = emulator._queued, []
        try:
            self.seq_before = emulator.store.begin()
        except BaseException:
            emulator._queued = self.outer
            emulator.store.lock.__exit__(None, None, None)
            raise

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> Literal[False]:
        emulator = self.emulator
        try:
            try:
                emulator.store.end(self.seq_before, failed=exc_type is not None)
                events = emulator._queued
            finally:
                emulator._queued = self.outer
            if exc_type is None:
                emulator._deliver(cast("list[dict[str, Any]]", events))  # __enter__ set a list
        finally:
            emulator.store.lock.__exit__(None, None, None)
        return False
