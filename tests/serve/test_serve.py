"""`stripebench serve` without a browser: tokens on every route, the operator's control route, bad input."""

from __future__ import annotations

import asyncio
import socket
import stat
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest

from stripebench_tui.serve.server import EpisodeServer, LiveHost, ServeTarget, is_loopback

REPLAY = Path(__file__).resolve().parents[2] / "replays" / "checkout-migration-400"


class FakeEpisode:
    """An episode that runs until stopped; its driver records the operator's calls."""

    def __init__(self) -> None:
        self.ready = asyncio.Event()
        self.ready.set()
        self.calls: list[tuple] = []
        self.driver = SimpleNamespace(**{m: self._recorder(m) for m in ("pause", "resume", "inject", "stop")})
        self._stopped = asyncio.Event()

    def _recorder(self, method: str):  # type: ignore[no-untyped-def]
        return lambda *args, **kwargs: self.calls.append((method, args, kwargs))

    async def run(self):  # type: ignore[no-untyped-def]
        await self._stopped.wait()
        return SimpleNamespace(reason="stopped", trace_path=None)

    def stop(self, reason: str = "") -> None:
        self._stopped.set()


def test_loopback_addresses() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("localhost") and is_loopback("::1")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.20")


async def test_off_loopback_every_route_needs_the_token_and_only_the_operator_token_steers(tmp_path: Path) -> None:
    episode = FakeEpisode()
    server = EpisodeServer(ServeTarget("attach", tmp_path / "trace.jsonl"), host="0.0.0.0", port=0,
                           live=LiveHost(episode, tmp_path / "trace.jsonl"))
    await server.start()
    base = f"http://127.0.0.1:{server.bound_port}"
    token, operator = server.access_token, server.operator_token
    assert token and operator and token != operator
    try:
        async with httpx.AsyncClient(base_url=base) as client:
            assert (await client.get("/")).status_code == 403
            assert (await client.get("/", params={"token": "guess"})).status_code == 403
            page = await client.get("/", params={"token": token})
            assert page.status_code == 200 and f"/ws/{token}" in page.text and operator not in page.text
            op_page = await client.get("/", params={"operator": operator})
            assert op_page.status_code == 200 and f"/ws/{operator}" in op_page.text
            assert (await client.get("/ws/view")).status_code == 403  # no websocket (no app) without the token
            # Steering: only with the operator's token, only the driver's operator methods and arguments.
            for key in ("guess", token):
                assert (await client.post(f"/control/{key}", json={"method": "pause"})).status_code == 403
            assert (await client.post(f"/control/{operator}", json={"method": "pause"})).status_code == 200
            hint = {"method": "inject", "args": ["look at the webhook"], "kwargs": {"kind": "hint"}}
            assert (await client.post(f"/control/{operator}", json=hint)).status_code == 200
            for bad in ({"method": "__init__"}, {"method": "stop", "kwargs": {"shell": "rm"}}, ["pause"]):
                assert (await client.post(f"/control/{operator}", json=bad)).status_code == 400
        assert episode.calls == [("pause", (), {}), ("inject", ("look at the webhook",), {"kind": "hint"})]
        # The operator's app is told where the control URL is, never the URL: only this user may read that file.
        control = server.control_file
        assert control is not None and operator not in server.app_command(control)
        assert control.read_text() == f"{base}/control/{operator}"
        assert stat.S_IMODE(control.stat().st_mode) == 0o600 and stat.S_IMODE(control.parent.stat().st_mode) == 0o700
    finally:
        await server.stop()
    assert episode._stopped.is_set()  # stopping the server stops its live episode
    assert not control.exists() and not control.parent.exists()  # and removes the control URL's file


async def test_on_loopback_viewers_need_no_token_and_a_replay_has_no_operator(tmp_path: Path) -> None:
    server = EpisodeServer(ServeTarget("replay", REPLAY), host="127.0.0.1", port=0)
    await server.start()
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.bound_port}") as client:
            page = await client.get("/")
            assert page.status_code == 200 and "/ws/view" in page.text
            assert (await client.post("/control/view", json={"method": "pause"})).status_code == 403
        assert server.urls() == (f"http://127.0.0.1:{server.bound_port}/", None)
    finally:
        await server.stop()


def _serve(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "stripebench_tui", "serve", *args], capture_output=True, text=True,
                          timeout=120)


@pytest.mark.slow
def test_bad_input_is_one_line_and_an_exit_code(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        busy = _serve(str(REPLAY), "--port", str(port))
    assert busy.returncode == 4 and busy.stderr.strip() == (
        f"stripebench: port {port} on 127.0.0.1 is in use; pick another with --port")
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_text("this is not a trace\n")
    bad = _serve(str(garbage), "--port", "0")
    assert bad.returncode == 3 and len(bad.stderr.strip().splitlines()) == 1 and "garbage.jsonl" in bad.stderr
    (tmp_path / "empty").mkdir()
    empty = _serve(str(tmp_path / "empty"), "--port", "0")
    assert empty.returncode == 2 and "no episodes here" in empty.stderr and len(empty.stderr.strip().splitlines()) == 1


class FailingEpisode(FakeEpisode):
    """An episode whose sandbox cannot be laid out: it fails before its recorder writes any trace."""

    env = SimpleNamespace(id="tiny-shop", manifest=SimpleNamespace(title="Tiny shop"))

    async def run(self):  # type: ignore[no-untyped-def]
        raise FileExistsError(17, "File exists", "workspace")


async def test_a_live_episode_that_fails_before_its_trace_exists_still_ends_every_viewers_trace(tmp_path: Path) -> None:
    from stripebench_tui.tui.sources.follow import AttachedEpisode
    from stripebench_tui.tui.sources.live_source import LiveSource

    trace = tmp_path / "ep" / "trace.jsonl"
    host = LiveHost(FailingEpisode(), trace)
    host.start()
    assert host.task is not None
    await host.task
    assert host.error == "FileExistsError: [Errno 17] File exists: 'workspace'"
    # What a viewer's app reads from that trace: the episode is over, with the error to show.
    result = await asyncio.wait_for(AttachedEpisode(trace, LiveSource()).run(), 10)
    assert (result.reason, result.setup_failed, result.error) == ("error", True, host.error)
