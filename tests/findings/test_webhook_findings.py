"""bad-signature-accepted and webhook-not-idempotent on hand-made streams of webhook deliveries."""

from __future__ import annotations

from stripebench_tui.core.events import BADLY_SIGNED, SIGNED, UNSIGNED, Finding
from stripebench_tui.findings import detect
from tests.findings.streams import Stream

FULFIL = {"fulfillments": 1}


def fired(events, name: str) -> list[Finding]:
    return [f for f in detect(events) if f.detector == name]


def graders_deliveries(s: Stream, *, refuses_bad: bool, fulfils_duplicates: bool) -> None:
    """The webhook-fulfillment grader's sequence: a forged, an unsigned and a tampered delivery of the first event,
    the two events out of order, then duplicates of each (the rows each added as the grader measured them)."""
    bad = 400 if refuses_bad else 200
    s.next_turn()
    s.delivery("evt_1", bad, signature=BADLY_SIGNED, rows_added={})
    s.delivery("evt_1", bad, signature=UNSIGNED, rows_added={})
    s.delivery("evt_1", bad, signature=BADLY_SIGNED, rows_added={})
    s.delivery("evt_2", 200, rows_added=FULFIL)
    s.delivery("evt_1", 200, rows_added=FULFIL)
    again = FULFIL if fulfils_duplicates else {}
    for event_id in ("evt_1", "evt_2", "evt_1"):
        s.delivery(event_id, 200, rows_added=again)


# ---------------------------------------------------------------- bad-signature-accepted

def test_bad_signature_accepted_fires_once_per_kind_of_bad_signature_answered_2xx():
    s = Stream()
    graders_deliveries(s, refuses_bad=False, fulfils_duplicates=False)
    found = fired(s.end(), "bad-signature-accepted")
    assert [f.evidence for f in found] == [[{"seq": 0}], [{"seq": 1}]]  # the wrongly signed one, the unsigned one
    assert found[0].severity == "error" and found[0].turn == 1
    assert found[0].message.startswith("/webhooks/stripe answered 200 to a wrongly signed webhook delivery "
                                       "(checkout.session.completed evt_1, sent by grader)")
    assert "an unsigned webhook delivery" in found[1].message


def test_bad_signature_accepted_is_quiet_when_bad_deliveries_are_refused_or_unanswered():
    s = Stream()
    graders_deliveries(s, refuses_bad=True, fulfils_duplicates=False)
    s.delivery("evt_3", 0, signature=UNSIGNED)  # no answer at all (the app was down): not an acceptance
    s.delivery("evt_3", 500, signature=BADLY_SIGNED)
    s.delivery("evt_4", 200, signature=SIGNED, sender="stripe")  # Stripe's own, properly signed
    assert fired(s.end(), "bad-signature-accepted") == []


def test_bad_signature_accepted_counts_each_endpoint_on_its_own():
    s = Stream().next_turn()
    s.delivery("evt_1", 204, signature=UNSIGNED, url="http://127.0.0.1:5001/webhooks/stripe")
    s.delivery("evt_1", 204, signature=UNSIGNED, url="http://127.0.0.1:5001/webhooks/stripe")  # same endpoint
    s.delivery("evt_1", 204, signature=UNSIGNED, url="http://127.0.0.1:5001/hooks/billing")
    assert len(fired(s.end(), "bad-signature-accepted")) == 2


# ---------------------------------------------------------------- webhook-not-idempotent

def test_webhook_not_idempotent_fires_once_per_event_acted_on_again():
    s = Stream()
    graders_deliveries(s, refuses_bad=True, fulfils_duplicates=True)
    found = fired(s.end(), "webhook-not-idempotent")
    assert [f.evidence for f in found] == [[{"seq": 4}, {"seq": 5}], [{"seq": 3}, {"seq": 6}]]  # evt_1, then evt_2
    assert found[0].message == ("checkout.session.completed evt_1 was acted on again when delivered again "
                                "(fulfillments +1); a redelivered event must change nothing")
    assert found[0].severity == "error"


def test_webhook_not_idempotent_is_quiet_when_duplicates_change_nothing():
    s = Stream()
    graders_deliveries(s, refuses_bad=True, fulfils_duplicates=False)
    assert fired(s.end(), "webhook-not-idempotent") == []


def test_webhook_not_idempotent_needs_the_same_table_measured_twice_from_signed_deliveries():
    s = Stream().next_turn()
    s.delivery("evt_1", 200, rows_added={"fulfillments": 1, "webhook_log": 1})
    s.delivery("evt_1", 200, rows_added={"webhook_log": 1})  # logs each delivery, fulfils once: not this finding
    s.delivery("evt_2", 200, rows_added=None, sender="stripe")  # Stripe's own deliveries are not measured
    s.delivery("evt_2", 200, rows_added=None, sender="stripe")
    s.delivery("evt_3", 200, signature=BADLY_SIGNED, rows_added=FULFIL)  # a forged one acted on: the other finding's
    s.delivery("evt_3", 200, rows_added=FULFIL)
    s.delivery("", 200, rows_added=FULFIL)  # a body that names no event
    s.delivery("", 200, rows_added=FULFIL)
    s.delivery("evt_4", 200, rows_added={"fulfillments": -1})  # removing rows is not acting again
    s.delivery("evt_4", 200, rows_added={"fulfillments": -1})
    assert fired(s.end(), "webhook-not-idempotent") == []


def test_webhook_not_idempotent_ignores_the_answers_a_fulfilment_that_failed_late_is_retried():
    s = Stream().next_turn()
    s.delivery("evt_1", 500, rows_added=FULFIL)  # fulfilled, then crashed: Stripe retries
    s.next_turn()
    s.delivery("evt_1", 200, rows_added={"fulfillments": 1, "webhook_log": 1})  # all the first did, and more
    [found] = fired(s.end(), "webhook-not-idempotent")
    assert found.turn == 2 and found.evidence == [{"seq": 0}, {"seq": 1}] and "(fulfillments +1)" in found.message
