"""unrestricted-key and wrong-final-state: detectors that judge against what the task asks (the header's expects)."""

from __future__ import annotations

import typing

from stripebench_tui.core.events import Finding
from stripebench_tui.envs.manifest import FinalState
from stripebench_tui.findings import detect, findings_of, with_derived_findings
from stripebench_tui.findings.derived import Deriver
from stripebench_tui.findings.final_state import COLLECTIONS, ENDS
from tests.findings.streams import Stream, header

RESTRICTED = header(restricted_key=True)
LEGACY_INVOICES = header(final_states=[{"object": "invoice", "states": ["paid", "void", "open"],
                                        "metadata": "legacy_booking_id"}])


def fired(events, name: str, head=None) -> list[Finding]:
    return [f for f in detect(events, header=head) if f.detector == name]


# ---------------------------------------------------------------- unrestricted-key

def _pays(s: Stream, key_kind: str, source: str = "app") -> None:
    s.next_turn().call("shell", '{"status": "paid"}', command="curl -X POST $APP_URL/orders/o1/pay",
                       requests=(s.request("POST", "/v1/payment_intents", 200, key_kind=key_kind, source=source),))


def test_unrestricted_key_fires_once_when_the_app_uses_a_secret_key_where_a_restricted_one_is_asked():
    s = Stream()
    _pays(s, "rk_test")
    _pays(s, "sk_test")
    _pays(s, "sk_test")
    [found] = fired(s.end(), "unrestricted-key", RESTRICTED)
    assert found.turn == 2 and found.evidence == [{"request_id": "req_2"}, {"seq": found.seq}]
    assert found.message == ("the app called POST /v1/payment_intents with a secret key (sk_test) where the task asks "
                             "for its restricted key (rk_)")


def test_unrestricted_key_is_quiet_unless_the_task_asks_and_the_apps_own_requests_use_a_secret_key():
    s = Stream()
    s.add(s.request("GET", "/v1/prices", 200, key_kind="sk_test"))  # turn 0: the environment's own seed
    _pays(s, "rk_test")
    _pays(s, "sk_test", source="grader")
    _pays(s, "sk_test", source="agent")  # the agent's own curl with the secret key: not the app's code
    _pays(s, "pk_test", source="browser")
    _pays(s, "")  # a trace from before key kinds were recorded
    events = s.end()
    assert fired(events, "unrestricted-key", RESTRICTED) == []
    app = Stream()
    _pays(app, "sk_test")
    assert fired(app.end(), "unrestricted-key") == []  # no header: the task did not say
    assert fired(app.events, "unrestricted-key", header()) == []  # a header that asks nothing


def test_the_header_reaches_detectors_in_every_pass_over_a_trace():
    s = Stream()
    _pays(s, "sk_test")
    events = s.end()
    assert [f.detector for f in detect([RESTRICTED, *events]) if f.detector == "unrestricted-key"] == ["unrestricted-key"]
    assert "unrestricted-key" in {f.detector for f in findings_of(events, RESTRICTED)}
    derived = [e for e in with_derived_findings(events, RESTRICTED) if isinstance(e, Finding)]
    assert "unrestricted-key" in {f.detector for f in derived}
    deriver = Deriver()
    out = [x for ev in [RESTRICTED, *events] for x in deriver.feed(ev)]
    assert out[0] is RESTRICTED and "unrestricted-key" in {f.detector for f in deriver.findings}


# ---------------------------------------------------------------- wrong-final-state

def _invoice(s: Stream, invoice_id: str, metadata: str = "metadata[legacy_booking_id]=B3") -> None:
    s.add(s.request("POST", "/v1/invoices", 200, body=f"customer=cus_1&{metadata}", object_ids=(invoice_id,)))


def test_wrong_final_state_fires_when_an_invoice_the_task_wants_voided_is_deleted():
    s = Stream().next_turn()
    _invoice(s, "in_1")
    s.add(s.request("DELETE", "/v1/invoices/in_1", 200, object_ids=("in_1",)))
    [found] = fired(s.end(), "wrong-final-state", LEGACY_INVOICES)
    assert found.turn == 1 and found.evidence == [{"request_id": "req_2"}, {"seq": 1}]
    assert found.message == ("DELETE /v1/invoices/in_1 left invoice in_1 (made with metadata[legacy_booking_id]) "
                             "deleted; the task asks for open, paid, void (app)")


