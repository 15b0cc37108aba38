"""Installing and listing external harnesses, without the network: the npm command line, failures, the listing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from stripebench_tui.errors import UserError
from stripebench_tui.harness.harnesses import CLAUDE_CODE, install_harness
from stripebench_tui.runtime.episode import Episode, EpisodeConfig
from tests.fixture_envs import fixture_envs  # noqa: F401  (autouse: the fixture environments)

REPO = Path(__file__).resolve().parents[2]


def test_install_runs_npm_with_the_pinned_version_into_the_cache(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("STRIPEBENCH_HARNESSES", str(tmp_path))
    ran = []
    prefix = install_harness("claude-code", run=lambda argv, **kw: ran.append(argv) or SimpleNamespace(returncode=0))
    assert prefix == tmp_path / "claude-code-2.1.332" and prefix.is_dir()
    assert ran[0][1:] == ["install", "--no-audit", "--no-fund", "--prefix", str(prefix), "@anthropic-ai/claude-code@2.1.332"]
    assert CLAUDE_CODE.search_dirs() == [prefix / "node_modules" / ".bin"]


def test_a_failed_install_is_one_line_and_unknown_harnesses_are_named(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("STRIPEBENCH_HARNESSES", str(tmp_path))
    failed = SimpleNamespace(returncode=1, stdout="", stderr="npm error code E404\nnpm error 404 Not Found")
    with pytest.raises(UserError, match="^npm install @anthropic-ai/claude-code@2.1.332 failed: npm error 404 Not Found$"):
        install_harness("claude-code", run=lambda argv, **kw: failed)
    with pytest.raises(UserError, match="no installer for 'goose'; installable harnesses: claude-code"):
        install_harness("goose")


def test_agents_list_shows_whether_claude_code_is_installed(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "emulator")]),
           "STRIPEBENCH_HARNESSES": str(tmp_path), "PATH": os.path.dirname(sys.executable)}
    done = subprocess.run([sys.executable, "-m", "stripebench_tui", "agents", "list"], capture_output=True, text=True,
                          timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    line = next(x for x in done.stdout.splitlines() if x.startswith("claude-code"))
    assert "[not installed: run `stripebench agents install claude-code`" in line
    assert any(x.startswith("command ") for x in done.stdout.splitlines())


def test_an_external_harness_accepts_the_docker_sandbox(tmp_path: Path) -> None:
    # It runs in the episode's container (tests/docker/test_docker_harness.py); prepare no longer refuses it.
    episode = Episode(EpisodeConfig(env="tiny-shop", agent="command", agent_options={"cmd": f"{sys.executable} {{problem}}"},
                                    sandbox="docker", episode_dir=tmp_path / "ep"))
    episode.prepare()
    assert episode.agent is not None and episode.agent.local_only is False


def test_agent_cmd_placeholders_fill_whole_arguments_and_point_both_families_at_the_gateway() -> None:
    from stripebench_tui.agents import create_agent
    from stripebench_tui.harness.external import HarnessContext

    agent = create_agent("command", cmd=f"{sys.executable} run.py --task {{problem}} --dir={{workspace}} --api {{base_url}} "
                                        "--oai {openai_base_url} --model {model} --unknown {nope}", model="m1", env={})
    ctx = HarnessContext(problem="Fix the 'checkout' page", workspace="/ws", base_url="http://gw:1",
                         openai_base_url="http://gw:1/v1", api_key="sk-dummy", model="m1")
    argv = agent.harness.command(agent.executable, ctx)
    assert argv == [sys.executable, "run.py", "--task", "Fix the 'checkout' page", "--dir=/ws", "--api", "http://gw:1",
                    "--oai", "http://gw:1/v1", "--model", "m1", "--unknown", "{nope}"]
    env = agent.harness.environment(ctx, {"ANTHROPIC_API_KEY": "sk-real", "OPENAI_API_KEY": "sk-real", "HOME": "/root"})
    assert {k: env[k] for k in ("ANTHROPIC_BASE_URL", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "HOME")} == {
        "ANTHROPIC_BASE_URL": "http://gw:1", "OPENAI_BASE_URL": "http://gw:1/v1", "ANTHROPIC_API_KEY": "sk-dummy",
        "OPENAI_API_KEY": "sk-dummy", "HOME": "/root"}
