"""Environments own their dependencies: a cached venv per environment, built once, first on every process's PATH.

Everything here is offline: the requirements name a small wheel made by the test, found with --find-links and
pip's index turned off (PIP_NO_INDEX), and the cache is a temporary directory (STRIPEBENCH_CACHE).
"""

from __future__ import annotations

import asyncio
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from stripebench_tui.envs.deps import dependencies
from stripebench_tui.runtime.envdeps import BadRequirements, DependencyFailed, ensure_venv
from stripebench_tui.runtime.episode import EpisodeConfig, run_episode
from stripebench_tui.runtime.printer import LivePrinter
from tests.envdeps_env import VALUE, make_env, wheel
from tests.runtime.helpers import trace_lines


@pytest.fixture
def offline_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty cache and pip without an index (only --find-links)."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("STRIPEBENCH_CACHE", str(cache))
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    return cache


@pytest.fixture
def wheel_requirements(tmp_path: Path) -> str:
    return f"--find-links {wheel(tmp_path / 'wheels')}\nsbfixture-dep==1.0\n"


def _venv_dirs(cache: Path, env_id: str = "deps-app") -> list[Path]:
    home = cache / "envs" / env_id
    return sorted(p for p in home.iterdir() if p.name.startswith("venv-")) if home.is_dir() else []


def test_the_runner_itself_does_not_have_the_package() -> None:
    # Otherwise the episode tests below would pass without the environment's venv.
    probe = subprocess.run([sys.executable, "-c", "import sbfixture_dep"], capture_output=True)
    assert probe.returncode != 0


async def test_an_episode_builds_the_venv_once_and_every_process_runs_with_it(
        tmp_path: Path, offline_cache: Path, wheel_requirements: str) -> None:
    env = make_env(tmp_path / "envs", wheel_requirements)
    command = ("python -c 'import sbfixture_dep; print(\"shell:\", sbfixture_dep.VALUE)'; "
               "python -c 'import os, urllib.request; print(\"app:\", "
               "urllib.request.urlopen(os.environ[\"APP_URL\"]).read().decode())'; "
               "echo \"seed: $(cat seeded.txt)\"")

    def ready(episode) -> None:
        episode.agent.submit("shell", {"command": command})
        episode.agent.finish()

    first = await run_episode(EpisodeConfig(env=env, agent="human", episode_dir=tmp_path / "ep1"), on_ready=ready)
    assert first.reason == "agent_done", first.error
    lines = trace_lines(first.trace_path)
    output = next(line["output"] for line in lines if line["type"] == "tool_result")
    assert f"shell: {VALUE}" in output and f"app: {VALUE}" in output and f"seed: {VALUE}" in output
    deps_events = [(line["status"], line["text"]) for line in lines if line.get("service") == "deps"]
    assert deps_events[0][0] == "starting" and deps_events[-1][0] == "healthy"
    assert any("sbfixture" in text for status, text in deps_events if status == "log")  # pip's progress, shown
    assert "sbfixture" in (first.episode_dir / "logs" / "deps.log").read_text()
    built = _venv_dirs(offline_cache)
    assert len(built) == 1

    second = await run_episode(EpisodeConfig(env=env, agent="human", episode_dir=tmp_path / "ep2"), on_ready=ready)
    assert second.reason == "agent_done", second.error
    lines = trace_lines(second.trace_path)
    assert f"app: {VALUE}" in next(line["output"] for line in lines if line["type"] == "tool_result")
    assert [line["status"] for line in lines if line.get("service") == "deps"] == ["healthy"]  # reused, not rebuilt
    assert _venv_dirs(offline_cache) == built


async def test_two_builds_at_once_make_one_venv(tmp_path: Path, offline_cache: Path, wheel_requirements: str) -> None:
    deps = dependencies(make_env(tmp_path / "envs", wheel_requirements))
    said: dict[str, list[str]] = {"a": [], "b": []}
    a, b = await asyncio.gather(ensure_venv(deps, said["a"].append), ensure_venv(deps, said["b"].append))
    assert a == b and deps.ready()
    assert _venv_dirs(offline_cache) == [a]
    assert any(line.startswith("installing deps-app's dependencies") for line in said["a"])
    assert not any(line.startswith("installing") for line in said["b"])
    assert any("waiting for another run" in line for line in said["b"])
    assert any("built by another run" in line for line in said["b"])