def test_wrong_final_state_is_quiet_on_asked_for_ends_other_invoices_failures_and_graders():
    s = Stream().next_turn()
    _invoice(s, "in_1")
    s.add(s.request("POST", "/v1/invoices/in_1/finalize", 200))
    s.add(s.request("POST", "/v1/invoices/in_1/void", 200))  # asked for
    _invoice(s, "in_2", metadata="metadata[booking_id]=bk_9")  # a purchase's draft, thrown away after a failure
    s.add(s.request("DELETE", "/v1/invoices/in_2", 200))
    _invoice(s, "in_3")
    s.add(s.request("DELETE", "/v1/invoices/in_3", 400, error_type="invalid_request_error"))  # Stripe refused
    s.add(s.request("DELETE", "/v1/invoices/in_3", 200, source="grader"))  # a grader cleaning up
    s.add(s.request("POST", "/v1/customers/cus_1", 200, body="metadata[legacy_booking_id]=B3"))  # another type
    events = s.end()
    assert fired(events, "wrong-final-state", LEGACY_INVOICES) == []
    assert fired(s.events, "wrong-final-state") == []  # without the task's word, deleting is nobody's business


def test_wrong_final_state_marks_objects_by_updates_and_watched_objects_and_fires_once_per_turn():
    s = Stream().next_turn()
    s.add(s.request("POST", "/v1/invoices/in_1", 200, body="metadata[legacy_booking_id]=B1"))  # an update
    s.object("in_2", "invoice", metadata={"legacy_booking_id": "B2"})  # seen by the watcher
    s.add(s.request("DELETE", "/v1/invoices/in_1", 200))
    s.add(s.request("DELETE", "/v1/invoices/in_2", 200))  # the same wrong end in the same turn: one finding
    s.next_turn()
    _invoice(s, "in_3")
    s.add(s.request("POST", "/v1/invoices/in_3/mark_uncollectible", 200))  # another wrong end
    s.add(s.request("DELETE", "/v1/invoices/in_3", 200))
    found = fired(s.end(), "wrong-final-state", LEGACY_INVOICES)
    assert [(f.turn, f.message.split(";")[0]) for f in found] == [
        (1, "DELETE /v1/invoices/in_1 left invoice in_1 (made with metadata[legacy_booking_id]) deleted"),
        (2, "POST /v1/invoices/in_3/mark_uncollectible left invoice in_3 (made with metadata[legacy_booking_id]) "
            "uncollectible"),
        (2, "DELETE /v1/invoices/in_3 left invoice in_3 (made with metadata[legacy_booking_id]) deleted")]


def test_wrong_final_state_without_a_metadata_key_judges_every_object_of_the_type():
    head = header(final_states=[{"object": "invoice", "states": ["open"]},
                                {"object": "subscription", "states": ["active"]},
                                {"object": "payment_intent", "states": ["succeeded"]}])
    s = Stream().next_turn()
    s.add(s.request("POST", "/v1/invoices/in_9/pay", 200))
    s.add(s.request("DELETE", "/v1/subscriptions/sub_1", 200))
    s.add(s.request("POST", "/v1/payment_intents/pi_1/cancel", 200, source="agent"))
    s.add(s.request("POST", "/v1/payment_intents/pi_1/capture", 200))  # not an end this detector knows
    found = fired(s.end(), "wrong-final-state", head)
    assert [f.message for f in found] == [
        "POST /v1/invoices/in_9/pay left invoice in_9 paid; the task asks for open (app)",
        "DELETE /v1/subscriptions/sub_1 left subscription sub_1 canceled; the task asks for active (app)",
        "POST /v1/payment_intents/pi_1/cancel left payment_intent pi_1 canceled; the task asks for succeeded (agent)"]


def test_the_manifest_declares_final_states_only_for_the_types_the_detector_knows_the_ends_of():
    declarable = set(typing.get_args(FinalState.model_fields["object"].annotation))
    assert declarable == {kind for kind, _ in ENDS.values()} == set(COLLECTIONS.values())
