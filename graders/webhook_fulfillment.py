"""Grader for webhook-fulfillment: orders are fulfilled from signed checkout.session.completed events, exactly once.

Public means only. The grader starts its own copy of the shop (the manifest's command, its own port, a copy
of the workspace's database) that no Stripe webhook endpoint points at, so the grader alone decides which
events reach it and when. It buys two lamps through the copy in a real browser (the hosted Checkout page),
which redirects back to the copy's success page, then reads the copy's database: nothing may be fulfilled
yet. It fetches the real ``checkout.session.completed`` events from the Events API and delivers them itself,
each signed like Stripe signs them with the endpoint secret the seed wrote to the workspace's ``.env``:
a forged and an unsigned delivery first (both must be refused with 400 and fulfil nothing), then the second
order's event before the first's (out of order), then a duplicate of each (same event, fresh signature).
Every paid order must end with exactly one row in ``fulfillments``. Each delivery is recorded in the trace
(``grading.webhooks``): how it was signed, the copy's answer and the rows it added to the copy's database.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import sqlite3
import time
from pathlib import Path
from typing import Any

import httpx

from stripebench_tui.core.events import SIGNED, UNSIGNED
from stripebench_tui.grading import Grader, Outcome, failed, passed
from stripebench_tui.grading.app_copy import AppCopy
from stripebench_tui.grading.context import GradingUnavailable
from stripebench_tui.grading.once import once_per_context
from stripebench_tui.grading.scenarios import Miss, run_scenarios, scenario_criterion, with_run
from stripebench_tui.grading.webhooks import WRONG_SECRET, WebhookSender

# Timeouts only end a grading run that is truly stuck; a slow machine never comes near them.
APP_START_TIMEOUT = 120.0
PAGE_TIMEOUT = 60_000  # ms, each browser step
EVENT_WAIT = 60.0  # seconds for Stripe to list a paid session's checkout.session.completed
WEBHOOK_PATH = "/webhooks/stripe"
DATABASE = "shop.db"
PRODUCTS = (("desk-lamp", "Brass desk lamp"), ("lantern", "Paper lantern"))  # the two checkouts, first first
CARD = {"Card number": "4242 4242 4242 4242", "Expiration": "12 / 34", "CVC": "123", "Cardholder name": "Grace Grader"}


def read_env_file(path: Path) -> dict[str, str]:
    """KEY=VALUE lines of a .env file (missing: empty)."""
    out: dict[str, str] = {}
    if path.is_file():
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            key, sep, value = line.strip().partition("=")
            if sep and not key.startswith("#"):
                out[key.strip()] = value.strip()
    return out


class ShopCopy(AppCopy):
    """A second copy of the shop: the manifest's command, our port and a copy of the workspace database."""

    def __init__(self, ctx: Any) -> None:
        super().__init__(ctx, database=DATABASE, noun="shop", start_timeout=APP_START_TIMEOUT, http_timeout=30)

    def fulfilments(self, order_id: str) -> int:
        """Rows in ``fulfillments`` for ``order_id`` (read-only)."""
        conn = sqlite3.connect(f"{self.db_path.resolve().as_uri()}?mode=ro", uri=True, timeout=10)
        try:
            return conn.execute("SELECT COUNT(*) FROM fulfillments WHERE order_id = ?", (order_id,)).fetchone()[0]
        finally:
            conn.close()


