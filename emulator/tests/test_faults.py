"""Fault injection under /_emulator/faults: 429/500 answers, added latency, rule matching and consumption."""

from __future__ import annotations

import time

import httpx
import pytest
import stripe

from stripebench_emulator.testing import TEST_KEY


def _fault(emulator, **spec) -> dict:
    reply = httpx.post(f"{emulator.url}/_emulator/faults", json=spec, headers=emulator.control_headers, timeout=5)
    reply.raise_for_status()
    return reply.json()


def test_429_then_success_without_and_with_sdk_retries(emulator):
    no_retry = stripe.StripeClient(TEST_KEY, base_addresses={"api": emulator.url}, max_network_retries=0)
    _fault(emulator, kind="status", status=429, method="POST", path="/v1/customers", count=1)
    with pytest.raises(stripe.RateLimitError) as caught:
        no_retry.v1.customers.create()
    assert caught.value.http_status == 429 and caught.value.error.code == "rate_limit"
    assert no_retry.v1.customers.create().id.startswith("cus_")  # the rule was used up

    retrying = stripe.StripeClient(TEST_KEY, base_addresses={"api": emulator.url}, max_network_retries=2)
    _fault(emulator, kind="status", status=429, method="POST", path="/v1/customers", count=1, should_retry=True)
    created = retrying.v1.customers.create(params={"email": "retry@example.com"})
    assert created.email == "retry@example.com"
    assert len(no_retry.v1.customers.list(params={"email": "retry@example.com"}).data) == 1


def test_500_is_api_error_and_sdk_retries_it(emulator):
    client = stripe.StripeClient(TEST_KEY, base_addresses={"api": emulator.url}, max_network_retries=0)
    _fault(emulator, kind="status", status=500, path="/v1/payment_intents*", count=1)
    with pytest.raises(stripe.APIError) as caught:
        client.v1.payment_intents.list()
    assert caught.value.http_status == 500 and caught.value.error.type == "api_error"
    retrying = stripe.StripeClient(TEST_KEY, base_addresses={"api": emulator.url}, max_network_retries=1)
    _fault(emulator, kind="status", status=500, path="/v1/payment_intents*", count=1)
    assert retrying.v1.payment_intents.list().data == []


def test_faults_match_method_and_path_only(emulator, api):
    _fault(emulator, kind="status", status=500, method="POST", path="/v1/customers", count=2)
    assert api.get("/v1/customers").status_code == 200  # other method
    assert api.post("/v1/products", data={"name": "x"}).status_code == 200  # other path
    assert api.post("/v1/customers").status_code == 500
    listed = httpx.get(f"{emulator.url}/_emulator/faults", headers=emulator.control_headers).json()
    assert listed["rules"][0]["remaining"] == 1
    httpx.delete(f"{emulator.url}/_emulator/faults", headers=emulator.control_headers).raise_for_status()
    assert api.post("/v1/customers").status_code == 200


def _rules(emulator) -> list[dict]:
    return httpx.get(f"{emulator.url}/_emulator/faults", headers=emulator.control_headers, timeout=5).json()["rules"]


def test_latency_applies_to_the_next_n_requests(emulator, api):
    _fault(emulator, kind="latency", latency_ms=300, path="/v1/customers", count=1)
    started = time.monotonic()
    assert api.get("/v1/customers").status_code == 200
    assert time.monotonic() - started >= 0.3  # a lower bound: load can only make it longer
    assert _rules(emulator) == []  # used up, so the next request is not delayed


def test_latency_does_not_hold_up_other_requests(emulator, api):
    import threading

    # An ordering check, not a stopwatch: while the delayed request is still held, another one is answered.
    _fault(emulator, kind="latency", latency_ms=3000, path="/v1/customers", count=1)
    answered = threading.Event()
    slow = threading.Thread(target=lambda: (api.get("/v1/customers"), answered.set()))
    slow.start()
    deadline = time.monotonic() + 30
    while _rules(emulator):  # the rule is taken when the delayed request arrives
        assert time.monotonic() < deadline, "the delayed request never reached the emulator"
        time.sleep(0.01)
    with httpx.Client(base_url=emulator.url, headers={"Authorization": f"Bearer {TEST_KEY}"}) as other:
        assert other.get("/v1/products").status_code == 200
    assert not answered.is_set()
    slow.join(timeout=30)
    assert answered.is_set()


def test_bad_fault_specs_are_400(emulator):
    for spec in ({"kind": "explode"}, {"kind": "status", "status": 200}, {"kind": "latency", "count": 0}):
        assert httpx.post(f"{emulator.url}/_emulator/faults", json=spec, headers=emulator.control_headers).status_code == 400




def test_the_fault_hook_runs_only_while_rules_are_left(emulator, api):
    hooks = emulator.emulator.request_hooks
    assert emulator.emulator.faults.hook not in hooks  # no rule: requests skip the hooks altogether
    _fault(emulator, kind="status", status=500, method="POST", path="/v1/customers", count=1)
    assert emulator.emulator.faults.hook in hooks
    assert api.post("/v1/customers").status_code == 500
    assert emulator.emulator.faults.hook not in hooks  # used up
    assert api.post("/v1/customers").status_code == 200
    _fault(emulator, kind="latency", latency_ms=1, count=5)
    httpx.delete(f"{emulator.url}/_emulator/faults", headers=emulator.control_headers).raise_for_status()
    assert emulator.emulator.faults.hook not in hooks  # cleared
