"""Grader for idempotent-payments: replay payments under injected Stripe faults and count the charges.

Faults must not depend on an emulator-only control, so the grader brings its own: a small HTTP proxy
(``FaultProxy``) in front of the episode's Stripe backend (the emulator or api.stripe.com alike). It starts
a second copy of the agent's app with the manifest's service command, pointed at the proxy through
``STRIPE_API_BASE`` and given its own database file, then pays orders through the app's API while the proxy
answers some Stripe calls with 500/429, loses responses of calls that did reach Stripe, delays calls so
client retries overlap, or plays a full outage. Charges are counted through the Stripe API (succeeded
PaymentIntents whose metadata names the order). The proxy also records which key the app used and, for
restricted keys, refuses anything outside PaymentIntents the way Stripe refuses a key without the permission.
One criterion is also checked live: orders the episode's own app marked paid are charged exactly once.
"""

from __future__ import annotations

import base64
import json
import os
import secrets
import signal
import socket
import subprocess
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable
from urllib.parse import parse_qsl, urlsplit

import httpx

from stripebench_tui.grading import Criterion, Grader, Outcome, failed, passed, pending
from stripebench_tui.grading.context import GradingUnavailable
from stripebench_tui.grading.criteria import error_outcome

REAL_STRIPE = "https://api.stripe.com"
DB = "shop.db"  # the episode app's database, in the workspace
PAYMENT_PATH = "/v1/payment_intents"  # the calls faults apply to (and all a PaymentIntents-only key may reach)
MIN_BACKOFF = 0.1  # seconds between retries of one call that still count as backing off
APP_START_TIMEOUT = 30.0
PAY_TIMEOUT = 60.0
OUTAGE_ANSWER_WITHIN = 30.0  # PROBLEM.md asks for about 20 s; a little slack for slow machines
_FORWARD_HEADERS = ("authorization", "idempotency-key", "stripe-version", "content-type", "stripe-account",
                    "user-agent", "x-stripe-client-user-agent")
_RETURN_HEADERS = ("request-id", "stripe-version", "idempotency-key", "idempotent-replayed", "original-request",
                   "stripe-should-retry")


def _stripe_error(status: int, message: str, type_: str, code: str | None = None) -> bytes:
    body: dict[str, Any] = {"type": type_, "message": message}
    if code:
        body["code"] = code
    return json.dumps({"error": body}).encode()


FAULTS: dict[str, tuple[int, bytes]] = {
    "500": (500, _stripe_error(500, "An unknown error occurred (injected by the grader's proxy).", "api_error")),
    "503": (503, _stripe_error(503, "Stripe is temporarily unavailable (injected by the grader's proxy).", "api_error")),
    "429": (429, _stripe_error(429, "Too many requests hit the API too quickly (injected by the grader's proxy).",
                               "invalid_request_error", "rate_limit")),
}


