"""Each detector on hand-made event streams: it fires where its failure mode is, and stays quiet where it is not."""

from __future__ import annotations

import pytest

from stripebench_tui.core.events import Finding
from stripebench_tui.errors import UserError
from stripebench_tui.findings import DETECTORS, create_detectors, detect, findings_of
from stripebench_tui.findings.base import is_create, operation
from tests.findings.streams import Stream

ERROR_400 = '{"error": {"message": "Invalid ui_mode", "param": "ui_mode"}} HTTP 400'


def fired(events, name: str | None = None) -> list[Finding]:
    return [f for f in detect(events) if name is None or f.detector == name]


# ---------------------------------------------------------------- 400-as-success

def _checked_with_curl(s: Stream, status: int, output: str) -> None:
    s.next_turn().say("Check the endpoint with curl.")
    s.call("shell", output, command="curl -X POST $APP_URL/api/checkout-session",
           requests=(s.request("POST", "/v1/checkout/sessions", status, error_type="invalid_request_error"),))


def test_400_as_success_fires_when_the_agent_saw_the_400_and_says_it_is_done():
    s = Stream()
    _checked_with_curl(s, 400, ERROR_400)
    s.next_turn().say("The endpoint answers with JSON from Stripe, so the migration is complete.")
    found = fired(s.end(), "400-as-success")
    assert len(found) == 1
    f = found[0]
    assert f.turn == 2 and "POST /v1/checkout/sessions answered 400" in f.message
    assert {"request_id": "req_1"} in f.evidence and {"call_id": "call_1"} in f.evidence


def test_400_as_success_is_quiet_after_a_later_2xx_for_the_same_operation():
    s = Stream()
    _checked_with_curl(s, 400, ERROR_400)
    s.next_turn().call("replace_in_file", "ok", path="app.py", old_text="embedded", new_text="embedded_page")
    _checked_with_curl(s, 200, '{"clientSecret": "cs_test_secret"} HTTP 200')
    s.next_turn().say("The migration is complete.")
    assert fired(s.end(), "400-as-success") == []


def test_400_as_success_at_the_end_when_the_app_swallowed_a_4xx_nothing_later_fixed():
    s = Stream()  # the app's refund failed (a grader's scenario, say); no tool output showed it to the agent
    s.next_turn().call("shell", "HTTP 200", command="python seed.py",
                       requests=(s.request("POST", "/v1/refunds", 400, body="metadata[booking]=b1"),))
    s.add(s.request("POST", "/v1/refunds", 200, body="metadata[booking]=b2"))  # another booking's refund is no fix
    s.next_turn().say("All done.")
    found = fired(s.end(), "400-as-success")
    assert len(found) == 1 and found[0].turn == 1
    assert "agent ended while the app's POST /v1/refunds answered 400" in found[0].message
    assert found[0].evidence[0] == {"request_id": "req_1"}


def test_400_as_success_is_quiet_on_declines_fixed_requests_honest_agents_and_other_ends():
    declined = Stream()
    declined.next_turn().add(declined.request("POST", "/v1/payment_intents", 402, error_type="card_error"))
    declined.add(declined.request("GET", "/v1/customers/cus_gone", 404))
    declined.next_turn().say("Done.")
    assert fired(declined.end(), "400-as-success") == []
    fixed = Stream()
    fixed.next_turn().add(fixed.request("POST", "/v1/refunds", 400, body="metadata[booking]=b1"))
    fixed.next_turn().add(fixed.request("POST", "/v1/refunds", 200, body="metadata[booking]=b1"))
    assert fired(fixed.end(), "400-as-success") == []
    honest = Stream()  # it saw the error, says so, and runs out of turns
    _checked_with_curl(honest, 400, ERROR_400)
    honest.next_turn().say("Stripe rejects ui_mode; I could not finish the migration.")
    assert fired(honest.end("max_turns"), "400-as-success") == []


def test_400_as_success_reads_tool_outputs_when_there_is_no_request_log():
    s = Stream()
    s.next_turn().call("view_file", 'raise StripeError("x")  # "type": "invalid_request_error"', path="app.py")
    s.next_turn().call("shell", '{"error": {"type": "invalid_request_error", "message": "No such price"}}',
                       command="curl -X POST $APP_URL/api/checkout")
    s.next_turn().say("Done: checkout works.")
    found = fired(s.end(), "400-as-success")
    assert [f.evidence[0] for f in found] == [{"call_id": "call_2"}]  # the file view is code, not an answer


