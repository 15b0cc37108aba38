"""kill -9 of an episode leaves nothing behind (runtime.episode_scratch, runtime.reaper, runtime.postgres): no
PostgreSQL server outliving its wrapper, no cluster data directory, no Chromium or Playwright profile in the
temporary directory; and a scratch directory whose episode and watchdog were both killed is swept by the next start.

Real processes, real kill -9: the episode is a child process with a real LocalSandbox, a real PostgreSQL cluster
(started as the services are: dying with the episode) and a real Chromium through Playwright. Waits are on events
(a line printed, a pidfd becoming readable); ``GUARD`` only stops a broken run from hanging."""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from stripebench_tui.runtime import episode_scratch
from stripebench_tui.runtime.reaper import tagged_pids
from stripebench_tui.runtime.services import free_port, port_is_free
from tests.fixture_envs import FIXTURES
from tests.runtime.test_postgres import _serve, _wait_listening

ROOT = Path(__file__).resolve().parents[2]
GUARD = 60.0


def _wait_exit(pid: int, timeout: float = GUARD) -> bool:
    """Whether ``pid`` (not our child) exits within ``timeout`` seconds: its pidfd becomes readable when it does."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        return bool(select.select([fd], [], [], timeout)[0])
    finally:
        os.close(fd)


def test_the_server_dies_with_its_wrapper_when_the_wrapper_is_killed(tmp_path: Path) -> None:
    port = free_port()
    wrapper = _serve(tmp_path / "episode" / "postgres", port)
    postmaster, made_in = None, None
    try:
        lines = _wait_listening(wrapper, port)
        made_in = Path(next(ln for ln in lines if "making a cluster" in ln).rsplit(" in ", 1)[1])
        postmaster = int((made_in / "postmaster.pid").read_text().split()[0])
        wrapper.send_signal(signal.SIGKILL)
        wrapper.wait(GUARD)
        assert _wait_exit(postmaster), "the PostgreSQL server outlived its killed wrapper"
    finally:
        wrapper.kill()
        if postmaster is not None and not _wait_exit(postmaster, 0):
            os.kill(postmaster, signal.SIGKILL)
        if made_in is not None:  # the killed wrapper could not remove it: here, that is not what is tested
            shutil.rmtree(made_in.parent if made_in.parent.name.startswith("stripebench-pg-") else made_in)


EPISODE = textwrap.dedent("""
    import subprocess, sys
    from pathlib import Path
    from stripebench_tui.envs.catalog import load_environment
    from stripebench_tui.runtime import postgres
    from stripebench_tui.runtime.local import LocalSandbox
    from stripebench_tui.runtime.reaper import die_with_parent

    env = load_environment(Path(sys.argv[1]))
    sandbox = LocalSandbox(env, Path(sys.argv[2]), {"POSTGRES_PORT": sys.argv[3]})
    sandbox.prepare()
    variables = sandbox.tool_env()
    # the cluster as the postgres service runs it (services die with the episode: die_with_parent)
    server = subprocess.Popen(["bash", "-c", "exec " + postgres.service_spec(env.manifest.postgres).command],
                              env=variables, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              preexec_fn=die_with_parent)
    for line in server.stdout:
        if "ready to accept connections" in line:
            break
    # a browser as the browser tool server runs one
    browser = subprocess.Popen([sys.executable, "-c", '''
    import asyncio, sys
    from playwright.async_api import async_playwright
    from stripebench_tui.chromium import launch_options
    async def main():
        pw = await async_playwright().start()
        await pw.chromium.launch(**launch_options())
        print("browser up", flush=True)
        sys.stdin.read()
    asyncio.run(main())
    '''], env=variables, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert browser.stdout.readline().strip() == "browser up"
    print("ready", sandbox.tag, sandbox.watchdog.process.pid, flush=True)
    sys.stdin.read()
""")


@pytest.mark.timeout(180)
def test_kill_9_of_an_episode_leaves_no_cluster_no_browser_profile_and_no_process(tmp_path: Path) -> None:
    env_dir = tmp_path / "tiny-shop"
    shutil.copytree(FIXTURES / "tiny-shop", env_dir)
    with open(env_dir / "environment.toml", "a") as manifest:
        manifest.write('\n[postgres]\nrole = "model"\ndatabase = "saas_db"\n')
    # The temporary directory the episode starts with: one PostgreSQL's own user can traverse (pytest's is root's
    # alone), so that a cluster made inside the scratch directory works as in /tmp; short, as /tmp is (Chromium's
    # socket path in it must stay within 107 bytes).
    temp, episode = Path(tempfile.mkdtemp(prefix="sbk-")), tmp_path / "episode"
    temp.chmod(0o711)
    port = free_port()
    child = subprocess.Popen([sys.executable, "-c", EPISODE, str(env_dir), str(episode), str(port)], cwd=ROOT,
                             env={**os.environ, "TMPDIR": str(temp), "PYTHONPATH": str(ROOT)},
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        said = child.stdout.readline().split()
        assert said[:1] == ["ready"], f"the episode did not start: {said}"
        tag, watchdog = said[1], int(said[2])
        assert [p.name for p in temp.iterdir()] == [episode_scratch.name(tag)], "all temporary files in one"
        scratch = temp / episode_scratch.name(tag)
        made = {p.name.split("-")[0] for p in scratch.iterdir()}
        assert {"playwright_chromiumdev_profile", "playwright"} <= made, made
        child.send_signal(signal.SIGKILL)
        child.wait(GUARD)
        assert _wait_exit(watchdog), "the watchdog did not finish"
        assert tagged_pids(tag) == [], "processes of the killed episode outlived it"
        assert list(temp.iterdir()) == [], "a profile or a cluster stayed in the temporary directory"
        assert not (episode / "postgres").exists()
        assert port_is_free(port), "the cluster's server still listens"
    finally:
        child.kill()
        shutil.rmtree(temp, ignore_errors=True)


def _holder(root: Path, tag: str) -> subprocess.Popen[str]:
    """A process that makes a scratch directory in ``root`` and holds it until its stdin closes."""
    code = (f"from pathlib import Path; from stripebench_tui.runtime import episode_scratch as s; import sys\n"
            f"s.make({tag!r}, Path({str(root)!r})); print('made', flush=True); sys.stdin.read()")
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "made"
    return proc


def test_the_next_start_sweeps_scratch_directories_whose_episode_and_watchdog_were_killed(tmp_path: Path) -> None:
    alive, killed = _holder(tmp_path, "alive"), _holder(tmp_path, "killed")
    try:
        (tmp_path / episode_scratch.name("killed") / "playwright_chromiumdev_profile-x").mkdir()
        killed.send_signal(signal.SIGKILL)
        killed.wait(GUARD)
        (tmp_path / "someone-elses").mkdir()
        swept = episode_scratch.sweep_orphans(tmp_path)
        assert swept == [tmp_path / episode_scratch.name("killed")]
        assert sorted(p.name for p in tmp_path.iterdir()) == ["someone-elses", episode_scratch.name("alive")]
    finally:
        for proc in (alive, killed):
            proc.kill()
            proc.wait(GUARD)
    assert episode_scratch.sweep_orphans(tmp_path) == [tmp_path / episode_scratch.name("alive")], "once its holder is gone"
