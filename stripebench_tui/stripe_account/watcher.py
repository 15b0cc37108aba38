"""The Stripe watcher: polls ``GET /v1/events`` and publishes a ``stripe_object`` event per new or changed object.

It uses only the official SDK's public list call, so it works the same on the
emulator and on real test mode. The starting point is the newest event that
exists when the watcher starts (nothing older is reported); after that each poll
asks for the events just newer than the last one seen (``ending_before``), page
by page until ``has_more`` is false, and publishes them oldest first.

``nudge()`` makes the next poll happen at once: with the in-process emulator the
episode calls it from the emulator's event listener, so an object reaches the bus
within milliseconds while still being read through the public API.

Events are tagged with the bus's current turn. ``sync()`` polls at once; the
episode runs it as the first turn-end hook so that objects a turn's tool calls
created are attributed to that turn rather than to the next.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any, cast

from stripebench_tui.core.bus import EventBus
from stripebench_tui.core.driver import Driver
from stripebench_tui.core.events import SOURCE_HEADER, Service, StripeObject
from stripebench_tui.core.profile import PUBLISH, harness_part
from stripebench_tui.errors import RuntimeProblem

if TYPE_CHECKING:  # the SDK is loaded by whoever makes the client
    import stripe
    from stripe.params import EventListParams

log = logging.getLogger(__name__)

PAGE = 100
EMULATOR_INTERVAL = 0.05  # seconds between polls on the emulator
REAL_INTERVAL = 1.0  # real Stripe rate-limits test mode; once a second is plenty
_OWN: Any = {"headers": {SOURCE_HEADER: "watcher"}}  # the request log leaves the watcher's own polls out


def _plain(obj: stripe.StripeObject) -> Any:
    """An SDK object as plain JSON-ready data."""
    if hasattr(obj, "to_dict"):
        try:
            return obj.to_dict(recursive=True)
        except TypeError:  # older SDKs: to_dict_recursive
            return cast(Any, obj).to_dict_recursive()
    return obj


def _change(event_type: str) -> str:
    tail = event_type.rsplit(".", 1)[-1]
    return "deleted" if tail == "deleted" else "created" if tail == "created" else "updated"


class StripeWatcher:
    """Polls a backend's events and publishes ``stripe_object`` events on ``bus``."""

    def __init__(self, client: stripe.StripeClient, bus: EventBus, interval: float = EMULATOR_INTERVAL) -> None:
        self.client = client  # a stripe.StripeClient
        self.bus = bus
        self.interval = interval
        self.cursor: str | None = None  # id of the newest event already handled
        self.seen = 0
        self._snapshots: dict[str, Any] = {}
        self._lock = asyncio.Lock()
        self._task: asyncio.Task[None] | None = None
        self._started = False
        self._errors = 0
        self._wake: asyncio.Event | None = None
        self._event_loop: asyncio.AbstractEventLoop | None = None

    def nudge(self) -> None:
        """Poll now rather than at the next tick; safe from any thread (the in-process emulator calls it)."""
        loop, wake = self._event_loop, self._wake
        if loop is not None and wake is not None and not loop.is_closed():
            loop.call_soon_threadsafe(wake.set)

    async def start(self) -> None:
        """Note the newest existing event as the starting point, then poll in the background."""
        # for its error class; the client's maker (StripeBackend.client) loaded the SDK, not this module's importers
        import stripe

        try:
            page = await self.client.v1.events.list_async(params={"limit": 1}, options=_OWN)
        except stripe.StripeError as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise RuntimeProblem(f"cannot list Stripe events: {first}") from None
        self.cursor = page.data[0].id if page.data else None
        self._started = True
        self._event_loop, self._wake = asyncio.get_running_loop(), asyncio.Event()
        self._task = asyncio.create_task(self._poll_forever(), name="stripe-watcher")

    async def _poll_forever(self) -> None:
        assert self._wake is not None
        while True:
            try:
                await asyncio.wait_for(self._wake.wait(), self.interval)
            except TimeoutError:
                pass
            self._wake.clear()
            try:
                await self.sync()
                self._errors = 0
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - a flaky backend must not end the episode; say so once
                self._errors += 1
                if self._errors == 1:
                    log.warning("stripe watcher poll failed: %s", exc)
                    await self.bus.publish(Service(service="stripe-watcher", status="log", stream="stderr",
                                                   text=f"polling /v1/events failed: {type(exc).__name__}: {exc}"))
                await asyncio.sleep(min(5.0, self.interval * 2 ** min(self._errors, 6)))

    async def sync(self) -> int:
        """Fetch every event newer than the cursor and publish their objects now; returns how many events."""
        if not self._started:
            return 0
        async with self._lock:
            fresh: list[Any] = []
            if self.cursor is None:
                # No event existed at start: everything listed is new. Walk from the newest backwards.
                params: EventListParams = {"limit": PAGE}
                while True:
                    page = await self.client.v1.events.list_async(params=params, options=_OWN)
                    fresh.extend(page.data)
                    if not page.has_more or not page.data:
                        break
                    params = {"limit": PAGE, "starting_after": page.data[-1].id}
                fresh.reverse()
            else:
                cursor = self.cursor
                while True:
                    page = await self.client.v1.events.list_async(params={"limit": PAGE, "ending_before": cursor},
                                                               options=_OWN)
                    if not page.data:
                        break
                    fresh.extend(reversed(page.data))  # each page is newest first
                    cursor = page.data[0].id
                    if not page.has_more:
                        break
            for event in fresh:
                await self._publish(event)
            if fresh:
                self.cursor = fresh[-1].id
            return len(fresh)

    async def _publish(self, event: stripe.Event) -> None:
        self.seen += 1
        obj = _plain(event.data.object)
        if not isinstance(obj, dict):
            return
        object_id = str(obj.get("id", ""))
        change = _change(event.type)
        if object_id and self._snapshots.get(object_id) == obj and change == "updated":
            return  # an event that changed nothing we can see (e.g. a second event on the same snapshot)
        self._snapshots[object_id] = obj
        request = getattr(event, "request", None)
        request_id = (getattr(request, "id", None) if request is not None else None) or ""
        await self.bus.publish(StripeObject(object_id=object_id, object_type=str(obj.get("object", "")), change=change,
                                            data=obj, event_id=event.id, event_type=event.type, request_id=request_id))

    @harness_part(PUBLISH)
    async def turn_end_hook(self, driver: Driver) -> None:
        """Driver turn-end hook: publish this turn's objects before the turn closes."""
        await self.sync()

    @harness_part(PUBLISH)
    async def final_hook(self, driver: Driver) -> None:
        """Driver final hook: publish the last objects, then stop polling (nothing may follow episode_end)."""
        await self.sync()
        await self.stop_polling()

    async def stop_polling(self) -> None:
        """Stop the background loop (idempotent); ``sync()`` still works."""
        task, self._task = self._task, None
        if task is not None and task is not asyncio.current_task():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)


__all__ = ["EMULATOR_INTERVAL", "REAL_INTERVAL", "StripeWatcher"]