async def test_a_failing_requirement_is_one_line_and_leaves_nothing_half_built(
        tmp_path: Path, offline_cache: Path, wheel_requirements: str) -> None:
    env = make_env(tmp_path / "envs", wheel_requirements + "sbfixture-not-there==9.9\n")
    deps = dependencies(env)
    with pytest.raises(DependencyFailed) as failed:
        await ensure_venv(deps)
    message = str(failed.value)
    assert "\n" not in message
    assert "environment deps-app" in message and str(deps.requirements) in message
    assert "sbfixture-not-there" in message and "fix the requirement" in message and str(deps.log_path) in message
    assert "sbfixture-not-there" in deps.log_path.read_text()  # pip's whole log is kept
    assert _venv_dirs(offline_cache) == [] and not deps.link.exists() and not deps.ready()
    assert deps.describe() == (False, f"deps-app: the last build of its dependencies failed: {message}")


async def test_a_broken_requirements_file_is_a_bad_file(tmp_path: Path, offline_cache: Path) -> None:
    deps = dependencies(make_env(tmp_path / "envs", "flask >>>= 3 this is not a requirement\n"))
    with pytest.raises(BadRequirements, match=r"environment deps-app: .*requirements\.txt.*fix that line") as failed:
        await ensure_venv(deps)
    assert failed.value.exit_code == 3
    assert _venv_dirs(offline_cache) == [] and not deps.link.exists()


async def test_an_interrupted_build_leaves_nothing_and_the_next_one_sweeps_what_a_killed_one_left(
        tmp_path: Path, offline_cache: Path, wheel_requirements: str) -> None:
    deps = dependencies(make_env(tmp_path / "envs", wheel_requirements))
    task: asyncio.Task | None = None

    def cancel_once_pip_runs(line: str) -> None:
        if line.startswith(("Collecting", "Processing", "Looking")) and task is not None:
            task.cancel()

    task = asyncio.ensure_future(ensure_venv(deps, cancel_once_pip_runs))
    with pytest.raises(asyncio.CancelledError):
        await task
    assert _venv_dirs(offline_cache) == [] and not deps.link.exists() and deps.last_failure() == ""

    stale = deps.home / f"venv-{deps.key}-deadbeef"  # what a build killed with SIGKILL leaves
    (stale / "bin").mkdir(parents=True)
    path = await ensure_venv(deps)
    assert _venv_dirs(offline_cache) == [path] and not stale.exists()


def _cli(*args: str, env_root: Path) -> subprocess.CompletedProcess:
    import os

    env = {**os.environ, "STRIPEBENCH_ENVIRONMENTS": str(env_root)}
    return subprocess.run([sys.executable, "-m", "stripebench_tui", *args], capture_output=True, text=True, timeout=240,
                          env=env, cwd=env_root.parent)


@pytest.mark.slow
def test_run_and_doctor_report_a_dependency_that_fails_to_install(
        tmp_path: Path, offline_cache: Path, wheel_requirements: str) -> None:
    env = make_env(tmp_path / "envs", wheel_requirements + "sbfixture-not-there==9.9\n")
    done = _cli("run", "deps-app", "--headless", "--agent", "noop", "--episode-dir", str(tmp_path / "ep"),
                env_root=tmp_path / "envs")
    assert done.returncode == 4, done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    [error] = [line for line in done.stderr.splitlines() if line.startswith("stripebench:")]
    assert "environment deps-app" in error and "requirements.txt" in error and "sbfixture-not-there" in error
    assert "sbfixture-not-there" in error.split("failed: ", 1)[1]  # the error, not just the name
    last = trace_lines(tmp_path / "ep" / "trace.jsonl")[-1]
    assert last["type"] == "episode_end" and "sbfixture-not-there" in last["error"]
    assert _venv_dirs(offline_cache) == []

    doctor = _cli("doctor", "--no-docker", env_root=tmp_path / "envs")
    assert doctor.returncode == 4
    assert any(line.startswith("FAIL") and "deps-app: the last build of its dependencies failed" in line
               for line in doctor.stdout.splitlines()), doctor.stdout
    assert dependencies(env).last_failure()


