"""checkout-gym: the hidden sessions, the grader's per-field scoring on real emulator sessions, and validate."""

from __future__ import annotations

import copy
import shutil
import sqlite3
from types import SimpleNamespace

import pytest

from stripebench_emulator.testing import TEST_KEY, emulator_server  # noqa: F401 - pytest fixtures, requested by name below
from stripebench_tui.core.events import FAIL, PASS
from stripebench_tui.envs.catalog import find_environment
from stripebench_tui.grading import GradingContext, GradingView, load_grader
from tests.environments.concurrent_validate import validate_failing_concurrently
from tests.environments.helpers import load_grader_module

ENV = find_environment("checkout-gym")
GRADER = load_grader(ENV)
G = load_grader_module(ENV, "checkout_gym.py", "checkout_gym_grader_under_test")
SEED = G.SEED


def test_every_challenge_asks_for_something_beyond_its_items_and_weighs_the_same():
    assert len(SEED.CHALLENGES) >= 10
    extras = [set(G.groups_of(c["params"])) - set(G.ALWAYS) for c in SEED.CHALLENGES]
    assert all(extras[1:]), "only the first challenge may be items alone"
    assert set().union(*extras) == set(G.GROUPS) - set(G.ALWAYS)  # every field group is exercised somewhere
    per_challenge: dict[str, float] = {}
    for c in GRADER.criteria:
        per_challenge[c.name[:3]] = per_challenge.get(c.name[:3], 0.0) + c.weight
    assert len(per_challenge) == len(SEED.CHALLENGES)
    assert all(abs(w - 1.0) < 1e-9 for w in per_challenge.values())


@pytest.fixture(scope="module")
def seeded_once(emulator_server, tmp_path_factory):  # noqa: F811 - pytest fixtures
    """The emulator emptied and seeded once for the module: the hidden sessions never change."""
    import httpx

    httpx.post(f"{emulator_server.url}/_emulator/reset", headers=emulator_server.control_headers,
               timeout=10).raise_for_status()
    workspace = tmp_path_factory.mktemp("checkout-gym") / "workspace"
    shutil.copytree(ENV.workspace, workspace)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("STRIPE_API_BASE", emulator_server.url)
        mp.setenv("STRIPE_SECRET_KEY", TEST_KEY)
        mp.delenv("STRIPE_API_VERSION", raising=False)
        mp.chdir(workspace)
        SEED.main()
        SEED.main()  # a second run creates no second set of hidden sessions
    return SimpleNamespace(workspace=workspace, url=emulator_server.url)


@pytest.fixture
def seeded(seeded_once, tmp_path):
    """Per test: no attempts recorded yet, and a fresh grading context (its reads are its own)."""
    import stripe

    client = stripe.StripeClient(TEST_KEY, base_addresses={"api": seeded_once.url}, max_network_retries=0)
    db = sqlite3.connect(seeded_once.workspace / "gym.db")
    with db:
        db.execute("DELETE FROM attempts")
    ctx = GradingContext(env=ENV, episode_dir=tmp_path, workspace=seeded_once.workspace,
                         stripe_api_base=seeded_once.url, stripe_api_key=TEST_KEY)
    prices = dict(db.execute("SELECT slug, price_id FROM catalogue"))
    promos = {code: client.v1.promotion_codes.list(params={"code": code}).data[0].id
              for _coupon, _fields, code in SEED.PROMOTIONS}
    yield SimpleNamespace(ctx=ctx, client=client, db=db, workspace=seeded_once.workspace,
                          resolve=lambda params: SEED.resolve(params, prices, promos))
    db.close()
    ctx.close()


def attempt(seeded, number: int, params: dict) -> str:
    """What the app's attempt endpoint does: create the session and record it."""
    params = {**seeded.resolve(params), "success_url": "http://gym.test/done", "metadata": {"gym_challenge": str(number)}}
    session = seeded.client.v1.checkout.sessions.create(params=params)
    with seeded.db:
        seeded.db.execute("INSERT INTO attempts (challenge, session_id) VALUES (?, ?)", (number, session.id))
    return session.id


