"""Bisect (runtime.bisect, `stripebench bisect`): the search over checkpointed turns, and end to end with the oracle
on the tiny-shop mutant whose mistake is made at turn 2 (the handler without metadata is written then)."""

from __future__ import annotations

from pathlib import Path

import pytest

from stripebench_tui.runtime.bisect import Probe, bisect_turns


def _probe_passing_up_to(last: int | None, calls: list[int]):
    async def probe(turn: int) -> Probe:
        calls.append(turn)
        ok = last is not None and turn <= last
        return Probe(turn=turn, scores=[1.0 if ok else 0.0], passed_runs=1 if ok else 0)
    return probe


@pytest.mark.parametrize("last", [None, 1, 2, 5, 9, 10, 11, 17, 20])
async def test_the_search_finds_the_last_passing_turn_and_probes_few(last: int | None) -> None:
    turns = list(range(1, 21))
    calls: list[int] = []
    found = await bisect_turns(turns, _probe_passing_up_to(last, calls))
    assert found.last_passing == (min(last, 20) if last is not None else None)
    assert len(calls) == len(set(calls)) <= 2 + 5  # ends, then halving 20 turns
    assert [p.turn for p in found.probes] == sorted(calls)


async def test_a_turn_passes_when_half_its_runs_do() -> None:
    assert Probe(turn=1, scores=[1.0, 0.0], passed_runs=1).passed
    assert not Probe(turn=1, scores=[1.0, 0.0, 0.0], passed_runs=1).passed
    assert not Probe(turn=1).passed
    assert (await bisect_turns([], _probe_passing_up_to(3, []))).last_passing is None


@pytest.mark.slow
@pytest.mark.drill
def test_bisect_finds_the_turn_before_the_planted_mistake(tmp_path: Path, capsys) -> None:
    import asyncio

    from stripebench_tui.commands.bisect import bisect
    from stripebench_tui.runtime.episode import EpisodeConfig, run_episode

    recorded = asyncio.run(run_episode(EpisodeConfig(env="tiny-shop", agent="oracle",
                                                     agent_options={"plan": "no-metadata"},
                                                     episode_dir=tmp_path / "mutant")))
    assert recorded.passed is False
    bisect(tmp_path / "mutant", agent="oracle", hint=None, runs=1, model=None, base_url=None, plan=None,
           out=tmp_path / "forks")  # returns (exit code 0): a turn still passes
    out = capsys.readouterr().out
    assert out.rstrip().splitlines()[-1].startswith("last turn from which oracle still passes: 1 ")
    assert "turn 1: passes" in out and "turn 2: fails" in out
    assert sorted(p.name for p in (tmp_path / "forks").iterdir()) == ["turn-1-run-1", "turn-2-run-1", "turn-4-run-1"]
    # kept beside the trace for the TUI's timeline; each fork named in the mutant's lineage (its forks.jsonl)
    from stripebench_tui.formats.bisect_record import read_bisect
    from stripebench_tui.formats.lineage import read_lineage

    record = read_bisect(tmp_path / "mutant" / "trace.jsonl")
    assert record is not None and record.last_passing == 1 and [p.turn for p in record.probes] == [1, 2, 4]
    tree = read_lineage(tmp_path / "mutant").root
    assert [(c.name, c.turn, c.mode, c.passed) for c in tree.children] == [
        ("turn-1-run-1", 1, "restore", True), ("turn-2-run-1", 2, "restore", False), ("turn-4-run-1", 4, "restore", False)]
