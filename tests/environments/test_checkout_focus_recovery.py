"""checkout-focus-recovery: the page's focus moves are deterministic, the grader judges exact details, and validate."""

from __future__ import annotations

import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import time
from types import SimpleNamespace

import httpx
import pytest

from stripebench_emulator.testing import TEST_KEY, emulator, emulator_server, stripe_client  # noqa: F401 - pytest fixtures, requested by name below
from stripebench_tui.core.events import FAIL, PASS
from stripebench_tui.envs.catalog import find_environment
from stripebench_tui.grading import GradingContext, GradingView, load_grader
from tests.environments.concurrent_validate import validate_failing_concurrently
from tests.environments.helpers import load_grader_module

ENV = find_environment("checkout-focus-recovery")
GRADER = load_grader(ENV)
G = load_grader_module(ENV, "checkout_focus_recovery.py", "checkout_focus_recovery_grader_under_test")
SEED = G.SEED


@pytest.fixture
def shop(emulator, stripe_client, tmp_path, monkeypatch):  # noqa: F811 - pytest fixtures
    workspace = tmp_path / "workspace"
    shutil.copytree(ENV.workspace, workspace)
    monkeypatch.chdir(workspace)
    SEED.main()
    SEED.main()  # idempotent
    ctx = GradingContext(env=ENV, episode_dir=tmp_path, workspace=workspace, stripe_api_base=emulator.url,
                         stripe_api_key=TEST_KEY)
    db = sqlite3.connect(workspace / "shop.db")
    yield SimpleNamespace(ctx=ctx, client=stripe_client, db=db, workspace=workspace, url=emulator.url)
    db.close()
    ctx.close()


def record(shop, amount: int | None = None, **details) -> None:
    """What the app's two steps record: a Customer from the details, then a paid order of ``amount``."""
    wanted = {**SEED.CUSTOMER, **details}
    address = {k: wanted[k] for k in ("line1", "city", "postal_code", "country")}
    customer = shop.client.v1.customers.create(params={"email": wanted["email"], "name": wanted["name"],
                                                       "address": address, "shipping": {"name": wanted["name"],
                                                                                        "address": address}})
    with shop.db:
        shop.db.execute("INSERT INTO customers (stripe_customer) VALUES (?)", (customer.id,))
    if amount is None:
        return
    intent = shop.client.v1.payment_intents.create(params={
        "amount": amount, "currency": "usd", "customer": customer.id, "payment_method": "pm_card_visa",
        "payment_method_types": ["card"], "confirm": True})
    with shop.db:
        shop.db.execute("INSERT INTO orders (stripe_customer, payment_intent, amount, status) VALUES (?, ?, ?, ?)",
                        (customer.id, intent.id, amount, "paid"))


def statuses(shop) -> dict[str, str]:
    view = GradingView({}, final=True)
    return {c.name: c.check(shop.ctx, view).status for c in GRADER.criteria}


def test_the_exact_order_passes_and_each_cut_short_field_fails_its_own_criterion(shop):
    assert set(statuses(shop).values()) == {FAIL}  # nothing recorded yet
    record(shop, amount=SEED.expected_total())
    assert set(statuses(shop).values()) == {PASS}
    assert SEED.expected_total() == 10200

    record(shop, amount=SEED.subtotal(), line1="510")  # the address search took the street; no code applied
    assert statuses(shop) == {"customer email": PASS, "customer name": PASS, "shipping address": FAIL,
                              "order paid": PASS, "promotion applied": FAIL}