def statuses(seeded, number: int) -> dict[str, str]:
    view = GradingView({}, final=True)
    return {c.name.removeprefix(f"c{number:02d} "): c.check(seeded.ctx, view).status
            for c in GRADER.criteria if c.name.startswith(f"c{number:02d} ")}


def test_the_seed_is_idempotent_and_writes_only_page_urls_into_the_workspace(seeded):
    targets = SEED.targets(seeded.client)
    assert sorted(targets) == list(range(1, len(SEED.CHALLENGES) + 1))
    hidden = [s for s in seeded.client.v1.checkout.sessions.list(params={"limit": 100}).auto_paging_iter()
              if "gym_target" in s.metadata.to_dict()]
    assert len(hidden) == len(SEED.CHALLENGES)  # the seed ran twice
    pages = dict(seeded.db.execute("SELECT number, page_url FROM challenges"))
    assert all(pages[n] == targets[n].url for n in targets)
    assert not any("gym_target" in p.read_text(errors="ignore") for p in seeded.workspace.rglob("*") if p.is_file()
                   and p.suffix != ".db")


def test_an_exact_copy_of_each_challenge_passes_every_criterion(seeded):
    for number, challenge in enumerate(SEED.CHALLENGES, 1):
        attempt(seeded, number, challenge["params"])
    view = GradingView({}, final=True)
    outcomes = {c.name: c.check(seeded.ctx, view) for c in GRADER.criteria}
    assert {name: o.summary for name, o in outcomes.items() if o.status != PASS} == {}
    assert GRADER.score({name: o.status for name, o in outcomes.items()}) == 1.0


def test_a_wrong_setting_fails_its_own_field_and_an_extra_one_fails_nothing_extra(seeded):
    wrong = copy.deepcopy(SEED.CHALLENGES[3]["params"])  # challenge 4: shipping countries
    wrong["shipping_address_collection"]["allowed_countries"] = ["US"]
    wrong["phone_number_collection"] = {"enabled": True}
    attempt(seeded, 4, wrong)
    assert statuses(seeded, 4) == {"mode": PASS, "line items": PASS, "shipping countries": FAIL, "nothing extra": FAIL}

    trial = copy.deepcopy(SEED.CHALLENGES[6]["params"])  # challenge 7: a 14-day trial, seen only on the page
    trial["subscription_data"]["trial_period_days"] = 7
    attempt(seeded, 7, trial)
    assert statuses(seeded, 7)["trial"] == FAIL
    attempt(seeded, 7, SEED.CHALLENGES[6]["params"])  # the latest attempt counts
    assert set(statuses(seeded, 7).values()) == {PASS}


def test_no_attempt_or_the_challenges_own_session_scores_nothing(seeded):
    assert set(statuses(seeded, 1).values()) == {FAIL}
    target = SEED.targets(seeded.client)[1].id
    with seeded.db:
        seeded.db.execute("INSERT INTO attempts (challenge, session_id) VALUES (1, ?)", (target,))
    outcome = GRADER.criterion("c01 mode").check(seeded.ctx, GradingView({}, final=True))
    assert outcome.status == FAIL and "own session" in outcome.summary


@pytest.mark.drill
@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.timeout(600)
def test_validate_oracle_passes_noop_scores_zero_and_each_mutant_fails_for_its_own_reason():
    runs = validate_failing_concurrently(ENV)
    assert runs["oracle"] == (1.0, set())
    assert runs["no-op"][0] == 0.0
    assert runs["mutant 400-called-success"][1] == {c.name for c in GRADER.criteria
                                                    if c.name[:3] in ("c06", "c09")}
    promo = runs["mutant promo-everywhere"][1]
    assert {"c03 discount", "c03 nothing extra", "c01 nothing extra"} <= promo
    assert not any(name.startswith(("c02", "c08")) for name in promo)  # they do allow codes
    assert runs["mutant items-only"][1] == {"c05 adjustable quantity", "c06 phone number", "c06 custom fields",
                                            "c07 trial", "c10 custom fields", "c10 consent", "c10 tax ids"}
