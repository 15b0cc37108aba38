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


def _request(seq: int, path: str, body: str = "", made: str = "", method: str = "POST") -> StripeRequest:
    ids = [part for part in path.split("/") if "_" in part] + ([made] if made else [])
    return StripeRequest(seq=seq, turn=1, request_id=f"req_{seq}", method=method, path=path, status=200, source="app",
                         request_body=body, object_ids=ids)


def test_a_create_whose_answer_was_used_before_the_same_one_again_is_another_order_not_a_retry() -> None:
    """galtee-invoicing's migration: an invoice per phone booking, the same parameters for a customer's two
    bookings, each finalized (its answer used) before the next; a purchase route's PaymentMethod per purchase."""
    det = RetryWithoutIdempotency()
    body = "customer=cus_1&currency=eur&auto_advance=false"
    assert det.feed(_request(1, "/v1/invoices", body, made="in_1")) is None
    assert det.feed(_request(2, "/v1/invoiceitems", "customer=cus_1&invoice=in_1&pricing[price]=price_1", made="ii_1")) is None
    assert det.feed(_request(3, "/v1/invoices", body, made="in_2")) is None  # in_1 was used: a second invoice
    assert det.feed(_request(4, "/v1/payment_methods", "type=card&card[token]=tok_visa", made="pm_1")) is None
    assert det.feed(_request(5, "/v1/payment_methods/pm_1/attach", "customer=cus_1")) is None
    assert det.feed(_request(6, "/v1/payment_methods", "type=card&card[token]=tok_visa", made="pm_2")) is None
    # a create sent again with nothing using the first answer in between is still a retry
    assert det.feed(_request(7, "/v1/customers", "email=a@example.com", made="cus_7")) is None
    found = det.feed(_request(8, "/v1/customers", "email=a@example.com", made="cus_8"))
    assert found and found[0].evidence == [{"request_id": "req_7"}, {"request_id": "req_8"}]
    # and so is the third invoice of seq 3's parameters, in_2 never used
    found = det.feed(_request(9, "/v1/invoices", body, made="in_3"))
    assert found and "POST /v1/invoices sent again" in found[0].message
