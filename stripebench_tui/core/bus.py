"""The episode's event bus: one ordered stream, delivered to every subscriber.

Publishing stamps an event with ``seq`` (the single source of truth for its
position in the log: the recorder writes exactly these numbers), ``t`` (seconds
since the episode started, from an injectable monotonic clock) and the current
``turn``, then queues it for every subscriber. Stamping and queueing happen in one
synchronous step, so every subscriber receives every event in ``seq`` order, and a
subscriber may publish from inside its handler (a Stripe watcher adds
``stripe_object`` events, a grader adds ``grader_verdict`` events) without
deadlock: its event simply joins the end of every queue.

Each subscriber has its own delivery task and queue. Backpressure policy: the
queue holds up to ``maxsize`` events; ``await publish()`` waits while a queue is
full, for at most the subscriber's ``block_timeout`` seconds; a subscriber still
full after that is detached (it gets nothing more) so a stuck TUI or grader can
never hold the agent loop forever. Detaching a ``critical`` subscriber (the
recorder), or a critical handler raising, sets ``bus.failure``; the driver then
ends the episode with reason ``error``. A non-critical handler that raises keeps
its subscription; the exception is kept in ``Subscription.errors``.
``publish_nowait()`` never waits (for callers outside a coroutine).
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

from stripebench_tui.core.events import Event

Handler = Callable[[Event], "Awaitable[Any] | Any"]

DEFAULT_MAXSIZE = 10_000
DEFAULT_BLOCK_TIMEOUT = 5.0

# The subscription whose handler is running in this task: its own full queue never blocks its own publishes.
_delivering: contextvars.ContextVar[Subscription | None] = contextvars.ContextVar("_delivering", default=None)


class Subscription:
    """One subscriber's queue and delivery task."""

    def __init__(self, bus: EventBus, handler: Handler, name: str, critical: bool, maxsize: int, block_timeout: float):
        self.bus = bus
        self.handler = handler
        self.name = name or getattr(handler, "__qualname__", "subscriber")
        self.critical = critical
        self.maxsize = maxsize
        self.block_timeout = block_timeout
        self.delivered = 0
        self.errors: list[BaseException] = []
        self.detached: str = ""  # why delivery stopped, "" while attached
        self._queue: deque[Event] = deque()
        self._wakeup = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._room = asyncio.Event()
        self._room.set()
        self._task: asyncio.Task[None] | None = None

    @property
    def pending(self) -> int:
        """Events queued and not yet handled (including the one being handled)."""
        return len(self._queue)

    def _start(self) -> None:
        ctx = contextvars.copy_context()
        ctx.run(_delivering.set, self)
        self._task = asyncio.get_running_loop().create_task(self._pump(), name=f"bus:{self.name}", context=ctx)

    def _push(self, event: Event) -> None:
        if self.detached:
            return
        self._queue.append(event)
        self._idle.clear()
        self._wakeup.set()
        if len(self._queue) >= self.maxsize:
            self._room.clear()

    async def _pump(self) -> None:
        while not self.detached:
            if not self._queue:
                self._idle.set()
                self._wakeup.clear()
                await self._wakeup.wait()
                continue
            event = self._queue[0]  # popped only after handling, so drain() sees it as in flight
            try:
                result = self.handler(event)
                if inspect.isawaitable(result):
                    await result
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - a subscriber's bug must not stop the episode loop
                self._failed(exc)
            self._done_one()

    def _done_one(self) -> None:
        if self._queue:
            self._queue.popleft()
        self.delivered += 1
        if len(self._queue) < self.maxsize:
            self._room.set()
        if not self._queue:
            self._idle.set()

    def _failed(self, exc: BaseException) -> None:
        self.errors.append(exc)
        if self.critical:
            self.bus._fail(self, f"{self.name} failed: {type(exc).__name__}: {exc}")

    def flush_now(self) -> None:
        """Hand every queued event to a synchronous handler right now (used when closing under cancellation)."""
        while self._queue and not self.detached:
            try:
                result = self.handler(self._queue[0])
                if inspect.isawaitable(result):  # an async handler cannot be flushed synchronously
                    getattr(result, "close", lambda: None)()
                    raise TypeError("flush_now needs a synchronous handler")
            except Exception as exc:  # noqa: BLE001 - a handler's failure is reported, not raised into the publisher
                self._failed(exc)
            self._done_one()

    def detach(self, why: str = "unsubscribed") -> None:
        """Stop delivering to this subscriber; queued events are dropped."""
        if not self.detached:
            self.detached = why
        self._queue.clear()
        self._idle.set()
        self._room.set()
        if self._task is not None and not self._task.done() and _delivering.get() is not self:
            self._task.cancel()
        if self in self.bus._subs:
            self.bus._subs.remove(self)