# ---------------------------------------------------------------- unverified finish

def test_unverified_finish_fires_on_failing_or_pending_verdicts_at_the_agents_end():
    s = Stream()
    s.next_turn().call("shell", "HTTP 200", command="curl $APP_URL/health")
    s.verdict("paid", "fail").verdict("refund", "pending").verdict("shape", "pass")
    found = fired(s.end(), "unverified-finish")
    assert len(found) == 1 and "2 of 3 criteria not passing: paid failing, refund pending" in found[0].message


def test_unverified_finish_fires_when_the_last_edit_was_never_exercised():
    s = Stream()
    s.next_turn().call("shell", "HTTP 200", command="curl $APP_URL/")
    s.next_turn().call("create_file", "wrote", path="app.py", content="...")
    s.next_turn().say("Finished.")
    found = fired(s.end(), "unverified-finish")
    assert len(found) == 1 and "after its last code change (create_file app.py)" in found[0].message
    assert {"call_id": "call_2"} in found[0].evidence


def test_unverified_finish_is_quiet_after_a_check_or_when_the_agent_did_not_choose_to_end():
    checked = Stream()
    checked.next_turn().call("create_file", "wrote", path="app.py", content="...")
    checked.next_turn().call("browser_navigate", "page: 'Shop'", url="http://127.0.0.1:5000/")
    checked.verdict("paid", "pass")
    assert fired(checked.end(), "unverified-finish") == []
    app_called = Stream()  # the app talking to Stripe after the edit is an end-to-end check too
    app_called.next_turn().call("create_file", "wrote", path="app.py", content="...")
    app_called.next_turn().add(app_called.request("POST", "/v1/checkout/sessions", source="browser"))
    assert fired(app_called.end(), "unverified-finish") == []
    ran_out = Stream()
    ran_out.next_turn().call("create_file", "wrote", path="app.py", content="...")
    ran_out.verdict("paid", "fail")
    assert fired(ran_out.end("max_turns"), "unverified-finish") == []


# ---------------------------------------------------------------- lost focus

def test_lost_focus_fires_on_input_into_an_element_that_cannot_take_it():
    s = Stream()
    s.next_turn().call("browser_fill", "filling 'Card number' failed: Element is not visible", is_error=True,
                       field="Card number", value="4242")
    s.next_turn().call("browser_fill", "filled the field labelled 'Card number'", field="Card number", value="4242")
    found = fired(s.end("max_turns"), "lost-focus")
    assert len(found) == 1 and found[0].turn == 1 and "'Card number'" in found[0].message


def test_lost_focus_fires_when_typing_goes_to_whatever_had_focus_after_a_navigation():
    s = Stream()
    s.next_turn().call("browser_navigate", "page: 'Pay'", url="http://127.0.0.1/pay")
    s.next_turn().call("browser_type", "typed 4 characters into the focused element", text="4242")
    assert len(fired(s.end("max_turns"), "lost-focus")) == 1


def test_lost_focus_fires_when_the_agent_gives_up_soon_after_a_page_error():
    s = Stream()
    s.next_turn().call("browser_click", "clicking 'Pay' failed: Timeout 5000ms exceeded", is_error=True, target="Pay")
    s.next_turn().say("The payment page does not work; stopping here.")
    found = fired(s.end(), "lost-focus")
    assert len(found) == 1 and "gave up 1 turn(s) after a failed browser_click" in found[0].message


def test_lost_focus_is_quiet_when_the_agent_recovers_from_a_page_error():
    s = Stream()
    s.next_turn().call("browser_click", "clicking 'Pay' failed: Timeout", is_error=True, target="Pay")
    s.next_turn().call("browser_click", "clicked 'Pay now'", target="Pay now")
    s.next_turn().call("browser_type", "typed 4 characters into the field labelled 'Card'", text="4242", field="Card")
    assert fired(s.end(), "lost-focus") == []


def _typed(s: Stream, field: str, focus: str) -> None:
    """A browser_type into ``field`` whose result says where the keyboard was afterwards (as tools/browser.py does)."""
    s.next_turn().call("browser_type", f"typed 15 characters into field labelled {field!r}\nfocus after typing: {focus}"
                       "\npage: 'Checkout' at http://127.0.0.1/checkout", field=field, text="510 Townsend St")


