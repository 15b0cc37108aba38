"""End to end: the oracle (and a mutant) on the tiny-shop fixture, on the emulator, with live grading."""

from __future__ import annotations

from pathlib import Path

import pytest

from stripebench_tui.core.events import (
    EpisodeEnd,
    Event,
    Finding,
    GraderVerdict,
    Service,
    StripeObject,
    StripeRequest,
    ToolCall,
    ToolResult,
)
from stripebench_tui.core.trace import open_trace
from stripebench_tui.runtime.episode import Episode, EpisodeConfig, run_episode
from stripebench_tui.runtime.grade import EMULATOR_STATE, grade_episode
from stripebench_tui.runtime.reaper import tagged_pids

from .helpers import process_tag, trace_lines

pytestmark = pytest.mark.slow


async def _run(tmp_path: Path, name: str, **kwargs) -> tuple[Episode, list[Event]]:
    seen: list[Event] = []
    episode = Episode(EpisodeConfig(env="tiny-shop", episode_dir=tmp_path / name, **kwargs), subscribers=[seen.append])
    result = await episode.run()
    assert result.trace_path == tmp_path / name / "trace.jsonl"
    return episode, seen


async def test_oracle_episode_passes_with_live_verdicts_and_leaves_nothing(tmp_path: Path) -> None:
    episode, seen = await _run(tmp_path, "ok")
    result = episode.result
    assert result is not None and result.reason == "agent_done", result
    assert result.passed is True and result.score == 1.0 and result.exit_code == 0

    trace = open_trace(result.trace_path)
    events = list(trace.iter_events())
    types = [e.type for e in events]
    assert types[-1] == "episode_end"
    # the seed ran and the app became healthy before the agent's first turn
    setup = [e for e in events if e.turn == 0]
    assert any(isinstance(e, Service) and e.service == "seed" and e.status == "exited" and e.exit_code == 0 for e in setup)
    assert any(isinstance(e, Service) and e.service == "app" and e.status == "healthy" for e in setup)
    seeded = {e.object_type for e in setup if isinstance(e, StripeObject)}
    assert {"product", "price"} <= seeded

    # the customer appears in the turn of the shell call that created it, with the request that made it
    signup = next(e for e in events if isinstance(e, ToolCall) and e.tool == "shell")
    customers = [e for e in events if isinstance(e, StripeObject) and e.object_type == "customer"]
    assert len(customers) == 1
    assert customers[0].turn == signup.turn
    assert customers[0].request_id.startswith("req_") and customers[0].event_type == "customer.created"
    assert customers[0].data["metadata"] == {"source": "tiny-shop"}

    # the request log: every request once, in the turn of the call that made it; each object names its request
    requests = [e for e in events if isinstance(e, StripeRequest)]
    by_id = {r.request_id: r for r in requests}
    assert len(by_id) == len(requests) and all(r.request_id.startswith("req_") for r in requests)
    for obj in (e for e in events if isinstance(e, StripeObject) and e.request_id):
        assert by_id[obj.request_id].turn == obj.turn, obj
    signup_result = next(e for e in events if isinstance(e, ToolResult) and e.call_id == signup.call_id)
    create = by_id[customers[0].request_id]
    assert (create.method, create.path, create.status, create.source) == ("POST", "/v1/customers", 200, "app")
    assert signup.seq < create.seq < signup_result.seq and customers[0].object_id in create.object_ids
    assert {r.source for r in requests} <= {"app", "grader"} and any(r.source == "grader" for r in requests)
    assert all(r.turn == 0 for r in requests if r.seq < signup.seq)  # the seed's
    assert not [e for e in events if isinstance(e, Finding)]  # the oracle fires no finding

    # a live verdict passed before the end, and final verdicts come before episode_end
    end_seq = next(e.seq for e in events if isinstance(e, EpisodeEnd))
    live_pass = [e for e in events if isinstance(e, GraderVerdict) and not e.final and e.status == "pass"]
    assert live_pass and all(e.seq < end_seq for e in live_pass)
    assert min(e.turn for e in live_pass) == signup.turn
    finals = [e for e in events if isinstance(e, GraderVerdict) and e.final]
    assert {e.criterion for e in finals} == {"customer email", "customer metadata", "submission"}
    assert all(e.status == "pass" and e.seq < end_seq for e in finals)

    # what subscribers saw is what was recorded, in the same order
    assert [e.seq for e in seen if e.seq <= end_seq] == [e.seq for e in events]

    # nothing left running, no secret anywhere in the episode directory
    assert tagged_pids(process_tag(result.trace_path)) == []
    key = episode.backend.secret_key
    assert key.startswith("sk_test_")
    for path in result.episode_dir.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert key.encode() not in data and b"sk_test_" not in data, path
    assert (result.episode_dir / "workspace" / "submission.txt").read_text().startswith("cus_")
    assert (result.episode_dir / "logs" / "app.log").read_text()

    # the emulator's objects were kept beside the trace, so the finished episode can be graded again later
    assert (result.episode_dir / EMULATOR_STATE).is_file()
    graded = await grade_episode(episode.env, result.episode_dir)
    assert graded.score == 1.0


