"""Grader for invoicing-migration: run the agent's migration twice, read Stripe and the bookings table, then buy.

Public means only (the same run works against Stripe test mode): the legacy bookings are the environment's own
pristine ``legacy_bookings.csv`` (what the agent was given, not a copy it may have edited); the grader runs
``python3 migrate.py`` twice where the episode's code runs, then reads prices by lookup key, customers by email,
each customer's invoices with their lines and invoice payments, and the app's ``bookings`` table. Out of band is
read from the invoice's ``paid_out_of_band`` in a pre-2025-03-31 API version (the field left the invoice then).
Then the agent's migration is copied into a scratch directory with three bookings of the grader's own and a fresh
database, and run through the grader's Stripe proxy, which stops it half way: Stripe makes the second invoice but its
answer is lost, and every invoice create after it answers 503. One more run there must finish every booking with one
invoice, moving the one Stripe made on instead of making another. Last it buys through ``POST /purchases`` with a
good card and a declining one. Each rule of the task is one criterion; all scenarios run once, at the end, one after the other.
"""

from __future__ import annotations

import csv
import secrets
import shutil
from decimal import Decimal
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from stripebench_tui.grading import Grader, Outcome, passed
from stripebench_tui.grading.once import once_per_context
from stripebench_tui.grading.scenarios import Miss, need, run_scenarios, scenario_criterion, with_run
from stripebench_tui.grading.stripe_proxy import Recorded, StripeProxy

DB = "studio.db"
CSV_NAME = "legacy_bookings.csv"
RUNS = 2  # the migration runs this often; the second must create nothing
OLD_VERSION = "2025-02-24.acacia"  # the last version whose invoices carry paid_out_of_band
COMMAND_TIMEOUT = 300.0  # only a stuck migration takes this long, also on a loaded machine
BUY = ("private-session", 2)  # what the grader buys: sku, quantity
REAL_STRIPE = "https://api.stripe.com"
INVOICE_CREATE = "/v1/invoices"
# The interrupted run: the grader's own bookings (sku, status); Stripe makes invoice LOST_AT but its answer is lost,
# and every invoice create after it answers 503.
RESUME = (("yoga-month", "paid"), ("reformer-10", "paid"), ("private-session", "open"))
LOST_AT = 2
FINAL_STATUS = {"paid": "paid", "paid_offline": "paid", "void": "void", "open": "open"}


@dataclass
class Interrupted:
    """The run stopped half way: its exit code and output, the invoice creates it sent, the one whose answer was lost."""

    code: int | None
    output: str
    creates: int
    lost: Recorded | None
    resumed: tuple[int | None, str]  # the run after it: exit code and output's tail


def cents(amount: str) -> int:
    return int((Decimal(amount) * 100).to_integral_value())


