"""An overlay's ``hidden`` paths: the agent's workspace lacks them (but for the ``visible`` ones, shared both ways),
while the services, the setup and the grader see the folder's whole environment/ in the full workspace beside it.

A tiny folder made here, in checkout-gym's shape: a server whose code holds the answers and writes a catalog the
agent must read, a submission the agent writes, a grader that reads ../environment/server/ (answers included).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from stripebench_tui.core.bus import EventBus
from stripebench_tui.envs.benchfolder import load_bench_environment
from stripebench_tui.envs.workspace import FULL_WORKSPACE, full_workspace
from stripebench_tui.errors import BadFileError
from stripebench_tui.grading.context import GradingContext
from stripebench_tui.grading.external import ExternalEvaluator, ExternalGrader
from stripebench_tui.runtime.docker_sandbox import DockerSandbox
from stripebench_tui.runtime.local import LocalSandbox
from tests.benchfolders.conftest import tree_hash

SERVER = """import http.server, json, os, pathlib
answers = json.loads(pathlib.Path("answers.json").read_text())
pathlib.Path("catalog.json").write_text(json.dumps({"hoodie": answers["hoodie_price"]}))
http.server.ThreadingHTTPServer(("127.0.0.1", int(os.environ["APP_PORT"])), http.server.SimpleHTTPRequestHandler).serve_forever()
"""
GRADER = """import json, pathlib
env = pathlib.Path(__file__).resolve().parent.parent / "environment" / "server"
answers = json.loads((env / "answers.json").read_text())
got = json.loads((env / "submission.json").read_text())
ok = got.get("hoodie") == answers["hoodie_price"]
print(json.dumps({"results": [{"name": "hoodie", "score": 1.0 if ok else 0.0}]}))
"""
OVERLAY = f"""category = "gym"
submission = "server/submission.json"
tools = ["shell", "files"]
hidden = ["server/", "notes.md"]
visible = ["server/submission.json", "server/catalog.json", "server/.env"]
setup = ["printf 'KEY=%s\\\\n' sk_test_fake > server/.env && test -f server/answers.json"]

[[services]]
name = "quiz"
command = "cd server && {sys.executable} serve.py"
ports = ["APP_PORT"]
health = {{ http = "http://127.0.0.1:${{APP_PORT}}/catalog.json", timeout = 30 }}

