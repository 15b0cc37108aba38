"""Grader for checkout-migration: Harbor Tea's checkout moved from the Card Element to embedded Checkout.

Judges one Checkout Session (the submitted ``cs_…`` id; before a submission, every
session seen so far, best one reported) through the Stripe API, plus the app itself
over HTTP and in a browser. The catalogue (products, prices, the launch coupon and
its code) comes from the environment's seed script, so there is one source of truth.
"""

from __future__ import annotations

import asyncio
import importlib.util
import re
import threading
import time
from pathlib import Path
from typing import Any, Callable

import httpx

from stripebench_tui.grading import Candidates, Criterion, Grader, expect, failed, first_id, passed, pending

SESSION = "checkout.session"
EMBEDDED = ("embedded", "embedded_page")  # the name before / from API version 2026-03-25
FRESH_CART = {"teapot": 2, "whisk": 1}  # what the browser check puts in its own cart
CACHE_SECONDS = 1.0  # criteria judging the same session at the same moment share one read
PAGE_QUIET_TIMEOUT = 30_000  # ms for /checkout to load and go quiet (a page that never does is judged all the same)
SETTLE_TIMEOUT = 10.0  # seconds, once the page is quiet, to find the session it created (only a broken page waits)


def _load_seed() -> Any:
    """The environment's seed module (for its constants), wherever environments live."""
    from stripebench_tui.envs.manifest import environments_dir

    path = environments_dir() / "checkout-migration" / "seed.py"
    if not path.is_file():
        path = Path(__file__).resolve().parents[1] / "environments" / "checkout-migration" / "seed.py"
    spec = importlib.util.spec_from_file_location("checkout_migration_seed", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SEED = _load_seed()


class NoSuchSession(Exception):
    """The judged id names no Checkout Session on this backend."""


# ---------------------------------------------------------------- reads shared by the criteria


def _cached(ctx: Any, key: str, read: Callable[[], Any]) -> Any:
    """``read()``, shared by every criterion asking for ``key`` within CACHE_SECONDS on this context."""
    memo = vars(ctx).setdefault("_checkout_migration_memo", {})
    lock = memo.setdefault(("lock", key), threading.Lock())
    with lock:
        hit = memo.get(key)
        if hit is not None and time.monotonic() - hit[0] < CACHE_SECONDS:
            return hit[1]
        value = read()
        memo[key] = (time.monotonic(), value)
        return value


def catalogue(ctx: Any) -> dict[str, dict[str, Any]]:
    """``{slug: {name, price, unit_amount}}`` of the seeded catalogue, prices read from Stripe by lookup key."""

    def read() -> dict[str, dict[str, Any]]:
        keys = {SEED.lookup_key(slug): slug for slug, *_ in SEED.CATALOGUE}
        prices = ctx.stripe.v1.prices.list(params={"lookup_keys": list(keys), "active": True, "limit": 10}).data
        by_slug = {keys[p.lookup_key]: p for p in prices}
        out = {}
        for slug, _product, name, _description, amount in SEED.CATALOGUE:
            price = by_slug.get(slug)
            out[slug] = {"name": name, "price": price.id if price else None,
                         "unit_amount": price.unit_amount if price else amount}
        return out

    return _cached(ctx, "catalogue", read)


def session(ctx: Any, session_id: str | None) -> dict[str, Any]:
    """The Checkout Session as plain data, with its line items under ``_line_items``; NoSuchSession if none."""
    if not session_id:
        raise NoSuchSession("no Checkout Session to judge")
    import stripe

    def read() -> dict[str, Any]:
        try:
            data = ctx.stripe.v1.checkout.sessions.retrieve(session_id).to_dict(recursive=True)
        except stripe.InvalidRequestError as exc:
            if exc.http_status == 404:
                raise NoSuchSession(f"{session_id} is not a Checkout Session on this account") from None
            raise
        items = ctx.stripe.v1.checkout.sessions.line_items.list(session_id, params={"limit": 100})
        data["_line_items"] = [item.to_dict(recursive=True) for item in items.data]
        return data

    return _cached(ctx, f"session:{session_id}", read)


def judging(check: Callable[[Any, dict[str, Any], Any], Any]) -> Callable[[Any, Any], Any]:
    """Wrap a per-session check: read the candidate session; a missing one fails rather than errors."""

    def wrapped(ctx: Any, view: Any) -> Any:
        try:
            data = session(ctx, view.candidate)
        except NoSuchSession as exc:
            return failed(str(exc), session=view.candidate)
        return check(ctx, data, view)

    wrapped.__name__ = check.__name__
    wrapped.__doc__ = check.__doc__
    return wrapped


def _still_open(data: dict[str, Any], view: Any, summary: str, **evidence: Any) -> Any:
    """Pending while the customer can still act on an open session; failed otherwise."""
    if data.get("status") == "open" and not view.final:
        return pending(summary + " (the session is still open)", session=data["id"], **evidence)
    return failed(summary, session=data["id"], **evidence)


# ---------------------------------------------------------------- per-session criteria


@judging
def embedded_ui(ctx: Any, data: dict[str, Any], view: Any) -> Any:
    """The session is embedded Checkout (``embedded`` or, from 2026-03-25, ``embedded_page``)."""
    ui = data.get("ui_mode")
    if ui in EMBEDDED:
        return passed(f"ui_mode is {ui!r}", session=data["id"], expected=list(EMBEDDED), actual=ui)
    return failed(f"ui_mode is {ui!r}, not embedded Checkout", session=data["id"], expected=list(EMBEDDED), actual=ui)


@judging
def payment_mode(ctx: Any, data: dict[str, Any], view: Any) -> Any:
    """A one-time payment, not a subscription or setup."""
    return expect("mode", "payment", data.get("mode"), session=data["id"])


def line_item_problems(items: list[dict[str, Any]], expected: dict[str, dict[str, Any]]) -> tuple[list[str], list[dict]]:
    """What is wrong with ``items`` against the catalogue ``expected`` (empty when right), and the items seen."""
    by_price = {entry["price"]: slug for slug, entry in expected.items() if entry["price"]}
    seen: dict[str, int] = {}
    problems, actual = [], []
    for item in items:
        price = item.get("price") or {}
        price_id = price.get("id") if isinstance(price, dict) else price
        quantity = item.get("quantity") or 0
        actual.append({"price": price_id, "quantity": quantity, "unit_amount": price.get("unit_amount")
                       if isinstance(price, dict) else None, "description": item.get("description")})
        slug = by_price.get(price_id)
        if slug is None:
            problems.append(f"{item.get('description') or price_id!r} is not charged with a catalogue price")
            continue
        if isinstance(price, dict) and price.get("unit_amount") != expected[slug]["unit_amount"]:
            problems.append(f"{expected[slug]['name']} costs {price.get('unit_amount')}, "
                            f"not {expected[slug]['unit_amount']}")
        if slug in seen:
            problems.append(f"{expected[slug]['name']} appears on two lines")
        seen[slug] = seen.get(slug, 0) + quantity
        if quantity < 1:
            problems.append(f"{expected[slug]['name']} has quantity {quantity}")
    for slug, entry in expected.items():
        if slug not in seen:
            problems.append(f"{entry['name']} is not in the order")
    return problems, actual


@judging
def line_items_match(ctx: Any, data: dict[str, Any], view: Any) -> Any:
    """Every catalogue product, at least once, each at its catalogue price id and amount; nothing else."""
    expected = catalogue(ctx)
    problems, actual = line_item_problems(data["_line_items"], expected)
    evidence = {"session": data["id"], "expected": {e["name"]: e["unit_amount"] for e in expected.values()},
                "actual": actual}
    subtotal = sum((a["unit_amount"] or 0) * a["quantity"] for a in actual)
    if not problems and data.get("amount_subtotal") != subtotal:
        problems.append(f"amount_subtotal is {data.get('amount_subtotal')}, the lines add up to {subtotal}")
    if problems:
        return failed("; ".join(problems[:4]), **evidence)
    quantities = ", ".join(f"{a['quantity']} × {a['description']}" for a in actual)
    return passed(f"all {len(expected)} products at catalogue prices: {quantities}", **evidence)


@judging
def paid(ctx: Any, data: dict[str, Any], view: Any) -> Any:
    """Complete and paid, with a succeeded PaymentIntent for the session's total."""
    status, payment_status = data.get("status"), data.get("payment_status")
    evidence = {"status": status, "payment_status": payment_status}
    if status != "complete" or payment_status != "paid":
        return _still_open(data, view, f"status {status!r}, payment_status {payment_status!r}", **evidence)
    intent_ref = data.get("payment_intent")
    intent_id = intent_ref.get("id") if isinstance(intent_ref, dict) else intent_ref
    if not intent_id:
        return failed("the session is paid but names no PaymentIntent", session=data["id"], **evidence)
    intent = ctx.stripe.v1.payment_intents.retrieve(intent_id)
    evidence.update(payment_intent=intent_id, intent_status=intent.status, amount_received=intent.amount_received,
                    amount_total=data.get("amount_total"))
    if intent.status != "succeeded" or intent.amount_received != data.get("amount_total"):
        return failed(f"PaymentIntent {intent_id} is {intent.status} with {intent.amount_received} received",
                      session=data["id"], **evidence)
    return passed(f"paid {data.get('amount_total')} {data.get('currency')} through {intent_id}",
                  session=data["id"], **evidence)


def _promotion_coupon(ctx: Any, promo_id: str) -> tuple[str | None, str | None]:
    """(code, coupon id) of a promotion code, in either API version's shape."""
    promo = ctx.stripe.v1.promotion_codes.retrieve(promo_id).to_dict(recursive=True)
    promotion = promo.get("promotion") or {}
    coupon = promotion.get("coupon") if promotion else promo.get("coupon")
    return promo.get("code"), coupon.get("id") if isinstance(coupon, dict) else coupon


@judging
def promotion_discount(ctx: Any, data: dict[str, Any], view: Any) -> Any:
    """The launch promotion code (20% off coupon) discounted the order."""
    codes = []
    for entry in data.get("discounts") or []:
        promo_ref = entry.get("promotion_code")
        promo_id = promo_ref.get("id") if isinstance(promo_ref, dict) else promo_ref
        if promo_id:
            code, coupon = _promotion_coupon(ctx, promo_id)
            codes.append({"promotion_code": promo_id, "code": code, "coupon": coupon})
    discount = (data.get("total_details") or {}).get("amount_discount") or 0
    subtotal = data.get("amount_subtotal") or 0
    expected_off = round(subtotal * SEED.PERCENT_OFF / 100)
    evidence = {"session": data["id"], "discounts": codes, "amount_discount": discount,
                "expected_coupon": SEED.COUPON_ID, "expected_discount": expected_off}
    right = [c for c in codes if c["coupon"] == SEED.COUPON_ID]
    if not right:
        what = f"promotion code(s) {', '.join(str(c['code']) for c in codes)}" if codes else "no promotion code"
        return _still_open(data, view, f"{what} on the session; expected {SEED.PROMOTION_CODE}",
                           **{k: v for k, v in evidence.items() if k != "session"})
    # Stripe rounds the discount per line item, so allow a cent per line.
    if discount <= 0 or abs(discount - expected_off) > max(1, len(data["_line_items"])):
        return failed(f"{right[0]['code']} is on the session but the discount is {discount}, expected about "
                      f"{expected_off}", **evidence)
    return passed(f"{right[0]['code']} took {discount} off {subtotal}", **evidence)


def _shipping(data: dict[str, Any]) -> dict[str, Any] | None:
    """The collected shipping details, wherever this API version puts them."""
    collected = data.get("collected_information") or {}
    return collected.get("shipping_details") or data.get("shipping_details") or data.get("shipping")


@judging
def email_and_shipping(ctx: Any, data: dict[str, Any], view: Any) -> Any:
    """Checkout collected the buyer's email and a shipping address."""
    email = (data.get("customer_details") or {}).get("email")
    shipping = _shipping(data) or {}
    address = shipping.get("address") or {}
    missing = [k for k in ("line1", "city", "postal_code", "country") if not address.get(k)]
    evidence = {"email": email, "shipping_address": address or None,
                "shipping_address_collection": data.get("shipping_address_collection")}
    if not data.get("shipping_address_collection"):
        return failed("the session does not collect a shipping address (shipping_address_collection unset)",
                      session=data["id"], **evidence)
    if not email or missing:
        gaps = (["email"] if not email else []) + [f"address {k}" for k in missing]
        return _still_open(data, view, "not collected: " + ", ".join(gaps), **evidence)
    return passed(f"{email}, shipping to {address.get('city')} {address.get('country')}", session=data["id"],
                  **evidence)


# ---------------------------------------------------------------- the app


def app_catalogue(ctx: Any, view: Any) -> Any:
    """The shop page and GET /api/products still list every product with its catalogue price."""

    def read() -> Any:
        expected = catalogue(ctx)
        http = ctx.http("APP_URL")
        page = http.get("/")
        api = http.get("/api/products")
        problems = []
        if page.status_code != 200:
            problems.append(f"GET / answered {page.status_code}")
        else:
            problems += [f"the shop page does not list {e['name']}" for e in expected.values() if e["name"] not in page.text]
        listed: list[Any] = []
        if api.status_code != 200:
            problems.append(f"GET /api/products answered {api.status_code}")
        else:
            try:
                body = api.json()
            except ValueError:
                body = None
            listed = body.get("data") if isinstance(body, dict) else body
            if not isinstance(listed, list):
                problems.append("GET /api/products is not a JSON list of products")
                listed = []
            prices = {str(p.get("price")) for p in listed if isinstance(p, dict)}
            problems += [f"/api/products lacks {e['name']} at {e['price']}" for e in expected.values()
                         if e["price"] not in prices]
        evidence = {"products_listed": len(listed), "expected": [e["name"] for e in expected.values()]}
        if problems:
            return failed("; ".join(problems[:4]), **evidence)
        return passed(f"/ and /api/products list all {len(expected)} products", **evidence)

    return _cached(ctx, "app_catalogue", read)


CARD_ELEMENT = re.compile(r"confirmCardPayment|\.create\(\s*['\"]card['\"]")
SCRIPT_SRC = re.compile(r"<script[^>]*\bsrc=[\"']([^\"']+)[\"']", re.IGNORECASE)


def card_element_removed(ctx: Any, view: Any) -> Any:
    """With a cart, /checkout and its own scripts no longer create a Card Element or call confirmCardPayment."""
    base = str(ctx.http("APP_URL").base_url).rstrip("/")
    with httpx.Client(base_url=base, timeout=ctx.http_timeout, follow_redirects=True) as http:  # its own cookie jar
        slug = SEED.CATALOGUE[0][0]
        http.post("/cart/add", data={"product_id": slug, "quantity": "1"})
        page = http.get("/checkout")
        if page.status_code != 200:
            return failed(f"GET /checkout with a cart answered {page.status_code}", url=str(page.url))
        sources = {"/checkout": page.text}
        for src in SCRIPT_SRC.findall(page.text):
            url = page.url.join(src)
            if url.host == page.url.host and url.port == page.url.port:  # the shop's scripts, not stripe.js
                sources[url.path] = http.get(url).text
    found = {path: m.group(0) for path, text in sources.items() if (m := CARD_ELEMENT.search(text))}
    if found:
        return failed("the checkout still uses the Card Element: " + ", ".join(f"{v} in {k}" for k, v in found.items()),
                      found=found, scanned=sorted(sources))
    return passed(f"no Card Element in /checkout or its {len(sources) - 1} script(s)", scanned=sorted(sources))


def _session_ids(ctx: Any) -> set[str]:
    return {s.id for s in ctx.stripe.v1.checkout.sessions.list(params={"limit": 100}).data}


async def checkout_page_builds_session(ctx: Any, view: Any) -> Any:
    """A fresh cart (2 teapots, 1 whisk) opened at /checkout becomes an embedded session with those quantities."""
    base = str(ctx.http("APP_URL").base_url).rstrip("/")
    expected = catalogue(ctx)
    before = await asyncio.to_thread(_session_ids, ctx)
    page = await ctx.browser()
    for slug, quantity in FRESH_CART.items():
        added = await page.request.post(f"{base}/cart/add", form={"product_id": slug, "quantity": str(quantity)})
        if not added.ok:
            return failed(f"POST /cart/add for {slug} answered {added.status}", cart=FRESH_CART)
    # The page may create the session after it loads (fetchClientSecret), so wait for the network to go quiet
    # (the form's iframe included), then give a slow server a last moment.
    from playwright.async_api import TimeoutError as PageTimeout

    try:
        await page.goto(f"{base}/checkout", wait_until="networkidle", timeout=PAGE_QUIET_TIMEOUT)
    except PageTimeout:
        pass  # a page that never goes quiet is judged by the session it created all the same
    deadline = time.monotonic() + SETTLE_TIMEOUT
    while not (created := sorted((await asyncio.to_thread(_session_ids, ctx)) - before)):
        if time.monotonic() > deadline:
            break
        await asyncio.sleep(0.25)
    if not created:
        return failed("opening /checkout with a cart created no Checkout Session", cart=FRESH_CART, url=page.url)
    data = await asyncio.to_thread(session, ctx, created[-1])
    want = {expected[slug]["price"]: qty for slug, qty in FRESH_CART.items()}
    got = {}
    for item in data["_line_items"]:
        price = item.get("price") or {}
        got[price.get("id") if isinstance(price, dict) else price] = item.get("quantity")
    evidence = {"session": data["id"], "expected_quantities": want, "actual_quantities": got,
                "ui_mode": data.get("ui_mode"), "allow_promotion_codes": data.get("allow_promotion_codes")}
    problems = []
    if got != want:
        problems.append(f"the session's quantities {got} do not match the cart {want}")
    if data.get("ui_mode") not in EMBEDDED:
        problems.append(f"the session's ui_mode is {data.get('ui_mode')!r}")
    if not data.get("allow_promotion_codes"):
        problems.append("the session does not let the customer enter a promotion code")
    if problems:
        return failed("; ".join(problems), **evidence)
    return passed(f"/checkout built {data['id']} from the cart: {got}", **evidence)


GRADER = Grader(
    (
        Criterion("catalogue still served", 1,
                  "After the migration the app still serves its catalogue: the shop page lists every product and "
                  "GET /api/products returns each with its catalogue price (judged with a Checkout Session, so an "
                  "untouched app earns nothing).", app_catalogue),
        Criterion("embedded checkout", 2,
                  "The Checkout Session uses embedded Checkout (ui_mode embedded, called embedded_page from API "
                  "version 2026-03-25), mounted in the shop's own page rather than redirecting to a hosted page.",
                  embedded_ui, on=(SESSION,)),
        Criterion("payment mode", 1, "The Checkout Session is a one-time payment (mode payment).", payment_mode,
                  on=(SESSION,)),
        Criterion("line items match the catalogue", 2,
                  "The order holds every product at least once, each charged with its catalogue Price (same id and "
                  "amount), and nothing else.", line_items_match, on=(SESSION,)),
        Criterion("paid", 2,
                  "The Checkout Session is complete and paid, and its PaymentIntent succeeded for the session's "
                  "total.", paid, on=(SESSION, "payment_intent")),
        Criterion("promotion code applied", 2,
                  f"The customer's promotion code {SEED.PROMOTION_CODE} discounted the order by its coupon's "
                  f"{SEED.PERCENT_OFF}%.", promotion_discount, on=(SESSION,)),
        Criterion("email and shipping collected", 1,
                  "Checkout collected the buyer's email and a shipping address (line 1, city, postal code, country).",
                  email_and_shipping, on=(SESSION,)),
        Criterion("card element removed", 1,
                  "The deprecated path is gone: opened with a cart, the checkout page and the shop's own scripts no "
                  "longer create a Card Element or call confirmCardPayment (checked at the end).",
                  card_element_removed, final_only=True, per_candidate=False),
        Criterion("checkout keeps cart quantities", 1,
                  "Opening /checkout with a fresh cart (2 teapots, 1 whisk) creates an embedded Checkout Session with "
                  "exactly those quantities that accepts promotion codes (checked in a browser at the end).",
                  checkout_page_builds_session, final_only=True, per_candidate=False),
    ),
    description="Harbor Tea's checkout migrated from the Card Element to embedded Checkout, and one paid order of "
                "every product with the LAUNCH20 promotion code.",
    candidates=Candidates(SESSION, from_submission=first_id("cs_")),
)
