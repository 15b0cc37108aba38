"""A small, realistic checkout-migration episode for the TUI tests, written with the real TraceWriter."""

from __future__ import annotations

from pathlib import Path

from stripebench_tui.core.events import (
    EpisodeEnd,
    Event,
    GraderVerdict,
    Header,
    ModelMessage,
    StripeObject,
    ToolCall,
    ToolResult,
)
from stripebench_tui.core.trace import TraceWriter, open_trace

HEADER = Header(
    env="checkout-migration",
    agent="oracle",
    model="claude-test",
    title="Migrate to Checkout Sessions",
    started="2026-11-29T12:00:00Z",
    backend="emulator",
)

LONG_OUTPUT = "\n".join(f"line {i:05d}: GET /v1/prices?limit=100 200 OK" for i in range(3000)) + "\nNEEDLE-IN-OUTPUT at the end"


def _turn(events: list[Event], turn: int, t: float, text: str, tool: str, args: dict, output: str, *, is_error: bool = False,
          duration: float = 0.8, exit_code: int | None = 0) -> None:
    events.append(ModelMessage(t=t, turn=turn, text=text, reasoning=f"reasoning for turn {turn}", tokens_in=1000 + turn,
                               tokens_out=100 + turn, cost_usd=0.001))
    events.append(ToolCall(t=t + 0.2, turn=turn, call_id=f"call_{turn}", tool=tool, arguments=args))
    events.append(ToolResult(t=t + 0.2 + duration, turn=turn, call_id=f"call_{turn}", tool=tool, output=output, is_error=is_error,
                             exit_code=exit_code, duration=duration))


def checkout_events() -> list[Event]:
    """Six turns: read code, a failing request, the fix, a session created, a paid session; verdicts turn green."""
    ev: list[Event] = []
    ev.append(GraderVerdict(t=0.0, turn=0, criterion="session_created", status="pending",
                            description="A Checkout Session exists"))
    ev.append(GraderVerdict(t=0.0, turn=0, criterion="payment_succeeded", status="pending", weight=2.0,
                            description="The test payment succeeded"))
    _turn(ev, 1, 1.0, "I will look at the current checkout code.", "shell", {"command": "cat app/checkout.py"},
          "def checkout():\n    return charge()  # legacy Charges API\n\x1b[31mred text\x1b[0m and [bold]not markup[/bold]")
    _turn(ev, 2, 4.0, "Let me try creating a session.", "shell",
          {"command": "curl -X POST $STRIPE_API_BASE/v1/checkout/sessions", "env": {"mode": "payment"}},
          '{"error": {"type": "invalid_request_error", "message": "Missing required param: line_items."}}',
          is_error=True, exit_code=22)
    _turn(ev, 3, 8.0, "The request needs line_items; fixing the code. Searching for NEEDLE-IN-MESSAGE.", "write_file",
          {"path": "app/checkout.py", "content": "stripe.checkout.Session.create(...)"}, "wrote 412 bytes")
    _turn(ev, 4, 12.0, "Running the app to create a session.", "shell", {"command": "python -m app.create_session"},
          LONG_OUTPUT, duration=2.5)
    ev.append(StripeObject(t=14.6, turn=4, object_id="cs_test_a1", object_type="checkout.session",
                           data={"id": "cs_test_a1", "object": "checkout.session", "status": "open", "amount_total": 2000},
                           event_type="checkout.session.created"))
    ev.append(StripeObject(t=14.6, turn=4, object_id="price_1", object_type="price",
                           data={"id": "price_1", "object": "price", "unit_amount": 2000}))
    ev.append(GraderVerdict(t=14.7, turn=4, criterion="session_created", status="pass",
                            evidence={"session": "cs_test_a1"}, trigger="evt_1"))
    _turn(ev, 5, 18.0, "Paying with a test card in the browser.", "browser", {"action": "pay", "card": "4242424242424242"},
          "payment page submitted")
    ev.append(StripeObject(t=20.0, turn=5, object_id="cs_test_a1", object_type="checkout.session", change="updated",
                           data={"id": "cs_test_a1", "object": "checkout.session", "status": "complete", "amount_total": 2000},
                           event_type="checkout.session.completed"))
    ev.append(StripeObject(t=20.0, turn=5, object_id="pi_1", object_type="payment_intent",
                           data={"id": "pi_1", "object": "payment_intent", "status": "succeeded"}))
    _turn(ev, 6, 22.0, "Everything works; I am done.", "shell", {"command": "git diff --stat"},
          " app/checkout.py | 12 ++++++------")
    ev.append(GraderVerdict(t=23.5, turn=6, criterion="payment_succeeded", status="pass", weight=2.0,
                            evidence={"payment_intent": "pi_1"}, trigger="final", final=True))
    ev.append(EpisodeEnd(t=24.0, turn=6, reason="agent_done", score=1.0, passed=True))
    return ev


def write_trace(path: Path, events: list[Event] | None = None, header: Header = HEADER):
    """Write ``events`` (default: the checkout episode) and open the result."""
    with TraceWriter(path, header) as writer:
        last_turn = None
        for ev in checkout_events() if events is None else events:
            if last_turn is not None and ev.turn != last_turn:
                writer.end_turn()
            writer.write(ev)
            last_turn = ev.turn
    return open_trace(path)