def test_doctor_says_which_venvs_are_ready_and_which_will_be_built(
        tmp_path: Path, offline_cache: Path, wheel_requirements: str) -> None:
    ready = make_env(tmp_path / "envs", wheel_requirements, env_id="deps-ready")
    make_env(tmp_path / "envs", wheel_requirements, env_id="deps-later")
    make_env(tmp_path / "envs", None, env_id="deps-none", app_imports="sbfixture_dep = None", seed="")
    asyncio.run(ensure_venv(dependencies(ready)))
    doctor = _cli("doctor", "--no-docker", env_root=tmp_path / "envs").stdout.splitlines()
    assert any(line.startswith("ok") and "deps-ready: dependencies ready" in line for line in doctor), doctor
    assert any(line.startswith("ok") and "deps-later: dependencies" in line and "will be installed on its first run"
               in line for line in doctor), doctor
    assert any(line.startswith("ok") and "deps-none: no requirements" in line for line in doctor), doctor


# ---- say why a service died ----


async def test_an_app_that_dies_at_import_ends_the_episode_with_its_error_line(tmp_path: Path) -> None:
    env = make_env(tmp_path / "envs", None, app_imports="import no_such_module_for_stripebench as sbfixture_dep",
                   seed="", top='requirements = ""')
    printed = io.StringIO()
    result = await run_episode(EpisodeConfig(env=env, agent="noop", episode_dir=tmp_path / "ep"),
                               subscribers=[LivePrinter(printed)])
    wanted = "ModuleNotFoundError: No module named 'no_such_module_for_stripebench'"
    assert result.setup_failed and result.exit_code == 4
    assert "service app exited with code 1 before it was healthy" in result.error and wanted in result.error
    assert "\n" not in result.error
    end = trace_lines(result.trace_path)[-1]
    assert end["type"] == "episode_end" and end["reason"] == "error" and wanted in end["error"]
    assert wanted in [line for line in printed.getvalue().splitlines() if line.startswith("■ episode ended")][0]


async def test_a_failing_seed_says_its_last_lines(tmp_path: Path) -> None:
    env = make_env(tmp_path / "envs", None, app_imports="sbfixture_dep = None", top='requirements = ""',
                   seed="print('seeding')\nraise SystemExit('the catalogue could not be created: boom')\n")
    result = await run_episode(EpisodeConfig(env=env, agent="noop", episode_dir=tmp_path / "ep"))
    assert result.setup_failed
    assert "the seed script seed.py exited with code 1" in result.error
    assert result.error.endswith("seed.log): the catalogue could not be created: boom (its log before that: seeding)")
    assert json.dumps(result.error) and "\n" not in result.error


async def test_the_graders_app_copy_runs_with_the_environments_venv(
        tmp_path: Path, offline_cache: Path, wheel_requirements: str) -> None:
    from stripebench_tui.grading import GradingContext
    from stripebench_tui.grading.app_copy import AppCopy

    env = make_env(tmp_path / "envs", wheel_requirements)
    await ensure_venv(dependencies(env))
    workspace = tmp_path / "episode" / "workspace"
    workspace.mkdir(parents=True)
    (workspace / "app.py").write_text((env.workspace / "app.py").read_text())
    ctx = GradingContext(env=env, episode_dir=tmp_path / "episode", workspace=workspace,
                         stripe_api_base="http://127.0.0.1:9", stripe_api_key="sk_test_x")
    copy = await asyncio.to_thread(AppCopy, ctx, start_timeout=20)
    try:
        assert copy.http.get("/").text == VALUE
    finally:
        await asyncio.to_thread(copy.close)


async def test_a_cache_that_cannot_be_written_is_one_line_naming_the_variable(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, wheel_requirements: str) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the cache should go\n")
    monkeypatch.setenv("STRIPEBENCH_CACHE", str(blocker))
    deps = dependencies(make_env(tmp_path / "envs", wheel_requirements))
    with pytest.raises(DependencyFailed, match=r"environment deps-app: cannot use the dependency cache .*; set "
                                               r"STRIPEBENCH_CACHE to a writable directory"):
        await ensure_venv(deps)