[grader]
command = "{sys.executable} grade.py"
report = "score-json"
report_file = "-"
submission_format = "json"
live = false
"""


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "quiz-gym"
    files = {
        "environment/PROBLEM.md": "# Quiz gym\nRead server/catalog.json; write server/submission.json.\n",
        "environment/notes.md": "the hoodie is p_42\n",
        "environment/client/index.html": "<p>hoodie</p>\n",
        "environment/server/answers.json": json.dumps({"hoodie_price": "p_42"}),
        "environment/server/serve.py": SERVER,
        "environment/server/submission.json": "{}\n",
        "grader/grade.py": GRADER,
    }
    for rel, text in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    (tmp_path / "quiz-gym.stripebench.toml").write_text(OVERLAY)
    return folder


def _files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() or p.is_symlink()}


def test_the_agents_workspace_lacks_the_hidden_paths_and_shares_the_visible_ones(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    before = tree_hash(folder)
    env = load_bench_environment(folder)
    assert env.manifest.hidden == ["server/", "notes.md"]
    episode = tmp_path / "ep"
    episode.mkdir()
    sandbox = LocalSandbox(env, episode, {})
    sandbox.prepare()
    try:
        workspace, full = sandbox.workspace, sandbox.full_workspace
        assert full == episode / FULL_WORKSPACE == full_workspace(env, workspace)
        assert _files(workspace) == {"PROBLEM.md", "client/index.html", "server/submission.json"}
        # The full workspace: the folder's layout, hidden files as copies, the rest (visible ones too) links.
        assert {"PROBLEM.md", "notes.md", "client", "server/answers.json", "server/serve.py",
                "server/submission.json", "server/catalog.json", "server/.env"} <= _files(full)
        assert not (full / "server" / "answers.json").is_symlink() and (full / "client").is_symlink()
        assert all(not os.path.isabs(os.readlink(full / rel)) for rel in ("client", "server/submission.json"))
        (workspace / "server" / "submission.json").write_text('{"hoodie": "p_1"}')  # the agent writes…
        assert (full / "server" / "submission.json").read_text() == '{"hoodie": "p_1"}'  # …the grader reads
        (full / "server" / "catalog.json").write_text("{}")  # the server writes at run time…
        assert (workspace / "server" / "catalog.json").read_text() == "{}"  # …the agent reads
    finally:
        if sandbox.watchdog is not None:
            sandbox.watchdog.close()
        if sandbox.scratch is not None:
            sandbox.scratch.release()
    assert tree_hash(folder) == before


async def test_services_setup_and_grader_see_the_whole_layout(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    before = tree_hash(folder)
    env = load_bench_environment(folder)
    episode = tmp_path / "ep"
    episode.mkdir()
    sandbox = LocalSandbox(env, episode, {})
    sandbox.prepare()
    bus = EventBus()
    try:
        await sandbox.run_setup(bus)  # runs where server/answers.json is; its .env lands in the agent's workspace
        assert (sandbox.workspace / "server" / ".env").read_text() == "KEY=sk_test_fake\n"
        await sandbox.start_services(bus)  # the server reads the hidden answers and writes the shared catalog
        catalog = json.loads((sandbox.workspace / "server" / "catalog.json").read_text())
        assert catalog == {"hoodie": "p_42"}
        assert not (sandbox.workspace / "server" / "answers.json").exists()
        (sandbox.workspace / "server" / "submission.json").write_text(json.dumps(catalog))
        ctx = GradingContext(env=env, episode_dir=episode, workspace=sandbox.workspace,
                             stripe_api_base="http://127.0.0.1:9", stripe_api_key="sk_test_fake")
        report = await ExternalEvaluator(ExternalGrader.for_env(env), ctx).final()  # reads answers.json itself
        assert {name: r.status for name, r in report.items()} == {"hoodie": "pass"}
    finally:
        await sandbox.stop()
    assert tree_hash(folder) == before


def test_a_visible_path_outside_every_hidden_one_is_refused(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    (tmp_path / "quiz-gym.stripebench.toml").write_text('hidden = ["server/"]\nvisible = ["client/index.html"]\n')
    with pytest.raises(BadFileError, match="under no hidden path"):
        load_bench_environment(folder)
    (tmp_path / "quiz-gym.stripebench.toml").write_text('hidden = ["../grader"]\n')
    with pytest.raises(BadFileError, match="not a path inside the workspace"):
        load_bench_environment(folder)


def test_the_docker_sandbox_runs_services_in_the_full_workspace_and_the_agent_in_its_own(tmp_path: Path) -> None:
    """No engine needed: the container's mounts and working directories, read off a stand-in client."""
    env = load_bench_environment(_folder(tmp_path))
    episode = tmp_path / "ep"
    episode.mkdir()
    sandbox = DockerSandbox(env, episode, {})
    sandbox.prepare()
    try:
        seen: dict[str, object] = {}
        sandbox.client = SimpleNamespace(containers=SimpleNamespace(run=lambda *a, **kw: seen.update(kw)))
        sandbox._run_container()
        volumes = seen["volumes"]
        assert isinstance(volumes, dict)
        assert {str(sandbox.workspace), str(sandbox.full_workspace)} <= set(volumes)
        assert str(env.folder) not in volumes and seen["working_dir"] == str(sandbox.workspace)
        agent = sandbox.exec_argv(["ls"])
        assert agent[agent.index("--workdir") + 1] == str(sandbox.workspace)  # the agent's shell and files tools
        setup = sandbox.command_argv(["ls"])
        assert setup[setup.index("--workdir") + 1] == str(sandbox.full_workspace)  # setup, seed (and services)
    finally:
        if sandbox.watchdog is not None:
            sandbox.watchdog.close()