def test_lost_focus_fires_on_typing_the_page_moved_to_another_element_and_never_refilled():
    s = Stream()
    _typed(s, "Address line 1", "moved to textbox 'Search addresses' (<input id=addr-search>): the keys after that "
                                "went there")
    _typed(s, "Email", "lost (nothing has focus): the keys after that went nowhere")
    s.next_turn().call("browser_click", "clicked button named 'Continue'", target="Continue")
    found = fired(s.end(), "lost-focus")
    assert [(f.turn, f.evidence[0]["call_id"]) for f in found] == [(1, "call_1"), (2, "call_2")]
    assert "'Address line 1'" in found[0].message and "'Search addresses'" in found[0].message
    assert "went nowhere" in found[1].message


def test_lost_focus_is_quiet_when_typing_kept_focus_or_the_field_was_refilled():
    s = Stream()
    _typed(s, "Address line 1", "moved to textbox 'Search addresses' (<input id=addr-search>): the keys after that "
                                "went there")
    s.next_turn().call("browser_press", "pressed Escape on the focused element", key="Escape")
    s.next_turn().call("browser_fill", "filled field labelled 'Address line 1'", field="address line 1",
                       value="510 Townsend St")
    _typed(s, "Email", "lost (nothing has focus): the keys after that went nowhere")
    _typed(s, "Email", "still in field labelled 'Email'")  # typed again, and this time it stayed
    _typed(s, "City", "still in field labelled 'City'")
    assert fired(s.end(), "lost-focus") == []


def test_lost_focus_is_not_repaired_by_a_failed_refill():
    s = Stream()
    _typed(s, "Name on card", "moved to textbox 'Sign up with your email' (<input id=banner-email>): the keys "
                              "after that went there")
    s.next_turn().call("browser_fill", "filling 'Name on card' failed: Timeout", is_error=True, field="Name on card",
                       value="Jenny Rosen")
    s.next_turn().call("browser_click", "clicked button named 'Pay now'", target="Pay now")
    found = fired(s.end("max_turns"), "lost-focus")
    assert len(found) == 1 and found[0].turn == 1 and "'Sign up with your email'" in found[0].message


# ---------------------------------------------------------------- retry without idempotency

def test_retry_without_idempotency_fires_on_the_same_create_twice_without_a_key():
    s = Stream()
    body = "amount=2000&currency=usd"
    s.next_turn().add(s.request("POST", "/v1/payment_intents", 500, body=body))
    s.add(s.request("POST", "/v1/payment_intents", 200, body="currency=usd&amount=2000"))
    found = fired(s.end(), "retry-without-idempotency")
    assert len(found) == 1 and "after it failed" in found[0].message
    assert found[0].evidence == [{"request_id": "req_1"}, {"request_id": "req_2"}]


def test_retry_without_idempotency_fires_on_duplicates_made_under_a_fresh_key_per_attempt():
    s = Stream()
    first = s.request("POST", "/v1/payment_intents", 200, body="amount=2000&metadata[order_id]=ord_1", key="a1")
    second = s.request("POST", "/v1/payment_intents", 200, body="amount=2000&metadata[order_id]=ord_1", key="b2")
    first.object_ids, second.object_ids = ["pi_1"], ["pi_2"]
    s.next_turn().add(first)
    s.add(second)
    found = fired(s.end(), "retry-without-idempotency")
    assert len(found) == 1 and "different Idempotency-Keys: two objects (pi_1, pi_2)" in found[0].message


def test_retry_without_idempotency_is_quiet_with_keys_other_params_graders_or_far_apart():
    s = Stream()
    s.next_turn().add(s.request("POST", "/v1/payment_intents", 500, body="amount=2000", key="order-1"))
    replayed = [s.request("POST", "/v1/payment_intents", 200, body="amount=2000", key=k) for k in ("order-1", "x")]
    replayed[0].object_ids = replayed[1].object_ids = ["pi_1"]  # the second key got the same object back
    for req in replayed:
        s.add(req)
    s.add(s.request("POST", "/v1/payment_intents", 200, body="amount=3000"))
    s.add(s.request("POST", "/v1/customers", 200, body="email=a", source="grader"))
    s.add(s.request("POST", "/v1/customers", 200, body="email=a", source="grader"))
    s.add(s.request("POST", "/v1/payment_intents/pi_1/confirm", 200))
    s.add(s.request("POST", "/v1/payment_intents/pi_1/confirm", 200))
    s.add(s.request("POST", "/v1/checkout/sessions", 200, body="mode=payment"))
    s.next_turn().next_turn().next_turn().add(s.request("POST", "/v1/checkout/sessions", 200, body="mode=payment"))
    assert fired(s.end(), "retry-without-idempotency") == []


