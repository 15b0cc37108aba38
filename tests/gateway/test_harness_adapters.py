"""The codex and mini-swe-agent adapters, their installers, `doctor` and `agents list`, without the network."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import tomllib
from pathlib import Path
from types import SimpleNamespace

import pytest

from stripebench_tui import shared_cache
from stripebench_tui.agents import create_agent
from stripebench_tui.errors import UserError
from stripebench_tui.harness.external import HarnessContext
from stripebench_tui.harness.harnesses import CODEX, MINI_SWE_AGENT, install_harness
from tests.fixture_envs import fixture_envs  # noqa: F401  (autouse: the fixture environments)

REPO = Path(__file__).resolve().parents[2]


def _ctx(tmp_path: Path, **extra) -> HarnessContext:
    state = tmp_path / "state"
    state.mkdir(exist_ok=True)
    return HarnessContext(problem="-Fix the \"checkout\" page", workspace="/ws", base_url="http://127.0.0.1:9",
                          openai_base_url="http://127.0.0.1:9/v1", api_key="sk-dummy", state_dir=str(state), **extra)


def _cli(*args: str, cache: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO), "STRIPEBENCH_HARNESSES": str(cache),
           "PATH": f"{os.path.dirname(sys.executable)}:/usr/bin:/bin"}
    return subprocess.run([sys.executable, "-m", "stripebench_tui", *args], capture_output=True, text=True, timeout=120,
                          env=env, cwd=REPO)


def _script(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


# ---- installers ----


def test_mini_swe_agent_installs_into_a_venv_of_its_own_at_the_pinned_version(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("STRIPEBENCH_HARNESSES", str(tmp_path))
    ran = []
    prefix = install_harness("mini-swe-agent", run=lambda argv, **kw: ran.append(argv) or SimpleNamespace(returncode=0))
    assert prefix == tmp_path / "mini-swe-agent-2.4.6"
    assert ran[0] == [sys.executable, "-m", "venv", "--clear", str(prefix)]  # no pip there yet: made afresh
    assert ran[1] == [str(prefix / "bin" / "python"), "-m", "pip", "install", "--disable-pip-version-check", "--no-input",
                      "mini-swe-agent==2.4.6"]
    assert MINI_SWE_AGENT.search_dirs() == [prefix / "bin"]


def test_codex_installs_with_npm_at_the_pinned_version(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("STRIPEBENCH_HARNESSES", str(tmp_path))
    ran = []
    prefix = install_harness("codex", run=lambda argv, **kw: ran.append(argv) or SimpleNamespace(returncode=0))
    assert prefix == tmp_path / "codex-0.171.0" and prefix.is_dir()
    assert ran[0][1:] == ["install", "--no-audit", "--no-fund", "--prefix", str(prefix), "@openai/codex@0.171.0"]
    assert CODEX.search_dirs() == [prefix / "node_modules" / ".bin"]


def test_failed_pip_installs_are_one_line_and_every_installable_harness_is_named(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("STRIPEBENCH_HARNESSES", str(tmp_path))
    failed = SimpleNamespace(returncode=1, stdout="", stderr="Collecting mini-swe-agent==2.4.6\nERROR: No matching distribution")
    pip_fails = lambda argv, **kw: failed if "pip" in argv else SimpleNamespace(returncode=0)
    with pytest.raises(UserError, match="^pip install mini-swe-agent==2.4.6 failed: ERROR: No matching distribution$"):
        install_harness("mini-swe-agent", run=pip_fails)
    no_venv = SimpleNamespace(returncode=1, stdout="", stderr="Error: ensurepip is not available")
    with pytest.raises(UserError, match="^cannot make a virtualenv for mini-swe-agent in .*: Error: ensurepip is not available$"):
        install_harness("mini-swe-agent", run=lambda argv, **kw: no_venv)
    with pytest.raises(UserError, match="^no installer for 'goose'; installable harnesses: claude-code, codex, mini-swe-agent$"):
        install_harness("goose")


# ---- adapters ----


def test_mini_swe_agent_runs_yolo_on_the_openai_side_of_the_gateway_with_the_dummy_key(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path, model="gpt-test")
    argv = MINI_SWE_AGENT.command("/cache/mini", ctx)
    assert argv[:8] == ["/cache/mini", "--yolo", "--exit-immediately", "--task", ctx.problem, "--model", "openai/gpt-test",
                        "--output"]
    assert argv[9:] == ["--config", "mini.yaml", "--config", "environment.cwd=/ws", "--config", "agent.cost_limit=0"]
    env = MINI_SWE_AGENT.environment(ctx, {"OPENAI_API_KEY": "sk-real", "ANTHROPIC_API_KEY": "sk-real", "HOME": "/root"})
    assert env["OPENAI_BASE_URL"] == env["OPENAI_API_BASE"] == "http://127.0.0.1:9/v1"
    assert env["OPENAI_API_KEY"] == "sk-dummy" and "ANTHROPIC_API_KEY" not in env
    assert env["MSWEA_GLOBAL_CONFIG_DIR"] == ctx.state_dir and env["MSWEA_CONFIGURED"] == "true"
    assert env["LITELLM_LOCAL_MODEL_COST_MAP"] == "True"
    assert MINI_SWE_AGENT.command("/cache/mini", _ctx(tmp_path, model="openai/x"))[6] == "openai/x"


def test_codex_execs_with_the_gateway_as_its_model_provider_in_a_config_of_its_own(tmp_path: Path) -> None:
    servers = {"stripe_docs": {"command": sys.executable, "args": ["-m", "stripebench_tui.tools.stripe_docs"]}}
    ctx = _ctx(tmp_path, model="gpt-test", mcp_servers=servers)
    argv = CODEX.command("/cache/codex", ctx)
    assert argv == ["/cache/codex", "exec", "--json", "--color", "never", "--skip-git-repo-check", "--cd", "/ws", "--",
                    ctx.problem]
    config = tomllib.loads((Path(ctx.state_dir) / "config.toml").read_text())
    provider = config["model_providers"][config["model_provider"]]
    assert provider["base_url"] == "http://127.0.0.1:9/v1" and provider["wire_api"] == "responses"
    assert provider["env_key"] == "OPENAI_API_KEY"
    assert (config["model"], config["approval_policy"], config["sandbox_mode"]) == ("gpt-test", "never", "workspace-write")
    assert config["sandbox_workspace_write"]["network_access"] is True  # the app under work listens on localhost
    assert config["features"]["plugins"] is False and config["analytics"]["enabled"] is False
    assert config["allow_login_shell"] is False and config["check_for_update_on_startup"] is False
    assert config["mcp_servers"]["stripe_docs"]["args"] == ["-m", "stripebench_tui.tools.stripe_docs"]
    docs = config["mcp_servers"]["stripe_docs"]
    assert (docs["default_tools_approval_mode"], docs["required"], docs["startup_timeout_sec"]) == ("approve", True, 60)
    env = CODEX.environment(ctx, {"OPENAI_API_KEY": "sk-real", "HOME": "/root"})
    assert env["CODEX_HOME"] == ctx.state_dir and env["OPENAI_API_KEY"] == "sk-dummy"


def test_a_missing_harness_says_how_to_install_it(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("STRIPEBENCH_HARNESSES", str(tmp_path))
    monkeypatch.setenv("PATH", "/nonexistent")
    for name in ("codex", "mini-swe-agent"):
        with pytest.raises(UserError, match=rf"^the {name} harness is not installed: run `stripebench agents install {name}`"):
            create_agent(name)


# ---- listings ----


def test_doctor_lists_each_harness_installed_with_path_and_version_or_how_to_install_it(tmp_path: Path) -> None:
    empty = _cli("doctor", "--no-docker", cache=tmp_path / "empty")
    lines = [x for x in empty.stdout.splitlines() if "harness " in x]
    assert [x.split()[2] for x in lines] == ["claude-code:", "codex:", "mini-swe-agent:"], empty.stdout
    for line, name in zip(lines, ("claude-code", "codex", "mini-swe-agent"), strict=True):
        assert line.startswith("-") and f"not installed; run `stripebench agents install {name}`" in line
    assert "FAIL" not in "\n".join(lines) and "problem" not in empty.stderr  # optional: never a failure

    cache = tmp_path / "cache"  # stand-ins laid out as our installers leave them
    codex = _script(cache / "codex-0.171.0" / "node_modules" / ".bin" / "codex", "#!/bin/sh\necho codex-cli 0.171.0\n")
    python = _script(tmp_path / "venv-python", "#!/bin/sh\n[ \"$1\" = -c ] && echo 2.4.6\n")  # answers the metadata query
    mini = _script(cache / "mini-swe-agent-2.4.6" / "bin" / "mini", f"#!{python}\n")
    half = _script(cache / "claude-code-2.1.332" / "node_modules" / ".bin" / "claude", "#!/bin/sh\necho 2.1.332\n")
    for prefix in ("codex-0.171.0", "mini-swe-agent-2.4.6"):  # complete; claude-code's install was interrupted
        (cache / prefix / shared_cache.MARKER).write_text("complete\n")
    found = _cli("doctor", "--no-docker", cache=cache).stdout.splitlines()
    assert f"ok    harness codex: 0.171.0 at {codex}" in found, found
    assert f"ok    harness mini-swe-agent: 2.4.6 at {mini}" in found, found
    assert not any(str(half) in line for line in found), "a half-made install is not a harness"


def test_agents_list_shows_the_new_harnesses_and_an_unknown_agent_lists_the_known_ones(tmp_path: Path) -> None:
    listed = _cli("agents", "list", cache=tmp_path).stdout.splitlines()
    for name in ("codex", "mini-swe-agent"):
        line = next(x for x in listed if x.startswith(name + " "))
        assert f"[not installed: run `stripebench agents install {name}`" in line
    done = _cli("run", "tiny-shop", "--headless", "--agent", "goose", cache=tmp_path)
    assert done.returncode == 2, done.stderr
    [error] = done.stderr.strip().splitlines()
    assert error.startswith("stripebench: unknown agent 'goose'; known agents: ")
    known = error.split("known agents: ")[1].split(", ")
    assert {"claude-code", "codex", "mini-swe-agent", "command", "oracle"} <= set(known)
