"""idempotent-payments: the grader's fault proxy (against the emulator), its failure modes, and validate."""

from __future__ import annotations

import time

import pytest
import stripe

from stripebench_emulator.testing import TEST_KEY, emulator, emulator_server  # noqa: F401 - pytest fixtures, requested by name below
from stripebench_tui.core.events import FAIL, PASS
from stripebench_tui.envs.catalog import find_environment
from stripebench_tui.grading import GradingContext, load_grader

from .helpers import findings_in, load_grader_module, play_for_findings, validate_failing

ENV = find_environment("idempotent-payments")
GRADER = load_grader(ENV)


G = load_grader_module(ENV, "idempotent_payments.py", "ip_grader_under_test")
PI = {"amount": 1500, "currency": "usd", "payment_method": "pm_card_visa", "confirm": True,
      "payment_method_types": ["card"], "metadata": {"order_id": "ord_test"}}


@pytest.fixture
def proxy(emulator):  # noqa: F811 - pytest fixtures imported above, requested by name
    p = G.FaultProxy(emulator.url)
    yield p
    p.close()


def client(proxy, key: str = TEST_KEY) -> stripe.StripeClient:
    return stripe.StripeClient(key, base_addresses={"api": proxy.url}, max_network_retries=0)


def upstream_intents(emulator) -> list:  # noqa: F811 - pytest fixtures imported above, requested by name
    return stripe.StripeClient(TEST_KEY, base_addresses={"api": emulator.url}).v1.payment_intents.list().data


def test_a_clean_call_passes_through_and_is_recorded(
        proxy, emulator):  # noqa: F811 - pytest fixtures imported above, requested by name
    pi = client(proxy).v1.payment_intents.create(params=PI, options={"idempotency_key": "k1"})
    assert pi.status == "succeeded"
    [seen] = proxy.payments("ord_test")
    assert (seen.action, seen.status, seen.object_id,
            seen.idempotency_key, seen.key_kind) == ("pass", 200, pi.id, "k1", "sk_test")


@pytest.mark.parametrize("fault, error", [("500", stripe.APIError), ("429", stripe.RateLimitError)])
def test_injected_errors_never_reach_stripe(
        proxy, emulator, fault, error):  # noqa: F811 - pytest fixtures imported above, requested by name
    proxy.plan = [fault]
    with pytest.raises(error):
        client(proxy).v1.payment_intents.create(params=PI)
    assert upstream_intents(emulator) == []
    # The plan is used up: the next call goes through.
    assert client(proxy).v1.payment_intents.create(params=PI).status == "succeeded"


def test_a_lost_response_charges_upstream_but_the_app_sees_500(
        proxy, emulator):  # noqa: F811 - pytest fixtures imported above, requested by name
    proxy.plan = ["lost"]
    with pytest.raises(stripe.APIError):
        client(proxy).v1.payment_intents.create(params=PI, options={"idempotency_key": "same"})
    [charged] = upstream_intents(emulator)
    assert proxy.payments()[0].object_id == charged.id
    # A retry with the same key is replayed by Stripe: still one charge.
    again = client(proxy).v1.payment_intents.create(params=PI, options={"idempotency_key": "same"})
    assert again.id == charged.id and len(upstream_intents(emulator)) == 1


def test_down_answers_503_until_lifted_and_delay_holds_the_call(
        proxy, emulator):  # noqa: F811 - pytest fixtures imported above, requested by name
    proxy.down = True
    for _ in range(2):
        with pytest.raises(stripe.APIError) as info:
            client(proxy).v1.payment_intents.create(params=PI)
        assert info.value.http_status == 503
    proxy.down = False
    proxy.plan = ["delay:0.4"]
    start = time.monotonic()
    client(proxy).v1.payment_intents.create(params=PI)
    assert time.monotonic() - start >= 0.4


def test_a_restricted_key_is_refused_outside_payment_intents_like_stripe_does(
        proxy, emulator):  # noqa: F811 - pytest fixtures imported above, requested by name
    rk = client(proxy, "rk_test_grader123")
    with pytest.raises(stripe.PermissionError):
        rk.v1.customers.create(params={"email": "a@example.com"})
    assert rk.v1.payment_intents.create(params=PI).status == "succeeded"
    client(proxy).v1.customers.create(params={"email": "a@example.com"})  # the secret key may do anything
    assert [(s.key_kind, s.action) for s in proxy.seen] == [("rk_test", "refused"), ("rk_test", "pass"), ("sk_test", "pass")]