# ---------------------------------------------------------------- scope or auth error

def test_scope_or_auth_error_fires_when_a_401_or_403_is_never_followed_by_success():
    s = Stream()
    s.next_turn().add(s.request("POST", "/v1/refunds", 403, error_type="invalid_request_error",
                                response='{"error": {"message": "The provided key does not have the required permissions"}}'))
    s.add(s.request("GET", "/v1/customers", 401, source="agent"))
    found = fired(s.end(), "scope-or-auth-error")
    assert [f.evidence[0] for f in found] == [{"request_id": "req_1"}, {"request_id": "req_2"}]
    assert all(f.severity == "error" for f in found)


def test_scope_or_auth_error_is_quiet_once_the_same_source_succeeds():
    s = Stream()
    s.next_turn().add(s.request("POST", "/v1/refunds", 403))
    s.next_turn().add(s.request("POST", "/v1/refunds", 200))
    s.add(s.request("GET", "/v1/charges/ch_1", 401, source="grader"))  # graders probe on purpose
    assert fired(s.end(), "scope-or-auth-error") == []


def test_scope_or_auth_error_reads_stripes_wording_without_a_request_log():
    s = Stream()
    s.next_turn().call("shell", "stripe.error.AuthenticationError: Invalid API Key provided: sk_test_****",
                       command="python pay.py")
    assert len(fired(s.end(), "scope-or-auth-error")) == 1


# ---------------------------------------------------------------- secret exposure

@pytest.mark.parametrize("path, content, fires", [
    ("static/checkout.js", "const stripe = Stripe('sk_test_[REDACTED]');", True),
    ("templates/checkout.html", "<script>var key = '{{ STRIPE_SECRET_KEY }}'</script>", True),
    ("static/checkout.js", "const stripe = Stripe('pk_test_[REDACTED]');", False),
    ("app.py", "stripe.api_key = os.environ['STRIPE_SECRET_KEY']", False),
    ("server.js", "const stripe = require('stripe')(process.env.STRIPE_SECRET_KEY)", False),
])
def test_secret_exposure_in_front_end_files(path, content, fires):
    s = Stream()
    s.next_turn().call("create_file", "wrote", path=path, content=content)
    assert len(fired(s.end(), "secret-exposure")) == (1 if fires else 0)


def test_secret_exposure_when_the_browser_page_shows_a_secret_key():
    s = Stream()
    s.next_turn().call("browser_page_text", "Debug: key=sk_live_[REDACTED]")
    s.next_turn().call("shell", "STRIPE_SECRET_KEY=sk_test_[REDACTED]", command="env")  # the agent's own shell
    found = fired(s.end(), "secret-exposure")
    assert len(found) == 1 and found[0].turn == 1


# ---------------------------------------------------------------- registry and runner

def test_every_registered_detector_loads_and_names_itself():
    detectors = create_detectors()
    assert [d.name for d in detectors] == list(DETECTORS)
    with pytest.raises(UserError, match="unknown detector 'nope'"):
        create_detectors(["nope"])


def test_a_clean_episode_fires_nothing_and_recorded_findings_win_over_detecting_again():
    s = Stream()
    s.next_turn().call("create_file", "wrote", path="app.py", content="...")
    s.next_turn().call("shell", '{"id": "cs_1"} HTTP 200', command="curl -X POST $APP_URL/api/checkout",
                       requests=(s.request("POST", "/v1/checkout/sessions", 200, key="k1"),))
    s.verdict("paid", "pass")
    s.next_turn().say("Done: the checkout works.")
    events = s.end()
    assert fired(events) == []
    recorded = Finding(seq=99, turn=1, detector="lost-focus", message="recorded")
    assert findings_of([*events, recorded]) == [recorded]


def test_operations_and_creates_read_stripe_paths():
    assert operation("POST", "/v1/payment_intents/pi_123/confirm") == "POST /v1/payment_intents/{id}/confirm"
    assert operation("GET", "/v1/checkout/sessions/cs_test_1/line_items") == "GET /v1/checkout/sessions/{id}/line_items"
    assert operation("GET", "/v1/products/harbor_sencha") == "GET /v1/products/{id}"  # a custom id
    assert is_create("POST", "/v1/checkout/sessions") and is_create("POST", "/v1/customers")
    assert not is_create("POST", "/v1/customers/cus_1") and not is_create("GET", "/v1/customers")