@dataclass
class Seen:
    """One request the app sent to Stripe through the proxy, and what the proxy did with it."""

    t: float
    method: str
    path: str
    key_kind: str  # "rk_test", "sk_test", … or "none"
    idempotency_key: str | None
    form: dict[str, str]
    action: str  # pass | 500 | 503 | 429 | lost | delay:S | down | refused
    status: int = 0  # what the app got
    object_id: str | None = None  # the id in Stripe's answer (even when the app never saw it)

    @property
    def order_id(self) -> str | None:
        return self.form.get("metadata[order_id]")


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up (an app giving up on a delayed call) is not worth a traceback."""


@dataclass
class FaultProxy:
    """A threaded HTTP proxy to ``upstream`` that injects planned faults into PaymentIntent POSTs."""

    upstream: str
    plan: list[str] = field(default_factory=list)  # actions for the next PaymentIntent POSTs, first first
    down: bool = False  # when no planned action is left: answer every PaymentIntent POST with 503
    seen: list[Seen] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._client = httpx.Client(timeout=60, trust_env=False)
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def _any(self) -> None:
                proxy._handle(self)

            do_GET = do_POST = do_DELETE = _any

        self._server = _QuietServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="fault-proxy", daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._client.close()

    def payments(self, order_id: str | None = None) -> list[Seen]:
        """PaymentIntent POSTs seen so far (for ``order_id`` when given, matched by its metadata)."""
        with self._lock:
            rows = [s for s in self.seen if s.method == "POST" and s.path.startswith(PAYMENT_PATH)]
        return [s for s in rows if order_id is None or s.order_id == order_id]

    def _next_action(self, method: str, path: str, key: str) -> str:
        if key.startswith("rk_") and not path.startswith(PAYMENT_PATH):
            return "refused"
        if method != "POST" or not path.startswith(PAYMENT_PATH):
            return "pass"
        with self._lock:
            if self.plan:
                return self.plan.pop(0)
            return "down" if self.down else "pass"

    def _handle(self, req: BaseHTTPRequestHandler) -> None:
        length = int(req.headers.get("content-length") or 0)
        body = req.rfile.read(length) if length else b""
        path = urlsplit(req.path).path
        key = _api_key(req.headers.get("authorization") or "")
        kind = "_".join(key.split("_")[:2]) if key.count("_") >= 2 else "none"
        form = dict(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))
        action = self._next_action(req.command, path, key)
        seen = Seen(time.monotonic(), req.command, path, kind, req.headers.get("idempotency-key"), form, action)
        with self._lock:
            self.seen.append(seen)
        headers: dict[str, str] = {}
        if action == "refused":
            status, payload = 403, _stripe_error(
                403, f"The provided key '{key[:12]}…' does not have the required permissions for this endpoint "
                f"on account. Having the 'rak_payment_intent_write' permission would allow this request to continue.",
                "invalid_request_error", "permission_error")  # like Stripe for a key without the permission
        elif action in FAULTS:
            status, payload = FAULTS[action]
        elif action == "down":
            status, payload = FAULTS["503"]
        else:
            if action.startswith("delay:"):
                time.sleep(float(action.split(":", 1)[1]))
            try:
                status, payload, headers = self._forward(req, body)
            except httpx.HTTPError as exc:
                status, payload = 502, _stripe_error(502, f"the grader's proxy could not reach Stripe: {exc}", "api_error")
            try:
                seen.object_id = json.loads(payload).get("id")
            except (ValueError, AttributeError):
                pass
            if action == "lost":  # Stripe did the work; the app never hears about it
                status, payload, headers = 500, FAULTS["500"][1], {}
        seen.status = status
        req.send_response(status)
        req.send_header("Content-Type", "application/json")
        req.send_header("Content-Length", str(len(payload)))
        for name, value in headers.items():
            req.send_header(name, value)
        req.end_headers()
        req.wfile.write(payload)

    def _forward(self, req: BaseHTTPRequestHandler, body: bytes) -> tuple[int, bytes, dict[str, str]]:
        headers = {k: v for k, v in req.headers.items() if k.lower() in _FORWARD_HEADERS}
        response = self._client.request(req.command, self.upstream.rstrip("/") + req.path, content=body, headers=headers)
        back = {k: v for k, v in response.headers.items() if k.lower() in _RETURN_HEADERS}
        return response.status_code, response.content, back


def _api_key(authorization: str) -> str:
    """The API key in a Bearer or Basic (``key:``) Authorization header; "" when there is none."""
    scheme, _, value = authorization.strip().partition(" ")
    if scheme.lower() == "basic":
        try:
            return base64.b64decode(value.strip()).decode().partition(":")[0]
        except (ValueError, UnicodeDecodeError):
            return ""
    return value.strip() if scheme.lower() == "bearer" else ""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class AppUnderTest:
    """A second copy of the agent's app: the manifest's service command, our port, database and Stripe base."""

    def __init__(self, ctx: Any, stripe_base: str) -> None:
        spec = next((s for s in ctx.env.manifest.services if s.name == "app"), None)
        if spec is None:
            raise GradingUnavailable("the manifest has no 'app' service to start")
        self.tmp = tempfile.TemporaryDirectory(prefix="idempotent-grader-")
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        env = dict(os.environ)
        env.update({k: v for k, v in ctx.env_vars.items() if isinstance(v, str)})
        env.update(APP_PORT=str(port), APP_URL=self.url, STRIPE_API_BASE=stripe_base,
                   DATABASE_PATH=str(Path(self.tmp.name) / "grading.db"), PYTHONUNBUFFERED="1")
        logs = Path(ctx.episode_dir) / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        self.log_path = logs / "grader-app.log"
        self._log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(["bash", "-c", spec.command], cwd=str(ctx.workspace), env=env,
                                     stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        self.http = httpx.Client(base_url=self.url, timeout=PAY_TIMEOUT, trust_env=False)
        deadline = time.monotonic() + APP_START_TIMEOUT
        while True:
            try:
                if self.http.get("/health", timeout=2).status_code < 400:
                    return
            except httpx.HTTPError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.close()
                raise AppDown(f"the grader's copy of the app did not become healthy (see {self.log_path})")
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


class AppDown(Exception):
    """The app could not be started for grading (a failing outcome, not a grader error)."""


class Miss(Exception):
    """The app broke a rule of the task; becomes a failing outcome with this summary and evidence."""

    def __init__(self, summary: str, **evidence: Any) -> None:
        super().__init__(summary)
        self.summary, self.evidence = summary, evidence


def need(ok: bool, summary: str, **evidence: Any) -> None:
    if not ok:
        raise Miss(summary, **evidence)


class Run:
    """The proxy, the app copy and the Stripe client of one grading run."""

    def __init__(self, ctx: Any) -> None:
        self.stripe = ctx.stripe.v1
        self.proxy = FaultProxy(ctx.stripe_api_base or REAL_STRIPE)
        try:
            self.app = AppUnderTest(ctx, self.proxy.url)
        except BaseException:
            self.proxy.close()
            raise
        self.tag = secrets.token_hex(4)

    def close(self) -> None:
        try:
            self.app.close()
        finally:
            self.proxy.close()

    def order(self, what: str, amount: int = 4200) -> str:
        response = self.app.http.post("/orders", json={"email": f"grader-{self.tag}-{what}@example.com",
                                                        "amount": amount, "currency": "usd"})
        need(response.status_code == 201, f"POST /orders answered {response.status_code}: {response.text[:200]}")
        return response.json()["id"]

    def pay(self, order_id: str, payment_method: str = "pm_card_visa") -> tuple[int, Any, float]:
        """POST /orders/<id>/pay; (status, JSON or text, seconds taken)."""
        start = time.monotonic()
        response = self.app.http.post(f"/orders/{order_id}/pay", json={"payment_method": payment_method})
        took = time.monotonic() - start
        try:
            return response.status_code, response.json(), took
        except ValueError:
            return response.status_code, response.text[:300], took

    def order_status(self, order_id: str) -> str | None:
        response = self.app.http.get(f"/orders/{order_id}")
        return response.json().get("status") if response.status_code == 200 else None

    def charges(self, order_id: str) -> list[Any]:
        """Succeeded PaymentIntents for ``order_id``: those the proxy saw answered plus recent ones listed by the API."""
        ids = {s.object_id for s in self.proxy.payments(order_id) if s.object_id and s.object_id.startswith("pi_")}
        for pi in self.stripe.payment_intents.list(params={"limit": 100}).data:
            if pi.metadata and pi.metadata.to_dict().get("order_id") == order_id:
                ids.add(pi.id)
        intents = [self.stripe.payment_intents.retrieve(i) for i in sorted(ids)]
        return [pi for pi in intents if pi.status == "succeeded"]

    def charged_once(self, order_id: str, amount: int = 4200) -> Any:
        """The one succeeded PaymentIntent of the order; Miss when there are none or several, or it is wrong."""
        got = self.charges(order_id)
        need(len(got) == 1, f"order {order_id} was charged {len(got)} times, expected exactly once",
             order=order_id, payment_intents=[p.id for p in got])
        pi = got[0]
        need(pi.amount == amount and pi.currency == "usd", f"{pi.id} charged {pi.amount} {pi.currency}, expected {amount} usd",
             payment_intent=pi.id)
        need(self.order_status(order_id) == "paid", f"order {order_id} is not 'paid' in the app", order=order_id)
        return pi


def _short(value: Any) -> Any:
    text = str(value)
    return value if len(text) <= 300 else text[:300] + "…"


# ---- scenarios ----

def pays(run: Run) -> Outcome:
    order = run.order("pays")
    status, body, _ = run.pay(order)
    need(status == 200 and isinstance(body, dict) and body.get("status") == "paid",
         f"paying an order answered {status} {_short(body)}; expected 200 with status paid")
    need(bool(run.proxy.payments(order)), "the app's Stripe calls did not go to STRIPE_API_BASE (the proxy saw none "
         "naming this order in metadata[order_id])", order=order)
    pi = run.charged_once(order)
    return passed("a payment charged the order once", order=order, payment_intent=pi.id)


def decline_then_pay(run: Run) -> Outcome:
    order = run.order("decline")
    status, body, _ = run.pay(order, "pm_card_chargeDeclined")
    err = body.get("error") if isinstance(body, dict) else None
    need(status == 402 and isinstance(err, dict) and err.get("decline_code") == "generic_decline",
         f"a declined card answered {status} {_short(body)}; expected 402 with decline_code generic_decline")
    need(run.order_status(order) != "paid", "the order is marked paid after a decline", order=order)
    status, body, _ = run.pay(order, "pm_card_visa")
    need(status == 200 and isinstance(body, dict) and body.get("status") == "paid",
         f"paying again with a good card after a decline answered {status} {_short(body)}; expected 200 paid")
    pi = run.charged_once(order)
    return passed("a decline answers 402; paying again with another card charges once", order=order,
                  payment_intent=pi.id)


def concurrent_duplicates(run: Run) -> Outcome:
    order = run.order("concurrent")
    run.proxy.plan = ["delay:1.5"]  # the first call hangs, so the duplicate arrives while it is in flight
    with ThreadPoolExecutor(2) as pool:
        first = pool.submit(run.pay, order)
        time.sleep(0.3)
        second = pool.submit(run.pay, order)
        answers = [first.result()[:2], second.result()[:2]]
    run.proxy.plan = []
    answers.append(run.pay(order)[:2])  # and a retry after both finished
    statuses = [s for s, _ in answers]
    need(all(s in (200, 409) for s in statuses) and statuses[-1] == 200,
         f"two overlapping requests and a later retry answered {statuses}; expected 200 (or 409 while in "
         f"flight) and 200 at the end", answers=[_short(b) for _, b in answers])
    pi = run.charged_once(order)
    return passed(f"overlapping duplicate requests ({statuses}) charged once", order=order, payment_intent=pi.id)


def _same_key_retries(run: Run, order: str) -> list[Seen]:
    calls = run.proxy.payments(order)
    for before, after in zip(calls, calls[1:]):
        if before.action in ("500", "429", "503", "lost") and after.path == before.path:
            need(bool(before.idempotency_key) and after.idempotency_key == before.idempotency_key,
                 f"a retry after {before.action} sent Idempotency-Key {after.idempotency_key!r}, the failed call sent "
                 f"{before.idempotency_key!r}", order=order)
    return calls


def transient_errors(run: Run) -> Outcome:
    order = run.order("transient")
    run.proxy.plan = ["500", "429"]
    status, body, _ = run.pay(order)
    run.proxy.plan = []
    calls = _same_key_retries(run, order)
    actions = [c.action for c in calls]
    need(status == 200 and isinstance(body, dict) and body.get("status") == "paid",
         f"with Stripe answering 500 then 429 the payment answered {status} {_short(body)}; expected the app to "
         f"retry and answer 200 paid", stripe_calls=actions)
    gaps = [round(b.t - a.t, 3) for a, b in zip(calls, calls[1:])]
    need(len(calls) >= 3 and all(g >= MIN_BACKOFF for g in gaps[:2]),
         f"retries came {gaps} s apart; expected a backoff of at least {MIN_BACKOFF} s", gaps=gaps)
    pi = run.charged_once(order)
    return passed("500 and 429 were retried with backoff and the same idempotency key", order=order,
                  payment_intent=pi.id, stripe_calls=actions, gaps=gaps)


def lost_response(run: Run) -> Outcome:
    order = run.order("lost")
    run.proxy.plan = ["lost"]  # Stripe charges, but the app gets a 500
    status, body, _ = run.pay(order)
    run.proxy.plan = []
    calls = _same_key_retries(run, order)
    need(status == 200 and isinstance(body, dict) and body.get("status") == "paid",
         f"after a lost response the payment answered {status} {_short(body)}; expected a retry and 200 paid",
         stripe_calls=[c.action for c in calls])
    pi = run.charged_once(order)
    return passed("a charge whose response was lost was retried without charging twice", order=order,
                  payment_intent=pi.id)


def outage(run: Run) -> dict[str, Outcome]:
    """Stripe charges, then goes down: the app must give up cleanly; a later client retry must not charge again."""
    order = run.order("outage")
    run.proxy.plan, run.proxy.down = ["lost"], True
    out: dict[str, Outcome] = {}
    try:
        status, body, took = run.pay(order)
    finally:
        run.proxy.plan, run.proxy.down = [], False
    tries = len(run.proxy.payments(order))
    try:
        need(status >= 500, f"during a Stripe outage the payment answered {status} {_short(body)}; expected a 5xx "
             f"error", stripe_calls=tries)
        need(took <= OUTAGE_ANSWER_WITHIN, f"the app took {took:.1f} s to give up; expected an answer within "
             f"{OUTAGE_ANSWER_WITHIN:g} s", seconds=round(took, 2))
        need(run.order_status(order) != "paid", "the order is marked paid although the app never saw a success",
             order=order)
        need(tries >= 2, f"the app tried Stripe {tries} time(s) during the outage; expected retries", stripe_calls=tries)
        out["gives up on an outage"] = passed(f"answered {status} after {tries} tries in {took:.1f} s, order unpaid",
                                              order=order, seconds=round(took, 2))
    except Miss as miss:
        out["gives up on an outage"] = failed(miss.summary, **miss.evidence)
    try:
        status, body, _ = run.pay(order)
        need(status == 200 and isinstance(body, dict) and body.get("status") == "paid",
             f"the client's retry after the outage answered {status} {_short(body)}; expected 200 paid")
        pi = run.charged_once(order)
        out["client retry after an outage"] = passed("the order Stripe charged during the outage was not charged "
                                                     "again when the client retried", order=order, payment_intent=pi.id)
    except Miss as miss:
        out["client retry after an outage"] = failed(miss.summary, **miss.evidence)
    return out


def restricted_key(run: Run) -> Outcome:
    seen = list(run.proxy.seen)
    need(bool(seen), "the app sent no Stripe request through STRIPE_API_BASE")
    kinds = sorted({s.key_kind for s in seen})
    need(kinds == ["rk_test"] or kinds == ["rk_live"], f"the app called Stripe with {kinds} keys; expected only its "
         f"restricted key (STRIPE_RESTRICTED_KEY)", key_kinds=kinds)
    refused = sorted({f"{s.method} {s.path}" for s in seen if s.action == "refused"})
    need(not refused, f"the app called endpoints a PaymentIntents-only key may not use: {refused}", refused=refused)
    return passed("every Stripe call used the restricted key, within PaymentIntents",
                  key_kinds=kinds, calls=len(seen))


SCENARIOS: list[tuple[tuple[str, ...], Callable[[Run], Any]]] = [
    (("pays an order",), pays),
    (("decline then pay",), decline_then_pay),
    (("overlapping duplicates",), concurrent_duplicates),
    (("retries 500 and 429",), transient_errors),
    (("lost response",), lost_response),
    (("gives up on an outage", "client retry after an outage"), outage),
    (("restricted key",), restricted_key),
]
CRITERIA: list[tuple[str, float, str]] = [
    ("pays an order", 1, "POST /orders/<id>/pay with a good card answers 200 paid and charges the order exactly once "
     "(a succeeded PaymentIntent for its amount, metadata order_id)."),
    ("decline then pay", 1, "A declined card answers 402 with the decline code and leaves the order unpaid; paying "
     "again with a good card then charges it once (a new attempt is not mistaken for a duplicate)."),
    ("overlapping duplicates", 2, "Two overlapping requests to pay the same order, and a later retry, charge it "
     "exactly once."),
    ("retries 500 and 429", 2, "When Stripe answers 500 and then 429 the app retries, with backoff and the same "
     "idempotency key, and the payment succeeds once."),
    ("lost response", 2, "When a charge reaches Stripe but its response is lost, the app's retry does not charge "
     "again."),
    ("gives up on an outage", 1, "During a Stripe outage the app retries, then answers a 5xx error in reasonable "
     "time and does not mark the order paid."),
    ("client retry after an outage", 2, "A client retrying after the outage (when Stripe had in fact charged) gets "
     "200 paid without a second charge: the idempotency key comes from the order, not the request."),
    ("restricted key", 2, "Every Stripe call uses the restricted key (PaymentIntents only), never the full secret "
     "key."),
]


def _results(ctx: Any) -> dict[str, Outcome]:
    """Run every scenario once per grading context, in order, and remember each criterion's outcome."""
    with _LOCK:
        lock = ctx.__dict__.setdefault("_idempotent_lock", threading.Lock())
    with lock:
        cached = ctx.__dict__.get("_idempotent_results")
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
                for names, scenario in SCENARIOS:
                    try:
                        got = scenario(run)
                        results.update(got if isinstance(got, dict) else {names[0]: got})
                    except Miss as miss:
                        outcome = failed(miss.summary, **miss.evidence)
                    except httpx.HTTPError as exc:
                        outcome = failed(f"the app did not answer: {type(exc).__name__}: {exc}")
                    except Exception as exc:  # noqa: BLE001 - reported as error, never pass
                        outcome = error_outcome(exc)
                    else:
                        continue
                    for name in names:
                        results.setdefault(name, outcome)
            finally:
                run.close()
        ctx.__dict__["_idempotent_results"] = results
        return results


