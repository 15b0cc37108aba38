"""mini-swe-agent (PyPI, pinned) as an external harness: ``--agent mini-swe-agent``.

It runs ``mini`` non-interactively (``--yolo``: no confirmation of commands, ``--exit-immediately``:
no prompt when it submits) with its built-in ``mini.yaml`` and a few public ``-c key=value``
settings. Its model calls go through litellm to an OpenAI-compatible endpoint: the model name is
given the ``openai/`` provider prefix, and litellm reads the gateway's ``/v1`` URL and the dummy
key from ``OPENAI_BASE_URL``/``OPENAI_API_BASE`` and ``OPENAI_API_KEY``. Version 2's default
config uses tool calling (one ``bash`` tool), so each command arrives on the wire as a tool call
and its output as the ``tool`` message of the next request: both are ordinary turns in the trace.
It finishes by running ``echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`` and exiting (no further
model request: that last call has no result on the wire). mini-swe-agent has no MCP client, so
our browser and stripe_docs servers cannot be offered to it; its bash does shell and files.
"""

from __future__ import annotations

from pathlib import Path

from stripebench_tui.harness.external import Harness, HarnessContext
from stripebench_tui.harness.installers import Install

MINI_SWE_AGENT = Install("mini-swe-agent", "pip", "mini-swe-agent", "2.4.6")
DEFAULT_MODEL = "gpt-5-mini"  # only a name sent upstream: the gateway's upstream decides what answers


def _command(executable: str, ctx: HarnessContext) -> list[str]:
    """``mini`` in yolo mode on the task, in the workspace, its trajectory kept in the harness's state directory."""
    model = ctx.model or DEFAULT_MODEL
    if not model.startswith("openai/"):
        model = "openai/" + model  # litellm's OpenAI-compatible provider: the only one pointed at the gateway
    return [executable, "--yolo", "--exit-immediately", "--task", ctx.problem, "--model", model,
            "--output", str(Path(ctx.state_dir) / "trajectory.json"),
            # -c replaces the default config, so name it first; then our settings on top
            "--config", "mini.yaml", "--config", f"environment.cwd={ctx.workspace}",
            "--config", "agent.cost_limit=0"]  # our turn and wall-time limits apply instead


def _env(ctx: HarnessContext) -> dict[str, str]:
    return {
        "MSWEA_CONFIGURED": "true",  # skips the interactive first-run setup
        "MSWEA_GLOBAL_CONFIG_DIR": ctx.state_dir,  # neither reads nor writes the user's global .env (keys, model)
        "MSWEA_COST_TRACKING": "ignore_errors",  # a model name litellm has no price for is not an error
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # litellm would otherwise download its price map at import
        "COLUMNS": "160",  # its rich console output, in the log pane, wraps less
    }


HARNESS = Harness(
    name="mini-swe-agent",
    executable="mini",
    command=_command,
    install=MINI_SWE_AGENT.hint,
    protocol="openai",
    base_url_env=("OPENAI_BASE_URL", "OPENAI_API_BASE"),
    key_env=("OPENAI_API_KEY",),
    extra_env=_env,
    search_dirs=MINI_SWE_AGENT.installed_dirs,
    native_servers=("shell", "files"),  # its bash; it has no MCP client, so the command ignores ctx.mcp_servers
)

__all__ = ["HARNESS", "MINI_SWE_AGENT"]
