"""Codex CLI (npm, pinned) as an external harness: ``--agent codex``.

It runs ``codex exec`` (non-interactive: one task, then it exits) with ``CODEX_HOME`` set to the
harness's state directory, so the user's ``~/.codex`` is neither read nor written. There we write a
``config.toml`` whose model provider is the gateway: its ``/v1`` URL, the Responses API (Codex
streams), the dummy key from ``OPENAI_API_KEY``. Commands run without approval prompts
(``approval_policy = "never"``) in Codex's ``workspace-write`` sandbox with network access (the
app the agent works on listens on localhost); that sandbox works as root here. Plugin sync,
analytics and the update check, which would reach the network, are off. Our browser and
stripe_docs servers are offered as Codex MCP servers (their tools arrive as namespaced calls,
``mcp__<server>__<tool>`` in the trace); it has its own shell and file editing. With no ``--model``
Codex uses its default model, whose one free-form ``exec`` tool (JavaScript calling the others)
is recorded as a call with ``{"input": …}``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from stripebench_tui.core.json_value import JSONValue
from stripebench_tui.harness.external import Harness, HarnessContext
from stripebench_tui.harness.installers import Install

CODEX = Install("codex", "npm", "@openai/codex", "0.171.0")
PROVIDER = "stripebench"  # the model provider id in config.toml


def _toml(value: JSONValue) -> str:
    """A TOML value for a string, number, bool or list (JSON's string escapes are valid TOML basic strings)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return json.dumps(str(value))


def _table(name: str, values: dict[str, Any]) -> list[str]:
    lines = [f"[{name}]"]
    for key, value in values.items():
        if isinstance(value, dict):
            value = "{ " + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + " }"
            lines.append(f"{key} = {value}")
        else:
            lines.append(f"{key} = {_toml(value)}")
    return lines + [""]


def config_toml(ctx: HarnessContext) -> str:
    """Codex's config for one episode: the gateway as model provider, no prompts, nothing that phones home."""
    lines = [f"model_provider = {_toml(PROVIDER)}", 'approval_policy = "never"', 'sandbox_mode = "workspace-write"',
             "check_for_update_on_startup = false",
             # a login shell would run the user's profile, which may put other Pythons (pyenv shims) before the
             # environment's venv that the episode put first on PATH
             "allow_login_shell = false", ""]
    if ctx.model:
        lines.insert(0, f"model = {_toml(ctx.model)}")
    lines += _table("sandbox_workspace_write", {"network_access": True})
    lines += _table("analytics", {"enabled": False})
    lines += _table("features", {"plugins": False})
    lines += _table(f"model_providers.{PROVIDER}", {"name": "stripebench gateway", "base_url": ctx.openai_base_url,
                                                   "env_key": "OPENAI_API_KEY", "wire_api": "responses"})
    for name, spec in ctx.mcp_servers.items():
        # "approve": its tools run without asking (with approval_policy "never" Codex would refuse them otherwise);
        # required, ready once its tool catalog is in: the first model request already offers its tools
        server: dict[str, Any] = {"command": spec["command"], "args": list(spec.get("args", [])),
                                  "default_tools_approval_mode": "approve", "required": True,
                                  "startup_readiness": "catalog", "startup_timeout_sec": 60}
        if os.environ.get("PYTHONPATH"):  # Codex starts MCP servers with a reduced environment: keep our packages
            server["env"] = {"PYTHONPATH": os.environ["PYTHONPATH"]}
        lines += _table(f"mcp_servers.{name}", server)
    return "\n".join(lines)


def _command(executable: str, ctx: HarnessContext) -> list[str]:
    """``codex exec`` on the task in the workspace, its events printed as JSON lines (the log pane)."""
    Path(ctx.state_dir, "config.toml").write_text(config_toml(ctx))
    return [executable, "exec", "--json", "--color", "never", "--skip-git-repo-check", "--cd", ctx.workspace, "--", ctx.problem]


HARNESS = Harness(
    name="codex",
    executable="codex",
    command=_command,
    install=CODEX.hint,
    protocol="openai",
    base_url_env=("OPENAI_BASE_URL",),
    key_env=("OPENAI_API_KEY",),
    extra_env=lambda ctx: {"CODEX_HOME": ctx.state_dir},
    search_dirs=CODEX.installed_dirs,
    native_servers=("shell", "files"),  # exec_command and its file edits; browser and stripe_docs over MCP
)

__all__ = ["CODEX", "HARNESS", "config_toml"]
