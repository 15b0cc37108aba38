"""``stripebench serve``'s web server: the TUI in a browser, one app process per connection (textual-serve).

textual-serve's ``Server`` gives the page, its scripts and file downloads
(screenshots saved from the app); the routes around them are ours so that every
page and websocket checks a token and picks the app's command line itself:

- bound to a loopback address, anyone on this machine may view; on any other
  address the page and its websocket need ``?token=`` (printed at start);
- every route refuses other web sites (``refusal``): a request whose ``Origin``
  is not this server's own, a cross-site fetch that is not a top-level
  navigation, and, on loopback, a ``Host`` that does not name this machine
  (DNS rebinding); pages may not be framed;
- a live episode runs once, here (``LiveHost``); each viewer's app follows its
  trace, and only the page opened with ``?operator=`` gets an app that can
  steer it, through ``POST /control/<operator token>`` (the browser never sees
  that URL, and neither does ``ps``: the app process is handed the path of a
  file only this user may read, mode 0600 in a 0700 directory, removed when the
  server stops).
"""

from __future__ import annotations

import asyncio
import errno
import hmac
import ipaddress
import os
import re
import secrets
import shlex
import shutil
import signal
import sys
import tempfile
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from stripebench_tui.core.events import EpisodeEnd, Header
from stripebench_tui.core.trace import TraceWriter
from stripebench_tui.errors import RuntimeProblem, UserError

if TYPE_CHECKING:  # aiohttp is loaded when serving starts
    from aiohttp import web

APP_MODULE = "stripebench_tui.tui.apps.serve_app"
VIEW = "view"  # the websocket key of a viewer when no access token is needed
CONTROL_METHODS = {"pause", "resume", "step", "inject", "approve", "edit", "reject", "stop"}
CONTROL_KWARGS = {"kind", "call_id"}
# A Host header: a name, IPv4 address or bracketed IPv6 address, and an optional port; anything else is refused.
HOST_HEADER = re.compile(r"(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::[0-9]{1,5})?", re.IGNORECASE)


def is_loopback(host: str) -> bool:
    """Whether ``host`` is reachable only from this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass
class ServeTarget:
    """What each connection's app shows: ``mode`` and ``path`` for ``tui.serve_app``, plus its flags."""

    mode: str  # replay | attach | pick
    path: Path
    title: str = "stripebench"
    extra_args: list[str] = field(default_factory=list)
    font_size: int = 16  # the page's default cell font size (``?fontsize=`` overrides it)


