"""Per-tool-call overhead: `true` through the shell MCP tool vs a direct subprocess.

    python benchmarks/tool_overhead.py [--calls 1000]

Both sides run `true` sequentially, each call waiting for the previous one, the MCP
side through one persistent client session (the way the driver calls tools). The
last line is the ratio; the target is ≤ 1.25×.
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import tempfile
import time

from stripebench_tui.tools.client import ToolServerHandle


def direct(calls: int) -> float:
    """Seconds for ``calls`` sequential ``subprocess.run(["true"])``."""
    started = time.perf_counter()
    for _ in range(calls):
        subprocess.run(["true"], check=True)
    return time.perf_counter() - started


async def through_mcp(calls: int, workspace: str, command: str, server_args: list[str]) -> float:
    """Seconds for ``calls`` sequential shell-tool calls of ``command`` over one MCP session."""
    async with ToolServerHandle.builtin("shell", workspace, *server_args) as shell:
        for _ in range(20):  # warm up both processes
            await shell.call("shell", {"command": command})
        started = time.perf_counter()
        for _ in range(calls):
            result = await shell.call("shell", {"command": command})
            if result.is_error or result.data.get("exit_code") != 0:
                sys.exit(f"shell tool failed: {result.text}")
        return time.perf_counter() - started


def main() -> None:
    """Run each side twice, interleaved (the machine is shared), keep each side's best, print the ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--command", default="true",
                        help="what the tool runs (e.g. 'true;' to force the bash path; the direct side always runs true)")
    parser.add_argument("--server-arg", action="append", default=[], help="extra shell server argument, e.g. --login")
    args = parser.parse_args()
    mcp_runs, direct_runs = [], []
    with tempfile.TemporaryDirectory() as workspace:
        direct(20)
        for round_ in (1, 2):
            print(f"round {round_}: {args.calls} × {args.command!r} through the shell MCP tool, then `true` directly …",
                  file=sys.stderr)  # fmt: skip
            mcp_runs.append(asyncio.run(through_mcp(args.calls, workspace, args.command, args.server_arg)))
            direct_runs.append(direct(args.calls))
    mcp_s, direct_s = min(mcp_runs), min(direct_runs)
    per = 1000 / args.calls
    runs = lambda xs: ", ".join(f"{x:.3f}" for x in xs)  # noqa: E731
    print(f"direct subprocess: {direct_s:.3f} s ({direct_s * per:.3f} ms/call; runs {runs(direct_runs)} s)")
    print(f"shell MCP tool:    {mcp_s:.3f} s ({mcp_s * per:.3f} ms/call; runs {runs(mcp_runs)} s)")
    print(f"ratio mcp/direct: {mcp_s / direct_s:.2f}x (target <= 1.25x)")


if __name__ == "__main__":
    main()
