"""StripeProxy: forwards to the Stripe backend, records what graders judge by, and injects planned faults."""

from __future__ import annotations

import base64
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from stripebench_tui.grading.app_copy import free_port
from stripebench_tui.grading.stripe_proxy import StripeProxy, api_key, key_kind, sdk_version


class Upstream:
    """A stand-in Stripe: answers {"id": "pi_<n>"} with a request-id, and records what reached it."""

    def __init__(self) -> None:
        self.got: list[dict] = []
        outer = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _any(self):
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                outer.got.append({"method": self.command, "path": self.path, "body": body,
                                  "headers": {k.lower(): v for k, v in self.headers.items()}})
                payload = json.dumps({"id": f"pi_{len(outer.got)}"}).encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(payload)))
                self.send_header("Request-Id", f"req_{len(outer.got)}")
                self.send_header("X-Not-Returned", "1")
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_DELETE = _any

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def upstream():
    u = Upstream()
    yield u
    u.close()


@pytest.fixture
def proxy(upstream):
    p = StripeProxy(upstream.url, fault_path="/v1/payment_intents", restricted_to="/v1/payment_intents")
    yield p
    p.close()


def post(proxy, path="/v1/payment_intents", key="sk_test_abc", **headers):
    return httpx.post(proxy.url + path, content=b"amount=50&metadata[order_id]=o1",
                      headers={"Authorization": f"Bearer {key}", "Content-Type": "application/x-www-form-urlencoded",
                               **headers}, timeout=10)


def test_a_request_is_forwarded_with_its_query_and_recorded(proxy, upstream):
    response = post(proxy, "/v1/payment_intents?expand[]=latest_charge", **{
        "Idempotency-Key": "k1", "Stripe-Version": "2020-08-27", "User-Agent": "Stripe/v1 PythonBindings/4.2.0",
        "X-Private": "not forwarded"})
    assert response.status_code == 200 and response.json() == {"id": "pi_1"}
    assert response.headers["request-id"] == "req_1" and "x-not-returned" not in response.headers
    [got] = upstream.got
    assert got["path"] == "/v1/payment_intents?expand[]=latest_charge" and got["body"] == b"amount=50&metadata[order_id]=o1"
    assert got["headers"]["idempotency-key"] == "k1" and got["headers"]["stripe-version"] == "2020-08-27"
    assert "x-private" not in got["headers"]
    [seen] = proxy.requests()
    assert (seen.method, seen.path, seen.key_kind, seen.idempotency_key, seen.stripe_version, seen.sdk_version) == (
        "POST", "/v1/payment_intents", "sk_test", "k1", "2020-08-27", "4.2.0")
    assert (seen.action, seen.status, seen.object_id, seen.form["metadata[order_id]"]) == ("pass", 200, "pi_1", "o1")


@pytest.mark.parametrize("fault", ["500", "503", "429"])
def test_an_injected_error_is_answered_without_reaching_stripe_then_the_plan_moves_on(proxy, upstream, fault):
    proxy.plan = [fault]
    response = post(proxy)
    assert response.status_code == int(fault) and "injected by the grader's proxy" in response.json()["error"]["message"]
    assert upstream.got == []
    assert post(proxy).status_code == 200 and len(upstream.got) == 1
    assert [s.action for s in proxy.requests()] == [fault, "pass"]


def test_a_lost_response_reaches_stripe_but_the_app_sees_500(proxy, upstream):
    proxy.plan = ["lost"]
    response = post(proxy)
    assert response.status_code == 500 and len(upstream.got) == 1
    [seen] = proxy.requests()
    assert (seen.status, seen.object_id) == (500, "pi_1")  # the grader still knows what Stripe created


def test_down_answers_503_until_lifted_and_a_delay_holds_only_its_own_call(proxy, upstream):
    proxy.down = True
    assert [post(proxy).status_code for _ in range(2)] == [503, 503] and upstream.got == []
    proxy.down = False
    proxy.plan = ["delay:3"]
    slow = threading.Thread(target=post, args=(proxy,))
    slow.start()
    deadline = time.monotonic() + 30  # ends only a stuck proxy
    while not any(r.action == "delay:3" for r in proxy.requests()):  # the delayed call has arrived and waits
        assert time.monotonic() < deadline, "the delayed request never reached the proxy"
        time.sleep(0.01)
    assert post(proxy).status_code == 200  # served while the other waits…
    slow.join()
    delayed, other = [r for r in proxy.requests() if r.action in ("delay:3", "pass")]
    assert other.answered < delayed.answered  # …and answered first
    assert delayed.answered - delayed.t >= 3 and len(upstream.got) == 2


