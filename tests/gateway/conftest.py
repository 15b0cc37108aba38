"""Fixtures for the gateway tests: a scripted fake model upstream and a gateway in front of it, collecting events."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from stripebench_tui.core.events import Event
from stripebench_tui.gateway.app import Gateway, Upstream
from stripebench_tui.gateway.exchange_events import EventTap
from stripebench_tui.testing.fake_models import FakeModelServer, Fault
from stripebench_tui.testing.fake_wire import ScriptedCall, ScriptedTurn

REAL_KEY = "sk-real-provider-key-0123456789"


@dataclass
class Collected:
    """Events the gateway emitted, with their turns."""

    events: list[tuple[Event, int]] = field(default_factory=list)
    lock: threading.Condition = field(default_factory=threading.Condition)

    def emit(self, event: Event, turn: int) -> None:
        with self.lock:
            self.events.append((event, turn))
            self.lock.notify_all()

    def wait_for(self, kind: str, count: int, timeout: float = 30.0) -> list[Any]:
        """The events of ``kind`` once there are ``count`` of them: a client can see a stream's end before the
        gateway has finished recording it."""
        with self.lock:
            assert self.lock.wait_for(lambda: len(self.of(kind)) >= count, timeout), f"fewer than {count} {kind} events"
            return self.of(kind)

    def of(self, kind: str) -> list[Any]:
        with self.lock:
            return [e for e, _ in self.events if e.type == kind]

    def turns(self, kind: str) -> list[int]:
        with self.lock:
            return [t for e, t in self.events if e.type == kind]


@dataclass
class Rig:
    fake: FakeModelServer
    gateway: Gateway
    seen: Collected


def two_step_script() -> list[ScriptedTurn]:
    return [
        ScriptedTurn(text="Let me look at the files first.", reasoning="The shop needs a checkout.",
                     tool_calls=[ScriptedCall("shell", {"command": "ls -la"})], usage=(120, 30)),
        ScriptedTurn(text="Now the edit.", tool_calls=[ScriptedCall("edit", {"path": "app.py", "text": "x = 1"}),
                                                       ScriptedCall("shell", {"command": "pytest -q"})], usage=(200, 40)),
        ScriptedTurn(text="All done: checkout works.", usage=(300, 10)),
    ]


@pytest.fixture
def rig() -> Callable[..., Rig]:
    """Start a fake model (which demands REAL_KEY) and a gateway in front of it; both stopped at teardown."""
    running: list[Any] = []

    def start(turns: list[ScriptedTurn] | None = None, faults: list[Fault] | None = None,
              upstream: Upstream | None = None, holds: Any = None) -> Rig:
        fake = FakeModelServer(turns if turns is not None else two_step_script(), faults, api_key=REAL_KEY).start()
        running.append(fake)
        seen = Collected()
        gateway = Gateway(upstream or Upstream(fake.url, REAL_KEY, fake.openai_base_url, REAL_KEY), EventTap(seen.emit),
                          holds=holds).start()
        running.append(gateway)
        return Rig(fake, gateway, seen)

    yield start
    for thing in reversed(running):
        thing.stop()
