"""Run the emulator over HTTP: in-process on a background thread (episodes, tests) or in the foreground (CLI)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import uvicorn
from starlette.types import ASGIApp

from stripebench_emulator.model import compiled, gc_policy
from stripebench_emulator.model.engine import Emulator
from stripebench_emulator.model.problems import CannotServe
from stripebench_emulator.web.app import create_app
from stripebench_emulator.web.control import CONTROL_HEADER
from stripebench_emulator.web.limits import REQUEST_TIMEOUT, guarded_protocol


def bind(host: str, port: int) -> socket.socket:
    """A listening socket (port 0 = any free port); a busy port is the user's problem, reported in one line."""
    # proto=IPPROTO_TCP matters: asyncio only sets TCP_NODELAY on accepted sockets whose proto says TCP, and
    # without it Nagle + delayed ACK add ~40 ms to every response.
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise CannotServe(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.listen(128)
    return sock


def server_config(app: ASGIApp, request_timeout: float = REQUEST_TIMEOUT) -> uvicorn.Config:
    """uvicorn's settings for serving ``app``: its httptools protocol behind the emulator's guard (head and target
    caps, ``request_timeout`` seconds to send a request; see ``limits``), no WebSocket, no lifespan, quiet."""
    return uvicorn.Config(app, http=guarded_protocol(request_timeout), ws="none", log_level="warning",
                          lifespan="off", access_log=False)


class EmulatorServer:
    """The emulator on a background thread: ``with EmulatorServer(seed=1) as emu: stripe.api_base = emu.url``.

    Its ``/_emulator/`` controls answer only requests carrying ``control_headers`` (a token made per server
    unless ``control_token`` is given): keep them away from the agent. A client has ``request_timeout`` seconds to
    send a request once it starts (and its first once connected), else its connection is closed.
    """

    def __init__(self, seed: int | None = None, state: str | Path | None = None, api_version: str | None = None,
                 host: str = "127.0.0.1", port: int = 0, control_token: str | None = None,
                 request_timeout: float = REQUEST_TIMEOUT) -> None:
        self.request_timeout = request_timeout
        self.emulator = Emulator(seed=seed, state=state, api_version=api_version, control_token=control_token)
        self.host, self.port = host, port
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """Base URL to use as ``stripe.api_base``, e.g. ``http://127.0.0.1:54321``."""
        return f"http://{self.host}:{self.port}"

    @property
    def control_token(self) -> str:
        """The token the ``/_emulator/`` controls want (a secret: never give it to the agent)."""
        return self.emulator.control_token

    @property
    def control_headers(self) -> dict[str, str]:
        """Headers that open the ``/_emulator/`` controls: ``httpx.post(url, headers=server.control_headers)``."""
        return {CONTROL_HEADER: self.control_token}

    def start(self) -> EmulatorServer:
        """Listen and serve on a daemon thread; returns once requests are accepted."""
        sock = bind(self.host, self.port)
        self.port = sock.getsockname()[1]
        self.emulator.base_url = self.url
        self._server = uvicorn.Server(server_config(create_app(self.emulator), self.request_timeout))
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]},
                                        name=f"stripe-emulator:{self.port}", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise CannotServe(f"the Stripe emulator did not start on {self.url}")
            time.sleep(0.005)
        return self

    def stop(self) -> None:
        """Stop serving, wait for the thread and close the state file."""
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(timeout=10)
        self._server, self._thread = None, None
        self.emulator.close()

    def reset(self) -> None:
        """Forget all objects and events (same as ``POST /_emulator/reset``)."""
        self.emulator.reset()

    def __enter__(self) -> EmulatorServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@contextmanager
def running_emulator(seed: int | None = None, state: str | Path | None = None, api_version: str | None = None,
                     control_token: str | None = None,
                     request_timeout: float = REQUEST_TIMEOUT) -> Iterator[EmulatorServer]:
    """A started emulator on a free local port, stopped on exit."""
    server = EmulatorServer(seed=seed, state=state, api_version=api_version, control_token=control_token,
                            request_timeout=request_timeout)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def serve_forever(host: str, port: int, seed: int | None, state: str | None, api_version: str | None,
                  announce=print, control_token: str | None = None,
                  request_timeout: float = REQUEST_TIMEOUT) -> None:
    """Run in the foreground until interrupted (the ``stripebench emulator`` command)."""
    emulator = Emulator(seed=seed, state=state, api_version=api_version, control_token=control_token)
    sock = bind(host, port)
    actual = sock.getsockname()[1]
    emulator.base_url = f"http://{host}:{actual}"
    announce(f"Stripe emulator listening on http://{host}:{actual} (API version {emulator.api_version}"
             + (f", seed {seed}" if seed is not None else "") + (f", state {state}" if state else ", in memory")
             + f", {compiled.describe()})")
    announce(f"Controls under /_emulator/ (reset, clock, faults, webhooks) need the header "
             f"{CONTROL_HEADER}: {emulator.control_token}")
    config = server_config(create_app(emulator), request_timeout)
    # A process of its own: keep the collector off the stored objects (see gc_policy).
    policy = gc_policy.install()
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        policy.close()
        emulator.close()
