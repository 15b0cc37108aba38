"""An ASGI app served by uvicorn on a background thread of this process: start, wait until it accepts connections,
stop and wait for the thread. The model gateway, the grader's Stripe proxy and the fake model servers are served so.

The socket is bound and listening before uvicorn starts, so a client that reads the URL early waits in the backlog
instead of being refused.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Literal

import uvicorn
from starlette.types import ASGIApp

START_TIMEOUT = 10.0  # seconds uvicorn gets to start accepting connections


class ServerDidNotStart(RuntimeError):
    """uvicorn did not start serving within ``START_TIMEOUT`` (or its thread died first)."""


class BackgroundServer:
    """``app`` served on ``host:port`` (0: any free port) by a daemon thread named ``name``.

    ``loop_factory`` makes the thread's event loop (default: asyncio's); ``on_loop`` is told of it before serving,
    and ``after_serve`` runs on it once serving has stopped (closing clients the app kept). ``lifespan`` and
    ``log_level`` are uvicorn's.
    """

    def __init__(self, app: ASGIApp, name: str, *, host: str = "127.0.0.1", port: int = 0,
                 lifespan: Literal["auto", "on", "off"] = "off",
                 log_level: str = "warning", loop_factory: Callable[[], asyncio.AbstractEventLoop] | None = None,
                 on_loop: Callable[[asyncio.AbstractEventLoop], None] | None = None,
                 after_serve: Callable[[], Awaitable[None]] | None = None) -> None:
        self.app, self.name, self.host, self.port = app, name, host, port
        self.lifespan, self.log_level = lifespan, log_level
        self.loop_factory, self.on_loop, self.after_serve = loop_factory, on_loop, after_serve
        self.server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._sock: socket.socket | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def config(self) -> uvicorn.Config:
        """The uvicorn settings every server here shares (also for serving in the foreground)."""
        return uvicorn.Config(self.app, log_level=self.log_level, access_log=False, lifespan=self.lifespan,
                              timeout_graceful_shutdown=2)

    def bind(self) -> socket.socket:
        """A listening socket on ``host:port``; ``port`` becomes the one it got (ServerDidNotStart when taken)."""
        # IPPROTO_TCP named explicitly: asyncio sets TCP_NODELAY only on sockets that say so (else Nagle adds 40 ms).
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((self.host, self.port))
        except OSError as exc:
            sock.close()
            raise ServerDidNotStart(f"{self.name} cannot listen on {self.host}:{self.port}: {exc.strerror}") from None
        sock.listen(128)
        self.port = sock.getsockname()[1]
        return sock

    def start(self) -> BackgroundServer:
        """Serve on the background thread; returns once connections are accepted (ServerDidNotStart if not)."""
        self._sock = sock = self.bind()
        self.server = server = uvicorn.Server(self.config())

        def serve() -> None:
            loop = self.loop_factory() if self.loop_factory is not None else asyncio.new_event_loop()
            asyncio.set_event_loop(loop)
            if self.on_loop is not None:
                self.on_loop(loop)
            try:
                loop.run_until_complete(server.serve(sockets=[sock]))
                if self.after_serve is not None:
                    loop.run_until_complete(self.after_serve())
            finally:
                loop.close()

        self._thread = threading.Thread(target=serve, daemon=True, name=self.name)
        self._thread.start()
        deadline = time.monotonic() + START_TIMEOUT
        while not server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                self.stop()
                raise ServerDidNotStart(f"{self.name} did not start on {self.url}")
            time.sleep(0.005)
        return self

    def stop(self) -> None:
        """Stop serving (open responses get a moment to finish) and wait for the thread."""
        if self.server is not None:
            self.server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        if self._sock is not None:
            self._sock.close()

    def __enter__(self) -> BackgroundServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
