"""Grader for sdk-upgrade-charges: the receipts service on the current stripe SDK and API version, same responses.

Public means only: the SDK version installed in the service's own venv (its python's
``importlib.metadata``), and what the service sends to Stripe, seen by a small recording proxy the
grader puts in front of the episode's Stripe backend (the emulator or api.stripe.com alike): a second
copy of the service is started with the manifest's command, ``STRIPE_API_BASE`` pointing at the proxy
and its own database file. The proxy reads each request's ``Stripe-Version`` and the SDK version in its
``User-Agent``. The grader then makes fresh payments through the service and compares every response,
field by field, with what the service answered before the upgrade: that is computed from the same
PaymentIntent read at the old API version (where ``charges`` still exists) with the old code's mapping.
Response criteria only count once the service really runs on the current SDK and API version, so the
untouched service scores nothing.
"""

from __future__ import annotations

import os
import secrets
import subprocess
from pathlib import Path
from typing import Any, Callable

import httpx

from stripebench_tui.grading import Grader, Outcome, failed, passed
from stripebench_tui.grading.app_copy import AppCopy
from stripebench_tui.grading.once import once_per_context
from stripebench_tui.grading.scenarios import Miss, run_scenarios, scenario_criterion, with_run
from stripebench_tui.grading.stripe_proxy import StripeProxy

REAL_STRIPE = "https://api.stripe.com"
OLD_API_VERSION = "2020-08-27"  # what the service pinned before the task
LATEST_CHARGE_SINCE = "2022-11-15"  # PaymentIntent.charges was replaced by latest_charge
MIN_SDK_MAJOR = 16
APP_START_TIMEOUT = 120.0  # only ends a copy that never becomes healthy
RecordingProxy = StripeProxy  # records without faults: nothing is ever planned


# ---- what the service answered before the upgrade (the old code's mapping over the old API shape) ----

def old_receipt(charge: dict[str, Any]) -> dict[str, Any]:
    """The ``receipt`` object the service built from ``payment_intent.charges.data[0]``."""
    card = charge["payment_method_details"]["card"]
    return {
        "charge": charge["id"],
        "amount_captured": charge["amount_captured"],
        "amount_refunded": charge["amount_refunded"],
        "paid": charge["paid"],
        "captured": charge["captured"],
        "refunded": charge["refunded"],
        "receipt_url": charge["receipt_url"],
        "card": {"brand": card["brand"], "last4": card["last4"], "exp_month": card["exp_month"],
                 "exp_year": card["exp_year"]},
        "created": charge["created"],
    }


def old_payment(pi: dict[str, Any]) -> dict[str, Any]:
    """POST /payments and POST /payments/<id>/capture as the old service answered them."""
    charges = pi["charges"]["data"]
    return {"id": pi["id"], "order": (pi.get("metadata") or {}).get("order"), "status": pi["status"],
            "amount": pi["amount"], "amount_received": pi["amount_received"], "currency": pi["currency"],
            "receipt": old_receipt(charges[0]) if charges else None}


def old_receipt_response(pi: dict[str, Any]) -> dict[str, Any]:
    """GET /payments/<id>/receipt as the old service answered it for a charged payment."""
    return {"payment": pi["id"], "amount": pi["amount"], "currency": pi["currency"],
            **old_receipt(pi["charges"]["data"][0])}