async def test_mutant_loses_points_and_seeded_ids_repeat(tmp_path: Path) -> None:
    _, good_events = await _run(tmp_path, "good")
    mutant, bad_events = await _run(tmp_path, "bad", agent_options={"plan": "no-metadata"})
    assert mutant.result.passed is False and mutant.result.score == pytest.approx(2 / 3)
    assert mutant.result.exit_code == 1
    failing = {e.criterion for e in bad_events if isinstance(e, GraderVerdict) and e.final and e.status == "fail"}
    assert failing == {"customer metadata"}

    def ids(events: list[Event]) -> list[str]:
        return [e.object_id for e in events if isinstance(e, StripeObject)]

    assert ids(good_events) == ids(bad_events) and len(ids(good_events)) == 3  # same seed, same object ids

    # the replay agent makes the good run's tool calls again on a fresh environment: same objects, same score
    good_trace = tmp_path / "good" / "trace.jsonl"
    replayed, replay_events = await _run(tmp_path, "again", agent="replay", agent_options={"trace": str(good_trace)})
    assert replayed.result.passed is True
    assert ids(replay_events) == ids(good_events)
    calls = [(e.tool, e.arguments) for e in replay_events if isinstance(e, ToolCall)]
    assert [c[0] for c in calls] == ["view_file", "create_file", "shell"]


async def test_run_episode_exposes_the_driver_and_stop_ends_it(tmp_path: Path) -> None:
    got: list[Episode] = []

    def ready(episode: Episode) -> None:
        got.append(episode)
        episode.driver.stop("test")

    result = await run_episode(EpisodeConfig(env="tiny-shop", agent="human", episode_dir=tmp_path / "ep"), on_ready=ready)
    assert got and got[0].bus is not None
    assert result.reason == "stopped" and result.exit_code == 1
    lines = trace_lines(result.trace_path)
    assert lines[-1]["type"] == "episode_end" and lines[-1]["reason"] == "stopped"
    assert tagged_pids(process_tag(result.trace_path)) == []


async def test_stop_during_setup_ends_the_wait_for_a_service(tmp_path: Path) -> None:
    episode: Episode

    def watch(event: Event) -> None:
        if isinstance(event, Service) and event.service == "sleeper" and event.status == "starting":
            episode.stop("changed my mind")

    episode = Episode(EpisodeConfig(env="broken-health", episode_dir=tmp_path / "ep"), subscribers=[watch])
    result = await episode.run()
    assert result.reason == "stopped" and not result.setup_failed
    lines = trace_lines(result.trace_path)
    assert lines[-1]["type"] == "episode_end" and lines[-1]["reason"] == "stopped"
    assert not any(line.get("status") == "unhealthy" for line in lines)
    assert tagged_pids(process_tag(result.trace_path)) == []


async def test_the_agents_shell_sees_the_episode_variables_and_keys_stay_out_of_the_trace(tmp_path: Path) -> None:
    def ready(episode: Episode) -> None:
        episode.agent.submit("shell", {"command": 'echo "$STRIPE_API_BASE|$STRIPE_JS_URL|$APP_URL|$STRIPE_SECRET_KEY"'})
        episode.agent.finish()

    got: list[Episode] = []
    result = await run_episode(EpisodeConfig(env="tiny-shop", agent="human", episode_dir=tmp_path / "ep"),
                               on_ready=lambda e: (got.append(e), ready(e)))
    episode = got[0]
    variables = episode.sandbox.variables()
    output = next(line["output"] for line in trace_lines(result.trace_path) if line["type"] == "tool_result")
    base, js, app, key = output.splitlines()[0].split("|")
    assert base == episode.backend.api_base and js == base + "/v3"
    assert app == variables["APP_URL"] == f"http://127.0.0.1:{variables['APP_PORT']}"
    assert episode.backend.secret_key not in output and "sk_test_" not in output and key  # redacted, not empty
    assert result.reason == "agent_done" and result.passed is False
