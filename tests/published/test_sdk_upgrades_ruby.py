"""sdk-upgrades-ruby as published, offline end to end (the long tier): three problems, each a Sinatra/Puma server
on stripe-ruby 7.1 or 13.5 that the oracle (the folder's solution/<problem>/) moves to stripe 15 and basil.

`stripebench validate <folder>/environment/<problem>`: the server's and the grader's gems come from the Ruby
registry where it answers, else from local sources (``envs.ruby_gems``; stripe 15.5.0 prefetched beside the app's
gems as the folder's Dockerfile does); the grader is the folder's grade.sh (its SDK version check, then its RSpec
file); the oracle scores 1.0, the untouched workspace 0 (stripe is not 15.x), each mutant below 1.0, the 400
mutant with its signature finding and none on the oracle; the folder byte for byte unchanged.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.benchfolders.conftest import tree_hash
from tests.published.conftest import published_folder, ruby_envs_path, validate, validated_score

# One validate is four episodes of a server graded by RSpec (a minute or two); the first builds the gems (puma
# compiles a C extension), later ones reuse them from the cache.
pytestmark = [pytest.mark.drill, pytest.mark.timeout(2400)]

FOLDER = "sdk-upgrades-ruby"
PROBLEMS = {  # the 400-as-success mutant first
    "charges-on-payment-intent": ["charge-list-400-called-done", "charges-still-read-from-the-payment-intent"],
    "invoice-partial-payments": ["payment-intent-invoice-400-called-done", "gem-upgraded-code-unchanged"],
    "subscription-billing-migration": ["total-count-400-called-done", "gem-upgraded-code-unchanged"],
}


@pytest.mark.parametrize("problem", sorted(PROBLEMS))
def test_validate_runs_each_problem_as_published(problem: str, tmp_path: Path) -> None:
    folder = published_folder(FOLDER, tmp_path)
    before = tree_hash(folder)
    path = folder / "environment" / problem
    envs = ruby_envs_path(folder)
    assert f"stripebench run {path}" in " ".join(envs.split()), envs
    out = validate(path)
    assert validated_score(out, "oracle") == 1.0 and validated_score(out, "no-op") == 0.0
    for mutant in PROBLEMS[problem]:
        assert validated_score(out, f"mutant {mutant}") < 1.0
    flat = " ".join(out.split())  # the findings lines wrap at the console's width
    assert f"{FOLDER}-{problem} findings: oracle: none;" in flat, out[-2000:]
    assert f"mutant {PROBLEMS[problem][0]}: 400-as-success" in flat, out[-2000:]
    assert "findings: precision 1.00" in flat and "recall 1.00" in flat, out[-2000:]
    assert tree_hash(folder) == before, "the published folder is byte for byte unchanged"
