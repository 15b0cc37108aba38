"""What the failure-mode detectors cost: all of them over a 100k-event synthetic trace, against the reducer alone.

The trace is built in memory (no file I/O in the measurement), shaped like a busy episode: model messages, tool
calls and results (shell, file edits, browser), Stripe requests (2xx mostly, some 4xx, some retried creates),
Stripe objects and verdicts. Each side is timed ``RUNS`` times on the same events (fresh reducer / fresh detectors
each run) and the best and median runs are reported; the process CPU time of the best is printed too, since a
shared machine disturbs it less than wall time.

Target (issue 13): detectors ≤ 1.5× the reducer. The last line printed is the ratio (median over median).

    python benchmarks/findings_throughput.py [--events N] [--runs K]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time


def synthetic_events(count: int, seed: int = 13) -> list:
    """``count`` events of a plausible episode, with seq/turn/t stamped like the bus does."""
    from stripebench_tui.core.events import (
        GraderVerdict,
        ModelMessage,
        StripeObject,
        StripeRequest,
        ToolCall,
        ToolResult,
    )

    rng = random.Random(seed)
    words = "checkout session price line items webhook customer intent succeeded metadata mode payment".split()
    paths = ["/v1/checkout/sessions", "/v1/payment_intents", "/v1/customers", "/v1/prices", "/v1/refunds"]
    events: list = []
    turn, t, n = 0, 0.0, 0

    def add(ev) -> None:
        nonlocal t
        t += rng.uniform(0.001, 0.2)
        ev.seq, ev.turn, ev.t = len(events), turn, t
        events.append(ev)

    while len(events) < count:
        turn += 1
        add(ModelMessage(text=" ".join(rng.choice(words) for _ in range(30)), tokens_in=1200, tokens_out=80))
        for _ in range(rng.randint(1, 3)):
            n += 1
            kind = rng.random()
            call_id = f"call_{n}"
            if kind < 0.5:
                add(ToolCall(call_id=call_id, tool="shell", arguments={"command": f"curl -s $APP_URL/api/{n}"}))
            elif kind < 0.75:
                add(ToolCall(call_id=call_id, tool="replace_in_file",
                             arguments={"path": rng.choice(["app.py", "static/checkout.js"]), "old_text": "a",
                                        "new_text": "pk_test_[REDACTED] b"}))
            else:
                add(ToolCall(call_id=call_id, tool=rng.choice(["browser_fill", "browser_click", "browser_type"]),
                             arguments={"field": "Card number", "value": "4242"}))
            for _ in range(rng.randint(0, 3)):
                status = rng.choices([200, 400, 402, 404, 500], [85, 5, 4, 4, 2])[0]
                path = rng.choice(paths)
                body = f"amount={rng.choice([1000, 2000])}&currency=usd&metadata[order]=o{rng.randint(0, 50)}"
                add(StripeRequest(request_id=f"req_{n}_{len(events)}", method=rng.choice(["POST", "GET"]), path=path,
                                  status=status, source=rng.choice(["app", "agent", "browser", "grader"]),
                                  request_body=body, response_body='{"id": "pi_1"}', latency=0.01,
                                  idempotency_key=rng.choice(["", "", f"k{n}"]), object_ids=[f"pi_{n}"]))
            ok = rng.random() < 0.9
            output = ("HTTP 200 " if ok else '{"error": {"type": "invalid_request_error"}} HTTP 400 ') + "x" * 200
            add(ToolResult(call_id=call_id, tool="shell", output=output, is_error=not ok, exit_code=0, duration=0.3))
        if rng.random() < 0.3:
            add(StripeObject(object_id=f"cs_{rng.randint(0, 200)}", object_type="checkout.session", change="updated",
                             data={"id": "cs", "status": "open"}))
        if rng.random() < 0.2:
            add(GraderVerdict(criterion=f"c{rng.randint(0, 8)}", status=rng.choice(["pass", "fail", "pending"])))
    return events[:count]


def time_reducer(events: list) -> tuple[float, float]:
    """(wall, cpu) seconds for one fresh reducer over ``events``."""
    from stripebench_tui.core.state import Reducer

    reducer = Reducer(clock=lambda: 0.0, keep_output=False)
    wall, cpu = time.perf_counter(), time.process_time()
    for ev in events:
        reducer.apply(ev)
    return time.perf_counter() - wall, time.process_time() - cpu


def time_detectors(events: list) -> tuple[float, float, int]:
    """(wall, cpu, findings) for fresh detectors (all of them) over ``events``, end-of-episode ones included."""
    from stripebench_tui.findings import FindingsRunner

    runner = FindingsRunner()
    wall, cpu = time.perf_counter(), time.process_time()
    for ev in events:
        runner.feed(ev)
    runner.finish("agent_done")
    return time.perf_counter() - wall, time.process_time() - cpu, len(runner.findings)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    events = synthetic_events(args.events)
    reducer = [time_reducer(events) for _ in range(args.runs)]
    detectors = [time_detectors(events) for _ in range(args.runs)]
    found = detectors[0][2]
    r_wall = statistics.median(w for w, _ in reducer)
    d_wall = statistics.median(w for w, _, _ in detectors)
    r_best = min(reducer)
    d_best = min(detectors)
    print(f"{len(events)} events, {args.runs} runs each, {found} findings")
    print(f"reducer:   median {r_wall * 1000:7.1f} ms ({len(events) / r_wall:,.0f} events/s), "
          f"best {r_best[0] * 1000:.1f} ms (cpu {r_best[1] * 1000:.1f} ms)")
    print(f"detectors: median {d_wall * 1000:7.1f} ms ({len(events) / d_wall:,.0f} events/s), "
          f"best {d_best[0] * 1000:.1f} ms (cpu {d_best[1] * 1000:.1f} ms)")
    print(f"detectors / reducer (cpu of the best runs): {d_best[1] / r_best[1]:.2f}x" if r_best[1] > 0 else "")
    print(f"detectors / reducer: {d_wall / r_wall:.2f}x (target <= 1.5x)")


if __name__ == "__main__":
    main()
