"""subscription-gym: the seed and its database, the grader's calendar arithmetic, the grader on the starter app and
on an app that records the wrong status, the plans, and validate."""

from __future__ import annotations

import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest

from stripebench_emulator.testing import TEST_KEY, emulator, emulator_server, stripe_client  # noqa: F401 - pytest fixtures, requested by name below
from stripebench_tui.core.events import FAIL, PASS
from stripebench_tui.envs.catalog import find_environment
from stripebench_tui.grading import GradingContext, load_grader

from .helpers import load_grader_module, played_files, validate_failing

ENV = find_environment("subscription-gym")
GRADER = load_grader(ENV)
G = load_grader_module(ENV, "subscription_gym.py", "gym_grader_under_test")
SOLUTION_APP = ENV.path("solution/files/app.py").read_text()


def _utc(*parts: int) -> int:
    return int(datetime(*parts, tzinfo=UTC).timestamp())


def test_months_after_clamps_to_the_end_of_shorter_months():
    assert G.months_after(_utc(2026, 1, 31, 12), 1) == _utc(2026, 2, 28, 12)
    assert G.months_after(_utc(2026, 1, 10, 12), 12) == _utc(2027, 1, 10, 12)
    assert G.months_after(_utc(2026, 3, 1), -1) == _utc(2026, 2, 1)


@pytest.mark.parametrize("plan", [ENV.manifest.solution] + ENV.manifest.mutants, ids=lambda ref: ref.name)
def test_every_file_edit_in_the_plans_applies_to_the_file_it_edits(plan):
    """Played blind, an edit that matched nothing would leave a mutant identical to the solution."""
    files, edits = played_files(ENV, plan)
    compile(files["app.py"], "app.py", "exec")
    assert "subscribe.py" not in files  # the integration lives in the app
    if plan.name != "oracle":
        assert edits and files["app.py"] != SOLUTION_APP


def test_without_a_running_app_every_model_fails_rather_than_erroring(tmp_path):
    ctx = GradingContext(env=ENV, episode_dir=tmp_path, workspace=tmp_path, stripe_api_base="http://127.0.0.1:9",
                         stripe_api_key="sk_test_unused")
    results = G._results(ctx)
    assert set(results) == {c.name for c in GRADER.criteria} and len(results) >= 8
    assert {o.status for o in results.values()} == {FAIL}
    assert "cannot grade" in results["trial_14"].summary and "no app URL" in results["trial_14"].summary


# ---------------------------------------------------------------- the seed, the app and the grader on the emulator


