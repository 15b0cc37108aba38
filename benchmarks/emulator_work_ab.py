"""The emulator's own work per request, this checkout against another one, side by side (no HTTP, no sockets).

Each side runs in a process of its own: one ``Emulator`` and the throughput benchmark's workload (create a customer,
create and confirm a payment intent, retrieve it, list customers) sent straight to its request pipeline (the
``handle`` function the web app calls), compiled modules as its own set-up built them. It reports process CPU time
per request, so the machine's load moves it far less than requests per second; the sides alternate, and the verdict
is the median of the per-pair ratios.

Use it to check that a change (a refactor, a move between packages) did not make the emulator's work slower:

    git worktree add /tmp/before <commit>        # and build its compiled modules as its set-up does
    python benchmarks/emulator_work_ab.py --baseline /tmp/before --pairs 5

The baseline may be a checkout from before the emulator became its own distribution (``stripebench_tui.emulator``)
or after (``emulator/stripebench_emulator``, before or after its layers).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Run in the side's own process: finds the layout the checkout has, warms up, then times ``loops`` workload loops.
PROBE = r'''
import sys, time
from urllib.parse import urlencode
import orjson
layouts = [
    ("stripebench_emulator", "stripebench_emulator.web.dispatch", "stripebench_emulator.model.engine",
     "stripebench_emulator.model.compiled", ["stripebench_emulator.api", "stripebench_emulator.web.app"]),
    ("stripebench_emulator", "stripebench_emulator.dispatch", "stripebench_emulator.engine",
     "stripebench_emulator.compiled", ["stripebench_emulator.resources", "stripebench_emulator.app"]),
    ("stripebench_tui.emulator", "stripebench_tui.emulator.dispatch", "stripebench_tui.emulator.engine",
     "stripebench_tui.emulator.compiled", ["stripebench_tui.emulator.resources", "stripebench_tui.emulator.app"]),
]
import importlib
for front, dispatch, engine, compiled, rest in layouts:
    try:
        importlib.import_module(front)
        handle = importlib.import_module(dispatch).handle
        Emulator = importlib.import_module(engine).Emulator
        describe = importlib.import_module(compiled).describe
        for name in rest:
            importlib.import_module(name)
        break
    except ImportError:
        continue
else:
    sys.exit("no emulator found in this checkout")
emu = Emulator(seed=1)
headers = {"authorization": "Bearer sk_test_bench_123", "content-type": "application/x-www-form-urlencoded"}

def call(method, path, data=None, query=""):
    return handle(emu, method, path, query, urlencode(data or {}).encode(), headers, lowered=True)

def loop():
    customer = orjson.loads(call("POST", "/v1/customers", {"email": "bench@example.com"}).encoded())["id"]
    pi = orjson.loads(call("POST", "/v1/payment_intents", {"amount": "2000", "currency": "usd", "customer": customer,
                                                          "payment_method": "pm_card_visa"}).encoded())["id"]
    call("POST", f"/v1/payment_intents/{pi}/confirm").encoded()
    call("GET", f"/v1/payment_intents/{pi}").encoded()
    call("GET", "/v1/customers", query="limit=10").encoded()

loops = int(sys.argv[1])
for _ in range(loops // 5):
    loop()
start = time.process_time()
for _ in range(loops):
    loop()
print(f"{(time.process_time() - start) / (loops * 5) * 1e6:.2f} {describe()}")
'''


def side_paths(checkout: Path) -> list[str]:
    """What a process needs on its path to import that checkout's emulator (its distribution folder, if any)."""
    paths = [str(checkout)]
    if (checkout / "emulator" / "stripebench_emulator").is_dir():
        paths.insert(0, str(checkout / "emulator"))
    return paths


def measure(checkout: Path, loops: int) -> tuple[float, str]:
    """Microseconds of CPU per request, and whether that side ran compiled."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(side_paths(checkout))}
    ran = subprocess.run([sys.executable, "-c", PROBE, str(loops)], cwd=checkout, env=env, capture_output=True,
                         text=True, timeout=600)
    if ran.returncode != 0:
        raise SystemExit(f"emulator_work_ab: {checkout}: {(ran.stderr or ran.stdout).strip().splitlines()[-1]}")
    value, _, how = ran.stdout.strip().partition(" ")
    return float(value), how


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", type=Path, required=True, help="another checkout of this repository")
    parser.add_argument("--pairs", type=int, default=5, help="measurements of each side, alternating (default 5)")
    parser.add_argument("--loops", type=int, default=1500, help="workload loops per measurement (5 requests each)")
    args = parser.parse_args(argv)
    baseline = args.baseline.resolve()
    if not baseline.is_dir():
        print(f"emulator_work_ab: {baseline}: no such checkout", file=sys.stderr)
        return 2
    ratios, ours, theirs = [], [], []
    for pair in range(args.pairs):
        order = [("this", ROOT), ("baseline", baseline)]
        if pair % 2:
            order.reverse()
        got = {}
        for name, checkout in order:
            got[name] = measure(checkout, args.loops)
            print(f"pair {pair + 1}: {name:8} {got[name][0]:7.2f} us CPU per request ({got[name][1]})", flush=True)
        ours.append(got["this"][0])
        theirs.append(got["baseline"][0])
        ratios.append(got["this"][0] / got["baseline"][0])
    print(f"this checkout: median {statistics.median(ours):.2f} us per request; baseline: median "
          f"{statistics.median(theirs):.2f} us; this / baseline, pair by pair: median {statistics.median(ratios):.3f} "
          f"(spread {min(ratios):.3f}..{max(ratios):.3f}; above 1 is slower)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
