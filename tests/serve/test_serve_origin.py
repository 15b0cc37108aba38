"""`stripebench serve` refuses other web sites: a cross-site Origin, DNS rebinding (a Host that is not this machine
on a loopback bind), cross-site fetches that are not a followed link, and being framed; its own clients still work."""

from __future__ import annotations

import asyncio
from pathlib import Path
from urllib.parse import urlsplit

import aiohttp
import httpx
import pytest

from stripebench_tui.serve.server import EpisodeServer, LiveHost, ServeTarget
from tests.serve.helpers import serving
from tests.serve.test_serve import REPLAY, FakeEpisode

EVIL = "http://evil.example"


async def assert_websocket_refused(url: str, **headers: str) -> None:
    async with aiohttp.ClientSession() as session:
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await session.ws_connect(url, headers=headers)
    assert refused.value.status == 403


async def assert_websocket_accepted(url: str, **headers: str) -> None:
    """The handshake succeeds and the app the server starts for it draws something."""
    async with aiohttp.ClientSession() as session:
        async with session.ws_connect(url, headers=headers) as ws:
            message = await asyncio.wait_for(ws.receive(), 60)
            assert message.type in (aiohttp.WSMsgType.TEXT, aiohttp.WSMsgType.BINARY), message


@pytest.fixture
async def loopback() -> EpisodeServer:
    server = EpisodeServer(ServeTarget("replay", REPLAY), host="127.0.0.1", port=0)
    await server.start()
    yield server
    await server.stop()


@pytest.mark.slow
async def test_on_loopback_a_cross_site_websocket_is_refused_and_same_origin_and_no_origin_clients_still_work() -> None:
    # As the user runs it (its app processes are the server process's children, reaped there).
    with serving(str(REPLAY)) as (_proc, url, _):
        port = urlsplit(url).port
        ws_url = f"ws://127.0.0.1:{port}/ws/view"
        # Any page the user visits may point the browser at the loopback server; its Origin gives it away.
        await assert_websocket_refused(ws_url, Origin=EVIL)
        await assert_websocket_refused(ws_url, Origin="null")  # a sandboxed frame or a file:// page
        await assert_websocket_refused(ws_url, Origin=f"http://127.0.0.1:{port + 1}")  # another port, another site
        # DNS rebinding: evil.example resolves to 127.0.0.1, so its page is same-origin with itself; its Host is wrong.
        await assert_websocket_refused(ws_url, Host=f"evil.example:{port}", Origin=f"http://evil.example:{port}")
        # Still serving after those: the page's own websocket (same origin, any loopback name) and Origin-less clients.
        await assert_websocket_accepted(ws_url, Origin=f"http://127.0.0.1:{port}")
        await assert_websocket_accepted(ws_url, Host=f"localhost:{port}", Origin=f"http://localhost:{port}")
        await assert_websocket_accepted(ws_url)


@pytest.mark.parametrize("host", ["evil.example:{port}", "evil.example", "127.0.0.1.evil.example:{port}",
                                  "localhost.evil.example:{port}", "127.0.0.1:{port}@evil.example", "[::1"])
async def test_on_loopback_a_host_that_is_not_this_machine_is_refused_on_every_route(
        loopback: EpisodeServer, host: str) -> None:
    host = host.format(port=loopback.bound_port)
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{loopback.bound_port}") as client:
        for path in ("/", "/status", "/static/js/textual.js", "/download/x", "/no-such-page"):
            refused = await client.get(path, headers={"Host": host})
            assert refused.status_code == 403, path
            assert refused.text == (f"stripebench serve: refused: Host {host!r} is not this machine; "
                                    f"open http://127.0.0.1:{loopback.bound_port}/\n")
        assert (await client.post("/control/view", headers={"Host": host}, json={"method": "pause"})).status_code == 403


@pytest.mark.parametrize("host", ["127.0.0.1:{port}", "127.0.0.2:{port}", "localhost:{port}", "LOCALHOST:{port}",
                                  "[::1]:{port}", "127.0.0.1"])
async def test_on_loopback_every_name_of_this_machine_is_served(loopback: EpisodeServer, host: str) -> None:
    host = host.format(port=loopback.bound_port)
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{loopback.bound_port}") as client:
        page = await client.get("/", headers={"Host": host})
    assert page.status_code == 200 and f"ws://{host}/ws/view" in page.text


