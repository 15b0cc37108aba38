"""`stripebench run ENV --agent-cmd … --sandbox docker`: the external harness itself runs in the episode's container."""

from __future__ import annotations

import importlib.metadata as metadata
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from stripebench_tui.runtime.docker_sandbox import ROOT_AGENT_UID
from stripebench_tui.testing.fake_models import FakeModelServer
from stripebench_tui.testing.fake_wire import ScriptedCall, ScriptedTurn
from tests.gateway.conftest import REAL_KEY
from tests.gateway.test_external_episode import SIGN_UP, solving_script

pytestmark = [pytest.mark.docker, pytest.mark.slow]
REPO = Path(__file__).resolve().parents[2]
WHO = "id -u && python3 -c 'import sys; print(sys.executable)'"


def _copy_distribution(name: str, target: Path, seen: set[str]) -> None:
    """Copy an installed distribution's files and those of its unconditional requirements into ``target``."""
    key = re.sub(r"[-_.]+", "-", name).lower()
    if key in seen:
        return
    seen.add(key)
    dist = metadata.distribution(name)
    for file in dist.files or []:
        source = Path(str(dist.locate_file(file)))
        if file.parts[0].endswith(".dist-info") or ".." in file.parts or not source.is_file():
            continue
        (target / file).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target / file)
    for requirement in dist.requires or []:
        if ";" not in requirement:
            _copy_distribution(re.split(r"[\s<>=!~\[(]", requirement, maxsplit=1)[0], target, seen)


@pytest.fixture
def harness_cache(tmp_path: Path) -> Path:
    """A harness cache holding the Anthropic SDK the mini harness needs (the container's image has none)."""
    cache = tmp_path / "harnesses"
    _copy_distribution("anthropic", cache / "python", set())  # same CPython minor version as the image's
    return cache


def test_an_external_harness_runs_in_the_container_and_solves_tiny_shop(docker_client, tmp_path: Path,
                                                                         harness_cache: Path) -> None:
    episode = tmp_path / "episode"
    script = solving_script()
    script.insert(1, ScriptedTurn(text="Who am I?", tool_calls=[ScriptedCall("shell", {"command": WHO})]))
    with FakeModelServer(script, api_key=REAL_KEY, variables={"workspace": str(episode / "workspace")}) as fake:
        env = {**os.environ, "PYTHONPATH": str(REPO), "ANTHROPIC_API_KEY": REAL_KEY,
               "STRIPEBENCH_HARNESSES": str(harness_cache)}
        # python3 and PYTHONPATH as the container sees them: the image's interpreter, our package's mount, the cache
        cmd = (f"env PYTHONPATH=/opt/stripebench:{harness_cache.resolve() / 'python'} python3 "
               "-m stripebench_tui.testing.mini_harness {problem}")
        done = subprocess.run([sys.executable, "-m", "stripebench_tui", "run", "tiny-shop", "--headless",
                               "--sandbox", "docker", "--agent-cmd", cmd, "--base-url", fake.url,
                               "--episode-dir", str(episode)], capture_output=True, text=True, timeout=240,
                              env=env, cwd=REPO)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
        assert len(fake.answered()) == 4
    events = [json.loads(line) for line in (episode / "trace.jsonl").read_text().splitlines()]
    calls = [e for e in events if e["type"] == "tool_call"]
    assert [c["tool"] for c in calls] == ["write_file", "shell", "shell"]
    assert calls[2]["arguments"]["command"] == SIGN_UP
    results = [e for e in events if e["type"] == "tool_result"]
    # The harness's shell ran as the container's agent user with the image's interpreter, not as us here.
    uid, python = results[1]["output"].split()[:2]
    assert (int(uid), python) == (ROOT_AGENT_UID if os.getuid() == 0 else os.getuid(), "/opt/venv/bin/python3")
    assert python != sys.executable
    assert results[2]["output"].startswith("cus_")
    end = events[-1]
    assert end["type"] == "episode_end" and end["reason"] == "agent_done" and end["passed"] is True
    assert end["score"] == 1.0


@pytest.mark.node
def test_claude_code_runs_in_the_container_and_solves_tiny_shop(docker_client, tmp_path: Path) -> None:
    from stripebench_tui.harness.harnesses import CLAUDE_CODE, install_harness
    from tests.fixture_envs import FIXTURES

    if CLAUDE_CODE.locate() is None:
        install_harness("claude-code")
    episode = tmp_path / "episode"
    handlers = (FIXTURES / "tiny-shop" / "solution" / "handlers.py").read_text()
    turns = [  # Claude Code's Write refuses to overwrite a file it has not read
        ScriptedTurn(text="Read.", tool_calls=[ScriptedCall("Read", {"file_path": "{workspace}/handlers.py"})]),
        ScriptedTurn(text="Write.", tool_calls=[ScriptedCall("Write", {"file_path": "{workspace}/handlers.py",
                                                                       "content": handlers})]),
        ScriptedTurn(text="Who am I?", tool_calls=[ScriptedCall("Bash", {"command": WHO, "description": "Who"})]),
        ScriptedTurn(text="Sign up.", tool_calls=[ScriptedCall("Bash", {"command": SIGN_UP, "description": "Sign up"})]),
        ScriptedTurn(text="Done: Alice's customer id is in submission.txt."),
    ]
    with FakeModelServer(turns, api_key=REAL_KEY, variables={"workspace": str(episode / "workspace")}) as fake:
        env = {**os.environ, "PYTHONPATH": str(REPO), "ANTHROPIC_API_KEY": REAL_KEY}
        done = subprocess.run([sys.executable, "-m", "stripebench_tui", "run", "tiny-shop", "--headless", "--sandbox",
                               "docker", "--agent", "claude-code", "--base-url", fake.url, "--model",
                               "claude-sonnet-4-5", "--episode-dir", str(episode)],
                              capture_output=True, text=True, timeout=300, env=env, cwd=REPO)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
        assert len(fake.answered()) == 5
    events = [json.loads(line) for line in (episode / "trace.jsonl").read_text().splitlines()]
    assert [e["tool"] for e in events if e["type"] == "tool_call"] == ["Read", "Write", "Bash", "Bash"]
    results = [e for e in events if e["type"] == "tool_result"]
    uid, python = results[2]["output"].split()[:2]
    assert (int(uid), python) == (ROOT_AGENT_UID if os.getuid() == 0 else os.getuid(), "/opt/venv/bin/python3")
    assert results[3]["output"].startswith("cus_"), results[3]
    assert events[-1]["reason"] == "agent_done" and events[-1]["passed"] is True