class EpisodeServer:
    """The aiohttp application around textual-serve, with tokens and the live episode's control route."""

    def __init__(self, target: ServeTarget, *, host: str = "127.0.0.1", port: int = 8000,
                 live: LiveHost | None = None, token_factory: Callable[[], str] = lambda: secrets.token_urlsafe(18)):
        # textual-serve and aiohttp (about a second) load when a server is made: importing this module
        # (ServeTarget, the tests) stays light
        from textual_serve.server import Server

        self.target = target
        self.host = host
        self.port = port
        self.live = live
        self.access_token = None if is_loopback(host) else token_factory()
        self.operator_token = token_factory() if live is not None else None
        # Used for its static files (the terminal's scripts) and download manager; its page, loop and routes are not.
        self.textual = Server(self.app_command(None), host=host, port=port, title=target.title)
        self.runner: Any = None
        self.bound_port = port
        self.control_file: Path | None = None  # holds control_url() while serving a live episode
        self.stopping = asyncio.Event()

    # ----- what a connection runs --------------------------------------------------------
    def app_command(self, control_file: Path | None) -> str:
        """The shell command of one connection's app; an operator's names the file with the control URL."""
        args = [sys.executable, "-m", APP_MODULE, self.target.mode, str(self.target.path), *self.target.extra_args]
        if control_file is not None:
            args += ["--control-file", str(control_file)]
        return shlex.join(args)

    def write_control_file(self) -> Path:
        """The control URL in a new file only this user can read (the token must not be on a command line)."""
        folder = Path(tempfile.mkdtemp(prefix="stripebench-serve-"))  # mode 0700
        path = folder / "control-url"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(self.control_url())
        return path

    def control_url(self) -> str:
        # The app processes run on this machine: they reach the server on loopback whatever address it serves.
        local = "127.0.0.1" if self.host in ("0.0.0.0", "", "::") or is_loopback(self.host) else self.host
        return f"http://{local}:{self.bound_port}/control/{self.operator_token}"

    def role_for(self, key: str) -> str | None:
        """``operator``, ``viewer`` or None (refused) for a websocket key or page token."""
        if self.operator_token and hmac.compare_digest(key, self.operator_token):
            return "operator"
        if self.access_token is None:
            return "viewer" if key in (VIEW, "") else None
        return "viewer" if hmac.compare_digest(key, self.access_token) else None

    # ----- routes ------------------------------------------------------------------------
    def make_app(self) -> Any:
        # aiohttp and its Jinja2 glue, loaded with the server rather than with this module
        import aiohttp_jinja2
        import jinja2
        from aiohttp import web

        # Any: aiohttp's next handler in the middleware chain
        @web.middleware
        async def same_site_only(request: web.Request, handler: Any) -> Any:
            # Ahead of every route, static files and 404s included; a refused websocket starts no app.
            reason = self.refusal(request)
            if reason is not None:
                return web.Response(status=403, text=f"stripebench serve: refused: {reason}\n")
            return await handler(request)

        app = web.Application(middlewares=[same_site_only])
        app.on_response_prepare.append(_forbid_framing)
        # Our own page (no web fonts, says what to do when the view closes); textual-serve's scripts and styles.
        aiohttp_jinja2.setup(app, loader=jinja2.FileSystemLoader(Path(__file__).parent))
        app.add_routes([
            web.get("/", self.handle_index),
            web.get("/ws/{key}", self.handle_websocket),
            web.get("/download/{key}", self.textual.handle_download),
            web.static("/static", self.textual.statics_path),
            web.post("/control/{key}", self.handle_control),
            web.get("/status", self.handle_status),
        ])
        return app

    def refusal(self, request: web.Request) -> str | None:
        """Why ``request`` may come from another web site (it is refused), or None.

        A page on any site can make the browser open ``ws://127.0.0.1:PORT/``, and a name
        of the attacker's that resolves to 127.0.0.1 (DNS rebinding) even makes it
        same-origin; only these headers, which pages cannot forge, tell them apart.
        """
        host = request.headers.get("Host", "")
        if is_loopback(self.host):
            name = HOST_HEADER.fullmatch(host)
            if name is None or not is_loopback(name[1].strip("[]").lower()):
                return f"Host {host!r} is not this machine; open {self.urls()[0]}"
        origin = request.headers.get("Origin")
        # Browsers send the Origin on websockets and POSTs; curl and the apps' own calls to /control send none.
        if origin is not None and origin.lower() not in (f"http://{host}".lower(), f"https://{host}".lower()):
            return f"a page from {origin!r} may not use this server"
        site, mode, dest = (request.headers.get(f"Sec-Fetch-{part}") for part in ("Site", "Mode", "Dest"))
        if site == "cross-site" and (mode, dest) != ("navigate", "document"):  # only a followed link may come in
            return "another site's page may not use this server (only a link to it may be followed)"
        return None

    async def handle_index(self, request: web.Request) -> Any:
        # aiohttp, which textual-serve's server (made in __init__) loads; not loaded with this module
        import aiohttp_jinja2
        from aiohttp import web

        operator = request.query.get("operator", "")
        key = operator if operator else request.query.get("token", "") or VIEW
        role = self.role_for(key)
        if role is None:
            raise web.HTTPForbidden(text="stripebench serve: this page needs the token printed when the server "
                                         "started (?token=…, or ?operator=… for the operator)\n")
        scheme = "wss" if request.secure else "ws"
        context = {
            "font_size": _int(request.query.get("fontsize", ""), self.target.font_size),
            "websocket_url": f"{scheme}://{request.host}/ws/{key}",
            "static_url": f"{request.scheme}://{request.host}/static/",
            "title": f"{self.target.title} ({role})",
        }
        return aiohttp_jinja2.render_template("page.html", request, context)

    async def handle_websocket(self, request: web.Request) -> Any:
        # aiohttp and textual-serve, already loaded by the running server
        from aiohttp import WSMsgType, web
        from textual_serve.app_service import AppService

        role = self.role_for(request.match_info["key"])
        if role is None:
            raise web.HTTPForbidden(text="stripebench serve: wrong token\n")
        ws = web.WebSocketResponse(heartbeat=15)
        await ws.prepare(request)
        control = self.control_file if role == "operator" else None
        service = AppService(self.app_command(control), write_bytes=ws.send_bytes, write_str=ws.send_str,
                             close=cast("Callable[[], Awaitable[None]]", ws.close),
                             download_manager=self.textual.download_manager)
        await service.start(_int(request.query.get("width", "80"), 80), _int(request.query.get("height", "24"), 24))
        try:
            async for message in ws:
                if message.type != WSMsgType.TEXT:
                    continue
                envelope = message.json()
                kind, data = envelope[0], (envelope[1] if len(envelope) > 1 else None)
                if kind == "stdin":
                    await service.send_bytes(str(data).encode("utf-8"))
                elif kind == "resize" and isinstance(data, dict):
                    await service.set_terminal_size(_int(str(data.get("width")), 80), _int(str(data.get("height")), 24))
                elif kind == "ping":
                    await ws.send_json(["pong", data])
                elif kind == "blur":
                    await service.blur()
                elif kind == "focus":
                    await service.focus()
        finally:
            # The browser left (or the server stops): this viewer's app goes; a live episode does not.
            await service.stop()
        return ws

    async def handle_control(self, request: web.Request) -> Any:
        # aiohttp, loaded with the server, not with this module
        from aiohttp import web

        key = request.match_info["key"]
        if not self.operator_token or not hmac.compare_digest(key, self.operator_token):
            raise web.HTTPForbidden(text="only the operator may steer this episode\n")
        try:
            body = await request.json()
        except ValueError:
            raise web.HTTPBadRequest(text="expected JSON\n") from None
        if not isinstance(body, dict):
            raise web.HTTPBadRequest(text="expected a JSON object: {\"method\": …, \"args\": […], \"kwargs\": {…}}\n")
        method, args, kwargs = body.get("method"), body.get("args") or [], body.get("kwargs") or {}
        if method not in CONTROL_METHODS or not isinstance(args, list) or not isinstance(kwargs, dict) \
                or set(kwargs) - CONTROL_KWARGS:
            raise web.HTTPBadRequest(text=f"unknown command {method!r}\n")
        assert self.live is not None
        driver = self.live.driver
        if driver is None:
            raise web.HTTPConflict(text="the episode is not running (still being set up, or ended)\n")
        getattr(driver, method)(*args, **kwargs)
        return web.Response(text="ok\n")

    async def handle_status(self, request: web.Request) -> Any:
        # aiohttp, loaded with the server, not with this module
        from aiohttp import web

        if self.role_for(request.query.get("token", "") or VIEW) is None:
            raise web.HTTPForbidden(text="wrong token\n")
        live = self.live
        return web.json_response({"mode": self.target.mode, "path": str(self.target.path),
                                  "live": live is not None, "running": bool(live and live.driver is not None)})

    # ----- running -----------------------------------------------------------------------
    async def start(self) -> None:
        """Bind and start serving (RuntimeProblem, one line, when the port is taken); starts the live episode."""
        # aiohttp is loaded when serving starts, here
        from aiohttp import web

        self.runner = web.AppRunner(self.make_app(), handle_signals=False, access_log=None)
        await self.runner.setup()
        site = web.TCPSite(self.runner, self.host, self.port)
        try:
            await site.start()
        except OSError as exc:
            await self.runner.cleanup()
            if exc.errno == errno.EADDRINUSE:
                raise RuntimeProblem(f"port {self.port} on {self.host} is in use; pick another with --port") from None
            raise RuntimeProblem(f"cannot listen on {self.host}:{self.port} ({exc.strerror})") from None
        addresses = self.runner.addresses
        if addresses:
            self.bound_port = int(addresses[0][1])
        if self.live is not None:
            self.control_file = self.write_control_file()
            self.live.start()

    def urls(self) -> tuple[str, str | None]:
        """(viewer URL, operator URL or None)."""
        shown = "127.0.0.1" if self.host in ("0.0.0.0", "") else self.host
        shown = f"[{shown}]" if ":" in shown else shown
        base = f"http://{shown}:{self.bound_port}/"
        viewer = base + (f"?token={self.access_token}" if self.access_token else "")
        return viewer, (base + f"?operator={self.operator_token}" if self.operator_token else None)

    async def stop(self) -> None:
        if self.live is not None:
            await self.live.stop()
        if self.runner is not None:
            await self.runner.cleanup()
        if self.control_file is not None:
            shutil.rmtree(self.control_file.parent, ignore_errors=True)
            self.control_file = None