async def test_cross_site_fetches_and_frames_are_refused_but_a_followed_link_opens_the_page(
        loopback: EpisodeServer) -> None:
    port = loopback.bound_port
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
        # Another site's <script>, fetch() or <iframe>: Chromium says so even where it sends no Origin.
        for mode, dest in (("no-cors", "script"), ("cors", "empty"), ("navigate", "iframe")):
            headers = {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": mode, "Sec-Fetch-Dest": dest}
            refused = await client.get("/static/js/textual.js" if dest == "script" else "/", headers=headers)
            assert refused.status_code == 403 and len(refused.text.splitlines()) == 1, (mode, dest)
        posted = await client.post("/status", headers={"Origin": EVIL})
        assert posted.status_code == 403
        assert posted.text == "stripebench serve: refused: a page from 'http://evil.example' may not use this server\n"
        # A link to the server on another site, followed: a top-level navigation, allowed; the page may not be framed.
        followed = await client.get("/", headers={"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate",
                                                  "Sec-Fetch-Dest": "document"})
        assert followed.status_code == 200 and "/ws/view" in followed.text
        assert followed.headers["X-Frame-Options"] == "DENY"
        assert followed.headers["Content-Security-Policy"] == "frame-ancestors 'none'"
        # The page's own requests (same origin) and curl-like clients.
        same = await client.get("/static/js/textual.js", headers={
            "Origin": f"http://127.0.0.1:{port}", "Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "cors",
            "Sec-Fetch-Dest": "script"})
        assert same.status_code == 200
        assert (await client.get("/status")).json()["mode"] == "replay"


class SignallingEpisode(FakeEpisode):
    """A FakeEpisode whose recorded operator calls can be awaited."""

    def __init__(self) -> None:
        super().__init__()
        self.called = asyncio.Event()

    def _recorder(self, method: str):  # type: ignore[no-untyped-def]
        def record(*args, **kwargs):  # type: ignore[no-untyped-def]
            self.calls.append((method, args, kwargs))
            self.called.set()
        return record


@pytest.mark.parametrize("bind", ["127.0.0.1", "0.0.0.0"])
async def test_the_operator_apps_control_post_still_steers_and_a_cross_site_one_does_not(
        tmp_path: Path, bind: str) -> None:
    from stripebench_tui.tui.sources.follow import RemoteDriver
    from stripebench_tui.tui.sources.live_source import LiveSource

    episode = SignallingEpisode()
    server = EpisodeServer(ServeTarget("attach", tmp_path / "trace.jsonl"), host=bind, port=0,
                           live=LiveHost(episode, tmp_path / "trace.jsonl"))
    await server.start()
    try:
        assert server.control_file is not None
        control_url = server.control_file.read_text()
        # A page that somehow learnt the operator's URL still cannot make the browser post to it.
        async with httpx.AsyncClient() as client:
            forged = await client.post(control_url, json={"method": "pause"},
                                       headers={"Origin": EVIL, "Sec-Fetch-Site": "cross-site"})
            assert forged.status_code == 403
            if bind == "0.0.0.0":  # off loopback any Host is served (the token guards it); a foreign Origin is not
                other_host = await client.get(f"http://127.0.0.1:{server.bound_port}/",
                                              params={"token": server.access_token}, headers={"Host": "tui.lan:1"})
                assert other_host.status_code == 200
                foreign = await client.get(f"http://127.0.0.1:{server.bound_port}/",
                                           params={"token": server.access_token},
                                           headers={"Host": "tui.lan:1", "Origin": EVIL})
                assert foreign.status_code == 403
        assert episode.calls == []
        # What the operator's app process does: RemoteDriver posts to the URL in its control file.
        errors: list[str] = []

        def refused(problem: str) -> None:
            errors.append(problem)
            episode.called.set()  # a refusal ends the wait too, and fails below with the server's reason

        RemoteDriver(control_url, LiveSource(), on_error=refused).pause()
        await asyncio.wait_for(episode.called.wait(), 10)
        assert episode.calls == [("pause", (), {})] and errors == []
    finally:
        await server.stop()
