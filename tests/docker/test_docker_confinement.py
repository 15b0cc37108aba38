"""The referee's room is locked: a container sees no answer, holds no privilege, and graders run the app inside it."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from stripebench_tui.envs.manifest import Environment
from stripebench_tui.grading import GradingContext
from stripebench_tui.grading.app_copy import AppCopy
from stripebench_tui.runtime.docker_sandbox import PACKAGE_MOUNT, DockerSandbox
from tests.docker.conftest import FIXTURES

pytestmark = [pytest.mark.docker, pytest.mark.slow]

# A stand-in for the shop that says where it runs: user, pid 1's command, and whether it can write its database.
PROBE_APP = """\
import json, os, sqlite3
from http.server import BaseHTTPRequestHandler, HTTPServer

class H(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def do_GET(self):
        if self.path == "/health":
            body = b"ok"
        else:
            with sqlite3.connect(os.environ["DATABASE_PATH"]) as db:
                db.execute("INSERT INTO t VALUES ('written by the copy')")
            with open("/proc/1/cmdline", "rb") as f:
                init = f.read().replace(b"\\0", b" ").decode()
            body = json.dumps({"uid": os.getuid(), "init": init, "pid": os.getpid()}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

HTTPServer(("127.0.0.1", int(os.environ["APP_PORT"])), H).serve_forever()
"""


def _container_pids(sandbox: DockerSandbox) -> set[int]:
    top = sandbox.container.top()
    column = top["Titles"].index("PID")
    return {int(row[column]) for row in top["Processes"]}


def _pids_with(var: str) -> list[int]:
    """Pids here whose own environment has ``var`` (the in-container processes are visible from this machine)."""
    needle = var.encode()
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if needle in Path(f"/proc/{entry}/environ").read_bytes().split(b"\0"):
                    found.append(int(entry))
            except OSError:
                continue
    return found


async def test_the_container_mounts_only_what_the_episode_needs(sandbox: DockerSandbox) -> None:
    env = sandbox.env
    mounts = {m["Destination"]: m for m in sandbox.container.attrs["Mounts"]}
    assert set(mounts) == {str(sandbox.workspace), str(sandbox.scratch), f"{PACKAGE_MOUNT}/stripebench_tui",
                           "/opt/stripebench-seed/seed.py"}
    assert mounts["/opt/stripebench-seed/seed.py"]["Source"] == str(env.path("seed.py").resolve())
    assert mounts["/opt/stripebench-seed/seed.py"]["RW"] is False
    root = str(env.root.resolve())
    for mount in mounts.values():  # nothing of the environment's folder but the seed file, and no graders
        assert mount["Source"] == str(env.path("seed.py").resolve()) or not mount["Source"].startswith(root)
        assert "graders" not in Path(mount["Source"]).parts
    executor = sandbox.tool_executor(["shell"])
    await executor.start()
    try:
        for target in (env.path("solution/handlers.py"), env.path("plans/solution.toml"), FIXTURES / "graders"):
            assert target.exists()  # here, on this machine
            out = await executor.call("shell", {"command": f"ls {target}"})
            assert out.exit_code != 0 and "No such file or directory" in out.text, (target, out.text)
        # nowhere in the container either, under any path
        out = await executor.call("shell", {"command": "find / -path /proc -prune -o -path /sys -prune -o "
                                                       "\\( -name handlers_no_metadata.py -o -name tiny_shop.py "
                                                       "-o -name no_metadata.toml \\) -print 2>/dev/null; echo end"})
        assert out.text.splitlines()[0] == "end", out.text  # nothing found before the marker
        out = await executor.call("shell", {"command": "head -1 /opt/stripebench-seed/seed.py"})
        assert out.exit_code == 0 and "Seed the Stripe account" in out.text  # the seed script is there to run
    finally:
        await executor.close()


async def test_the_container_has_no_capabilities_no_new_privileges_and_a_pids_limit(sandbox: DockerSandbox) -> None:
    host = sandbox.container.attrs["HostConfig"]
    assert host["CapDrop"] == ["ALL"] and not host.get("CapAdd")
    assert host["SecurityOpt"] == ["no-new-privileges"]
    assert host["PidsLimit"] == sandbox.env.manifest.docker.pids == 512
    executor = sandbox.tool_executor(["shell"])
    await executor.start()
    try:
        out = await executor.call("shell", {"command": "grep -E '^(CapEff|CapBnd|CapPrm|NoNewPrivs):' /proc/self/status"})
        status = dict(line.split(":\t") for line in out.text.splitlines() if ":\t" in line)
        assert status == {"CapEff": "0000000000000000", "CapBnd": "0000000000000000", "CapPrm": "0000000000000000",
                          "NoNewPrivs": "1"}, out.text
        out = await executor.call("shell", {"command": "cat /sys/fs/cgroup/pids.max 2>/dev/null || "
                                                       "cat /sys/fs/cgroup/pids/pids.max"})
        assert out.text.split()[0] == "512", out.text  # the engine enforces it
        # the app and tool servers still work: a port above 1024 binds on the host network
        out = await executor.call("shell", {"command": "python3 -c \"import socket; s = socket.socket(); "
                                                       "s.bind(('127.0.0.1', 0)); print('bound', s.getsockname()[1])\""})
        assert out.exit_code == 0 and out.text.startswith("bound "), out.text
    finally:
        await executor.close()


async def test_the_pids_limit_comes_from_the_manifest(docker_client, tmp_path: Path) -> None:
    from stripebench_tui.core.bus import EventBus
    from stripebench_tui.envs.catalog import find_environment

    env = find_environment("tiny-shop")  # same files, so the same image; only the manifest object differs
    docker = env.manifest.docker.model_copy(update={"pids": 100})
    env = Environment(env.root, env.manifest.model_copy(update={"docker": docker}))
    (tmp_path / "ep").mkdir()
    box = DockerSandbox(env, tmp_path / "ep", {})
    box.prepare()
    bus = EventBus()
    try:
        await box.start(bus)
        assert box.container.attrs["HostConfig"]["PidsLimit"] == 100
    finally:
        await box.stop()
        await bus.close(timeout=2)


async def test_a_graders_app_copy_runs_inside_the_container(sandbox: DockerSandbox) -> None:
    (sandbox.workspace / "app.py").write_text(PROBE_APP)
    with sqlite3.connect(sandbox.workspace / "shop.db") as db:
        db.execute("CREATE TABLE t (name TEXT)")
    ctx = GradingContext(env=sandbox.env, episode_dir=sandbox.episode_dir, workspace=sandbox.workspace,
                         stripe_api_base="http://127.0.0.1:9", stripe_api_key="sk_test_x",
                         env_vars=sandbox.variables(), processes=sandbox)
    with AppCopy(ctx, database="shop.db", start_timeout=30) as app:
        got = app.http.get("/where").json()
        port = app.url.rsplit(":", 1)[1]
        copies = _pids_with(f"APP_PORT={port}")
        inside = _container_pids(sandbox)
        spaces = {os.readlink(f"/proc/{pid}/ns/pid") for pid in copies}
        with sqlite3.connect(app.db_path) as db:  # what the copy wrote in the container, read here
            rows = [r[0] for r in db.execute("SELECT name FROM t")]
        relay = Path(f"/proc/{app.proc.pid}/cmdline").read_bytes().split(b"\0")
    assert got["uid"] == sandbox.uid and "sleep infinity" in got["init"]  # pid 1 is the container's, not ours
    assert copies and set(copies) <= inside, (copies, inside)
    assert os.readlink("/proc/self/ns/pid") not in spaces
    assert rows == ["written by the copy"]
    assert b"stripebench_tui.runtime.docker_exec" in relay and sandbox.container_name.encode() in relay
    assert app.db_path.parent.parent == sandbox.scratch and not app.db_path.parent.exists()
    with sqlite3.connect(sandbox.workspace / "shop.db") as db:
        assert list(db.execute("SELECT name FROM t")) == []  # the episode's database is untouched
    assert not set(_pids_with(f"APP_PORT={port}")) & _container_pids(sandbox)  # close() stopped it in there


def _probe_grader(tmp_path: Path) -> Path:
    """tiny-shop's grader plus a final criterion: the grader's app copy runs in another pid namespace than us."""
    graders = tmp_path / "graders"
    graders.mkdir()
    text = (FIXTURES / "graders" / "tiny_shop.py").read_text()
    text = text.replace("GRADER = Grader(\n    criteria=(\n", '''
def copy_confined(ctx, view):
    import os
    from pathlib import Path
    from stripebench_tui.grading.app_copy import AppCopy

    with AppCopy(ctx) as app:
        needle = ("APP_PORT=" + app.url.rsplit(":", 1)[1]).encode()
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit() and needle in _environ(p)]
        spaces = {os.readlink(f"/proc/{p}/ns/pid") for p in pids}
    if pids and os.readlink("/proc/self/ns/pid") not in spaces:
        return passed("the app copy ran in another pid namespace", pids=len(pids))
    return failed("the app copy ran beside the grader", pids=len(pids))


def _environ(pid):
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return f.read().split(b"\\0")
    except OSError:
        return []


GRADER = Grader(
    criteria=(
        Criterion("app copy confined", 1.0, "The grader's app copy runs where the episode ran", copy_confined,
                  final_only=True, per_candidate=False),
''')
    (graders / "tiny_shop.py").write_text(text)
    return graders


async def test_an_episodes_grader_starts_its_app_copy_in_the_container_and_so_does_regrading(
        docker_client, tmp_path: Path) -> None:
    from stripebench_tui.envs.catalog import find_environment
    from stripebench_tui.runtime.episode import Episode, EpisodeConfig
    from stripebench_tui.runtime.grade import grade_episode

    graders = _probe_grader(tmp_path)
    episode = Episode(EpisodeConfig(env="tiny-shop", sandbox="docker", episode_dir=tmp_path / "ep", graders_dir=graders))
    result = await episode.run()
    assert result.reason == "agent_done" and result.score == 1.0, result
    verdicts = [json.loads(line) for line in result.trace_path.read_text().splitlines()]
    confined = [v for v in verdicts if v.get("type") == "grader_verdict" and v.get("criterion") == "app copy confined"]
    assert confined and confined[-1]["status"] == "pass", confined
    assert not any(result.episode_dir.joinpath("grader-scratch").iterdir())  # app copies leave nothing behind

    graded = await grade_episode(find_environment("tiny-shop"), result.episode_dir, graders_root=graders)
    assert graded.results["app copy confined"].status == "pass", graded.results["app copy confined"]
    assert graded.score == 1.0