def differences(expected: Any, actual: Any, path: str = "") -> list[str]:
    """Field-by-field differences (``path: expected X, got Y``), missing and extra keys included."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        out = []
        for key in sorted(set(expected) | set(actual), key=str):
            where = f"{path}.{key}" if path else str(key)
            if key not in actual:
                out.append(f"{where}: missing (expected {expected[key]!r})")
            elif key not in expected:
                out.append(f"{where}: unexpected field ({actual[key]!r})")
            else:
                out.extend(differences(expected[key], actual[key], where))
        return out
    if expected != actual or type(expected) is not type(actual):
        return [f"{path or 'body'}: expected {expected!r}, got {actual!r}"]
    return []


def _json(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return response.text[:300]


class Run:
    """The proxy, the service copy and the Stripe client of one grading run."""

    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx
        self.stripe = ctx.stripe.v1
        self.tag = secrets.token_hex(4)
        self.proxy = RecordingProxy(ctx.stripe_api_base or REAL_STRIPE)
        try:
            self.app = AppCopy(ctx, stripe_api_base=self.proxy.url, unset=("STRIPE_API_VERSION",), noun="service",
                               start_timeout=APP_START_TIMEOUT, http_timeout=60)
        except BaseException:
            self.proxy.close()
            raise

    def close(self) -> None:
        try:
            self.app.close()
        finally:
            self.proxy.close()

    def old_shape(self, pi_id: str) -> dict[str, Any]:
        """The PaymentIntent as the old API version renders it (with ``charges``)."""
        pi = self.stripe.payment_intents.retrieve(pi_id, options={"stripe_version": OLD_API_VERSION})
        return pi.to_dict()

    def call(self, what: str, method: str, url: str, expect_status: int, expected: Callable[[Any], Any],
             **kwargs: Any) -> Any:
        """Call the service; Miss unless it answers ``expect_status`` with exactly ``expected(body)``."""
        response = self.app.http.request(method, url, **kwargs)
        body = _json(response)
        if response.status_code != expect_status:
            raise Miss(f"{what} answered {response.status_code} {str(body)[:200]}; expected {expect_status}",
                       request=f"{method} {url}", status=response.status_code)
        want = expected(body)
        diffs = differences(want, body)
        if diffs:
            raise Miss(f"{what} changed: {'; '.join(diffs[:3])}" + (f" (+{len(diffs) - 3} more)" if len(diffs) > 3
                                                                     else ""), request=f"{method} {url}",
                       differences=diffs[:20])
        return body


def _pi_id(body: Any) -> str:
    if not isinstance(body, dict) or not str(body.get("id", "")).startswith("pi_"):
        raise Miss(f"the answer has no PaymentIntent id: {str(body)[:200]}")
    return body["id"]


# ---- scenarios ----

def payments(run: Run) -> dict[str, Outcome]:
    """Pay, authorise then capture, and read receipts; compare with the old answers."""
    out: dict[str, Outcome] = {}
    ids: list[str] = []
    try:
        paid = run.app.http.post("/payments", json={"order": f"grader-{run.tag}-pay", "amount": 1999})
        body = _json(paid)
        if paid.status_code != 201:
            raise Miss(f"POST /payments answered {paid.status_code} {str(body)[:200]}; expected 201")
        pi_id = _pi_id(body)
        diffs = differences(old_payment(run.old_shape(pi_id)), body)
        if diffs:
            raise Miss(f"POST /payments changed: {'; '.join(diffs[:3])}", differences=diffs[:20], payment_intent=pi_id)
        ids.append(pi_id)
        held = run.app.http.post("/payments", json={"order": f"grader-{run.tag}-hold", "amount": 4250,
                                                    "capture": False})
        body = _json(held)
        if held.status_code != 201:
            raise Miss(f"POST /payments with capture false answered {held.status_code} {str(body)[:200]}")
        held_id = _pi_id(body)
        diffs = differences(old_payment(run.old_shape(held_id)), body)
        if diffs:
            raise Miss(f"POST /payments (capture false) changed: {'; '.join(diffs[:3])}", differences=diffs[:20],
                       payment_intent=held_id)
        run.call("POST /payments/<id>/capture", "POST", f"/payments/{held_id}/capture", 200,
                 lambda _b: old_payment(run.old_shape(held_id)))
        ids.append(held_id)
        out["payment responses"] = passed("POST /payments (captured and held) and the capture answer as before",
                                          payment_intents=ids)
    except Miss as miss:
        out["payment responses"] = failed(miss.summary, **miss.evidence)
    try:
        if not ids:
            raise Miss("no payment could be made through the service, so there is no receipt to read")
        for pi_id in ids:
            run.call("GET /payments/<id>/receipt", "GET", f"/payments/{pi_id}/receipt", 200,
                     lambda _b, i=pi_id: old_receipt_response(run.old_shape(i)))
        out["receipt responses"] = passed("receipts of a paid and a captured payment answer as before",
                                          payment_intents=ids)
    except Miss as miss:
        out["receipt responses"] = failed(miss.summary, **miss.evidence)
    return out


def edge_responses(run: Run) -> Outcome:
    """A payment without a charge (409), an unknown payment (404) and a declined card (402), as before."""
    pending_pi = run.stripe.payment_intents.create({"amount": 1200, "currency": "usd", "payment_method_types": ["card"],
                                                    "metadata": {"order": f"grader-{run.tag}-unpaid"}})
    run.call("the receipt of a payment without a charge", "GET", f"/payments/{pending_pi.id}/receipt", 409,
             lambda _b: {"error": {"message": f"payment {pending_pi.id} has no charge yet",
                                   "status": "requires_payment_method"}})
    missing = f"pi_grader{run.tag}missing"
    run.call("the receipt of an unknown payment", "GET", f"/payments/{missing}/receipt", 404,
             lambda _b: {"error": {"message": f"no payment {missing}"}})

    def declined(body: Any) -> Any:
        message = body.get("error", {}).get("message") if isinstance(body, dict) else None
        return {"error": {"message": message if isinstance(message, str) and message else "(a message)",
                          "code": "card_declined", "decline_code": "generic_decline"}}

    run.call("a declined card", "POST", "/payments", 402, declined,
             json={"order": f"grader-{run.tag}-declined", "amount": 1500, "payment_method": "pm_card_chargeDeclined"})
    return passed("409 without a charge, 404 for an unknown payment and 402 for a decline answer as before",
                  payment_intent=pending_pi.id)


def installed_sdk(ctx: Any) -> tuple[str | None, str | None]:
    """(stripe version, its pinned API version) installed in the workspace's .venv; None when absent."""
    python = Path(ctx.workspace) / ".venv" / "bin" / "python"
    if not python.exists():
        return None, None
    probe = ("import importlib.metadata as m, stripe\n"
             "print(m.version('stripe')); print(getattr(stripe, 'api_version', None))")
    done = subprocess.run([str(python), "-c", probe], capture_output=True, text=True, timeout=60,
                          cwd=str(ctx.workspace), env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    if done.returncode != 0:
        return None, None
    lines = done.stdout.split()
    return (lines[0] if lines else None), (lines[1] if len(lines) > 1 and lines[1] != "None" else None)


def major(version: str | None) -> int:
    try:
        return int(str(version).split(".")[0])
    except ValueError:
        return 0


def current_api_versions(pinned: str | None) -> set[str]:
    """API versions that count as current: this grader's SDK's, and the service's SDK's when that is current."""
    import stripe

    out = {str(stripe.api_version)}
    if pinned and pinned[:10] >= LATEST_CHARGE_SINCE:
        out.add(pinned)
    return out


def upgrade_checks(ctx: Any, run: Run) -> dict[str, Outcome]:
    installed, pinned = installed_sdk(ctx)
    sent = [s for s in run.proxy.requests() if s.path.startswith("/v1/")]
    out: dict[str, Outcome] = {}
    ua = sorted({s.sdk_version or "unknown" for s in sent})
    if not sent:
        out["current SDK"] = out["current API version"] = failed("the service sent no request to STRIPE_API_BASE")
        return out
    if major(installed) >= MIN_SDK_MAJOR and all(major(v) >= MIN_SDK_MAJOR for v in ua):
        out["current SDK"] = passed(f"stripe {installed} in .venv, and the service's requests say {ua}",
                                    installed=installed, user_agents=ua)
    else:
        out["current SDK"] = failed(f"the service runs stripe {installed or 'not installed'} (its requests say "
                                    f"PythonBindings {ua}); expected {MIN_SDK_MAJOR}.x or later",
                                    installed=installed, user_agents=ua)
    versions = sorted({s.stripe_version or "(none: the account default)" for s in sent})
    current = current_api_versions(pinned if major(installed) >= MIN_SDK_MAJOR else None)
    if set(versions) <= current:
        out["current API version"] = passed(f"every request said Stripe-Version {versions[0]}", versions=versions)
    else:
        out["current API version"] = failed(f"the service sent Stripe-Version {versions}; expected "
                                            f"{sorted(current)}", versions=versions, expected=sorted(current))
    return out


CRITERIA: list[tuple[str, float, str]] = [
    ("current SDK", 2, "The service's own virtualenv has stripe-python 16.x or later installed, and the requests it "
     "sends to Stripe come from that SDK."),
    ("current API version", 2, "Every request the service sends to Stripe uses the current API version (the one the "
     "current SDK is pinned to), not the 2020-08-27 pin."),
    ("payment responses", 3, "On the upgraded SDK and API version, POST /payments (captured, and held with capture "
     "false) and POST /payments/<id>/capture answer exactly what the service answered before: the same fields and "
     "values for fresh payments."),
    ("receipt responses", 3, "On the upgraded SDK and API version, GET /payments/<id>/receipt answers exactly as "
     "before: charge id, amounts, card brand and last4, receipt_url…"),
    ("error responses", 2, "On the upgraded SDK and API version, a payment without a charge still answers 409, an "
     "unknown payment 404 and a declined card 402, with the same bodies as before."),
]
UPGRADE = ("current SDK", "current API version")


def _results(ctx: Any) -> dict[str, Outcome]:
    """Run every check once per grading context and remember each criterion's outcome."""
    return once_per_context(ctx, "sdk-upgrade-charges", lambda: with_run(
        ctx, Run, [name for name, _, _ in CRITERIA], lambda run: _checks(ctx, run)))


def _checks(ctx: Any, run: Run) -> dict[str, Outcome]:
    responses = run_scenarios(run, ((("payment responses", "receipt responses"), payments),
                                    (("error responses",), edge_responses)), "service")
    results = upgrade_checks(ctx, run)
    upgraded = all(results[n].status == "pass" for n in UPGRADE)
    for name, outcome in responses.items():
        if not upgraded and outcome.status == "pass":
            outcome = failed("the responses are unchanged, but they only count on the upgraded SDK and "
                             "API version (see the other criteria)", **outcome.evidence)
        results[name] = outcome
    return results


GRADER = Grader(
    criteria=tuple(scenario_criterion(*c, _results) for c in CRITERIA),
    description="Starts a copy of the service behind a recording Stripe proxy, checks the SDK it runs and the API "
                "version it sends, and compares its answers for fresh payments with the pre-upgrade ones.",
)
