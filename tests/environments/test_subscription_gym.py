"""subscription-gym: the grader's calendar arithmetic, a command that fails, and validate."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from stripebench_tui.core.events import FAIL
from stripebench_tui.envs.manifest import find_environment
from stripebench_tui.grading import GradingContext, load_grader

from .helpers import load_grader_module, validate_failing
from tests.emulator.fixtures import emulator, emulator_server  # noqa: F401

ENV = find_environment("subscription-gym")
GRADER = load_grader(ENV)
G = load_grader_module(ENV, "subscription_gym.py", "gym_grader_under_test")


def _utc(*parts: int) -> int:
    return int(datetime(*parts, tzinfo=timezone.utc).timestamp())


def test_months_after_clamps_to_the_end_of_shorter_months():
    assert G.months_after(_utc(2026, 1, 31, 12), 1) == _utc(2026, 2, 28, 12)
    assert G.months_after(_utc(2026, 1, 10, 12), 12) == _utc(2027, 1, 10, 12)
    assert G.months_after(_utc(2026, 3, 1), -1) == _utc(2026, 2, 1)


def test_a_workspace_whose_command_fails_fails_every_model(tmp_path, emulator):  # noqa: F811
    (tmp_path / "subscribe.py").write_text("import sys\nsys.exit('not implemented')\n")
    ctx = GradingContext(env=ENV, episode_dir=tmp_path, workspace=tmp_path, stripe_api_base=emulator.url,
                         stripe_api_key="sk_test_gym")
    results = G._results(ctx)
    assert set(results) == {c.name for c in GRADER.criteria} and len(results) >= 8
    assert {o.status for o in results.values()} == {FAIL}
    assert "exited with 1" in results["trial_14"].summary and "not implemented" in results["trial_14"].summary


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_validate_oracle_passes_noop_scores_zero_and_each_mutant_fails_its_own_model():
    failing = validate_failing(ENV)
    assert failing["oracle"] == set()
    assert failing["no-op"] == {c.name for c in GRADER.criteria}
    assert failing["mutant coupon-forever"] == {"coupon_3_months"}
    assert failing["mutant upgrade-next-invoice"] == {"upgrade"}
    assert failing["mutant metered-400-as-success"] == {"usage"}