def legacy_bookings(workspace: Path) -> list[dict[str, Any]]:
    """The legacy export's rows, amounts in cents."""
    with open(workspace / CSV_NAME, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    return [{**row, "email": row["customer_email"].strip().lower(), "quantity": int(row["quantity"]),
             "cents": cents(row["amount"])} for row in rows]


class Run:
    """One grading run: Stripe, the app, the database, the legacy bookings and the migration's exit codes."""

    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx
        self.stripe = ctx.stripe.v1
        self.http = ctx.http("APP_URL")
        self.tag = secrets.token_hex(4)
        self.legacy = legacy_bookings(Path(ctx.env.workspace))
        # the catalogue as the export prices it: sku -> (unit amount, currency)
        self.catalogue = {r["item"]: (r["cents"] // r["quantity"], r["currency"]) for r in self.legacy}
        self.migrations: list[tuple[int | None, str]] = []
        self.interrupted: Interrupted | None = None
        self.resume_rows: list[dict[str, Any]] = []
        self._customers: dict[str, list[Any]] = {}
        self._invoices: dict[str, list[Any]] = {}
        self.logs = Path(ctx.episode_dir) / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)

    # ---- the agent's migration ----

    def migrate(self) -> None:
        """``python3 migrate.py`` RUNS times in the workspace, then the interrupted migration (``interrupt``)."""
        for n in range(RUNS):
            self.migrations.append(self._run_once(f"grader-migrate-{n + 1}", Path(self.ctx.workspace),
                                                  self.ctx.stripe_api_base))
        self.interrupt()

    def interrupt(self) -> None:
        """The agent's migration, copied into a scratch directory with the grader's own bookings (``RESUME``) and a
        fresh database, run once through the grader's Stripe proxy — which lets Stripe make invoice number LOST_AT but
        loses its answer, then answers 503 to every invoice create — and once more directly, to resume."""
        unit = self.catalogue  # sku -> (unit amount in cents, currency)
        rows = [{"booking_id": f"GR-{self.tag}-{n}", "booked_on": "2025-11-0%d" % n,
                 "customer_email": f"grader-{self.tag}-resume@example.com", "item": sku, "quantity": "1",
                 "amount": f"{Decimal(unit[sku][0]) / 100:.2f}", "currency": unit[sku][1], "status": status}
                for n, (sku, status) in enumerate(RESUME, 1)]
        self.resume_rows = [{**r, "email": r["customer_email"], "quantity": 1, "cents": unit[r["item"]][0]} for r in rows]
        where = self.ctx.processes.scratch_dir("grader-resume-")
        try:
            shutil.copytree(Path(self.ctx.workspace), where, dirs_exist_ok=True, ignore=shutil.ignore_patterns(
                ".*", "__pycache__", "node_modules", "*.db", "*.db-*", "*.sqlite*", "*.log"))
            with open(where / CSV_NAME, "w", newline="", encoding="utf-8") as f:
                writer = csv.DictWriter(f, fieldnames=list(rows[0]))
                writer.writeheader()
                writer.writerows(rows)
        except (OSError, shutil.Error) as exc:
            problem = f"could not copy the workspace for the interrupted run: {exc}"
            self.interrupted = Interrupted(None, problem, creates=0, lost=None, resumed=(None, problem))
            return
        extra = {"DATABASE_PATH": str(where / "resume.db")}
        upstream = self.ctx.stripe_api_base or REAL_STRIPE
        with StripeProxy(upstream, fault_path=INVOICE_CREATE, fault_exact=True) as proxy:
            with proxy.faults(["pass"] * (LOST_AT - 1) + ["lost"], down=True):
                code, output = self._run_once("grader-migrate-interrupted", where, proxy.url, extra)
            creates = [r for r in proxy.requests() if r.method == "POST" and r.path == INVOICE_CREATE]
        lost = next((r for r in creates if r.action == "lost"), None)
        resumed = self._run_once("grader-migrate-resumed", where, self.ctx.stripe_api_base, extra)
        self.interrupted = Interrupted(code, output, len(creates), lost, resumed)

    def _run_once(self, name: str, cwd: Path, api_base: str | None,
                  extra: dict[str, str] | None = None) -> tuple[int | None, str]:
        """``python3 migrate.py`` once in ``cwd`` against ``api_base`` (None: Stripe itself); exit code, output's tail."""
        log_path = self.logs / f"{name}.log"
        try:
            with open(log_path, "wb") as log:
                env = {"STRIPE_SECRET_KEY": self.ctx.stripe_api_key, "PYTHONUNBUFFERED": "1", **(extra or {})}
                unset: tuple[str, ...] = ()
                if api_base:
                    env["STRIPE_API_BASE"] = api_base
                else:
                    unset = ("STRIPE_API_BASE",)
                proc = self.ctx.processes.start_process("python3 migrate.py", cwd=cwd, env=env, unset=unset, log=log)
                try:
                    code: int | None = proc.wait(timeout=COMMAND_TIMEOUT)
                except Exception:  # noqa: BLE001 - a stuck run is stopped and reported, never waited on
                    proc.kill()
                    proc.wait()
                    code = None
            output = log_path.read_bytes().decode(errors="replace").strip()
        except OSError as exc:
            code, output = None, f"could not run migrate.py: {exc}"
        return code, output[-300:]

    # ---- reading Stripe and the database ----

    def customers(self, email: str) -> list[Any]:
        if email not in self._customers:
            self._customers[email] = list(self.stripe.customers.list(params={"email": email, "limit": 100})
                                          .auto_paging_iter())
        return self._customers[email]

    def invoices(self, email: str) -> list[Any]:
        """Every invoice of every customer with this email."""
        if email not in self._invoices:
            self._invoices[email] = [inv for cus in self.customers(email) for inv in self.stripe.invoices.list(
                params={"customer": cus.id, "limit": 100}).auto_paging_iter()]
        return self._invoices[email]

    def invoices_of(self, booking: dict[str, Any]) -> list[Any]:
        """The invoices of a legacy booking (its customer's, with its metadata[legacy_booking_id])."""
        return [inv for inv in self.invoices(booking["email"])
                if _meta(inv).get("legacy_booking_id") == booking["booking_id"]]

    def price(self, sku: str) -> Any:
        found = self.stripe.prices.list(params={"lookup_keys": [sku], "active": True, "limit": 10}).data
        need(len(found) == 1, f"no active price has lookup_key {sku!r}", sku=sku)
        return found[0]

    def query(self, sql: str, *args: Any) -> list[dict[str, Any]]:
        conn = self.ctx.db(DB)
        try:
            return [dict(r) for r in conn.execute(sql, args).fetchall()]
        finally:
            conn.close()

    def paid_by_card(self, invoice: Any) -> list[Any]:
        """The succeeded PaymentIntents that paid ``invoice`` (through its invoice payments)."""
        payments = self.stripe.invoice_payments.list(params={"invoice": invoice.id, "limit": 100}).data
        intents = [self.stripe.payment_intents.retrieve(p.payment.payment_intent) for p in payments
                   if p.status == "paid" and p.payment and p.payment.payment_intent]
        return [pi for pi in intents if pi.status == "succeeded"]

    def out_of_band(self, invoice: Any) -> bool:
        old = self.stripe.invoices.retrieve(invoice.id, options={"stripe_version": OLD_VERSION})
        return bool(old.to_dict().get("paid_out_of_band"))

    def post(self, path: str, body: dict[str, Any]) -> tuple[int, Any]:
        response = self.http.post(path, json=body)
        try:
            return response.status_code, response.json()
        except ValueError:
            return response.status_code, response.text[:300]


def _meta(obj: Any) -> dict[str, str]:
    """An object's metadata as a plain dict."""
    return obj.metadata.to_dict() if obj.metadata else {}


def _short(value: Any) -> Any:
    text = str(value)
    return value if len(text) <= 400 else text[:400] + "…"


def _line_problem(run: Run, invoice: Any, sku: str, quantity: int, total: int, currency: str) -> str | None:
    """Why ``invoice`` is not one line of the sku's price × quantity totalling ``total`` (None: it is)."""
    price = run.price(sku)
    lines = invoice.lines.data
    priced = [line for line in lines if line.pricing and line.pricing.price_details
              and line.pricing.price_details.price == price.id]
    if len(lines) != 1 or len(priced) != 1 or priced[0].quantity != quantity:
        seen = [(line.pricing.price_details.price if line.pricing and line.pricing.price_details else None,
                 line.quantity, line.amount) for line in lines]
        return f"{invoice.id} has lines {seen}; expected one line of {price.id} ({sku}) × {quantity}"
    if invoice.total != total or invoice.currency != currency:
        return f"{invoice.id} totals {invoice.total} {invoice.currency}; expected {total} {currency}"
    return None


def _judge_legacy(run: Run, status: str, check: Callable[[Any, dict[str, Any]], str | None], what: str) -> Outcome:
    """Every legacy booking of ``status`` has an invoice (each one it has passes ``check``) with the right line."""
    bookings = [b for b in run.legacy if b["status"] == status]
    need(bool(bookings), f"the export has no {status} booking (grader bug)")
    seen = {}
    for booking in bookings:
        invoices = run.invoices_of(booking)
        need(bool(invoices), f"{booking['booking_id']} ({status}) has no invoice with metadata[legacy_booking_id] "
             f"for a customer with email {booking['email']}", booking=booking["booking_id"])
        for invoice in invoices:
            problem = _line_problem(run, invoice, booking["item"], booking["quantity"], booking["cents"],
                                    booking["currency"]) or check(invoice, booking)
            need(problem is None, f"{booking['booking_id']} ({status}): {problem}", booking=booking["booking_id"],
                 invoice=invoice.id)
        seen[booking["booking_id"]] = [i.id for i in invoices]
    return passed(f"{len(bookings)} {status} bookings: {what}", invoices=seen)


# ---- scenarios, one per criterion ----

def catalogue(run: Run) -> Outcome:
    found = {}
    for sku, (unit, currency) in sorted(run.catalogue.items()):
        price = run.price(sku)
        need(price.unit_amount == unit and price.currency == currency and price.type == "one_time",
             f"price {price.id} ({sku}) is {price.unit_amount} {price.currency} {price.type}; expected a one-time "
             f"{unit} {currency}", price=price.id)
        product = run.stripe.products.retrieve(price.product if isinstance(price.product, str) else price.product.id)
        need(product.active and _meta(product).get("sku") == sku,
             f"product {product.id} of {sku}'s price has metadata {_meta(product)} "
             f"(active {product.active}); expected an active product with metadata[sku]={sku}", product=product.id)
        found[sku] = {"product": product.id, "price": price.id}
    return passed(f"{len(found)} skus, each an active product with its price by lookup key", catalogue=found)


def paid(run: Run) -> Outcome:
    def check(invoice: Any, booking: dict[str, Any]) -> str | None:
        if invoice.status != "paid" or invoice.amount_paid != booking["cents"]:
            return f"{invoice.id} is {invoice.status} with {invoice.amount_paid} paid; expected paid {booking['cents']}"
        intents = run.paid_by_card(invoice)
        if sum(pi.amount_received for pi in intents) != booking["cents"]:
            return f"{invoice.id} was not paid by card: its succeeded PaymentIntents are {[pi.id for pi in intents]}"
        if run.out_of_band(invoice):
            return f"{invoice.id} is marked paid out of band"
        return None

    return _judge_legacy(run, "paid", check, "invoices paid by card through a PaymentIntent")


def paid_offline(run: Run) -> Outcome:
    def check(invoice: Any, booking: dict[str, Any]) -> str | None:
        if invoice.status != "paid":
            return f"{invoice.id} is {invoice.status}, not paid"
        if not run.out_of_band(invoice):
            return f"{invoice.id} is paid but not out of band"
        intents = run.paid_by_card(invoice)
        if intents:
            return f"{invoice.id} charged a card for a booking paid at the desk: {[pi.id for pi in intents]}"
        return None

    return _judge_legacy(run, "paid_offline", check, "invoices paid out of band, no card charged")


def voided(run: Run) -> Outcome:
    def check(invoice: Any, booking: dict[str, Any]) -> str | None:
        transitions = invoice.status_transitions
        if invoice.status != "void" or not invoice.number or not (transitions and transitions.finalized_at):
            return f"{invoice.id} is {invoice.status} (number {invoice.number}); expected finalized, then void"
        return None

    return _judge_legacy(run, "void", check, "invoices finalized, then voided")


def left_open(run: Run) -> Outcome:
    def check(invoice: Any, booking: dict[str, Any]) -> str | None:
        if invoice.status != "open" or invoice.amount_remaining != booking["cents"] or invoice.amount_paid:
            return (f"{invoice.id} is {invoice.status} with {invoice.amount_remaining} remaining and "
                    f"{invoice.amount_paid} paid; expected open for {booking['cents']}")
        if invoice.collection_method != "send_invoice" or not invoice.due_date:
            return f"{invoice.id} is collected by {invoice.collection_method} (due {invoice.due_date}); expected " \
                   "send_invoice with a due date"
        return None

    return _judge_legacy(run, "open", check, "invoices finalized, sent and open for the whole amount")


def no_duplicates(run: Run) -> Outcome:
    for n, (code, output) in enumerate(run.migrations, 1):
        need(code == 0, f"run {n} of migrate.py exited with {code}: {output}", run=n)
    for email in sorted({b["email"] for b in run.legacy}):
        ids = [c.id for c in run.customers(email)]
        need(len(ids) == 1, f"{len(ids)} customers have the email {email}: {ids}; expected exactly one", email=email)
    for booking in run.legacy:
        ids = [i.id for i in run.invoices_of(booking)]
        need(len(ids) <= 1, f"{booking['booking_id']} has {len(ids)} invoices after {RUNS} runs: {ids}",
             booking=booking["booking_id"])
    products = [p for p in run.stripe.products.list(params={"active": True, "limit": 100}).auto_paging_iter()]
    for sku in sorted(run.catalogue):
        ids = [p.id for p in products if _meta(p).get("sku") == sku]
        need(len(ids) <= 1, f"{len(ids)} active products have metadata[sku]={sku}: {ids}", sku=sku)
        for product in ids:
            prices = [p.id for p in run.stripe.prices.list(params={"product": product, "active": True,
                                                                   "limit": 100}).auto_paging_iter()]
            need(len(prices) <= 1, f"product {product} ({sku}) has {len(prices)} active prices: {prices}", sku=sku)
    rows = {r["id"]: r for r in run.query("SELECT * FROM bookings WHERE id IN (%s)" % ",".join(
        "?" for _ in run.legacy), *[b["booking_id"] for b in run.legacy])}
    for booking in run.legacy:
        row = rows.get(booking["booking_id"])
        need(row is not None, f"the bookings table has no row {booking['booking_id']}", booking=booking["booking_id"])
        need(row["amount"] == booking["cents"] and row["status"] == booking["status"] and row["source"] == "legacy",
             f"row {booking['booking_id']} says {row['status']!r}, {row['amount']} cents, source {row['source']!r}; "
             f"expected {booking['status']!r}, {booking['cents']}, 'legacy'", booking=booking["booking_id"])
        stripes = [i.id for i in run.invoices_of(booking)][:1] or [None]
        need(stripes == [None] or row["invoice"] == stripes[0],
             f"row {booking['booking_id']} names invoice {row['invoice']}, Stripe's is {stripes[0]}",
             booking=booking["booking_id"])
    return passed(f"after {RUNS} more runs: one customer per email, at most one invoice per booking, one product "
                  "and price per sku, one row per booking naming its invoice", runs=[c for c, _ in run.migrations])


def resumed(run: Run) -> Outcome:
    stop = run.interrupted
    assert stop is not None
    need(stop.lost is not None and bool(stop.lost.object_id),
         f"the interrupted run (the grader's {len(RESUME)} bookings) sent {stop.creates} invoice create(s) and "
         f"exited {stop.code}: {stop.output}; the grader loses the answer to number {LOST_AT}", creates=stop.creates)
    assert stop.lost is not None
    code, output = stop.resumed
    need(code == 0, f"the run after the interrupted one exited with {code}: {output}", exit=code)
    for booking in run.resume_rows:
        ids = [i.id for i in run.invoices_of(booking)]
        need(len(ids) == 1, f"after the interrupted run and one more, the grader's booking {booking['booking_id']} "
             f"({booking['status']}) has {len(ids)} invoices: {ids}; expected one", booking=booking["booking_id"])
        invoice = run.stripe.invoices.retrieve(ids[0])
        want = FINAL_STATUS[booking["status"]]
        need(invoice.status == want, f"the grader's booking {booking['booking_id']}: invoice {invoice.id} is "
             f"{invoice.status}, expected {want}", booking=booking["booking_id"])
    lost_for = stop.lost.form.get("metadata[legacy_booking_id]")
    lost_booking = next((b for b in run.resume_rows if b["booking_id"] == lost_for), None)
    if lost_booking is not None:
        need([i.id for i in run.invoices_of(lost_booking)] == [stop.lost.object_id],
             f"{lost_for}'s invoice {stop.lost.object_id} was made when the answer was lost; the next run made "
             "another instead of moving that one on", booking=lost_for)
    return passed(f"stopped at invoice create {LOST_AT} of the grader's {len(RESUME)} bookings (Stripe made "
                  f"{stop.lost.object_id}, the answer was lost, then creates failed); the next run finished each "
                  "booking with one invoice in its final state", exit=stop.code)


def purchase(run: Run) -> Outcome:
    sku, quantity = BUY
    unit, currency = run.catalogue[sku]
    email = f"grader-{run.tag}-buy@example.com"
    status, body = run.post("/purchases", {"sku": sku, "email": email, "quantity": quantity,
                                           "payment_method": "pm_card_visa"})
    need(status == 201 and isinstance(body, dict) and isinstance(body.get("id"), str),
         f"POST /purchases answered {status}, expected 201 with the booking", status=status, body=_short(body))
    rows = run.query("SELECT * FROM bookings WHERE id = ?", body["id"])
    need(len(rows) == 1, f"the bookings table has no row {body['id']}", booking=body["id"])
    row = rows[0]
    need(row["status"] == "paid" and row["source"] == "web" and row["amount"] == unit * quantity
         and row["email"] == email,
         f"the row says {row['status']!r}, source {row['source']!r}, {row['amount']} cents for {row['email']}; "
         f"expected paid, web, {unit * quantity} for {email}", booking=row["id"])
    need(isinstance(row["invoice"], str) and row["invoice"].startswith("in_"), "the row names no invoice", row=row)
    invoice = run.stripe.invoices.retrieve(row["invoice"])
    need(invoice.status == "paid" and invoice.amount_paid == unit * quantity,
         f"invoice {invoice.id} is {invoice.status} with {invoice.amount_paid} paid; expected paid {unit * quantity}",
         invoice=invoice.id)
    problem = _line_problem(run, invoice, sku, quantity, unit * quantity, currency)
    need(problem is None, problem or "", invoice=invoice.id)
    meta = _meta(invoice)
    need(meta.get("booking_id") == row["id"], f"invoice {invoice.id} metadata is {meta}; expected booking_id",
         invoice=invoice.id)
    customer = run.stripe.customers.retrieve(invoice.customer)
    need(customer.id == row["customer"] and customer.email == email,
         f"invoice {invoice.id} is for {customer.id} ({customer.email}); the row says {row['customer']} ({email})")
    intents = run.paid_by_card(invoice)
    need(sum(pi.amount_received for pi in intents) == unit * quantity,
         f"invoice {invoice.id} was not paid by card: succeeded PaymentIntents {[pi.id for pi in intents]}")
    got = run.http.get(f"/bookings/{row['id']}")
    need(got.status_code == 200 and got.json().get("invoice") == invoice.id,
         f"GET /bookings/{row['id']} answered {got.status_code} {got.text[:200]}")
    return passed(f"a purchase of {quantity} × {sku} is a paid invoice and a booking", booking=row["id"],
                  invoice=invoice.id, payment_intents=[pi.id for pi in intents])


def decline(run: Run) -> Outcome:
    email = f"grader-{run.tag}-declined@example.com"
    status, body = run.post("/purchases", {"sku": BUY[0], "email": email, "payment_method": "pm_card_chargeDeclined"})
    err = body.get("error") if isinstance(body, dict) else None
    need(status == 402, f"a declined card's purchase answered {status}, expected 402", body=_short(body))
    need(isinstance(err, dict) and err.get("decline_code") == "generic_decline" and bool(err.get("message")),
         f"the decline's error is {_short(err)}; expected decline_code 'generic_decline' and Stripe's message",
         body=_short(body))
    rows = run.query("SELECT id, status FROM bookings WHERE email = ?", email)
    need(not rows, f"a declined purchase left rows in the bookings table: {rows}", rows=rows)
    live = [(i.id, i.status) for i in run.invoices(email) if i.status in ("paid", "open", "uncollectible")]
    need(not live, f"a declined purchase left invoices to collect: {live}", invoices=live)
    return passed("a declined card answers 402 with the decline, books nothing and leaves nothing to collect",
                  decline_code=err.get("decline_code"), message=err.get("message"))


def _judged(check: Callable[[Run], Outcome]) -> Callable[[Run], Outcome]:
    """``check``, with Stripe refusing a read about the agent's objects (a missing id) as its failure."""
    def scenario(run: Run) -> Outcome:
        import stripe

        try:
            return check(run)
        except stripe.InvalidRequestError as exc:
            raise Miss(f"Stripe refused a read of this check's objects: {exc.user_message or exc}") from None

    return scenario


SCENARIOS: list[tuple[str, float, str, Callable[[Run], Outcome]]] = [
    ("catalogue", 1, "Every sku is an active Product (metadata[sku]) with an active one-time Price found by "
     "lookup_key, at the catalogue's amount and currency.", catalogue),
    ("paid bookings", 2, "Each paid legacy booking has an invoice for its customer (metadata[legacy_booking_id], one "
     "line of the sku's price × quantity, the booking's total) paid by card through a PaymentIntent.", paid),
    ("paid out of band", 1, "Each booking paid at the desk has an invoice paid out of band, no card charged.",
     paid_offline),
    ("voided bookings", 1, "Each cancelled booking has an invoice that was finalized and then voided (not deleted).",
     voided),
    ("open bookings", 1, "Each unpaid booking has a finalized send_invoice invoice with a due date, open for the "
     "whole amount.", left_open),
    ("re-run makes no duplicates", 2, "migrate.py runs twice more without error; then one customer per email, at "
     "most one invoice per booking, one product and price per sku, and one bookings row per legacy booking naming "
     "its invoice.", no_duplicates),
    ("resumes after an interruption", 1, "On the grader's own bookings, a run stopped half way (Stripe makes an "
     "invoice but the answer is lost, then invoice creates fail) is finished by the next run: one invoice per "
     "booking in its final state, the one Stripe made moved on, not made again.", resumed),
    ("purchase", 2, "POST /purchases with a good card answers 201 and stores a paid web booking whose invoice (the "
     "sku's price × quantity, metadata[booking_id]) is paid by card.", purchase),
    ("decline", 2, "A declined card's purchase answers 402 with Stripe's decline code and message, stores no booking "
     "and leaves no invoice paid or open.", decline),
]
NAMES = [name for name, *_ in SCENARIOS]


def _all(run: Run) -> dict[str, Outcome]:
    run.migrate()
    return run_scenarios(run, [((name,), _judged(check)) for name, _, _, check in SCENARIOS])


def _results(ctx: Any) -> dict[str, Outcome]:
    return once_per_context(ctx, "invoicing-migration", lambda: with_run(ctx, Run, NAMES, _all))


GRADER = Grader(
    criteria=tuple(scenario_criterion(name, weight, description, _results)
                   for name, weight, description, _ in SCENARIOS),
    description="Runs migrate.py twice (and once stopped half way on the grader's own bookings, then resumed), checks the catalogue, each legacy booking's invoice and state, duplicates "
                "and the bookings table, then buys with a good and a declined card through the app.",
)
