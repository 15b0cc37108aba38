"""checkout-migration: the seed, the grader's judgement on real emulator sessions, the app's restarts, and validate."""

from __future__ import annotations

import asyncio
import importlib.util
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest

from stripebench_emulator.testing import TEST_KEY, emulator, emulator_server, stripe_client  # noqa: F401 - pytest fixtures, requested by name below
from stripebench_tui.core.events import FAIL, PASS, PENDING
from stripebench_tui.envs.catalog import find_environment
from stripebench_tui.envs.workspace import copy_workspace
from stripebench_tui.grading import GradingContext, GradingView, load_grader
from tests.environments.helpers import assert_findings, played_files, run_seed

ENV = find_environment("checkout-migration")
GRADER = load_grader(ENV)


def _grader_module():
    spec = importlib.util.spec_from_file_location("cm_grader_under_test",
                                                  ENV.root.parents[1] / "graders" / "checkout_migration.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


G = _grader_module()
SEED = G.SEED


# ---------------------------------------------------------------- pure helpers


def catalogue_fixture() -> dict[str, dict]:
    return {slug: {"name": name, "price": f"price_{slug}", "unit_amount": amount}
            for slug, _product, name, _description, amount in SEED.CATALOGUE}


def item(slug: str, quantity: int, amount: int | None = None) -> dict:
    expected = catalogue_fixture()[slug]
    return {"description": expected["name"], "quantity": quantity,
            "price": {"id": expected["price"], "unit_amount": expected["unit_amount"] if amount is None else amount}}


def test_line_items_of_the_whole_catalogue_pass_and_each_fault_is_named():
    expected = catalogue_fixture()
    everything = [item(slug, 2 if slug == "teapot" else 1) for slug in expected]
    assert G.line_item_problems(everything, expected)[0] == []

    missing = [i for i in everything if i["description"] != "Earl Grey"]
    assert G.line_item_problems(missing, expected)[0] == ["Earl Grey is not in the order"]

    cheap = [item("sencha", 1, amount=1)] + everything[1:]
    assert G.line_item_problems(cheap, expected)[0] == ["Sencha green tea costs 1, not 1200"]

    inline = everything + [{"description": "Gift wrap", "quantity": 1, "price": {"id": "price_inline", "unit_amount": 300}}]
    assert G.line_item_problems(inline, expected)[0] == ["'Gift wrap' is not charged with a catalogue price"]

    doubled = everything + [item("whisk", 1)]
    assert G.line_item_problems(doubled, expected)[0] == ["Bamboo matcha whisk appears on two lines"]


class _Promo:
    def __init__(self, data: dict) -> None:
        self.data = data

    def to_dict(self, recursive: bool = True) -> dict:
        return self.data


def _ctx_with_promo(data: dict) -> SimpleNamespace:
    codes = SimpleNamespace(retrieve=lambda _id: _Promo(data))
    return SimpleNamespace(stripe=SimpleNamespace(v1=SimpleNamespace(promotion_codes=codes)))


def test_promotion_codes_are_read_in_both_api_shapes():
    newer = {"id": "promo_1", "code": "LAUNCH20", "promotion": {"type": "coupon", "coupon": SEED.COUPON_ID}}
    older = {"id": "promo_1", "code": "LAUNCH20", "coupon": {"id": SEED.COUPON_ID, "percent_off": 20}}
    assert G._promotion_coupon(_ctx_with_promo(newer), "promo_1") == ("LAUNCH20", SEED.COUPON_ID)
    assert G._promotion_coupon(_ctx_with_promo(older), "promo_1") == ("LAUNCH20", SEED.COUPON_ID)


def test_shipping_is_found_where_each_api_version_puts_it():
    address = {"line1": "1 Main St", "city": "Town", "postal_code": "1", "country": "US"}
    assert G._shipping({"collected_information": {"shipping_details": {"address": address}}})["address"] == address
    assert G._shipping({"collected_information": None, "shipping_details": {"address": address}})["address"] == address
    assert G._shipping({"collected_information": None}) is None


def test_the_submission_names_the_session_even_among_other_words():
    assert GRADER.candidates.parse_submission("Paid: cs_test_a1B2_c3\n") == "cs_test_a1B2_c3"
    assert GRADER.candidates.parse_submission("pi_123 only") is None


@pytest.mark.parametrize("plan", [ENV.manifest.solution] + ENV.manifest.mutants, ids=lambda ref: ref.name)
def test_every_file_edit_in_the_plans_applies_to_the_file_it_edits(plan):
    """Played blind by the oracle, an edit that matched nothing would leave a mutant identical to the solution."""
    files, edits = played_files(ENV, plan)
    if plan.name != "oracle":
        assert edits and files["app.py"] != ENV.path("solution/files/app.py").read_text()


# ---------------------------------------------------------------- seed and grader on the emulator


def _seed(workspace: Path, url: str, monkeypatch) -> None:
    run_seed(SEED, workspace, url, TEST_KEY, monkeypatch)


@pytest.fixture
def seeded(emulator, stripe_client, tmp_path, monkeypatch):  # noqa: F811 - pytest fixtures
    workspace = tmp_path / "workspace"
    copy_workspace(ENV, workspace)  # with the shared devserver.py
    _seed(workspace, emulator.url, monkeypatch)
    ctx = GradingContext(env=ENV, episode_dir=tmp_path, workspace=workspace, stripe_api_base=emulator.url,
                         stripe_api_key=TEST_KEY)
    yield SimpleNamespace(workspace=workspace, ctx=ctx, client=stripe_client, url=emulator.url, monkeypatch=monkeypatch)
    ctx.close()


def test_the_seed_is_idempotent_and_writes_the_price_ids_into_the_shop_db(seeded):
    import sqlite3

    _seed(seeded.workspace, seeded.url, seeded.monkeypatch)  # a second run changes nothing
    client = seeded.client
    assert len(client.v1.products.list(params={"limit": 100}).data) == len(SEED.CATALOGUE)
    prices = client.v1.prices.list(params={"limit": 100}).data
    assert sorted(p.lookup_key for p in prices) == sorted(SEED.lookup_key(slug) for slug, *_ in SEED.CATALOGUE)
    codes = sorted(p.code for p in client.v1.promotion_codes.list(params={"limit": 100}).data)
    assert codes == sorted([SEED.PROMOTION_CODE, SEED.OTHER_PROMOTION_CODE])
    rows = sqlite3.connect(seeded.workspace / "shop.db").execute("SELECT id, stripe_price, unit_amount FROM products").fetchall()
    by_price = {p.id: p.unit_amount for p in prices}
    assert len(rows) == len(SEED.CATALOGUE)
    assert all(by_price[price] == amount for _slug, price, amount in rows)


def _session(client, ui_mode: str = "embedded_page", quantities: dict | None = None, **extra):
    prices = {p.lookup_key: p.id for p in client.v1.prices.list(params={"limit": 100}).data}
    quantities = quantities or {slug: 1 for slug, *_ in SEED.CATALOGUE}
    params = {"mode": "payment", "ui_mode": ui_mode,
              "line_items": [{"price": prices[SEED.lookup_key(slug)], "quantity": q} for slug, q in quantities.items()],
              **extra}
    if ui_mode == "embedded_page":
        params.setdefault("return_url", "http://shop.test/return?session_id={CHECKOUT_SESSION_ID}")
    else:
        params.setdefault("success_url", "http://shop.test/return")
    return client.v1.checkout.sessions.create(params=params)


def judge(ctx, check, candidate: str, final: bool = False):
    return check(ctx, GradingView({}, candidate=candidate, final=final))


def test_an_open_embedded_session_of_everything_passes_its_shape_and_waits_for_payment(seeded):
    cs = _session(seeded.client, quantities={"sencha": 1, "earl-grey": 1, "teapot": 2, "whisk": 1},
                  allow_promotion_codes=True, shipping_address_collection={"allowed_countries": ["US"]})
    ctx = seeded.ctx
    assert judge(ctx, G.embedded_ui, cs.id).status == PASS
    assert judge(ctx, G.payment_mode, cs.id).status == PASS
    line_items = judge(ctx, G.line_items_match, cs.id)
    assert line_items.status == PASS, line_items.summary
    assert "2 × Cast-iron teapot" in line_items.summary
    for check in (G.paid, G.promotion_discount, G.email_and_shipping):
        assert judge(ctx, check, cs.id).status == PENDING  # the customer can still pay
        assert judge(ctx, check, cs.id, final=True).status == FAIL


def test_a_hosted_session_a_missing_product_or_a_wrong_code_each_fail_their_criterion(seeded):
    ctx, client = seeded.ctx, seeded.client
    hosted = _session(client, ui_mode="hosted_page")
    assert judge(ctx, G.embedded_ui, hosted.id).status == FAIL

    partial = _session(client, quantities={"sencha": 3})
    outcome = judge(ctx, G.line_items_match, partial.id)
    assert outcome.status == FAIL and "Earl Grey is not in the order" in outcome.summary

    other = client.v1.promotion_codes.list(params={"code": SEED.OTHER_PROMOTION_CODE}).data[0]
    friends = _session(client, discounts=[{"promotion_code": other.id}])
    outcome = judge(ctx, G.promotion_discount, friends.id, final=True)
    assert outcome.status == FAIL and SEED.OTHER_PROMOTION_CODE in outcome.summary

    assert judge(ctx, G.payment_mode, "cs_test_does_not_exist").status == FAIL


def test_the_launch_code_on_a_session_passes_the_discount_criterion(seeded):
    client = seeded.client
    launch = client.v1.promotion_codes.list(params={"code": SEED.PROMOTION_CODE}).data[0]
    cs = _session(client, discounts=[{"promotion_code": launch.id}])
    outcome = judge(seeded.ctx, G.promotion_discount, cs.id)
    assert outcome.status == PASS, outcome.summary
    subtotal = sum(amount for *_rest, amount in SEED.CATALOGUE)
    assert outcome.evidence["amount_discount"] == round(subtotal * SEED.PERCENT_OFF / 100)


# ---------------------------------------------------------------- the workspace's app


def _start_app(workspace: Path, url: str, port: int) -> subprocess.Popen:
    env = {**os.environ, "APP_PORT": str(port), "STRIPE_SECRET_KEY": TEST_KEY, "STRIPE_API_BASE": url}
    return subprocess.Popen([sys.executable, "app.py"], cwd=workspace, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)


def _stop(proc: subprocess.Popen) -> None:
    os.killpg(proc.pid, 15)
    proc.wait(timeout=10)


@pytest.mark.slow
def test_the_app_criteria_judge_the_starter_and_a_half_migrated_app(seeded):
    port = _free_port()
    seeded.ctx.app_urls["APP_URL"] = f"http://127.0.0.1:{port}"
    view = GradingView({}, candidate="cs_any")
    healthy = lambda: _answers(f"http://127.0.0.1:{port}/health")
    proc = _start_app(seeded.workspace, seeded.url, port)
    try:
        _wait_for(healthy)
        outcome = G.app_catalogue(seeded.ctx, view)
        assert outcome.status == PASS, outcome.summary
        outcome = G.card_element_removed(seeded.ctx, view)
        assert outcome.status == FAIL and "/static/checkout.js" in outcome.summary
    finally:
        _stop(proc)
    # The solution's checkout page and script, and an app that lost its products API.
    for name in ("templates/checkout.html", "static/checkout.js"):
        shutil.copy(ENV.path(f"solution/files/{name}"), seeded.workspace / name)
    app = seeded.workspace / "app.py"
    app.write_text(app.read_text().replace('@app.get("/api/products")', '@app.get("/api/catalogue")'))
    time.sleep(G.CACHE_SECONDS)  # past the shared-read window
    proc = _start_app(seeded.workspace, seeded.url, port)
    try:
        _wait_for(healthy)
        outcome = G.app_catalogue(seeded.ctx, view)
        assert outcome.status == FAIL and "GET /api/products answered 404" in outcome.summary
        outcome = G.card_element_removed(seeded.ctx, view)
        assert outcome.status == PASS and outcome.evidence["scanned"] == ["/checkout", "/static/checkout.js"]
    finally:
        _stop(proc)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _answers(url: str, status: int = 200) -> bool:
    try:
        return httpx.get(url, timeout=2).status_code == status
    except httpx.HTTPError:
        return False


def _wait_for(predicate, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError("timed out")


@pytest.mark.slow
def test_devserver_restarts_the_app_when_its_code_changes(tmp_path):
    workspace = tmp_path / "workspace"
    copy_workspace(ENV, workspace)  # with the shared devserver.py
    port = _free_port()
    env = {**os.environ, "APP_PORT": str(port), "STRIPE_SECRET_KEY": TEST_KEY}
    proc = subprocess.Popen([sys.executable, "devserver.py"], cwd=workspace, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"

    def answers(path: str, status: int = 200) -> bool:
        return _answers(url + path, status)

    try:
        _wait_for(lambda: answers("/health"))
        assert answers("/restarted", 404)
        app = workspace / "app.py"
        app.write_text(app.read_text().replace('@app.get("/health")', '@app.get("/restarted")\n@app.get("/health")'))
        _wait_for(lambda: answers("/restarted"))
    finally:
        os.killpg(proc.pid, 15)
        output = proc.communicate(timeout=10)[0].decode()
    assert "a file changed; restarting the app" in output


# ---------------------------------------------------------------- the whole environment


@pytest.mark.drill
@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.timeout(1200)
def test_validate_oracle_passes_noop_scores_zero_and_each_mutant_fails_for_its_own_reason():
    from stripebench_tui.grading import validation
    from stripebench_tui.runtime.validate import episode_runner

    rows = asyncio.run(validation.validate([ENV], episode_runner))
    by_label = {row.run.label: row for row in rows}
    assert validation.all_ok(rows), [(r.run.label, r.outcome.score, r.outcome.error) for r in rows]
    assert_findings(rows)  # the oracle fires nothing; 400-called-success fires 400-as-success
    assert "400-as-success" in by_label["mutant 400-called-success"].outcome.findings
    assert "400-as-success" not in by_label["mutant quantities-collapsed"].outcome.findings
    failing = {label: {name for name, status in row.outcome.statuses.items() if status != PASS}
               for label, row in by_label.items()}
    assert failing["oracle"] == set()
    assert failing["mutant 400-called-success"] == {c.name for c in GRADER.criteria} - {"card element removed"}
    assert failing["mutant hosted-redirect"] == {"embedded checkout", "checkout keeps cart quantities"}
    assert failing["mutant no-promotion-codes"] == {"promotion code applied", "checkout keeps cart quantities"}
    assert failing["mutant quantities-collapsed"] == {"checkout keeps cart quantities"}