def test_faults_apply_only_to_matching_requests(proxy, upstream):
    proxy.down = True
    assert httpx.get(proxy.url + "/v1/payment_intents/pi_1", headers={"Authorization": "Bearer sk_test_a"}).status_code == 200
    assert post(proxy, "/v1/customers").status_code == 200
    assert post(proxy).status_code == 503


def test_an_exact_fault_path_leaves_the_paths_under_it_alone(upstream):
    with StripeProxy(upstream.url, fault_path="/v1/invoices", fault_exact=True, down=True) as exact:
        assert post(exact, "/v1/invoices/in_1/finalize").status_code == 200
        assert post(exact, "/v1/invoices").status_code == 503
    assert [r.action for r in exact.requests()] == ["pass", "down"]


def test_a_restricted_key_is_refused_outside_its_scope_like_stripe_does(proxy, upstream):
    refused = post(proxy, "/v1/customers", key="rk_test_abc")
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "permission_error"
    assert post(proxy, key="rk_test_abc").status_code == 200
    assert [(s.key_kind, s.action) for s in proxy.requests()] == [("rk_test", "refused"), ("rk_test", "pass")]
    assert len(upstream.got) == 1


def test_without_a_scope_restricted_keys_pass_and_an_unreachable_stripe_is_502(upstream):
    with StripeProxy(upstream.url) as open_proxy:
        assert post(open_proxy, "/v1/customers", key="rk_test_abc").status_code == 200
    with StripeProxy(f"http://127.0.0.1:{free_port()}") as dead:
        response = post(dead)
        assert response.status_code == 502 and "could not reach Stripe" in response.json()["error"]["message"]
    with pytest.raises(httpx.ConnectError):  # closed means closed
        post(dead)


def test_key_and_sdk_readers():
    basic = base64.b64encode(b"rk_live_xyz:").decode()
    assert api_key("Bearer sk_test_1") == "sk_test_1" and api_key(f"Basic {basic}") == "rk_live_xyz"
    assert api_key("Basic !!!") == "" and api_key("") == ""
    assert (key_kind("rk_test_1"), key_kind("sk_live_2"), key_kind("")) == ("rk_test", "sk_live", "none")
    assert sdk_version("Stripe/v1 PythonBindings/16.1.0") == "16.1.0" and sdk_version("curl/8") is None


def test_faults_last_for_their_block_only_also_when_it_raises(proxy, upstream):
    with proxy.faults(["500"], down=True):
        assert [post(proxy).status_code for _ in range(2)] == [500, 503]
    assert post(proxy).status_code == 200
    with pytest.raises(RuntimeError), proxy.faults(["429", "500"], down=True):
        raise RuntimeError("a scenario failed half-way")
    assert (proxy.plan, proxy.down) == ([], False) and post(proxy).status_code == 200


def test_a_held_request_goes_on_only_after_a_second_one_was_answered_upstream(proxy, upstream):
    answered: dict[str, str] = {}  # by sender: which of the two returns first to its client is not ordered
    with proxy.holding() as hold:
        first = threading.Thread(target=lambda: answered.update(held=post(proxy).json()["id"]))
        first.start()
        assert hold.reached.wait(10)
        assert upstream.got == [] and not hold.overlapped  # held: Stripe has not seen it
        answered["duplicate"] = post(proxy).json()["id"]  # the duplicate is forwarded at once...
        first.join(10)
    # ...and the held one reaches Stripe only after the duplicate's answer (Stripe numbers them in arrival order)
    assert answered == {"duplicate": "pi_1", "held": "pi_2"} and hold.overlapped
    assert [s.action for s in proxy.requests()] == ["hold", "pass"]
    assert post(proxy).json()["id"] == "pi_3"  # outside the block nothing is held


def test_a_held_request_is_released_by_the_grader_or_after_the_hold_limit(proxy, upstream):
    with proxy.holding() as hold:
        first = threading.Thread(target=post, args=(proxy,))
        first.start()
        assert hold.reached.wait(10)
        hold.release()  # e.g. the app answered the duplicate itself, without calling Stripe
        first.join(10)
    assert len(upstream.got) == 1 and not hold.overlapped
    proxy.hold_limit = 0.3  # an app that never sends a second request is not held forever
    with proxy.holding() as hold:
        start = time.monotonic()
        assert post(proxy).status_code == 200
    assert 0.3 <= time.monotonic() - start and len(upstream.got) == 2
