"""A fork late in a SaaS-starter episode (Next.js on the episode's own PostgreSQL) restores its database from the
checkpoint instead of re-executing: the app's tables hold what they held at that turn (the user the oracle signed
up, the team with its Stripe customer and subscription), and the oracle goes on from there and passes (the long
tier: the recorded run alone is a few minutes)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from stripebench_tui.core.events import ToolCall
from stripebench_tui.core.trace import open_trace
from stripebench_tui.runtime import postgres
from stripebench_tui.runtime.checkpoints import checkpoint_at
from stripebench_tui.runtime.episode import Episode, EpisodeConfig
from stripebench_tui.runtime.fork import fork_config, fork_episode
from stripebench_tui.runtime.pg_checkpoint import DUMP_FILE
from stripebench_tui.runtime.restore import RestoredEpisode
from tests.published.conftest import published_folder

pytestmark = [pytest.mark.drill, pytest.mark.slow, pytest.mark.timeout(1500)]


def table_data(sql: str) -> dict[str, list[str]]:
    """A data-only dump's rows by table (each table's COPY block, its rows sorted) and its sequences' values:
    the same database gives the same, whichever program printed it and in whichever order."""
    out: dict[str, list[str]] = {}
    current = ""
    for line in sql.splitlines():
        if current:
            if line == "\\.":
                current = ""
            else:
                out[current].append(line)
        elif line.startswith("COPY "):
            current = line
            out[current] = []
        elif line.startswith("SELECT pg_catalog.setval("):
            out.setdefault("sequences", []).append(line)
    return {table: sorted(rows) for table, rows in out.items()}


async def test_a_late_fork_of_the_saas_starter_restores_its_database_and_passes(tmp_path: Path) -> None:
    folder = published_folder("saas-starter-partial-payments", tmp_path)
    parent = await Episode(EpisodeConfig(env=str(folder), episode_dir=tmp_path / "parent")).run()
    assert parent.passed, parent
    trace_path = parent.trace_path
    assert trace_path is not None
    # the last turn before the oracle's closing shell check: every browser step (sign-up, both payments) is behind
    shell_turns = [e.turn for e in open_trace(trace_path).iter_events()
                   if isinstance(e, ToolCall) and e.tool == "shell"]
    at = shell_turns[-1] - 1
    info = checkpoint_at(trace_path, at)
    assert info is not None and info.databases == ["postgres"]
    binaries = postgres.find_binaries()
    assert binaries is not None
    recorded = table_data(subprocess.run([binaries.tool("pg_restore"), "--data-only", "-f", "-",
                                          str(info.path / DUMP_FILE)], capture_output=True, text=True,
                                         check=True, timeout=120).stdout)
    users = next(rows for table, rows in recorded.items() if table.startswith("COPY public.users "))
    assert any("oracle@example.com" in row for row in users), "the turn's checkpoint holds the signed-up user"

    fork = fork_episode(trace_path, at, fork_config(trace_path, "oracle", episode_dir=tmp_path / "fork"))
    assert isinstance(fork, RestoredEpisode)
    seen: dict[str, str] = {}
    continue_from = fork._before_agent

    async def look_then_continue(bus) -> None:  # the episode's EventBus
        variables = fork.sandbox.variables()
        spec = fork.env.manifest.postgres
        seen["data"] = subprocess.run(
            [binaries.tool("pg_dump"), *postgres.client_args(int(variables[postgres.PORT_VAR]), spec.role,
                                                             spec.database), "--data-only"],
            env=postgres.client_env(spec.password), capture_output=True, text=True, check=True, timeout=120).stdout
        await continue_from(bus)

    fork._before_agent = look_then_continue  # type: ignore[method-assign]
    result = await fork.run()
    assert table_data(seen["data"]) == recorded, "the fork's tables, once its app is up, are those of turn N"
    assert result.passed, result