def buy_in_browser(shop_url: str, tag: str, products: tuple[tuple[str, str], ...]) -> list[dict[str, str]]:
    """Buy each product through the shop and hosted Checkout in Chromium; the session id and success page of each."""
    from playwright.sync_api import sync_playwright

    from stripebench_tui.chromium import launch_options

    bought = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(**launch_options())
        try:
            page = browser.new_page()
            for n, (slug, name) in enumerate(products):
                page.goto(shop_url + "/", wait_until="load", timeout=PAGE_TIMEOUT)
                page.get_by_role("button", name=f"Buy {name}").click()
                page.get_by_label("Card number").wait_for(timeout=PAGE_TIMEOUT)
                page.get_by_label("Email").fill(f"grader-{tag}-{n}@example.com")
                for label, value in CARD.items():
                    page.get_by_label(label, exact=True).fill(value)
                country = page.get_by_label("Country", exact=True)
                if country.count() and country.first.is_visible():
                    country.first.select_option(label="United States")
                postal = page.get_by_label("Postal code", exact=True)
                if postal.count() and postal.first.is_visible():
                    postal.first.fill("94103")
                page.get_by_role("button", name="Pay", exact=True).click()
                page.wait_for_url(re.compile(re.escape(shop_url) + r"/success"), timeout=PAGE_TIMEOUT)
                page.wait_for_load_state("load")
                match = re.search(r"session_id=([A-Za-z0-9_]+)", page.url)
                bought.append({"product": slug, "session": match.group(1) if match else "",
                               "page_text": page.inner_text("body")[:500]})
        finally:
            browser.close()
    return bought


class Run:
    """One grading run: the shop copy, the endpoint secret, the Stripe client."""

    def __init__(self, ctx: Any) -> None:
        self.stripe = ctx.stripe.v1
        self.tag = secrets.token_hex(4)
        config = read_env_file(Path(ctx.workspace) / ".env")
        self.secret = config.get("STRIPE_WEBHOOK_SECRET") or os.environ.get("STRIPE_WEBHOOK_SECRET", "")
        if not self.secret.startswith("whsec_"):
            raise GradingUnavailable("no STRIPE_WEBHOOK_SECRET in the workspace's .env (the seed writes it there)")
        self.shop = ShopCopy(ctx)
        # Every delivery goes into the trace, with the rows it added to the copy's database (findings read them).
        self.sender = WebhookSender(self.shop.http, WEBHOOK_PATH, self.secret, record=ctx.on_delivery,
                                    measure=self.shop.row_counts)

    def close(self) -> None:
        self.shop.close()

    def event_for(self, session_id: str) -> str:
        """The JSON of the real checkout.session.completed event for ``session_id`` (waits briefly for it)."""
        deadline = time.monotonic() + EVENT_WAIT
        while True:
            for event in self.stripe.events.list({"type": "checkout.session.completed", "limit": 50}).data:
                if event.data.object.id == session_id:
                    return json.dumps(event.to_dict(), indent=2)
            if time.monotonic() > deadline:
                raise Miss(f"Stripe has no checkout.session.completed event for {session_id}; was it paid?",
                           session=session_id)
            time.sleep(0.2)

    def deliver(self, payload: str, signing: str = SIGNED, *, signed_body: str | None = None,
                timestamp: int | None = None) -> httpx.Response:
        """Deliver ``payload`` to the copy's webhook endpoint, recorded (``WebhookSender.deliver``)."""
        return self.sender.deliver(payload, signing=signing, signed_body=signed_body, timestamp=timestamp)


def order_of(run: Run, session_id: str) -> str:
    """The shop's order id behind a Checkout Session (its client_reference_id)."""
    session = run.stripe.checkout.sessions.retrieve(session_id)
    if session.payment_status != "paid" or not session.client_reference_id:
        raise Miss(f"Checkout Session {session_id} is {session.payment_status} with client_reference_id "
                   f"{session.client_reference_id!r}", session=session_id)
    return session.client_reference_id


