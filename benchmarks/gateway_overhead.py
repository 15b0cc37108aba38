"""Model-API gateway overhead: the same scripted streaming conversation straight to the fake model and through the gateway.

    python benchmarks/gateway_overhead.py [--turns 50] [--rounds 3] [--record]

A 50-turn Anthropic Messages conversation (streamed, each request resending the
growing history with a tool call and its result per turn, as harnesses do) is
played against the scripted fake model, once directly and once through the gateway
(with its event tap on), call by call interleaved (the machine is shared). The fake
model and the gateway each run in a process of their own, as they do for real (a
harness process, the gateway inside stripebench, a remote upstream), so they do not
share one interpreter lock with the client. Per call
we time the whole response and the time to the first streamed token (the first
content delta). The added latency is the paired difference gateway − direct; the
figures are its p50 and p99 over every call, and the median time-to-first-token
overhead. The last line gives them as ratios of the targets (≤ 2 ms added p50,
≤ 1 ms TTFT overhead); ≤ 1.00 meets a target. ``--record`` has the gateway record
every response too (its model recording, as in an episode of an external harness).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import httpx

from stripebench_tui.testing.fake_wire import ScriptedCall, ScriptedTurn

KEY = "sk-bench-upstream"


def script(turns: int) -> list[ScriptedTurn]:
    body = "I will run the next step of the plan and check its output carefully. " * 3
    return [ScriptedTurn(text=body, tool_calls=[ScriptedCall("shell", {"command": f"echo step {i}"})]) for i in range(turns)]


def one_call(client: httpx.Client, url: str, key: str, messages: list[dict]) -> tuple[float, float, dict]:
    """(total seconds, seconds to first content delta, the tool_use block) for one streamed request."""
    body = {"model": "claude-sonnet-5-5", "max_tokens": 1024, "stream": True, "messages": messages}
    started = time.perf_counter()
    first = None
    tool: dict = {}
    with client.stream("POST", url + "/v1/messages", json=body, headers={"x-api-key": key}) as resp:
        resp.raise_for_status()
        for line in resp.iter_lines():
            if first is None and line.startswith("data:") and '"content_block_delta"' in line:
                first = time.perf_counter() - started
            if '"tool_use"' in line and "content_block_start" in line:
                import json

                tool = json.loads(line[5:])["content_block"]
    return time.perf_counter() - started, first or 0.0, tool


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--record", action="store_true", help="the gateway also records every response")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="gateway-bench-"))
    script_file = work / "script.json"
    turns = script(args.turns * args.rounds * 2 + 10)
    script_file.write_text(json.dumps({"api_key": KEY, "turns": [
        {"text": t.text, "tool_calls": [{"name": c.name, "arguments": c.arguments} for c in t.tool_calls]} for t in turns]}))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).resolve().parents[1]),
                                                                      os.environ.get("PYTHONPATH")]))}
    fake_proc = subprocess.Popen([sys.executable, "-m", "stripebench_tui.testing.fake_models", "--script", str(script_file)],
                                 stdout=subprocess.PIPE, text=True, env=env)
    fake_url = fake_proc.stdout.readline().split()[4]  # "fake model server on URL (…)"
    events_file = work / "events.jsonl"
    gw_proc = subprocess.Popen([sys.executable, "-m", "stripebench_tui.gateway", "--base-url", fake_url, "--api-key", KEY,
                                "--events", str(events_file), *(["--record", str(work / "model")] if args.record else [])],
                               stdout=subprocess.PIPE, text=True, env=env)
    _, gw_url, gw_key = gw_proc.stdout.readline().split()
    fake = SimpleNamespace(url=fake_url)
    gateway = SimpleNamespace(url=gw_url, dummy_key=gw_key)
    direct_total, gw_total, direct_ttft, gw_ttft = [], [], [], []
    try:
        with httpx.Client(timeout=30) as client:
            for warm in range(5):  # connections and code paths warm
                one_call(client, fake.url, KEY, [{"role": "user", "content": "warm"}])
                one_call(client, gateway.url, gateway.dummy_key, [{"role": "user", "content": "warm"}])
            for round_ in range(args.rounds):
                print(f"round {round_ + 1}: {args.turns} streamed turns, direct and through the gateway, interleaved …",
                      file=sys.stderr)
                direct_msgs: list[dict] = [{"role": "user", "content": "Build the checkout."}]
                gw_msgs: list[dict] = [{"role": "user", "content": "Build the checkout."}]
                for turn in range(args.turns):
                    order = [(fake.url, KEY, direct_msgs, direct_total, direct_ttft),
                             (gateway.url, gateway.dummy_key, gw_msgs, gw_total, gw_ttft)]
                    if turn % 2:
                        order.reverse()
                    for url, key, msgs, totals, ttfts in order:
                        total, ttft, tool = one_call(client, url, key, msgs)
                        totals.append(total)
                        ttfts.append(ttft)
                        msgs.append({"role": "assistant", "content": [{"type": "tool_use", "id": tool["id"],
                                                                       "name": "shell", "input": {"command": "x"}}]})
                        msgs.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool["id"],
                                                                  "content": f"step {turn} ok"}]})
    finally:
        for proc in (gw_proc, fake_proc):
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=30)
    events = events_file.read_text().splitlines() if events_file.exists() else []
    added = [g - d for g, d in zip(gw_total, direct_total)]
    ttft_added = [g - d for g, d in zip(gw_ttft, direct_ttft)]
    ms = 1000.0
    p50, p99, ttft50 = pct(added, 0.5) * ms, pct(added, 0.99) * ms, statistics.median(ttft_added) * ms
    calls = len(added)
    recorded = len((work / "model" / "exchanges.jsonl").read_text().splitlines()) if args.record else 0
    print(f"calls: {calls} per side ({args.rounds} × {args.turns} streamed turns); trace events from the gateway: {len(events)}"
          + (f"; responses recorded: {recorded}" if args.record else ""))
    print(f"direct:  p50 {pct(direct_total, 0.5) * ms:.2f} ms, p99 {pct(direct_total, 0.99) * ms:.2f} ms, "
          f"ttft p50 {statistics.median(direct_ttft) * ms:.2f} ms")
    print(f"gateway: p50 {pct(gw_total, 0.5) * ms:.2f} ms, p99 {pct(gw_total, 0.99) * ms:.2f} ms, "
          f"ttft p50 {statistics.median(gw_ttft) * ms:.2f} ms")
    print(f"added per call: p50 {p50:.2f} ms, p99 {p99:.2f} ms; ttft overhead p50 {ttft50:.2f} ms")
    print(f"ratio added-p50/2ms: {p50 / 2:.2f}x, ttft-overhead/1ms: {ttft50 / 1:.2f}x, added-p99/2ms: {p99 / 2:.2f}x "
          f"(targets <= 1.00x for p50 and ttft)")


if __name__ == "__main__":
    main()
