"""Per-call cost of the tool servers' stdio transport, without a subprocess per call.

    python benchmarks/mcp_transport.py [--calls 2000] [--rounds 3]

Calls `view_file` on a one-line file through the files MCP server (one persistent
session, each call waiting for the previous one), so what is measured is JSON-RPC
plus the transport. Rounds alternate between the transport in use and, with
STRIPEBENCH_MCP_SDK_STDIO=1 in the server's environment, the alternative one when
the server still offers it; each side keeps its best round (the machine is shared).
The last line is the ratio of the two and their per-call difference in milliseconds.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

from stripebench_tui.tools.client import ToolServerHandle


async def per_call_ms(calls: int, workspace: str, env: dict[str, str]) -> float:
    async with ToolServerHandle.builtin("files", workspace, env=env) as files:
        for _ in range(50):  # warm up
            await files.call("view_file", {"path": "one.txt"})
        started = time.perf_counter()
        for _ in range(calls):
            result = await files.call("view_file", {"path": "one.txt"})
            if result.is_error:
                sys.exit(f"files tool failed: {result.text}")
        return (time.perf_counter() - started) * 1000 / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    default_env = {k: v for k, v in os.environ.items() if k != "STRIPEBENCH_MCP_SDK_STDIO"}
    sdk_env = {**default_env, "STRIPEBENCH_MCP_SDK_STDIO": "1"}
    default_runs, sdk_runs = [], []
    with tempfile.TemporaryDirectory() as workspace:
        Path(workspace, "one.txt").write_text("hello\n")
        for round_ in range(1, args.rounds + 1):
            print(f"round {round_}: {args.calls} view_file calls, default then STRIPEBENCH_MCP_SDK_STDIO=1 …",
                  file=sys.stderr)
            default_runs.append(asyncio.run(per_call_ms(args.calls, workspace, default_env)))
            sdk_runs.append(asyncio.run(per_call_ms(args.calls, workspace, sdk_env)))
    runs = lambda xs: ", ".join(f"{x:.3f}" for x in xs)  # noqa: E731
    print(f"default transport:                 {min(default_runs):.3f} ms/call (runs {runs(default_runs)})")
    print(f"with STRIPEBENCH_MCP_SDK_STDIO=1:  {min(sdk_runs):.3f} ms/call (runs {runs(sdk_runs)})")
    print(f"ratio sdk/default: {min(sdk_runs) / min(default_runs):.2f}x "
          f"(difference {min(sdk_runs) - min(default_runs):+.3f} ms/call)")


if __name__ == "__main__":
    main()
