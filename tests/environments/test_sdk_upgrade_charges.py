"""sdk-upgrade-charges: the grader's comparison and recording proxy, its failure modes, and validate."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from stripebench_tui.core.events import FAIL
from stripebench_tui.envs.catalog import find_environment
from stripebench_tui.grading import GradingContext, load_grader

from .helpers import load_grader_module, validate_failing

ENV = find_environment("sdk-upgrade-charges")
GRADER = load_grader(ENV)


G = load_grader_module(ENV, "sdk_upgrade_charges.py", "sdk_grader_under_test")

CHARGE = {"id": "ch_1", "amount_captured": 1999, "amount_refunded": 0, "paid": True, "captured": True, "refunded": False,
          "receipt_url": "https://pay.stripe.com/receipts/x", "created": 1700000000,
          "payment_method_details": {"card": {"brand": "visa", "last4": "4242", "exp_month": 12, "exp_year": 2034}}}
OLD_PI = {"id": "pi_1", "metadata": {"order": "A-1"}, "status": "succeeded", "amount": 1999, "amount_received": 1999,
          "currency": "usd", "charges": {"object": "list", "data": [CHARGE]}}


def test_differences_name_missing_extra_changed_and_retyped_fields():
    expected = G.old_payment(OLD_PI)
    assert G.differences(expected, json.loads(json.dumps(expected))) == []
    actual = json.loads(json.dumps(expected))
    del actual["receipt"]["receipt_url"]
    actual["receipt"]["card"]["last4"] = "0000"
    actual["amount"] = 1999.0  # same value, another JSON type: a client parsing ints would notice
    actual["extra"] = None
    diffs = G.differences(expected, actual)
    assert any(d.startswith("receipt.receipt_url: missing") for d in diffs)
    assert any(d.startswith("receipt.card.last4: expected '4242'") for d in diffs)
    assert any(d.startswith("amount: expected 1999") for d in diffs)
    assert any(d.startswith("extra: unexpected field") for d in diffs)
    assert len(diffs) == 4


def test_old_shapes_follow_the_original_service():
    assert G.old_payment({**OLD_PI, "charges": {"data": []}})["receipt"] is None
    receipt = G.old_receipt_response(OLD_PI)
    assert receipt["payment"] == "pi_1" and receipt["charge"] == "ch_1" and receipt["card"]["last4"] == "4242"
    # the oracle's service answers exactly these keys (checked against the workspace README's contract)
    assert set(receipt) == {"payment", "amount", "currency", "charge", "amount_captured", "amount_refunded", "paid",
                            "captured", "refunded", "receipt_url", "card", "created"}


def test_the_recording_proxy_forwards_and_records_api_and_sdk_versions():
    seen = {}

    class Upstream(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            seen["body"] = self.rfile.read(int(self.headers["content-length"]))
            seen["version"] = self.headers.get("stripe-version")
            payload = b'{"id": "pi_x"}'
            self.send_response(200)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    upstream = ThreadingHTTPServer(("127.0.0.1", 0), Upstream)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    proxy = G.RecordingProxy(f"http://127.0.0.1:{upstream.server_address[1]}")
    try:
        response = httpx.post(proxy.url + "/v1/payment_intents?x=1", content=b"amount=50",
                              headers={"Stripe-Version": "2020-08-27", "User-Agent": "Stripe/v1 PythonBindings/4.2.0"})
        assert response.json() == {"id": "pi_x"}
        assert seen == {"body": b"amount=50", "version": "2020-08-27"}
        [sent] = proxy.requests()
        assert (sent.method, sent.path, sent.stripe_version, sent.sdk_version, sent.status) == (
            "POST", "/v1/payment_intents", "2020-08-27", "4.2.0", 200)
    finally:
        proxy.close()
        upstream.shutdown()
        upstream.server_close()


def test_current_versions_accept_the_graders_sdk_and_a_current_pin_but_not_an_old_one():
    import stripe

    assert G.current_api_versions(None) == {stripe.api_version}
    assert "2020-08-27" not in G.current_api_versions("2020-08-27")
    assert "2027-01-01.zzz" in G.current_api_versions("2027-01-01.zzz")
    assert G.major("16.1.0") == 16 and G.major(None) == 0 and G.major("unknown") == 0


def test_a_service_that_cannot_start_fails_every_criterion_rather_than_erroring(tmp_path):
    (tmp_path / "run.sh").write_text("exit 3\n")
    ctx = GradingContext(env=ENV, episode_dir=tmp_path, workspace=tmp_path, stripe_api_base="http://127.0.0.1:9",
                         stripe_api_key="sk_test_unused")
    results = G._results(ctx)
    assert {o.status for o in results.values()} == {FAIL}
    assert "did not become healthy" in results["current SDK"].summary
    assert G._results(ctx) is results  # one run per grading context


@pytest.mark.drill
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_validate_oracle_passes_noop_scores_zero_and_each_mutant_fails_for_its_own_reason():
    failing = validate_failing(ENV)
    responses = {"payment responses", "receipt responses", "error responses"}
    assert failing["oracle"] == set()
    assert failing["no-op"] == {c.name for c in GRADER.criteria}
    assert failing["mutant old-api-version-kept"] == {"current API version"} | responses
    assert failing["mutant reads-charges"] == responses
    assert failing["mutant expand-400-as-empty"] == responses
    assert failing["mutant header-only"] == {"current SDK"} | responses