def _run_seed(workspace: Path, url: str) -> str:
    """The seed as an episode runs it: its own process, in the workspace, with the episode's Stripe variables."""
    env = {**os.environ, "STRIPE_API_BASE": url, "STRIPE_SECRET_KEY": TEST_KEY}
    env.pop("STRIPE_API_VERSION", None)
    env.pop("DATABASE_PATH", None)
    done = subprocess.run([sys.executable, str(ENV.path("seed.py"))], cwd=workspace, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _rows(workspace: Path, sql: str) -> list[tuple]:
    conn = sqlite3.connect(workspace / "plans.db")
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


@pytest.fixture
def seeded(emulator, stripe_client, tmp_path):  # noqa: F811 - pytest fixtures
    workspace = tmp_path / "workspace"
    shutil.copytree(ENV.workspace, workspace)
    _run_seed(workspace, emulator.url)
    ctx = GradingContext(env=ENV, episode_dir=tmp_path, workspace=workspace, stripe_api_base=emulator.url,
                         stripe_api_key=TEST_KEY)
    yield SimpleNamespace(workspace=workspace, ctx=ctx, client=stripe_client, url=emulator.url)
    ctx.close()


def test_the_seed_fills_the_database_with_every_graded_plan_and_accounts_whose_customers_have_a_card(seeded):
    plans = _rows(seeded.workspace, "SELECT id, name, description FROM plans ORDER BY position")
    assert [p[0] for p in plans] == G.NAMES
    assert all(name and len(description) > 40 for _, name, description in plans)
    accounts = _rows(seeded.workspace, "SELECT id, stripe_customer FROM accounts ORDER BY id")
    assert len(accounts) == 3
    for _, customer_id in accounts:
        customer = seeded.client.v1.customers.retrieve(customer_id)
        assert customer.invoice_settings.default_payment_method
    prices = seeded.client.v1.prices.list(params={"limit": 100}).data
    # A second run (the seed is idempotent) makes nothing twice.
    _run_seed(seeded.workspace, seeded.url)
    assert _rows(seeded.workspace, "SELECT id, stripe_customer FROM accounts ORDER BY id") == accounts
    assert len(_rows(seeded.workspace, "SELECT id FROM plans")) == len(plans)
    assert len(seeded.client.v1.prices.list(params={"limit": 100}).data) == len(prices) == 5
    assert len(seeded.client.v1.customers.list(params={"limit": 100}).data) == 3


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _start_app(seeded) -> subprocess.Popen:
    """``python app.py`` in the seeded workspace, serving on a free port once it answers /health."""
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, "APP_PORT": str(port), "STRIPE_SECRET_KEY": TEST_KEY, "STRIPE_API_BASE": seeded.url}
    env.pop("DATABASE_PATH", None)
    env.pop("STRIPE_API_VERSION", None)
    proc = subprocess.Popen([sys.executable, "app.py"], cwd=seeded.workspace, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 30  # ends only an app that never starts
    while True:
        assert proc.poll() is None, f"the app exited with {proc.returncode}"
        try:
            if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        assert time.monotonic() < deadline, "the app never answered /health"
        time.sleep(0.1)
    seeded.ctx.app_urls["APP_URL"] = url
    return proc


def _stop(proc: subprocess.Popen) -> None:
    os.killpg(proc.pid, 15)
    proc.wait(timeout=10)


@pytest.mark.slow
def test_the_starter_app_fails_every_model_on_its_501_and_lists_the_accounts(seeded):
    proc = _start_app(seeded)
    try:
        results = G._results(seeded.ctx)
        page = seeded.ctx.http().get("/")
    finally:
        _stop(proc)
    assert set(results) == set(G.NAMES) and {o.status for o in results.values()} == {FAIL}
    assert all("POST /signup" in o.summary and "answered 501" in o.summary for o in results.values())
    # The grader registered one company per model through the app, and support's page lists them from the database.
    registered = _rows(seeded.workspace, "SELECT company FROM accounts WHERE company LIKE 'Gym %'")
    assert len(registered) == len(G.NAMES)
    assert page.status_code == 200 and "Northwind Robotics" in page.text and registered[0][0] in page.text


@pytest.mark.slow
def test_an_app_that_records_the_wrong_status_fails_only_the_model_where_it_differs(seeded):
    """The solution, except that every row says 'active': right for all models but the trial."""
    app = seeded.workspace / "app.py"
    recorded = '(account["id"], plan["id"], sub.id, sub.status))'
    assert SOLUTION_APP.count(recorded) == 1
    app.write_text(SOLUTION_APP.replace(recorded, '(account["id"], plan["id"], sub.id, "active"))'))
    proc = _start_app(seeded)
    try:
        results = G._results(seeded.ctx)
    finally:
        _stop(proc)
    failing = {name for name, outcome in results.items() if outcome.status != PASS}
    assert failing == {"trial_14"}, {name: results[name].summary for name in failing}
    assert "recorded status 'active'" in results["trial_14"].summary and "'trialing'" in results["trial_14"].summary
    # every clock the grader made was deleted afterwards
    assert seeded.client.v1.test_helpers.test_clocks.list().data == []


@pytest.mark.drill
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_validate_oracle_passes_noop_scores_zero_and_each_mutant_fails_its_own_model():
    failing = validate_failing(ENV)  # also: the oracle fires no finding, metered-400-as-success fires its own
    assert failing["oracle"] == set()
    assert failing["no-op"] == {c.name for c in GRADER.criteria}
    assert failing["mutant coupon-forever"] == {"coupon_3_months"}
    assert failing["mutant upgrade-next-invoice"] == {"upgrade"}
    assert failing["mutant metered-400-as-success"] == {"usage"}
    assert {m.name: m.finding for m in ENV.manifest.mutants}["metered-400-as-success"] == "400-as-success"