def scenario(run: Run) -> dict[str, Outcome]:
    out: dict[str, Outcome] = {}
    bought = buy_in_browser(run.shop.url, run.tag, PRODUCTS)
    sessions = [b["session"] for b in bought]
    if not all(sessions):
        raise Miss(f"the success pages did not carry a session_id: {[b['page_text'][:80] for b in bought]}")
    orders = [order_of(run, s) for s in sessions]
    counts = [run.shop.fulfilments(o) for o in orders]
    if any(counts):
        out["not on the redirect"] = failed(f"right after the success redirect, before any webhook, the orders have "
                                            f"{counts} fulfilments; expected none", orders=orders, counts=counts)
    else:
        out["not on the redirect"] = passed("paying and landing on the success page fulfilled nothing",
                                            orders=orders, sessions=sessions)
    redirect_only = not any(counts)

    first, second = (run.event_for(s) for s in sessions)
    forged = run.deliver(first, WRONG_SECRET)
    unsigned = run.deliver(first, UNSIGNED)
    tampered_payload = first.replace(orders[0], orders[0] + "x") if orders[0] in first else first + " "
    tampered = run.deliver(tampered_payload, signed_body=first)
    statuses = [forged.status_code, unsigned.status_code, tampered.status_code]
    after_forged = run.shop.fulfilments(orders[0])
    if statuses == [400, 400, 400] and after_forged == counts[0]:
        out["rejects bad signatures"] = passed("a wrongly signed, an unsigned and a tampered delivery were refused "
                                               "with 400 and fulfilled nothing", statuses=statuses)
    else:
        out["rejects bad signatures"] = failed(f"wrong signature, no signature and a tampered body answered "
                                               f"{statuses} (expected 400 each) and left {after_forged} fulfilments "
                                               f"(expected {counts[0]})", statuses=statuses, order=orders[0])

    # Out of order: the second checkout's event first.
    answers = [run.deliver(second).status_code, run.deliver(first).status_code]
    once = [run.shop.fulfilments(o) for o in orders]
    ok_answers = all(200 <= s < 300 for s in answers)
    if redirect_only and ok_answers and once == [1, 1]:
        out["fulfils from the event"] = passed("each signed checkout.session.completed fulfilled its order once, "
                                               "the later checkout's event arriving first", orders=orders)
    else:
        why = ("the orders were already fulfilled before any event" if not redirect_only else
               f"the signed events answered {answers} and left {once} fulfilments; expected 2xx and [1, 1]")
        out["fulfils from the event"] = failed(why, orders=orders, answers=answers, fulfilments=once)

    # Duplicates: Stripe redelivers the same event (same id) with a fresh signature, also after a newer event.
    # A second later than now: fresh without waiting for the clock (verifiers only refuse signatures too old).
    later = int(time.time()) + 1
    dupes = [run.deliver(first, timestamp=later).status_code, run.deliver(second, timestamp=later).status_code,
             run.deliver(first, timestamp=later).status_code]
    final = [run.shop.fulfilments(o) for o in orders]
    if redirect_only and once == [1, 1] and all(200 <= s < 300 for s in dupes) and final == [1, 1]:
        out["exactly once"] = passed("redelivered events were acknowledged and fulfilled nothing more",
                                     answers=dupes, fulfilments=final)
    else:
        why = ("the orders were not fulfilled by their events in the first place" if not redirect_only or once != [1, 1]
               else f"duplicate deliveries answered {dupes} and left {final} fulfilments; expected 2xx and [1, 1]")
        out["exactly once"] = failed(why, answers=dupes, fulfilments=final, orders=orders)
    return out


CRITERIA: list[tuple[str, float, str]] = [
    ("not on the redirect", 2, "Paying in the hosted Checkout page and landing on the success page does not fulfil "
     "the order by itself."),
    ("rejects bad signatures", 2, "Deliveries with a wrong signature, with none, or with a body that does not match "
     "its signature are answered 400 and fulfil nothing."),
    ("fulfils from the event", 3, "A correctly signed checkout.session.completed fulfils its own order exactly once, "
     "also when a later checkout's event arrives first."),
    ("exactly once", 3, "Redelivered events (the same event id, freshly signed, after other events) are acknowledged "
     "with 2xx and leave exactly one fulfilment per order."),
]


def _results(ctx: Any) -> dict[str, Outcome]:
    """Run the scenario once per grading context and remember each criterion's outcome."""
    return once_per_context(ctx, "webhook-fulfillment", lambda: _run_scenario(ctx))


def _run_scenario(ctx: Any) -> dict[str, Outcome]:
    names = [name for name, _, _ in CRITERIA]
    results = with_run(ctx, Run, names, lambda run: run_scenarios(run, [(tuple(names), scenario)], "shop"))
    for name in names:
        results.setdefault(name, failed("not reached"))
    return results


GRADER = Grader(
    criteria=tuple(scenario_criterion(*c, _results) for c in CRITERIA),
    description="Buys two lamps in a browser through a copy of the shop, then delivers their checkout.session."
                "completed events itself: forged, out of order and duplicated; counts fulfilments in the database.",
)
