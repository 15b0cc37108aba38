"""Synthetic episode traces of any size, shaped like a busy recorded run, for scaling tests and benchmarks.

Each turn is an assistant message (tokens, cost, latency) and one or more tool calls (shell, file edits,
browser), each with the Stripe requests it caused (mostly 2xx from the app or the agent's shell, some 4xx,
grader reads) and its result, then Stripe objects created or updated; now and then a service log line.
The grader's criteria change status a few times over the whole episode (at fixed fractions of it, as live
grading publishes only changes), a few findings are recorded (``findings=False`` leaves them out, as in a
trace from before the detectors), and the trace ends with ``episode_end``. Events average a few hundred bytes.

``events(count)`` yields the events (seq, t and turn stamped); ``write(path, count)`` writes a trace file
line by line in the writer's format (no redaction or output sidecars: nothing here is secret or large), in
time and memory independent of what it has written so far.

    python -m stripebench_tui.testing.big_trace OUT.jsonl COUNT [--turns N] [--no-findings]
"""

from __future__ import annotations

import argparse
import json
import os
import random
from collections.abc import Iterator
from typing import Any

from stripebench_tui.core.events import (
    EpisodeEnd,
    Event,
    Finding,
    GraderVerdict,
    Header,
    ModelMessage,
    Service,
    StripeObject,
    StripeRequest,
    ToolCall,
    ToolResult,
)

CRITERIA = (("checkout session created", 2.0), ("embedded checkout", 2.0), ("paid", 2.0),
            ("promotion code applied", 1.0), ("card element removed", 1.0), ("webhook fulfils the order", 1.0))
# (fraction of the episode, criterion index, new status): the verdict timeline, whatever the trace's size
VERDICT_CHANGES = ((0.2, 0, "pass"), (0.3, 1, "fail"), (0.45, 4, "pass"), (0.5, 1, "pass"), (0.6, 2, "fail"),
                   (0.7, 2, "pass"), (0.8, 3, "pass"), (0.9, 5, "fail"))
FINDINGS_AT = (0.25, 0.5, 0.75)  # where the recorded findings are
_WORDS = ("checkout session price line_items webhook customer intent succeeded metadata mode payment embedded "
          "ui_mode return_url promotion code discount amount_total currency invoice subscription the a to of and "
          "now then test verify server route handler template").split()
_PATHS = ("/v1/checkout/sessions", "/v1/payment_intents", "/v1/customers", "/v1/prices", "/v1/refunds",
          "/v1/promotion_codes")


def header(count: int) -> Header:
    return Header(env="checkout-migration", agent="synthetic", model="synthetic-model", title=f"{count:,} synthetic events",
                  backend="emulator", sandbox="local", extra={"variables": {"WORKSPACE": "/tmp/synthetic/workspace"}})


def events(count: int, *, turns: int | None = None, findings: bool = True, seed: int = 0) -> Iterator[Event]:
    """``count`` events of one episode (``turns``: spread over that many turns; default about a dozen per turn)."""
    rng = random.Random(seed)
    per_turn = max(4, count // turns) if turns else 0
    seq, t, turn, n = 0, 0.0, 0, 0
    changes = list(VERDICT_CHANGES)
    found = list(FINDINGS_AT) if findings else []
    last = count - 1  # the episode_end

    def stamp(ev: Event) -> Event:
        nonlocal seq, t
        t += rng.uniform(0.001, 0.05)
        ev.seq, ev.t, ev.turn = seq, t, turn
        seq += 1
        return ev

    for name, weight in CRITERIA[: max(0, min(len(CRITERIA), last))]:
        yield stamp(GraderVerdict(criterion=name, status="pending", weight=weight, description=f"{name} (synthetic)",
                                  trigger="start"))
    while seq < last:
        turn += 1
        budget = per_turn or rng.randint(8, 16)
        turn_events: list[Event] = [_message(rng)]
        while len(turn_events) < budget:
            n += 1
            turn_events += _call(rng, n)
        for ev in turn_events[: last - seq]:  # a whole turn (its calls answered), unless the episode ends in it
            yield stamp(ev)
        while changes and seq < last and seq >= changes[0][0] * count:
            _, i, status = changes.pop(0)
            yield stamp(GraderVerdict(criterion=CRITERIA[i][0], status=status, weight=CRITERIA[i][1],
                                      description=f"{CRITERIA[i][0]} (synthetic)", trigger="turn_end",
                                      evidence={"checked": "synthetic", "turn": turn}))
        while found and seq < last and seq >= found[0] * count:
            found.pop(0)
            yield stamp(Finding(detector="400-as-success", message=f"agent went on after a 400 in turn {turn}",
                                evidence=[{"seq": seq - 1}]))
    if seq == last:
        yield stamp(EpisodeEnd(reason="agent_done", score=0.6, passed=False))


def _message(rng: random.Random) -> ModelMessage:
    text = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(15, 45)))
    return ModelMessage(text=text.capitalize() + ".", model="synthetic-model", tokens_in=rng.randint(800, 4000),
                        tokens_out=rng.randint(40, 400), cost_usd=0.002, ttft=0.3, latency=rng.uniform(0.5, 3.0))


