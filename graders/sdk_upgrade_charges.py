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

import json
import os
import re
import secrets
import signal
import socket
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable

import httpx

from stripebench_tui.grading import Criterion, Grader, Outcome, failed, passed
from stripebench_tui.grading.context import GradingUnavailable
from stripebench_tui.grading.criteria import error_outcome

REAL_STRIPE = "https://api.stripe.com"
OLD_API_VERSION = "2020-08-27"  # what the service pinned before the task
LATEST_CHARGE_SINCE = "2022-11-15"  # PaymentIntent.charges was replaced by latest_charge
MIN_SDK_MAJOR = 16
APP_START_TIMEOUT = 60.0
_UA_VERSION = re.compile(r"PythonBindings/(\d+(?:\.\d+)*)")
_FORWARD = ("authorization", "idempotency-key", "stripe-version", "content-type", "stripe-account", "user-agent",
            "x-stripe-client-user-agent")


@dataclass
class Sent:
    """One request the service sent to Stripe through the proxy."""

    method: str
    path: str
    stripe_version: str | None
    sdk_version: str | None  # from the User-Agent's PythonBindings/x.y.z
    status: int = 0


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up is not worth a traceback."""


@dataclass
class RecordingProxy:
    """A threaded HTTP proxy to ``upstream`` that records each request's API and SDK versions."""

    upstream: str
    sent: list[Sent] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._client = httpx.Client(timeout=60, trust_env=False)
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _any(self) -> None:
                proxy._handle(self)

            do_GET = do_POST = do_DELETE = _any

        self._server = _QuietServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="recording-proxy", daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._client.close()

    def requests(self) -> list[Sent]:
        with self._lock:
            return list(self.sent)

    def _handle(self, req: BaseHTTPRequestHandler) -> None:
        length = int(req.headers.get("content-length") or 0)
        body = req.rfile.read(length) if length else b""
        m = _UA_VERSION.search(req.headers.get("user-agent") or "")
        sent = Sent(req.command, req.path.split("?", 1)[0], req.headers.get("stripe-version"), m.group(1) if m else None)
        with self._lock:
            self.sent.append(sent)
        headers = {k: v for k, v in req.headers.items() if k.lower() in _FORWARD}
        try:
            response = self._client.request(req.command, self.upstream.rstrip("/") + req.path, content=body,
                                            headers=headers)
            status, payload = response.status_code, response.content
            back = {k: v for k, v in response.headers.items() if k.lower() in ("request-id", "stripe-version")}
        except httpx.HTTPError as exc:
            status, back = 502, {}
            payload = json.dumps({"error": {"type": "api_error", "message": f"the grader's proxy could not reach "
                                            f"Stripe: {exc}"}}).encode()
        sent.status = status
        req.send_response(status)
        req.send_header("Content-Type", "application/json")
        req.send_header("Content-Length", str(len(payload)))
        for name, value in back.items():
            req.send_header(name, value)
        req.end_headers()
        req.wfile.write(payload)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class AppDown(Exception):
    """The service could not be started for grading (a failing outcome, not a grader error)."""


class ServiceCopy:
    """A second copy of the service: the manifest's command, our port, database and Stripe base."""

    def __init__(self, ctx: Any, stripe_base: str) -> None:
        spec = next((s for s in ctx.env.manifest.services if s.name == "app"), None)
        if spec is None:
            raise GradingUnavailable("the manifest has no 'app' service to start")
        self.tmp = tempfile.TemporaryDirectory(prefix="sdk-upgrade-grader-")
        self.url = f"http://127.0.0.1:{free_port()}"
        env = dict(os.environ)
        env.pop("STRIPE_API_VERSION", None)
        env.update({k: v for k, v in ctx.env_vars.items() if isinstance(v, str)})
        env.update(APP_PORT=self.url.rsplit(":", 1)[1], APP_URL=self.url, STRIPE_API_BASE=stripe_base,
                   DATABASE_PATH=str(Path(self.tmp.name) / "grading.db"), PYTHONUNBUFFERED="1")
        logs = Path(ctx.episode_dir) / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        self.log_path = logs / "grader-app.log"
        self._log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(["bash", "-c", spec.command], cwd=str(ctx.workspace), env=env,
                                     stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        self.http = httpx.Client(base_url=self.url, timeout=60, trust_env=False)
        deadline = time.monotonic() + APP_START_TIMEOUT
        while True:
            try:
                if self.http.get("/health", timeout=2).status_code < 400:
                    return
            except httpx.HTTPError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.close()
                raise AppDown(f"the grader's copy of the service did not become healthy (see {self.log_path})")
            time.sleep(0.2)

    def close(self) -> None:
        self.http.close()
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(5)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.proc.wait(5)
        self._log.close()
        self.tmp.cleanup()


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


class Miss(Exception):
    """A response broke the contract; becomes a failing outcome with this summary and evidence."""

    def __init__(self, summary: str, **evidence: Any) -> None:
        super().__init__(summary)
        self.summary, self.evidence = summary, evidence


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
            self.app = ServiceCopy(ctx, self.proxy.url)
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
    with _LOCK:
        lock = ctx.__dict__.setdefault("_sdk_upgrade_lock", threading.Lock())
    with lock:
        cached = ctx.__dict__.get("_sdk_upgrade_results")
        if cached is not None:
            return cached
        results: dict[str, Outcome] = {}
        try:
            run = Run(ctx)
        except (AppDown, GradingUnavailable) as exc:
            results = {name: failed(f"cannot grade: {exc}") for name, _, _ in CRITERIA}
        except Exception as exc:  # noqa: BLE001 - a broken setup is an error for every criterion
            results = {name: error_outcome(exc) for name, _, _ in CRITERIA}
        else:
            try:
                responses: dict[str, Outcome] = {}
                for names, scenario in (
                        (("payment responses", "receipt responses"), payments),
                        (("error responses",), edge_responses)):
                    try:
                        got = scenario(run)
                        responses.update(got if isinstance(got, dict) else {names[0]: got})
                    except Miss as miss:
                        responses.update({n: failed(miss.summary, **miss.evidence) for n in names})
                    except httpx.HTTPError as exc:
                        responses.update({n: failed(f"the service did not answer: {type(exc).__name__}: {exc}")
                                          for n in names})
                    except Exception as exc:  # noqa: BLE001 - reported as error, never pass
                        responses.update({n: error_outcome(exc) for n in names})
                results.update(upgrade_checks(ctx, run))
                upgraded = all(results[n].status == "pass" for n in UPGRADE)
                for name, outcome in responses.items():
                    if not upgraded and outcome.status == "pass":
                        outcome = failed("the responses are unchanged, but they only count on the upgraded SDK and "
                                         "API version (see the other criteria)", **outcome.evidence)
                    results[name] = outcome
            finally:
                run.close()
        ctx.__dict__["_sdk_upgrade_results"] = results
        return results


_LOCK = threading.Lock()


def _criterion(name: str, weight: float, description: str) -> Criterion:
    return Criterion(name, weight, description, lambda ctx, view: _results(ctx)[name], final_only=True)


GRADER = Grader(
    criteria=tuple(_criterion(*c) for c in CRITERIA),
    description="Starts a copy of the service behind a recording Stripe proxy, checks the SDK it runs and the API "
                "version it sends, and compares its answers for fresh payments with the pre-upgrade ones.",
)
