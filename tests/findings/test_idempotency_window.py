"""The retry detector forgets creates no later request can retry, so a long episode costs it a turn's worth."""

from __future__ import annotations

from stripebench_tui.core.events import StripeRequest
from stripebench_tui.findings.idempotency import RETRY_TURNS, RetryWithoutIdempotency


def create(seq: int, turn: int, body: str) -> StripeRequest:
    return StripeRequest(seq=seq, turn=turn, request_id=f"req_{seq}", method="POST", path="/v1/payment_intents",
                         status=200, source="app", request_body=body)


def test_it_keeps_only_the_creates_of_the_turns_a_retry_may_come_in_and_still_fires_on_one() -> None:
    det = RetryWithoutIdempotency()
    seq = 0
    for turn in range(1, 2001):
        for order in range(5):  # a new order each time: nothing to retry
            seq += 1
            assert det.feed(create(seq, turn, f"amount=100&metadata[order]=o{turn}-{order}")) is None
        assert len(det.last) <= 5 * (RETRY_TURNS + 1)
    # the last turn's create sent again in the next turn is a retry, as before
    found = det.feed(create(seq + 1, 2001, "metadata[order]=o2000-4&amount=100"))
    assert found and found[0].evidence == [{"request_id": f"req_{seq}"}, {"request_id": f"req_{seq + 1}"}]
    # one sent again RETRY_TURNS + 1 turns later is a new order (forgotten, and silent as ever)
    assert det.feed(create(seq + 2, 2001 + RETRY_TURNS + 1, "amount=100&metadata[order]=o2000-3")) is None
