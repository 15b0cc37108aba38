"""Services on their own: log lines as events, restart on exit, stop of the whole process group."""

from __future__ import annotations

import asyncio
import os
import socket
from pathlib import Path

import pytest

from stripebench_tui.core.bus import EventBus
from stripebench_tui.core.events import Event, Service
from stripebench_tui.runtime.services import ServiceFailed, ServiceProcess, free_port, port_is_free, probe_status


def _group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes in process group ``pgid``, from /proc."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] != "Z" and int(fields[2]) == pgid:
                found.append(int(entry))
    return found


async def test_restart_and_stop_everything(tmp_path: Path) -> None:
    bus = EventBus()
    seen: list[Event] = []
    bus.subscribe(seen.append)
    svc = ServiceProcess(bus, "flaky", "echo up; sleep 300 & sleep 0.2; exit 3", cwd=tmp_path, env=dict(os.environ),
                         log_path=tmp_path / "flaky.log", restart=True)
    await svc.start()
    for _ in range(200):
        await asyncio.sleep(0.02)
        if sum(1 for e in seen if isinstance(e, Service) and e.status == "starting") >= 2:
            break
    pid = svc.pid
    await svc.stop()
    await bus.drain()
    statuses = [e.status for e in seen if isinstance(e, Service)]
    assert statuses.count("starting") >= 2 and "exited" in statuses and statuses[-1] == "stopped"
    exited = next(e for e in seen if isinstance(e, Service) and e.status == "exited")
    assert exited.exit_code == 3
    assert any(isinstance(e, Service) and e.text == "up" and e.stream == "stdout" for e in seen)
    assert "up" in (tmp_path / "flaky.log").read_text()
    await asyncio.sleep(0.2)
    assert _group_members(pid) == []  # the background sleep of the group went with it
    await bus.close()


async def test_probes_and_ports() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        assert not port_is_free(port)
        assert await probe_status({"tcp": f"127.0.0.1:{port}"}) == 200
    assert port_is_free(port)
    assert await probe_status({"tcp": f"127.0.0.1:{port}"}) is None
    assert await probe_status({"http": f"http://127.0.0.1:{port}/health"}) is None


# A server that is up and answers every GET with 500 and a compile error in its log, as `next dev` does.
BROKEN = ("import http.server, sys\n"
          "class H(http.server.BaseHTTPRequestHandler):\n"
          "    def do_GET(self):\n"
          "        print('Module not found: cannot resolve @/lib/db/drizzle', flush=True)\n"
          "        self.send_response(500); self.end_headers()\n"
          "http.server.HTTPServer(('127.0.0.1', int(sys.argv[1])), H).serve_forever()\n")


@pytest.mark.parametrize("fail_on_5xx", [True, False])
async def test_a_server_answering_500_fails_at_once_when_asked(tmp_path: Path, fail_on_5xx: bool) -> None:
    (tmp_path / "broken.py").write_text(BROKEN)
    port = free_port()
    bus = EventBus()
    svc = ServiceProcess(bus, "app", f"exec python3 broken.py {port}", cwd=tmp_path, env=dict(os.environ),
                         log_path=tmp_path / "app.log", health={"http": f"http://127.0.0.1:{port}/"},
                         health_timeout=3 if not fail_on_5xx else 120, fail_on_5xx=fail_on_5xx)
    try:
        with pytest.raises(ServiceFailed) as failed:
            await svc.start()
    finally:
        await svc.stop()
        await bus.close()
    if fail_on_5xx:  # the first 500 ends the wait (the 120 s would fail the suite's time), with the log's error
        assert str(failed.value).startswith(f"service app answered HTTP 500 at http://127.0.0.1:{port}/: it is up but broken")
        assert "Module not found: cannot resolve @/lib/db/drizzle" in str(failed.value)
    else:
        assert "failed its health check: no answer from" in str(failed.value)


async def test_logs_are_redacted_as_they_are_written(tmp_path: Path) -> None:
    from stripebench_tui.core.redact import Redactor
    from stripebench_tui.runtime.services import run_logged

    registered = "opaque-registered-value-42"
    script = (f"echo 'key {registered}'; echo 'ANTHROPIC_API_KEY=sk-ant-api03-abcdefghijklmnopqrstuvwx' >&2; "
              "printf 'raw \\377 byte\\n'; echo 'plain line'")
    bus = EventBus()
    last_line = asyncio.Event()  # a line is in the file before its event is published
    bus.subscribe(lambda e: last_line.set() if isinstance(e, Service) and e.text == "plain line" else None)
    redactor = Redactor([registered])
    svc = ServiceProcess(bus, "talker", script + "; sleep 300", cwd=tmp_path, env=dict(os.environ),
                         log_path=tmp_path / "talker.log", redactor=redactor)
    await svc.start()
    await asyncio.wait_for(last_line.wait(), 10)
    await svc.stop()
    code = await run_logged(bus, "seed", ["bash", "-c", script], cwd=tmp_path, env=dict(os.environ),
                            log_path=tmp_path / "seed.log", timeout=30, redactor=redactor)
    assert code == 0
    for name in ("talker.log", "seed.log"):
        data = (tmp_path / name).read_bytes()
        assert registered.encode() not in data and b"abcdefghijklmnop" not in data
        assert b"key [REDACTED]" in data and b"sk-ant-api03-[REDACTED]" in data
        assert b"raw \xff byte\n" in data and b"plain line\n" in data  # other bytes untouched