def test_details_without_a_payment_keep_the_customer_criteria_only(shop):
    record(shop, amount=None)
    assert statuses(shop) == {"customer email": PASS, "customer name": PASS, "shipping address": PASS,
                              "order paid": FAIL, "promotion applied": FAIL}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def app_url(shop):
    port = _free_port()
    env = {**os.environ, "APP_PORT": str(port), "STRIPE_SECRET_KEY": TEST_KEY, "STRIPE_API_BASE": shop.url}
    proc = subprocess.Popen([sys.executable, "app.py"], cwd=shop.workspace, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 20
    while True:  # poll until the app answers its health check
        try:
            if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        assert time.monotonic() < deadline and proc.poll() is None, "the app did not start"
        time.sleep(0.1)
    yield url
    os.killpg(proc.pid, 15)
    proc.wait(timeout=10)


FOCUS = "() => { const e = document.activeElement; return e && e.id ? e.id : e.tagName.toLowerCase(); }"


@pytest.mark.slow
@pytest.mark.browser
def test_the_page_moves_focus_at_the_same_keystroke_every_time(app_url):
    from playwright.sync_api import sync_playwright

    from stripebench_tui.chromium import launch_options

    with sync_playwright() as pw:
        browser = pw.chromium.launch(**launch_options())
        page = browser.new_page()
        seen = []
        for _ in range(2):  # a fresh page twice: the same keystrokes land in the same places
            page.goto(f"{app_url}/checkout")
            page.locator("#email").focus()
            page.keyboard.type(SEED.CUSTOMER["email"])
            email = (page.locator("#email").input_value(), page.evaluate(FOCUS))
            page.locator("#line1").focus()
            page.keyboard.type(SEED.CUSTOMER["line1"])
            street = (page.locator("#line1").input_value(), page.locator("#address_search").input_value(),
                      page.evaluate(FOCUS))
            page.locator("#payment").evaluate("e => e.hidden = false")
            page.locator("#cardholder").focus()
            page.keyboard.type("Jenny Rosen")
            card = (page.locator("#cardholder").input_value(), page.locator("#banner_email").input_value(),
                    page.evaluate(FOCUS))
            seen.append((email, street, card))
        browser.close()
    assert seen[0] == seen[1]
    assert seen[0] == (("jen", "body"), ("510 ", "Townsend St", "address_search"), ("", "Jenny Rosen", "banner_email"))


@pytest.mark.drill
@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.timeout(600)
def test_validate_oracle_passes_noop_scores_zero_and_each_mutant_fails_for_its_own_reason():
    runs = validate_failing_concurrently(ENV)
    assert runs["oracle"] == (1.0, set())
    assert runs["no-op"][0] == 0.0
    assert runs["mutant blind-typist"][1] == {c.name for c in GRADER.criteria}
    assert runs["mutant 400-called-success"][1] == {"order paid", "promotion applied"}
    assert runs["mutant misses-address-search"][1] == {"shipping address"}


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.timeout(600)
def test_lost_focus_fires_on_the_blind_typist_and_not_on_the_oracle(tmp_path):
    """The browser tool says where the keys went; the detector flags the typing the page moved and nobody refilled."""
    import asyncio
    import json

    from stripebench_tui.grading.validation import MUTANT, ORACLE, Run
    from stripebench_tui.runtime.validate import episode_runner

    blind = next(m for m in ENV.manifest.mutants if m.name == "blind-typist")
    assert blind.finding == "lost-focus"  # its declared signature, which validate checks too
    runs = [Run(ORACLE), Run(MUTANT, blind.name, blind.finding)]

    async def play():
        return await asyncio.gather(*(episode_runner(ENV, run, keep=tmp_path / run.label.replace(" ", "-"))
                                      for run in runs))

    oracle, mutant = asyncio.run(play())
    assert not oracle.error and not mutant.error, (oracle.error, mutant.error)
    assert "lost-focus" not in oracle.findings
    assert "lost-focus" in mutant.findings
    events = [json.loads(line) for line in mutant.trace_path.read_text(encoding="utf-8").splitlines()[1:] if line]
    messages = [e["message"] for e in events if e.get("type") == "finding" and e.get("detector") == "lost-focus"]
    # The email field is redrawn under the keys (they go nowhere); the street's keys go to the address search.
    assert any("'Email'" in m and "went nowhere" in m for m in messages), messages
    assert any("'Address line 1'" in m and "Search addresses" in m for m in messages), messages
    # The oracle's typing lost focus too, and the tool said so; it refilled those fields, so nothing fired.
    oracle_events = [json.loads(line) for line in oracle.trace_path.read_text(encoding="utf-8").splitlines()[1:] if line]
    outputs = [e.get("output", "") for e in oracle_events if e.get("type") == "tool_result" and e.get("tool") == "browser_type"]
    assert any("focus after typing: moved to" in o or "focus after typing: lost" in o for o in outputs)
    assert any("focus after typing: still in" in o for o in outputs)
