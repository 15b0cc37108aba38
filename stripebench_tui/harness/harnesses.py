"""The external agent harnesses we know, and how to install them.

Each harness is a ``Harness`` (``harness.external``): a little data and one function
building its command line. Each is registered as an agent in ``agents.BUILTIN_AGENTS``
(``--agent claude-code``); a third-party harness registers a factory that returns
``ExternalAgent(Harness(...))`` through the ``stripebench.agents`` entry-point group.
``command`` runs any program given as ``--agent-cmd "…"`` with ``{problem}``,
``{workspace}``, ``{base_url}``, ``{openai_base_url}``, ``{api_key}`` and ``{model}``
filled in. Codex CLI (``harness.codex``) and mini-swe-agent (``harness.mini_swe_agent``) have a
module each; ``harness.installers`` puts harnesses into the cache at their pinned versions.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path
from typing import Any

from stripebench_tui.errors import UserError
from stripebench_tui.harness import codex as _codex
from stripebench_tui.harness import mini_swe_agent as _mini
from stripebench_tui.harness.external import ExternalAgent, Harness, HarnessContext
from stripebench_tui.harness.installers import Install, Runner, harness_cache, install, installed_version

CLAUDE_CODE_PACKAGE = "@anthropic-ai/claude-code"
CLAUDE_CODE_VERSION = "2.1.332"
CLAUDE_CODE_TOOLS = "Bash,Edit,MultiEdit,Write,Read,Glob,Grep,LS,TodoWrite"
CLAUDE_CODE_INSTALL = Install("claude-code", "npm", CLAUDE_CODE_PACKAGE, CLAUDE_CODE_VERSION)


def _claude_code_command(executable: str, ctx: HarnessContext) -> list[str]:
    """Print mode, edits accepted, its own tools plus our MCP servers (written to an --mcp-config file) allowed."""
    allowed = CLAUDE_CODE_TOOLS
    argv = [executable, "-p", ctx.problem, "--output-format", "stream-json", "--verbose", "--permission-mode", "acceptEdits"]
    if ctx.mcp_servers:
        config = Path(ctx.state_dir) / "mcp.json"
        servers = {name: {"type": "stdio", **spec} for name, spec in ctx.mcp_servers.items()}
        config.write_text(json.dumps({"mcpServers": servers}, indent=2))
        argv += ["--mcp-config", str(config), "--strict-mcp-config"]
        allowed += "".join(f",mcp__{name}" for name in ctx.mcp_servers)
    argv += ["--allowedTools", allowed]
    if ctx.model:
        argv += ["--model", ctx.model]
    return argv


def _claude_code_env(ctx: HarnessContext) -> dict[str, str]:
    env = {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1",
           "DISABLE_ERROR_REPORTING": "1", "CLAUDE_CONFIG_DIR": ctx.state_dir}
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        env["IS_SANDBOX"] = "1"  # Claude Code refuses to run as root otherwise
    return env


CLAUDE_CODE = Harness(
    name="claude-code",
    executable="claude",
    command=_claude_code_command,
    install=CLAUDE_CODE_INSTALL.hint,
    protocol="anthropic",
    base_url_env=("ANTHROPIC_BASE_URL",),
    key_env=("ANTHROPIC_API_KEY",),
    extra_env=_claude_code_env,
    search_dirs=CLAUDE_CODE_INSTALL.installed_dirs,
    native_servers=("shell", "files"),  # Bash, Read/Write/Edit; browser and stripe_docs are offered over MCP
)

CODEX, MINI_SWE_AGENT = _codex.HARNESS, _mini.HARNESS

# name -> how our installer installs it (package manager, package, pinned version)
INSTALLS: dict[str, Install] = {spec.name: spec for spec in (CLAUDE_CODE_INSTALL, _codex.CODEX, _mini.MINI_SWE_AGENT)}


def install_harness(name: str, run: Runner = subprocess.run) -> Path:
    """Install a harness into the cache with its package manager; returns the install prefix."""
    if name not in INSTALLS:
        raise UserError(f"no installer for {name!r}; installable harnesses: {', '.join(sorted(INSTALLS))}")
    return install(INSTALLS[name], run=run)


def harness_status(name: str) -> tuple[str | None, str]:
    """Where a known harness is installed and its version, or (None, how to install it)."""
    harness = HARNESSES[name]
    where = harness.locate()
    if where is None:
        return None, harness.install
    return where, installed_version(where, INSTALLS.get(name))


def claude_code(**options: Any) -> ExternalAgent:
    """Claude Code (npm), run as a process behind the model gateway."""
    return ExternalAgent(CLAUDE_CODE, **options)


def codex(**options: Any) -> ExternalAgent:
    """Codex CLI (npm), run as a process behind the model gateway (OpenAI Responses API)."""
    return ExternalAgent(CODEX, **options)


def mini_swe_agent(**options: Any) -> ExternalAgent:
    """mini-swe-agent (PyPI), run as a process behind the model gateway (OpenAI Chat Completions via litellm)."""
    return ExternalAgent(MINI_SWE_AGENT, **options)


def command_agent(cmd: str = "", protocol: str = "anthropic", **options: Any) -> ExternalAgent:
    """Any harness given as a command line (--agent-cmd), run as a process behind the model gateway."""
    if not cmd.strip():
        raise UserError('the command agent needs a command line: --agent-cmd "my-agent --task {problem}"')
    if protocol not in ("anthropic", "openai"):
        raise UserError(f"unknown protocol {protocol!r} for --agent-cmd; choose anthropic or openai")
    try:
        template = shlex.split(cmd)
    except ValueError as exc:
        raise UserError(f"cannot parse --agent-cmd {cmd!r}: {exc}") from None

    def command(executable: str, ctx: HarnessContext) -> list[str]:
        values = ctx.placeholders()
        out = [executable]
        for token in template[1:]:
            for name, value in values.items():
                token = token.replace("{" + name + "}", value)
            out.append(token)
        return out

    harness = Harness(
        name="command",
        executable=template[0],
        command=command,
        install=f"{template[0]!r} was not found on PATH; check the --agent-cmd command line",
        protocol=protocol,
        # A harness of unknown make gets both families pointed at the gateway.
        base_url_env=("ANTHROPIC_BASE_URL",) if protocol == "anthropic" else ("OPENAI_BASE_URL",),
        key_env=("ANTHROPIC_API_KEY", "OPENAI_API_KEY"),
        extra_env=lambda ctx: {"ANTHROPIC_BASE_URL": ctx.base_url, "OPENAI_BASE_URL": ctx.openai_base_url},
    )
    return ExternalAgent(harness, **options)


HARNESSES: dict[str, Harness] = {h.name: h for h in (CLAUDE_CODE, CODEX, MINI_SWE_AGENT)}

__all__ = ["CLAUDE_CODE", "CLAUDE_CODE_VERSION", "CODEX", "HARNESSES", "INSTALLS", "MINI_SWE_AGENT",
           "claude_code", "codex", "command_agent", "harness_cache", "harness_status", "install_harness", "mini_swe_agent"]
