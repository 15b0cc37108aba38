"""Checkpoints (runtime.checkpoints) and instant forks (runtime.restore): the policy, the incremental workspace store,
the app's SQLite databases, pruning, and end to end on the tiny-shop fixture: every checkpoint restores to the
world as it was, and a fork from one continues without re-executing and passes."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from stripebench_tui.core.events import ModelMessage, Service, ToolCall
from stripebench_tui.core.trace import open_trace
from stripebench_tui.errors import UserError
from stripebench_tui.runtime.checkpoints import (
    BLOBS,
    Checkpointer,
    Policy,
    WorkspaceScanner,
    checkpoints_dir,
    collect_blobs,
    du,
    list_checkpoints,
    restore_workspace,
)
from stripebench_tui.runtime.episode import EpisodeConfig
from stripebench_tui.runtime.fork import ForkEpisode, fork_config, fork_episode
from stripebench_tui.runtime.restore import RestoredEpisode
from tests.checkpoint_checks import compare_restores, play_witnessed, workspace_files

# ---- the policy ----

@pytest.mark.parametrize("text, every, wanted", [("every", 1, [1, 2, 3, 4]), ("every:2", 2, [2, 4]), ("off", 0, []),
                                                 ("EVERY:3", 3, [3])])
def test_policy(text: str, every: int, wanted: list[int]) -> None:
    policy = Policy.parse(text)
    assert policy.every == every
    assert [t for t in range(0, 5) if policy.wants(t)] == wanted


@pytest.mark.parametrize("text", ["sometimes", "every:0", "every:x", "every:-1"])
def test_bad_policy_is_one_line(text: str) -> None:
    with pytest.raises(UserError, match="--checkpoint takes"):
        Policy.parse(text)


# ---- the workspace store ----

def _scanner(tmp_path: Path) -> tuple[Path, WorkspaceScanner]:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "app.py").write_text("print('v1')\n")
    (ws / "README").write_text("readme\n")
    (ws / "node_modules" / "pkg").mkdir(parents=True)
    (ws / "node_modules" / "pkg" / "index.js").write_text("x")
    os.symlink("src/app.py", ws / "link.py")
    (ws / "empty").mkdir()
    blobs = tmp_path / BLOBS
    blobs.mkdir()
    return ws, WorkspaceScanner(ws, blobs)


def test_unchanged_files_cost_nothing_and_are_not_read_again(tmp_path: Path) -> None:
    ws, scanner = _scanner(tmp_path)
    first, added = scanner.scan()
    assert added == len("print('v1')\n") + len("readme\n")
    assert set(first["entries"]) == {"src", "src/app.py", "README", "link.py", "empty"}  # node_modules left out
    assert first["entries"]["link.py"] == {"kind": "link", "target": "src/app.py"}
    os.chmod(ws / "README", 0)  # unreadable: a second scan that read it again would drop it
    try:
        second, added = scanner.scan()
    finally:
        os.chmod(ws / "README", 0o644)
    assert added == 0 and second["entries"]["README"]["sha"] == first["entries"]["README"]["sha"]
    (ws / "src" / "app.py").write_text("print('v2 is longer')\n")
    third, added = scanner.scan()
    assert added == len("print('v2 is longer')\n")
    assert third["entries"]["src/app.py"]["sha"] != first["entries"]["src/app.py"]["sha"]


def test_a_restore_is_the_workspace_file_by_file_and_owns_its_files(tmp_path: Path) -> None:
    ws, scanner = _scanner(tmp_path)
    os.chmod(ws / "src" / "app.py", 0o755)
    (ws / "paths.txt").write_text(f"data at {tmp_path}/ws/data\n")
    manifest, _ = scanner.scan()
    cp = tmp_path / "cp"
    cp.mkdir()
    (cp / "workspace.json").write_text(json.dumps(manifest))
    from stripebench_tui.runtime.checkpoints import CheckpointInfo

    info = CheckpointInfo(turn=1, path=cp)
    (tmp_path / BLOBS).rename(tmp_path / "blobs-moved")  # blobs sit beside the checkpoints
    (cp.parent / BLOBS).symlink_to(tmp_path / "blobs-moved")
    out = tmp_path / "restored" / "ws"
    assert restore_workspace(info, out, remap=[(f"{tmp_path}/", f"{tmp_path}/restored/")]) == 3
    got, want = workspace_files(out), workspace_files(ws)
    assert got.pop("paths.txt") == f"data at {tmp_path}/restored/ws/data\n".encode()
    want.pop("paths.txt")
    want = {k: v for k, v in want.items() if not k.startswith("node_modules")}
    assert got == want
    assert os.stat(out / "src" / "app.py").st_mode & 0o777 == 0o755
    # the restored file is its own: writing it in place leaves the stored copy alone
    (out / "README").write_text("changed\n")
    blob = next(p for p in (tmp_path / "blobs-moved").glob("*/*") if p.read_bytes() == b"readme\n")
    assert blob.read_bytes() == b"readme\n"


def test_a_checkpoint_names_no_path_outside_the_workspace(tmp_path: Path) -> None:
    from stripebench_tui.runtime.checkpoints import CheckpointInfo

    cp = tmp_path / "cp"
    cp.mkdir()
    (cp / "workspace.json").write_text(json.dumps({"entries": {"../evil": {"kind": "dir"}}}))
    with pytest.raises(UserError, match="leaves the workspace"):
        restore_workspace(CheckpointInfo(turn=1, path=cp), tmp_path / "out")


def test_an_app_database_is_copied_whole_with_its_journal_in_it(tmp_path: Path) -> None:
    ws, scanner = _scanner(tmp_path)
    live = sqlite3.connect(ws / "shop.db")
    live.execute("PRAGMA journal_mode=WAL")
    live.execute("CREATE TABLE orders (id TEXT, paid INTEGER)")
    live.execute("INSERT INTO orders VALUES ('o1', 0)")
    live.commit()
    first, _ = scanner.scan()
    live.execute("UPDATE orders SET paid=1")  # only in the WAL: the main file's stat may not change
    live.commit()
    assert (ws / "shop.db-wal").exists()
    second, _ = scanner.scan()
    assert "shop.db-wal" not in second["entries"] and "shop.db-shm" not in second["entries"]
    assert second["entries"]["shop.db"]["sqlite"] is True
    assert second["entries"]["shop.db"]["sha"] != first["entries"]["shop.db"]["sha"]
    blob = tmp_path / BLOBS / second["entries"]["shop.db"]["sha"][:2] / second["entries"]["shop.db"]["sha"]
    copy = sqlite3.connect(f"file:{blob}?mode=ro", uri=True)
    assert copy.execute("SELECT id, paid FROM orders").fetchall() == [("o1", 1)]
    copy.close()
    live.close()


def test_pruning_keeps_the_newest_and_frees_unused_blobs(tmp_path: Path) -> None:
    from stripebench_emulator import Emulator

    trace = tmp_path / "trace.jsonl"
    trace.write_text("")
    ws = tmp_path / "ws"
    ws.mkdir()
    emulator = Emulator(seed=1)
    try:
        checkpointer = Checkpointer(trace, ws, emulator, policy=Policy(1), cap_bytes=10**9)
        for turn in (1, 2, 3):
            (ws / "big.bin").write_bytes(bytes([turn]) * 200_000)  # a new 200 kB content each turn
            checkpointer.take(turn, next_seq=turn)
        assert [c.turn for c in list_checkpoints(trace)] == [1, 2, 3]
        assert all(c.bytes_new == 200_000 for c in checkpointer.taken)
        checkpointer.cap_bytes = du(checkpoints_dir(trace)) - 1  # one byte too many
        assert checkpointer.prune() == [1]
        assert [c.turn for c in list_checkpoints(trace)] == [2, 3]
        assert len(list((checkpoints_dir(trace) / BLOBS).glob("*/*"))) == 2  # turn 1's content went with it
        checkpointer.cap_bytes = 1  # nothing fits: everything but the newest goes
        assert checkpointer.prune() == [2]
        assert [c.turn for c in list_checkpoints(trace)] == [3]
        assert collect_blobs(trace) == 0
    finally:
        emulator.close()


# ---- end to end on the tiny-shop fixture ----

@pytest.fixture(scope="module")
def parent(tmp_path_factory: pytest.TempPathFactory):  # a WitnessedEpisode
    """One oracle episode with a checkpoint at every turn, its world also copied the naive way at each."""
    import asyncio

    from tests.fixture_envs import FIXTURES

    with pytest.MonkeyPatch.context() as mp:  # what the autouse fixture_envs does, for the whole module
        mp.setenv("STRIPEBENCH_ENVIRONMENTS", str(FIXTURES))
        mp.setenv("STRIPEBENCH_GRADERS", str(FIXTURES / "graders"))
        mp.delenv("STRIPE_SECRET_KEY", raising=False)
        root = tmp_path_factory.mktemp("checkpointed")
        episode = asyncio.run(play_witnessed(EpisodeConfig(env="tiny-shop", episode_dir=root / "ep")))
    assert episode.result is not None and episode.result.passed, episode.result
    return episode


@pytest.mark.slow
def test_every_checkpoint_restores_the_world_as_it_was(parent, tmp_path: Path) -> None:
    trace_path = parent.result.trace_path
    turns = compare_restores(parent, tmp_path / "scratch")
    last = max(e.turn for e in open_trace(trace_path).iter_events())
    assert turns == list(range(1, last + 1))
    notes = [e.text for e in open_trace(trace_path).iter_events()
             if isinstance(e, Service) and e.service == "checkpoint"]
    assert len(notes) == len(turns) and all(" on disk " in n for n in notes)


@pytest.mark.slow
async def test_checkpoints_off_takes_none(tmp_path: Path) -> None:
    from stripebench_tui.runtime.episode import Episode

    episode = Episode(EpisodeConfig(env="tiny-shop", episode_dir=tmp_path / "off", checkpoint="off"))
    result = await episode.run()
    assert result.passed and not checkpoints_dir(result.trace_path).exists()
    assert not [e for e in open_trace(result.trace_path).iter_events() if isinstance(e, Service)
                and e.service == "checkpoint"]


def test_checkpoints_are_unavailable_where_the_world_is_not_ours(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from stripebench_tui.runtime import postgres
    from stripebench_tui.runtime.checkpoints import unavailable_reason

    assert "real Stripe" in unavailable_reason("stripe", "local", False)
    assert "docker" in unavailable_reason("emulator", "docker", False)
    assert unavailable_reason("emulator", "local", False) == ""
    assert unavailable_reason("emulator", "local", True) == "", "a PostgreSQL database is dumped with pg_dump"
    bin_dir = tmp_path / "bin"  # a server without its client programs
    bin_dir.mkdir()
    for name in ("initdb", "postgres"):
        (bin_dir / name).write_text("#!/bin/sh\n")
    monkeypatch.setenv(postgres.BIN_VAR, str(bin_dir))
    assert unavailable_reason("emulator", "local", True) == \
        f"the environment's PostgreSQL database cannot be dumped here (pg_dump, pg_restore not found in {bin_dir})"


@pytest.mark.slow
async def test_a_fork_restores_the_checkpoint_and_passes_without_re_executing(parent, tmp_path: Path) -> None:
    trace_path = parent.result.trace_path
    recorded = list(open_trace(trace_path).iter_events())
    config = fork_config(trace_path, "oracle", episode_dir=tmp_path / "fork")
    fork = fork_episode(trace_path, 1, config)
    assert isinstance(fork, RestoredEpisode)
    result = await fork.run()
    assert result.passed, result
    events = list(open_trace(result.trace_path).iter_events())
    header = open_trace(result.trace_path).header
    assert header.extra["forked_from"] == {"trace": str(trace_path.resolve()), "turn": 1, "mode": "restore"}
    # turn 1 is the recorded one, published again; the new episode's own turns start at 2
    assert [e.tool for e in events if isinstance(e, ToolCall) and e.turn == 1] == \
        [e.tool for e in recorded if isinstance(e, ToolCall) and e.turn == 1]
    setup = [e for e in events if e.turn == 0 and isinstance(e, Service)]
    assert not [e for e in setup if e.service == "seed"], "the seed ran again"
    assert any(e.service == "checkpoint" and e.text.startswith("restored turn 1") for e in setup)
    # the oracle went on with the plan's second step, not its first
    said = [e.text for e in events if isinstance(e, ModelMessage) and e.role == "assistant" and e.turn == 2]
    assert said == [e.text for e in recorded if isinstance(e, ModelMessage) and e.role == "assistant" and e.turn == 2]
    # the fork keeps checkpoints of its own turns, not its parent's
    assert [c.turn for c in list_checkpoints(result.trace_path)][0] == 2


def test_reexecute_or_a_turn_without_checkpoint_re_executes(parent, tmp_path: Path) -> None:
    trace_path = parent.result.trace_path
    config = fork_config(trace_path, "noop", episode_dir=tmp_path / "a")
    assert isinstance(fork_episode(trace_path, 0, config), ForkEpisode)  # turn 0 has no checkpoint
    config = fork_config(trace_path, "noop", episode_dir=tmp_path / "b")
    assert isinstance(fork_episode(trace_path, 2, config, reexecute=True), ForkEpisode)
    config = fork_config(trace_path, "noop", episode_dir=tmp_path / "c")
    assert isinstance(fork_episode(trace_path, 2, config), RestoredEpisode)


def test_a_fork_brings_the_recorded_outputs_and_screenshots_under_names_of_their_own(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from stripebench_tui.core.events import ToolResult
    from stripebench_tui.runtime.checkpoints import CheckpointInfo
    from stripebench_tui.runtime.fork import summary_of

    parent = tmp_path / "parent"
    (parent / "trace.jsonl.d" / "outputs").mkdir(parents=True)
    (parent / "trace.jsonl.d" / "outputs" / "00000012.txt").write_text("the whole output")
    (parent / "screenshots").mkdir()
    (parent / "screenshots" / "001-cart.png").write_bytes(b"png")
    (tmp_path / "outside.png").write_bytes(b"not the episode's")
    episode = RestoredEpisode(EpisodeConfig(env="tiny-shop"), CheckpointInfo(turn=1, path=tmp_path),
                              SimpleNamespace(path=parent / "trace.jsonl"), summary_of)  # type: ignore[arg-type]
    result = ToolResult(sidecar="trace.jsonl.d/outputs/00000012.txt",
                        images=["screenshots/001-cart.png", "../outside.png"])
    new = tmp_path / "new"
    episode._bring_files(result, new)
    assert result.sidecar == "trace.jsonl.d/outputs/parent-00000012.txt"
    assert (new / result.sidecar).read_text() == "the whole output"
    assert result.images == ["screenshots/parent-001-cart.png", "../outside.png"]  # nothing brought from outside
    assert (new / "screenshots" / "parent-001-cart.png").read_bytes() == b"png"
    assert not (tmp_path / "parent-outside.png").exists()


def test_the_checkpoints_command_lists_disk_use(parent, capsys, tmp_path: Path) -> None:
    from stripebench_tui.commands.checkpoints import checkpoints

    checkpoints(parent.result.trace_path.parent)
    lines = capsys.readouterr().out.splitlines()
    infos = list_checkpoints(parent.result.trace_path)
    assert lines[0].split() == ["turn", "files", "new", "files", "state", "on", "disk", "took"]
    assert [int(line.split()[0]) for line in lines[1:-1]] == [i.turn for i in infos]
    assert lines[-1].startswith("total ") and lines[-1].endswith(str(checkpoints_dir(parent.result.trace_path)))
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "trace.jsonl").write_bytes(parent.result.trace_path.read_bytes())
    with pytest.raises(UserError, match="nothing to list") as caught:
        checkpoints(bare)
    assert caught.value.exit_code == 4
