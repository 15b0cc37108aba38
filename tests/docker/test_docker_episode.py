"""Episodes in the docker sandbox on a real engine: oracles score 1.0, and nothing is left behind."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from stripebench_tui.core.events import Service
from stripebench_tui.core.trace import open_trace
from stripebench_tui.runtime.docker_engine import LABEL_EPISODE
from stripebench_tui.runtime.episode import Episode, EpisodeConfig
from stripebench_tui.runtime.reaper import tagged_pids

pytestmark = [pytest.mark.docker, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]


def _containers(client, tag: str) -> list:
    return client.containers.list(all=True, filters={"label": f"{LABEL_EPISODE}={tag}"}, ignore_removed=True)


async def _run(docker_client, tmp_path: Path, **kwargs) -> tuple[Episode, list]:
    seen: list = []
    episode = Episode(EpisodeConfig(sandbox="docker", episode_dir=tmp_path / "ep", **kwargs), subscribers=[seen.append])
    await episode.run()
    return episode, seen


async def test_backend_oracle_scores_1_in_a_container_that_is_removed(docker_client, tmp_path: Path) -> None:
    episode, seen = await _run(docker_client, tmp_path, env="tiny-shop")
    result = episode.result
    assert result is not None and result.reason == "agent_done", result
    assert result.score == 1.0 and result.passed is True
    header = open_trace(result.trace_path).header
    assert header.sandbox == "docker"
    assert header.extra["container"] == episode.sandbox.container_name
    # the app ran inside the container and was healthy before the agent started
    docker_up = [e for e in seen if isinstance(e, Service) and e.service == "docker" and e.status == "healthy"]
    assert docker_up and "of stripebench/env-tiny-shop:" in docker_up[0].text and "running as uid" in docker_up[0].text
    assert any(isinstance(e, Service) and e.service == "app" and e.status == "healthy" for e in seen)
    # the submission the shell wrote in the container is on this machine, readable
    assert (result.episode_dir / "workspace" / "submission.txt").read_text().startswith("cus_")
    assert _containers(docker_client, episode.sandbox.tag) == []
    assert tagged_pids(episode.sandbox.tag) == []


@pytest.mark.browser
async def test_full_stack_oracle_scores_1_in_docker(docker_client, tmp_path: Path) -> None:
    episode, _ = await _run(docker_client, tmp_path, env=str(REPO / "environments" / "checkout-migration"),
                            graders_dir=REPO / "graders")
    result = episode.result
    assert result is not None and result.reason == "agent_done", result
    assert result.score == 1.0 and result.passed is True, result
    assert _containers(docker_client, episode.sandbox.tag) == []
    assert tagged_pids(episode.sandbox.tag) == []


async def test_no_engine_ends_the_episode_with_the_reason(docker_client, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    episode, _ = await _run(docker_client, tmp_path, env="tiny-shop")
    result = episode.result
    assert result is not None and result.setup_failed and result.exit_code == 4
    assert "no Docker engine reachable" in result.error and "no-engine.sock" in result.error
    end = list(open_trace(result.trace_path).iter_events())[-1]
    assert end.type == "episode_end" and "no Docker engine reachable" in end.error
    assert tagged_pids(episode.sandbox.tag) == []


async def test_image_build_failure_is_one_recorded_reason(docker_client, tmp_path: Path) -> None:
    env_dir = tmp_path / "envs" / "tiny-shop"
    shutil.copytree(REPO / "tests" / "fixtures" / "envs" / "tiny-shop", env_dir)
    (env_dir / "Dockerfile").write_text("ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\nRUN echo broken step && exit 3\n")
    manifest = env_dir / "environment.toml"
    manifest.write_text(manifest.read_text() + '\n[docker]\ndockerfile = "Dockerfile"\n')
    episode, _ = await _run(docker_client, tmp_path, env=str(env_dir))
    result = episode.result
    assert result is not None and result.setup_failed
    assert "image build failed" in result.error and "exit" in result.error.lower(), result.error
    assert _containers(docker_client, episode.sandbox.tag) == []
    assert tagged_pids(episode.sandbox.tag) == []
