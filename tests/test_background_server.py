"""The one way an ASGI app is served on a background thread here (gateway, Stripe proxy, fake model servers)."""

from __future__ import annotations

import threading

import httpx
import pytest
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from stripebench_tui.background_server import BackgroundServer, ServerDidNotStart


def _app() -> Starlette:
    return Starlette(routes=[Route("/", lambda request: PlainTextResponse("up"))])


def test_it_answers_once_started_and_its_thread_is_gone_after_stop() -> None:
    closed = threading.Event()

    async def after() -> None:
        closed.set()

    with BackgroundServer(_app(), "probe", after_serve=after) as served:
        assert served.port != 0
        assert httpx.get(served.url + "/", timeout=5).text == "up"
    assert closed.is_set()  # ran on the server's loop once serving stopped
    assert not any(t.name == "probe" for t in threading.enumerate())
    with pytest.raises(httpx.ConnectError):
        httpx.get(served.url + "/", timeout=2)


def test_a_taken_port_is_one_line_naming_the_server() -> None:
    with BackgroundServer(_app(), "first") as first:
        with pytest.raises(ServerDidNotStart, match=rf"^second cannot listen on 127.0.0.1:{first.port}: "):
            BackgroundServer(_app(), "second", port=first.port).start()