class LiveHost:
    """The one live episode a server shows: run on the server's loop, its trace followed by every viewer."""

    # Any: the live runtime Episode (serve does not import the runtime; the command passes it in)
    def __init__(self, episode: Any, trace_path: Path) -> None:
        self.episode = episode
        self.trace_path = trace_path
        self.task: asyncio.Task[Any] | None = None
        self.result: Any = None
        self.error = ""

    @property
    def driver(self) -> Any:
        ep = self.episode
        return ep.driver if ep.ready.is_set() and self.result is None else None

    def start(self) -> None:
        self.task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        try:
            self.result = await self.episode.run()
        except Exception as exc:  # noqa: BLE001 - whatever it was, the viewers must be told the episode is over
            self.error = str(exc) if isinstance(exc, UserError) else f"{type(exc).__name__}: {exc}"
            if not isinstance(exc, UserError):
                traceback.print_exc()  # a bug: its traceback, here on the server's stderr
            print(f"stripebench: {self.error}", file=sys.stderr, flush=True)
            self.record_failure(self.error)
            return
        print(f"episode ended: {self.result.reason}; trace: {self.result.trace_path}", file=sys.stderr, flush=True)

    def record_failure(self, error: str) -> None:
        """The episode failed before its recorder wrote a trace (say, the sandbox could not be laid out): write
        one that says so, since every viewer's app follows that file and would otherwise show "starting" forever."""
        if self.trace_path.exists():
            return  # the episode's own trace, ended by the episode (its setup failures are recorded there)
        env = getattr(self.episode, "env", None)
        header = Header(env=getattr(env, "id", "") or "", agent=str(getattr(getattr(self.episode, "config", None), "agent", "")),
                        title=getattr(getattr(env, "manifest", None), "title", "") or "")
        try:
            self.trace_path.parent.mkdir(parents=True, exist_ok=True)
            with TraceWriter(self.trace_path, header) as writer:
                writer.write(EpisodeEnd(t=0.0, turn=0, reason="error", error=error))
        except OSError as exc:
            print(f"stripebench: cannot write {self.trace_path} ({exc.strerror}); viewers will not see the failure",
                  file=sys.stderr, flush=True)

    async def stop(self) -> None:
        if self.task is not None and not self.task.done():
            self.episode.stop("stopped: the server was stopped")
            await self.task


async def _forbid_framing(request: web.Request, response: web.StreamResponse) -> None:
    # Another site's page must not show ours in a frame (and trick the operator into clicking in it).
    response.headers["X-Frame-Options"] = "DENY"
    response.headers["Content-Security-Policy"] = "frame-ancestors 'none'"


def _int(value: str, default: int) -> int:
    try:
        return int(value)
    except ValueError:
        return default


async def serve_until_stopped(server: EpisodeServer, announce: Callable[[str], None] = print) -> None:
    """Start ``server``, print its URLs, serve until SIGINT/SIGTERM, then stop (the live episode first)."""
    await server.start()
    viewer, operator = server.urls()
    announce(f"serving on {viewer}")
    if operator:
        announce(f"operator: {operator}  (only this link may pause, inject or approve)")
    if server.access_token:
        announce("viewers need the token in the URL; anyone with it can watch")
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, server.stopping.set)
    try:
        await server.stopping.wait()
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
        await server.stop()


__all__ = ["EpisodeServer", "LiveHost", "ServeTarget", "is_loopback", "serve_until_stopped"]
