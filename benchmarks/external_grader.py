"""External grader latency: the submission file written → the external grader's verdicts in the trace.

    python benchmarks/external_grader.py [--rounds 10]

The path a benchmark folder's episode takes (``grading.external``): our pi-script fixture folder (a pytest grader
of 8 tests that reads the submitted PaymentIntent back from the in-process emulator), its overlay's debounce,
``ExternalLiveGrading`` on a bus with the trace recorder attached. Each round writes the other of two submissions
(a right and a wrong PaymentIntent, so verdicts change every time) and publishes the tool result that follows a
write; the span ends when the round's first verdict reaches the bus (the recorder writes it to the trace from
there). Prints the median and worst span and, last, the median's ratio to the 2 s target.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import stripe

from stripebench_tui.core.bus import EventBus
from stripebench_tui.core.events import GraderVerdict, Header, ToolResult
from stripebench_tui.core.recorder import Recorder
from stripebench_emulator import running_emulator
from stripebench_tui.envs.benchfolder import load_bench_environment
from stripebench_tui.grading.context import GradingContext
from stripebench_tui.grading.external import ExternalGrader, ExternalLiveGrading

TARGET = 2.0
KEY = "sk_test_benchmark"
FOLDER = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "benchfolders" / "pi-script"


def payment_intents(base: str) -> tuple[str, str]:
    """(a PaymentIntent the grader passes, one it fails: the quantities forgotten)."""
    client = stripe.StripeClient(KEY, base_addresses={"api": base})
    ids = []
    for amount in (2 * 1250 + 899, 1250 + 899):
        pi = client.v1.payment_intents.create(params={
            "amount": amount, "currency": "usd", "payment_method": "pm_card_visa", "payment_method_types": ["card"],
            "confirm": True, "metadata": {"order_id": "A-1042"}, "description": "Order A-1042"})
        ids.append(pi.id)
    return ids[0], ids[1]


async def measure(rounds: int) -> list[float]:
    with running_emulator() as emu, tempfile.TemporaryDirectory() as tmp:
        right, wrong = payment_intents(emu.url)
        env = load_bench_environment(FOLDER)
        episode = Path(tmp) / "episode"
        workspace = episode / "workspace"
        shutil.copytree(env.workspace, workspace)
        bus = EventBus()
        recorder = Recorder.create(episode / "trace.jsonl", Header(env=env.id), secrets=[KEY]).attach(bus)
        arrived: asyncio.Queue[float] = asyncio.Queue()
        bus.subscribe(lambda ev: arrived.put_nowait(time.perf_counter()) if isinstance(ev, GraderVerdict) else None,
                      name="clock")
        ctx = GradingContext(env=env, episode_dir=episode, workspace=workspace, stripe_api_base=emu.url,
                             stripe_api_key=KEY, env_vars={"STRIPE_API_BASE": emu.url})
        live = ExternalLiveGrading(ExternalGrader.for_env(env), ctx).attach(bus)
        await live.idle()  # the untouched workspace's run: every test fails (no id yet)
        await bus.drain(timeout=10)
        while not arrived.empty():
            arrived.get_nowait()
        spans = []
        for n in range(rounds):
            (workspace / env.manifest.submission).write_text((right if n % 2 == 0 else wrong) + "\n")
            written = time.perf_counter()
            bus.publish_nowait(ToolResult(call_id=f"write-{n}", tool="create_file", output="wrote ids_for_grading.txt"))
            spans.append(await asyncio.wait_for(arrived.get(), 60) - written)
            await live.idle()
            await bus.drain(timeout=10)
            while not arrived.empty():
                arrived.get_nowait()
        await live.close()
        await bus.close(timeout=5)
        recorder.close()
        recorded = [json.loads(line) for line in (episode / "trace.jsonl").read_text().splitlines()]
        in_trace = sum(1 for e in recorded if e.get("type") == "grader_verdict" and e.get("trigger") == "submission")
        assert in_trace >= rounds, f"only {in_trace} verdicts reached the trace"
        return spans


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    spans = asyncio.run(measure(args.rounds))
    median = statistics.median(spans)
    print(f"submission written → external verdict (pytest, 8 tests), {len(spans)} rounds: "
          f"median {median * 1000:.0f} ms, worst {max(spans) * 1000:.0f} ms")
    print(f"ratio median/target: {median / TARGET:.2f} (target {TARGET:.1f} s)")


if __name__ == "__main__":
    main()
