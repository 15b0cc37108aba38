"""The TUI tests' checkout episode plus a Stripe request log and findings, as a live episode would record them."""

from __future__ import annotations

from stripebench_tui.core.events import Event, Finding, GraderVerdict, StripeRequest
from tests.tui.episode import checkout_events


def _request(turn: int, t: float, n: int, method: str, path: str, status: int, source: str, **more) -> StripeRequest:
    return StripeRequest(t=t, turn=turn, request_id=f"req_{n:03d}", method=method, path=path, status=status,
                         source=source, latency=0.004 * n, api_version="2026-10-28.clover", **more)


def findings_events() -> list[Event]:
    """``checkout_events`` with requests in turns 2, 4 and 6 and two findings (turns 2 and 6)."""
    extra = {
        2: [_request(2, 4.5, 1, "POST", "/v1/checkout/sessions", 400, "agent", error_type="invalid_request_error",
                     error_code="parameter_missing", request_body="mode=payment",
                     response_body='{"error": {"type": "invalid_request_error", "code": "parameter_missing", '
                                   '"message": "Missing required param: line_items."}}'),
            Finding(t=5.1, turn=2, detector="lost-focus", message="browser_fill 'Card number' hit an element that "
                    "cannot take input", evidence=[{"call_id": "call_2"}])],
        4: [_request(4, 13.0, 2, "GET", "/v1/prices", 200, "app", request_body="limit=100",
                     response_body='{"object": "list", "data": [{"id": "price_1"}]}', object_ids=["price_1"]),
            _request(4, 14.5, 3, "POST", "/v1/checkout/sessions", 200, "app", idempotency_key="cart-7",
                     request_body="mode=payment&line_items[0][price]=price_1&line_items[0][quantity]=1",
                     response_body='{"id": "cs_test_a1", "object": "checkout.session", "status": "open"}',
                     object_ids=["cs_test_a1"])],
        6: [_request(6, 23.0, 4, "GET", "/v1/checkout/sessions/cs_test_a1", 200, "grader",
                     response_body='{"id": "cs_test_a1", "status": "complete"}', object_ids=["cs_test_a1"]),
            Finding(t=23.6, turn=6, detector="400-as-success", severity="warning",
                    message="agent says the work is done after POST /v1/checkout/sessions answered 400",
                    evidence=[{"request_id": "req_001"}, {"seq": 30}])],
    }
    out: list[Event] = []
    events = checkout_events()
    for ev in events:  # live grading names the request whose Stripe event made it look again
        if isinstance(ev, GraderVerdict) and ev.trigger == "evt_1":
            ev.request_id = "req_003"
    for i, ev in enumerate(events):
        out.append(ev)
        following = events[i + 1] if i + 1 < len(events) else None
        if following is None or following.turn != ev.turn or following.type == "episode_end":
            out.extend(extra.pop(ev.turn, []))
    return out