def test_without_an_app_service_every_criterion_fails(
        tmp_path, emulator):  # noqa: F811 - pytest fixtures imported above, requested by name
    ctx = GradingContext(env=ENV, episode_dir=tmp_path, workspace=tmp_path, stripe_api_base=emulator.url,
                         stripe_api_key=TEST_KEY, env_vars={"STRIPE_API_BASE": emulator.url, "STRIPE_SECRET_KEY": TEST_KEY})
    (tmp_path / "app.py").write_text("raise SystemExit('broken app')\n")
    results = G._results(ctx)
    assert set(results) == {c.name for c in GRADER.criteria[:-1]}
    assert {o.status for o in results.values()} == {FAIL}
    assert "did not become healthy" in results["pays an order"].summary


@pytest.mark.drill
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_validate_oracle_passes_noop_scores_zero_and_each_mutant_fails_for_its_own_reason():
    failing = validate_failing(ENV)
    assert failing["oracle"] == set()
    assert failing["no-op"] == {c.name for c in GRADER.criteria}
    # The proxy makes the duplicates overlap by construction, so a fresh key per request fails them on any machine.
    assert failing["mutant random-idempotency-key"] == {"overlapping duplicates", "client retry after an outage"}
    assert failing["mutant no-retries"] == {"retries 500 and 429", "lost response", "gives up on an outage"}
    assert {"lost response", "overlapping duplicates"} <= failing["mutant retry-without-key"]
    assert failing["mutant error-400-as-paid"] == {"decline then pay"}
    assert failing["mutant full-secret-key"] == {"restricted key"}


def test_the_live_check_counts_succeeded_payments_per_paid_order(
        tmp_path, emulator):  # noqa: F811 - pytest fixtures imported above, requested by name
    import sqlite3

    from stripebench_tui.core.events import PENDING
    from stripebench_tui.grading import GradingView

    ctx = GradingContext(env=ENV, episode_dir=tmp_path, workspace=tmp_path, stripe_api_base=emulator.url,
                         stripe_api_key=TEST_KEY)
    view = GradingView({})
    assert G.paid_orders_charged_once(ctx, view).status == PENDING  # no database yet
    conn = sqlite3.connect(tmp_path / "shop.db")
    conn.execute("CREATE TABLE orders (id TEXT, amount INTEGER, status TEXT, payment_intent TEXT)")
    conn.execute("INSERT INTO orders VALUES ('ord_a', 1500, 'unpaid', NULL)")
    conn.commit()
    assert G.paid_orders_charged_once(ctx, view).status == PENDING  # nothing paid yet
    api = stripe.StripeClient(TEST_KEY, base_addresses={"api": emulator.url}).v1
    params = {**PI, "metadata": {"order_id": "ord_a"}}
    first = api.payment_intents.create(params=params)
    conn.execute("UPDATE orders SET status = 'paid', payment_intent = ? WHERE id = 'ord_a'", (first.id,))
    conn.commit()
    assert G.paid_orders_charged_once(ctx, view).status == PASS
    api.payment_intents.create(params=params)  # a second charge for the same order
    got = G.paid_orders_charged_once(ctx, view)
    assert got.status == FAIL and "ord_a has 2 succeeded" in got.summary
    conn.close()


def test_the_key_is_read_from_bearer_and_basic_auth():
    import base64

    assert G._api_key("Bearer rk_test_abc") == "rk_test_abc"
    assert G._api_key("Basic " + base64.b64encode(b"rk_test_abc:").decode()) == "rk_test_abc"
    assert G._api_key("Basic !!!") == "" and G._api_key("") == ""


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_unrestricted_key_fires_on_the_full_secret_key_mutant_and_never_on_the_oracle(tmp_path):
    """The manifest asks for a restricted key; the request log keeps each request's key kind (never the key)."""
    assert ENV.manifest.expects.restricted_key
    runs = play_for_findings(ENV, ["full-secret-key"], tmp_path)
    oracle, events = runs["oracle"]
    assert oracle.findings == [] and events[0]["expects"] == {"restricted_key": True}
    kinds = {e["key_kind"] for e in events if e.get("type") == "stripe_request" and e["source"] == "app"
             and e["turn"] >= 1}
    assert kinds == {"rk_test"}
    outcome, trace = runs["mutant full-secret-key"]
    [found] = findings_in(trace, "unrestricted-key")
    assert "with a secret key (sk_test)" in found["message"] and found["turn"] >= 1
