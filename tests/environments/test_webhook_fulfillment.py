"""webhook-fulfillment: the grader's signatures and config reading, the seed against the emulator, and validate."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import stripe

from stripebench_emulator import EmulatorServer
from stripebench_tui.core.events import FAIL
from stripebench_tui.envs.catalog import find_environment
from stripebench_tui.grading import GradingContext, load_grader
from stripebench_tui.grading.webhooks import sign

from .helpers import findings_in, load_grader_module, play_for_findings, validate_failing

ENV = find_environment("webhook-fulfillment")
GRADER = load_grader(ENV)


G = load_grader_module(ENV, "webhook_fulfillment.py", "whf_grader_under_test")


def test_the_graders_signatures_verify_with_the_official_sdk_and_only_with_the_right_secret():
    payload = json.dumps({"id": "evt_1", "object": "event", "type": "checkout.session.completed",
                          "data": {"object": {"id": "cs_test_1", "object": "checkout.session"}}})
    event = stripe.Webhook.construct_event(payload, sign(payload, "whsec_right"), "whsec_right")
    assert event.id == "evt_1"
    with pytest.raises(stripe.SignatureVerificationError):
        stripe.Webhook.construct_event(payload, sign(payload, "whsec_wrong"), "whsec_right")
    with pytest.raises(stripe.SignatureVerificationError):
        stripe.Webhook.construct_event(payload + " ", sign(payload, "whsec_right"), "whsec_right")
    with pytest.raises(stripe.SignatureVerificationError):  # too old: Stripe's default tolerance is 300 s
        stripe.Webhook.construct_event(payload, sign(payload, "whsec_right", timestamp=1000), "whsec_right")


def test_env_file_reading_ignores_comments_and_blank_lines(tmp_path):
    (tmp_path / ".env").write_text("# comment\n\nSTRIPE_WEBHOOK_SECRET = whsec_abc\nBROKEN LINE\nA=b=c\n")
    assert G.read_env_file(tmp_path / ".env") == {"STRIPE_WEBHOOK_SECRET": "whsec_abc", "A": "b=c"}
    assert G.read_env_file(tmp_path / "missing") == {}


def test_without_the_seeds_secret_every_criterion_fails_rather_than_erroring(tmp_path):
    ctx = GradingContext(env=ENV, episode_dir=tmp_path, workspace=tmp_path, stripe_api_base="http://127.0.0.1:9",
                         stripe_api_key="sk_test_unused")
    results = G._results(ctx)
    assert {o.status for o in results.values()} == {FAIL}
    assert "STRIPE_WEBHOOK_SECRET" in results["exactly once"].summary


def _seed(workspace: Path, api_base: str, app_url: str) -> str:
    env = {**os.environ, "STRIPE_API_BASE": api_base, "STRIPE_SECRET_KEY": "sk_test_seed", "APP_URL": app_url}
    env.pop("STRIPE_API_VERSION", None)
    done = subprocess.run([sys.executable, str(ENV.path("seed.py"))], cwd=workspace, env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_seed_is_idempotent_and_keeps_one_endpoint_whose_secret_is_in_env(tmp_path):
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "schema.sql").write_text((ENV.workspace / "schema.sql").read_text())
    with EmulatorServer() as emu:
        _seed(workspace, emu.url, "http://127.0.0.1:4242")
        first = G.read_env_file(workspace / ".env")
        _seed(workspace, emu.url, "http://127.0.0.1:4242")
        assert G.read_env_file(workspace / ".env") == first  # reused, not recreated
        (workspace / ".env").unlink()  # secret lost: the old endpoint at our URL is replaced, not duplicated
        _seed(workspace, emu.url, "http://127.0.0.1:4242")
        again = G.read_env_file(workspace / ".env")
        client = stripe.StripeClient("sk_test_seed", base_addresses={"api": emu.url}, max_network_retries=0)
        endpoints = client.v1.webhook_endpoints.list({"limit": 100}).data
    assert first["STRIPE_WEBHOOK_SECRET"].startswith("whsec_")
    assert again["STRIPE_WEBHOOK_ENDPOINT"] != first["STRIPE_WEBHOOK_ENDPOINT"]
    assert [(e.id, e.url) for e in endpoints] == [(again["STRIPE_WEBHOOK_ENDPOINT"], "http://127.0.0.1:4242/webhooks/stripe")]
    import sqlite3

    with sqlite3.connect(workspace / "shop.db") as conn:
        rows = conn.execute("SELECT slug, stripe_price FROM products ORDER BY position").fetchall()
    assert [slug for slug, _ in rows] == ["desk-lamp", "lantern"] and all(p.startswith("price_") for _, p in rows)


@pytest.mark.drill
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_validate_oracle_passes_noop_scores_zero_and_each_mutant_fails_for_its_own_reason():
    failing = validate_failing(ENV)
    assert failing["oracle"] == set()
    assert failing["no-op"] == {c.name for c in GRADER.criteria}
    assert failing["mutant fulfils-on-redirect-too"] == {"not on the redirect", "fulfils from the event", "exactly once"}
    assert failing["mutant no-signature-check"] == {"rejects bad signatures"}
    assert failing["mutant not-idempotent"] == {"exactly once"}
    assert failing["mutant bad-signature-as-200"] == {"rejects bad signatures", "fulfils from the event", "exactly once"}


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.timeout(600)
def test_the_webhook_findings_fire_on_their_mutants_from_the_recorded_deliveries_and_never_on_the_oracle(tmp_path):
    """The grader's deliveries are in each trace (signing, answer, rows added); the detectors judge from them alone."""
    runs = play_for_findings(ENV, ["bad-signature-as-200", "no-signature-check", "not-idempotent"], tmp_path)
    oracle, events = runs["oracle"]
    assert oracle.score == 1.0 and oracle.findings == []
    graders = [e for e in events if e.get("type") == "webhook_delivery" and e["sender"] == "grader"]
    assert [(e["signature"], e["status"]) for e in graders[:3]] == [("invalid", 400), ("none", 400), ("invalid", 400)]
    assert [e["rows_added"] for e in graders[3:]] == [{"fulfillments": 1}, {"fulfillments": 1}, {}, {}, {}]
    # The emulator's own deliveries to the episode's app are recorded too (the oracle's purchase, the grader's).
    assert any(e["sender"] == "stripe" and e["status"] == 200 for e in events if e.get("type") == "webhook_delivery")
    for label in ("mutant bad-signature-as-200", "mutant no-signature-check"):
        outcome, trace = runs[label]
        assert "bad-signature-accepted" in outcome.findings and "webhook-not-idempotent" not in outcome.findings
        messages = [f["message"] for f in findings_in(trace, "bad-signature-accepted")]
        assert any("answered 200 to a wrongly signed" in m for m in messages), messages
        assert any("answered 200 to an unsigned" in m for m in messages), messages
    outcome, trace = runs["mutant not-idempotent"]
    assert "webhook-not-idempotent" in outcome.findings and "bad-signature-accepted" not in outcome.findings
    assert len(findings_in(trace, "webhook-not-idempotent")) == 2  # each event, redelivered, shipped again