_LOCK = threading.Lock()


def paid_orders_charged_once(ctx: Any, view: Any) -> Outcome:
    """Live and final: each order the episode's app marked paid has exactly one succeeded PaymentIntent."""
    try:
        conn = ctx.db(DB)
    except GradingUnavailable as exc:
        return pending(f"no database yet: {exc}")
    try:
        paid = [dict(r) for r in conn.execute("SELECT id, amount, payment_intent FROM orders WHERE status = 'paid'")]
    finally:
        conn.close()
    if not paid:
        return pending("no paid orders yet")
    by_order: dict[str, list[str]] = {}
    for pi in ctx.stripe.v1.payment_intents.list(params={"limit": 100}).data:
        order_id = pi.metadata.to_dict().get("order_id") if pi.metadata else None
        if order_id and pi.status == "succeeded":
            by_order.setdefault(order_id, []).append(pi.id)
    problems = [f"{o['id']} has {len(by_order.get(o['id'], []))} succeeded PaymentIntents "
                f"{by_order.get(o['id'], [])}, its row names {o['payment_intent']}" for o in paid
                if len(by_order.get(o["id"], [])) != 1 or o["payment_intent"] not in by_order.get(o["id"], [])]
    if problems:
        return failed(f"{len(problems)} of {len(paid)} paid orders are not charged exactly once: {problems[0]}",
                      problems=problems[:10])
    return passed(f"each of the {len(paid)} paid orders has exactly one succeeded PaymentIntent", orders=len(paid))


def _criterion(name: str, weight: float, description: str) -> Criterion:
    return Criterion(name, weight, description, lambda ctx, view: _results(ctx)[name], final_only=True)


GRADER = Grader(
    criteria=tuple(_criterion(*c) for c in CRITERIA) + (
        Criterion("paid orders charged once", 1, "In the running app's own database, every order marked paid has "
                  "exactly one succeeded PaymentIntent (metadata order_id), the one its row names. Checked live as "
                  "payments appear, and at the end.", paid_orders_charged_once, on=("payment_intent", "charge")),
    ),
    description="Starts a copy of the app behind a fault-injecting Stripe proxy, replays payments under 500/429, "
                "lost responses, overlap and an outage, and counts the charges per order.",
)