def _call(rng: random.Random, n: int) -> list[Event]:
    """One tool call: the call, the Stripe requests it caused, its result, maybe an object it made."""
    call_id = f"call_{n}"
    kind = rng.random()
    if kind < 0.55:
        call = ToolCall(call_id=call_id, tool="shell", arguments={"command": f"curl -s $APP_URL/api/step/{n} | head -40"},
                        server="shell")
    elif kind < 0.8:
        call = ToolCall(call_id=call_id, tool="replace_in_file", server="files",
                        arguments={"path": rng.choice(["app.py", "templates/checkout.html"]), "old_text": "card_element",
                                   "new_text": f"embedded_checkout  # step {n}"})
    else:
        call = ToolCall(call_id=call_id, tool=rng.choice(["browser_navigate", "browser_click", "browser_fill"]),
                        server="browser", arguments={"url": "http://127.0.0.1:8000/checkout", "field": "Email"})
    out: list[Event] = [call]
    for _ in range(rng.choice((0, 1, 1, 2))):
        status = rng.choices((200, 400, 402, 404), (90, 5, 2, 3))[0]
        path = rng.choice(_PATHS)
        out.append(StripeRequest(request_id=f"req_{n}_{len(out)}", method=rng.choice(("POST", "GET")), path=path,
                                 status=status, error_type="" if status < 400 else "invalid_request_error",
                                 idempotency_key=rng.choice(("", f"key-{n}")), api_version="2026-10-28.endive",
                                 latency=rng.uniform(0.002, 0.05), object_ids=[f"pi_{n:08d}"],
                                 source=rng.choice(("app", "app", "agent", "grader")),
                                 request_body=f"amount={rng.choice((1000, 2500))}&currency=usd&metadata[order]=o{n}",
                                 response_body=f'{{"id": "pi_{n:08d}", "object": "payment_intent"}}'))
    failed = rng.random() < 0.08
    output = ("HTTP/1.1 400 Bad Request\n{\"error\": {\"type\": \"invalid_request_error\"}}\n" if failed
              else "HTTP/1.1 200 OK\n") + "".join(f"line {i} of step {n}: ok\n" for i in range(rng.randint(2, 10)))
    out.append(ToolResult(call_id=call_id, tool=call.tool, output=output, is_error=failed, exit_code=1 if failed else 0,
                          duration=rng.uniform(0.05, 1.5)))
    if rng.random() < 0.35:
        oid = f"cs_test_{rng.randrange(n + 1):08d}"
        out.append(StripeObject(object_id=oid, object_type="checkout.session", change=rng.choice(("created", "updated")),
                                event_id=f"evt_{n}", event_type="checkout.session.completed",
                                data={"id": oid, "object": "checkout.session", "status": rng.choice(("open", "complete")),
                                      "payment_status": "paid", "mode": "payment", "ui_mode": "embedded",
                                      "amount_total": 2500, "currency": "usd", "metadata": {"order": f"o{n}"}}))
    if rng.random() < 0.05:
        out.append(Service(service="app", status="log", text=f"127.0.0.1 - GET /checkout?step={n} 200", stream="stdout"))
    return out


def _line(d: dict[str, Any]) -> bytes:
    return json.dumps(d, ensure_ascii=False, separators=(",", ":"), default=str).encode("utf-8") + b"\n"


def write(path: str | os.PathLike[str], count: int, **options: Any) -> None:
    """Write a trace of ``count`` events to ``path`` (see ``events`` for the options)."""
    with open(path, "wb") as f:
        f.write(_line(header(count).to_dict()))
        buf: list[bytes] = []
        for ev in events(count, **options):
            buf.append(_line(ev.to_dict()))
            if len(buf) >= 4096:
                f.writelines(buf)
                buf.clear()
        f.writelines(buf)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out")
    parser.add_argument("count", type=int)
    parser.add_argument("--turns", type=int, default=None)
    parser.add_argument("--no-findings", action="store_true", help="record no findings (a trace from before the detectors)")
    args = parser.parse_args()
    write(args.out, args.count, turns=args.turns, findings=not args.no_findings)


if __name__ == "__main__":
    main()