class EventBus:
    """Async publish/subscribe for one episode; see the module docstring for ordering and backpressure."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, *, first_seq: int = 0) -> None:
        self.clock = clock
        self.started_at = clock()
        self.turn = 0
        self.failure: str = ""  # set when a critical subscriber failed or fell too far behind
        self._next_seq = first_seq
        self._last_t = 0.0
        self._subs: list[Subscription] = []

    @property
    def next_seq(self) -> int:
        return self._next_seq

    def elapsed(self) -> float:
        """Seconds since the episode started, by the bus clock."""
        return max(0.0, self.clock() - self.started_at)

    def subscribe(
        self,
        handler: Handler,
        *,
        name: str = "",
        critical: bool = False,
        maxsize: int = DEFAULT_MAXSIZE,
        block_timeout: float = DEFAULT_BLOCK_TIMEOUT,
    ) -> Subscription:
        """Deliver every event published from now on to ``handler`` (sync or async), in order."""
        sub = Subscription(self, handler, name, critical, max(1, maxsize), block_timeout)
        self._subs.append(sub)
        sub._start()
        return sub

    @property
    def subscriptions(self) -> list[Subscription]:
        return list(self._subs)

    def stamp(self, event: Event, turn: int | None = None) -> Event:
        """Give ``event`` the next seq, the current time and turn (without publishing it)."""
        event.seq = self._next_seq
        self._next_seq += 1
        # Never let t run backwards, even with a coarse or adjusted clock.
        self._last_t = max(self._last_t, self.elapsed())
        event.t = self._last_t
        event.turn = self.turn if turn is None else turn
        return event

    def redeliver(self, events: list[Event], *, skip: Subscription | None = None) -> None:
        """Hand events already recorded (a resumed episode's history) to every subscriber but ``skip`` as they
        are: not stamped again, the bus's seq and turn unchanged. Subscribers that rebuild state from the events
        (live grading, findings) see the whole episode; ``skip`` is the recorder, which has them already."""
        for event in events:
            for sub in list(self._subs):
                if sub is not skip:
                    sub._push(event)

    def publish_nowait(self, event: Event, *, turn: int | None = None) -> Event:
        """Stamp and queue ``event`` for every subscriber; never waits. Returns the stamped event."""
        self.stamp(event, turn)
        for sub in list(self._subs):
            sub._push(event)
        return event

    async def publish(self, event: Event, *, turn: int | None = None) -> Event:
        """Stamp and queue ``event``, then wait (bounded) while a subscriber's queue is full."""
        self.publish_nowait(event, turn=turn)
        me = _delivering.get()
        for sub in list(self._subs):
            if sub is me or sub._room.is_set():
                continue
            try:
                await asyncio.wait_for(sub._room.wait(), sub.block_timeout)
            except TimeoutError:
                why = f"{sub.name} fell {sub.pending} events behind for {sub.block_timeout:g}s"
                sub.detach(why)
                if sub.critical:
                    self._fail(sub, why)
        return event

    async def drain(self, timeout: float | None = None) -> bool:
        """Wait until every subscriber has handled every event published so far; False on timeout.

        Do not call it from inside a handler (a handler cannot wait for itself; its own queue is skipped).
        """
        me = _delivering.get()

        async def settle() -> None:
            while True:
                busy = [s for s in self._subs if s is not me and not s._idle.is_set()]
                if not busy:
                    return
                for s in busy:
                    await s._idle.wait()

        try:
            await asyncio.wait_for(settle(), timeout)
        except TimeoutError:
            return False
        return True

    async def close(self, timeout: float | None = 5.0) -> None:
        """Drain (bounded), then stop every delivery task."""
        await self.drain(timeout)
        tasks = [s._task for s in self._subs if s._task is not None]
        for s in list(self._subs):
            s.detach("bus closed")
        await asyncio.gather(*tasks, return_exceptions=True)

    def _fail(self, sub: Subscription, why: str) -> None:
        if not self.failure:
            self.failure = why
        sub.detach(why)


__all__ = ["DEFAULT_BLOCK_TIMEOUT", "DEFAULT_MAXSIZE", "EventBus", "Handler", "Subscription"]
