"""A model provider's key planted in the runner's environment reaches nothing an episode leaves behind, and the
agent cannot open the emulator's controls.

End to end: `stripebench run tiny-shop --agent anthropic --headless` in a process of its own whose environment holds
ANTHROPIC_API_KEY (and an OpenAI key it does not use), against the fake model server, whose scripted agent runs
`env`, reads /proc/self/environ and the environ of every ancestor up to the runner and of every process of the
episode, writes all that to a file in the workspace, then tries every /_emulator/ control. Afterwards the episode
is exported, and the whole episode directory (trace, sidecars, logs, screenshots, workspace, export) is searched
for the planted values.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from stripebench_tui.child_env import allowed, base_env, runner_secrets
from stripebench_tui.runtime.reaper import TAG_VAR
from stripebench_tui.testing.fake_models import FakeModelServer
from stripebench_tui.testing.fake_wire import ScriptedCall, ScriptedTurn

from .helpers import trace_lines

pytestmark = pytest.mark.slow

PLANTED = "sk-ant-api03-PLANTEDq7Zr4Wm2Xk9Lp3Vb8Nc1Dh6Fj0Gt5Yu-AAAA"
PLANTED_OTHER = "sk-proj-PLANTEDotherKey0123456789abcdef"
MARKER = "SB_SECRETS_E2E_RUNNER=yes"  # only the runner's own environment has it (not allow-listed)
CONTROLS = [("GET", "/_emulator/health"), ("POST", "/_emulator/reset"), ("GET", "/_emulator/clock"),
            ("POST", "/_emulator/clock"), ("GET", "/_emulator/faults"), ("POST", "/_emulator/faults"),
            ("DELETE", "/_emulator/faults"), ("GET", "/_emulator/webhook_deliveries"),
            ("GET", "/_emulator/webhook_settings"), ("POST", "/_emulator/webhook_settings")]

# Everything the agent's shell can see of environments: its own, its ancestors' up to the runner, the episode's.
DUMP = f"""{{
echo '## env'; env
echo '## self'; tr '\\0' '\\n' < /proc/self/environ; echo
p=$$; n=0
while [ "$p" -gt 1 ] && [ $n -lt 8 ]; do
  echo "## ancestor $p"; tr '\\0' '\\n' < /proc/$p/environ; echo
  if tr '\\0' '\\n' < /proc/$p/environ | grep -qx '{MARKER}'; then break; fi
  p=$(awk '/^PPid:/{{print $2}}' /proc/$p/status); n=$((n+1))
done
for d in /proc/[0-9]*; do
  if tr '\\0' '\\n' < $d/environ 2>/dev/null | grep -qx "{TAG_VAR}=${TAG_VAR}"; then
    echo "## tagged $d"; tr '\\0' '\\n' < $d/environ; echo
  fi
done
}} > dump.txt 2>&1; cat dump.txt""".replace("${TAG_VAR}", "${" + TAG_VAR + "}")

# The agent tries the referee's controls with what it has: the emulator's URL and no token.
KNOCK = "python3 - <<'PY'\nimport os, urllib.error, urllib.request\nbase = os.environ['STRIPE_API_BASE']\n" + (
    f"for method, path in {CONTROLS!r}:\n"
    "    data = None if method == 'GET' else b'{}'\n"
    "    req = urllib.request.Request(base + path, data=data, method=method, headers={'Content-Type': 'application/json'})\n"
    "    try:\n        code = urllib.request.urlopen(req, timeout=10).status\n"
    "    except urllib.error.HTTPError as exc:\n        code = exc.code\n"
    "    print('control', method, path, code)\nPY\n")


def _files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()]


def test_a_planted_provider_key_appears_nowhere_in_the_episode_and_the_controls_stay_locked(tmp_path: Path) -> None:
    turns = [ScriptedTurn("Looking at the environment.", [ScriptedCall("shell", {"command": DUMP})]),
             ScriptedTurn("Trying the emulator's controls.", [ScriptedCall("shell", {"command": KNOCK})]),
             ScriptedTurn("Done.")]
    episode_dir = tmp_path / "ep"
    env = {**os.environ, "ANTHROPIC_API_KEY": PLANTED, "OPENAI_API_KEY": PLANTED_OTHER, "SB_SECRETS_E2E_RUNNER": "yes",
           "PYTHONPATH": os.pathsep.join(sys.path)}
    with FakeModelServer(turns, api_key=PLANTED) as fake:
        run = subprocess.run([sys.executable, "-m", "stripebench_tui", "run", "tiny-shop", "--agent", "anthropic",
                              "--base-url", fake.url, "--headless", "--episode-dir", str(episode_dir)],
                             env=env, capture_output=True, text=True, timeout=300)
        answered = fake.answered()
    assert len(answered) == 3 and all(r.api_key == PLANTED for r in answered), run.stderr[-2000:]  # the key was used
    assert PLANTED not in run.stdout + run.stderr and "PLANTED" not in run.stdout + run.stderr
    trace = episode_dir / "trace.jsonl"
    lines = trace_lines(trace)
    assert lines[-1]["type"] == "episode_end" and lines[-1]["reason"] == "agent_done", run.stderr[-2000:]

    # The dump really looked everywhere: the shell's env, the runner's own environ, the episode's processes.
    dump = (episode_dir / "workspace" / "dump.txt").read_text(errors="replace")
    sections = dump.split("## ")
    own = next(s for s in sections if s.startswith("env\n"))
    assert "STRIPE_API_BASE=http" in own and "PATH=" in own and f"{TAG_VAR}=" in own
    assert "ANTHROPIC_API_KEY" not in own and "OPENAI_API_KEY" not in own and MARKER not in own  # allow-listed
    assert MARKER in dump  # the walk reached the runner …
    assert "ANTHROPIC_API_KEY=*" in dump  # … whose environ shows the variable, its value overwritten
    assert sum(s.startswith("tagged ") for s in sections) >= 2  # tool servers and the app service

    outputs = [line["output"] for line in lines if line["type"] == "tool_result"]
    knock = [ln.split() for ln in outputs[1].splitlines() if ln.startswith("control ")]
    assert [(m, p) for _, m, p, _ in knock] == CONTROLS
    assert {code for *_, code in knock} == {"403"}, outputs[1]

    export = subprocess.run([sys.executable, "-m", "stripebench_tui", "export", str(trace), "--format", "atif",
                             "--output", str(episode_dir / "export.atif.json")], env=env, capture_output=True,
                            text=True, timeout=120)
    assert export.returncode == 0, export.stderr
    files = _files(episode_dir)
    names = {p.relative_to(episode_dir).as_posix() for p in files}
    assert {"trace.jsonl", "export.atif.json", "logs/app.log", "logs/seed.log", "workspace/dump.txt"} <= names
    for path in files:
        data = path.read_bytes()
        for planted in (PLANTED, PLANTED_OTHER):
            assert planted.encode() not in data, path
            assert planted[-24:].encode() not in data, path  # not even a part of it
        assert b"sbctl_" not in data, path  # nor the emulator's control token


def test_child_processes_get_only_the_allowed_variables() -> None:
    source = {"PATH": "/usr/bin", "HOME": "/root", "LC_ALL": "C.UTF-8", "PIP_INDEX_URL": "https://pypi.example",
              "SSL_CERT_FILE": "/etc/ca.pem", "STRIPEBENCH_SHELL_TIMEOUT": "5", "ANTHROPIC_API_KEY": PLANTED,
              "OPENAI_API_KEY": PLANTED_OTHER, "STRIPE_SECRET_KEY": "sk_test_users_own", "STRIPE_API_BASE": "http://x",
              "AWS_SECRET_ACCESS_KEY": "abcdefghijklmnop", "RANDOM_THING": "1", "MODEL_MAX_TOKENS": "1234567890",
              "GH_TOKEN": "short", "https_proxy": "http://me:pr0xy-pass@proxy:3128", "NO_PROXY": "127.0.0.1"}
    assert base_env(source) == {"PATH": "/usr/bin", "HOME": "/root", "LC_ALL": "C.UTF-8",
                                "PIP_INDEX_URL": "https://pypi.example", "SSL_CERT_FILE": "/etc/ca.pem",
                                "STRIPEBENCH_SHELL_TIMEOUT": "5", "https_proxy": "http://me:pr0xy-pass@proxy:3128",
                                "NO_PROXY": "127.0.0.1"}
    assert allowed(TAG_VAR)
    assert sorted(set(runner_secrets(source))) == sorted([PLANTED, PLANTED_OTHER, "sk_test_users_own", "abcdefghijklmnop",
                                                          "pr0xy-pass"])


async def test_the_agents_key_is_registered_even_when_it_has_no_known_shape(tmp_path: Path) -> None:
    from io import StringIO

    from stripebench_tui.runtime.episode import Episode, EpisodeConfig
    from stripebench_tui.runtime.printer import LivePrinter

    odd = "local-gateway-credential-PLANTED-7c1e"  # no provider's shape: only registration can hide it
    turns = [ScriptedTurn(f"My key is {odd}.", [ScriptedCall("shell", {"command": f"echo {odd} | tee said.txt"})]),
             ScriptedTurn("Done.")]
    shown = StringIO()
    with FakeModelServer(turns, api_key=odd) as fake:
        episode = Episode(EpisodeConfig(env="tiny-shop", agent="anthropic", episode_dir=tmp_path / "ep",
                                        agent_options={"api_key": odd, "base_url": fake.url}),
                          subscribers=[LivePrinter(out=shown)])
        result = await episode.run()
    assert result.reason == "agent_done" and odd in episode.secrets()
    assert odd not in shown.getvalue() and "[REDACTED]" in shown.getvalue()
    trace = result.trace_path.read_text()
    assert odd not in trace and "My key is [REDACTED]." in trace
    # The only copy is the file the agent itself wrote into its workspace, and the checkpoints' copies of that file
    # (a checkpoint keeps the workspace as it was, byte for byte: restoring it must give the agent's file back).
    said = tmp_path / "ep" / "workspace" / "said.txt"
    leftovers = [p for p in _files(tmp_path / "ep") if odd.encode() in p.read_bytes()]
    checkpoints = tmp_path / "ep" / "trace.jsonl.d" / "checkpoints"
    assert [p for p in leftovers if checkpoints not in p.parents] == [said]
    assert all(p.read_bytes() == said.read_bytes() for p in leftovers if checkpoints in p.parents)
