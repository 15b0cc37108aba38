"""The app's PostgreSQL database in a checkpoint (runtime.pg_checkpoint), on real clusters from Debian's package:
dumped at a checkpoint, the rows changed, then loaded into a new cluster before it listens: the tables as they were."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from stripebench_tui.envs.manifest import PostgresSpec
from stripebench_tui.runtime import postgres
from stripebench_tui.runtime.checkpoints import Checkpointer, CheckpointFailed, Policy, list_checkpoints
from stripebench_tui.runtime.pg_checkpoint import DUMP_FILE, PostgresSaver, database_savers, stage_restore
from stripebench_tui.runtime.services import free_port
from tests.runtime.test_postgres import PSQL

SPEC = PostgresSpec(role="model", password="password", database="saas_db")
TABLES = ("customers", "orders")


class Server:
    """One cluster served by ``python -m stripebench_tui.runtime.postgres serve`` (the episode's service)."""

    def __init__(self, data: Path, restore_from: Path | None = None) -> None:
        self.port = free_port()
        argv = [sys.executable, "-m", "stripebench_tui.runtime.postgres", "serve", "--data", str(data),
                "--port", str(self.port), "--role", SPEC.role, "--password-env", postgres.PASSWORD_VAR,
                "--database", SPEC.database]
        if restore_from is not None:
            argv += ["--restore-from", str(restore_from)]
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     env={**os.environ, postgres.PASSWORD_VAR: SPEC.password})
        self.lines: list[str] = []  # its own ("postgres: …")
        self.output: list[str] = []  # everything, the server's log too

    @property
    def url(self) -> str:
        return postgres.url_for(SPEC, self.port)

    def wait_listening(self) -> list[str]:
        """Its own lines, once the server on the episode's port (started after any restore) accepts connections."""
        assert self.proc.stdout is not None
        listening = False
        for line in self.proc.stdout:
            self.output.append(line.rstrip())
            if line.startswith("postgres:"):
                self.lines.append(line.rstrip())
            listening = listening or line.startswith(f"postgres: listening on 127.0.0.1:{self.port} ")
            if listening and "database system is ready to accept connections" in line:
                return self.lines
        raise AssertionError(f"exited with {self.proc.wait()}: {self.lines}")

    def sql(self, text: str) -> str:
        out = subprocess.run([PSQL, self.url, "-w", "-v", "ON_ERROR_STOP=1", "-tAc", text], capture_output=True,
                             text=True, timeout=30, env={**os.environ, "PGPASSFILE": os.devnull})
        assert out.returncode == 0, out.stderr
        return out.stdout

    def tables(self) -> dict[str, str]:
        """Each table's rows, in key order, as psql prints them."""
        return {t: self.sql(f"select * from {t} order by id") for t in TABLES}

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=30)


@pytest.fixture
def servers():  # a list the test appends its Servers to; all stopped at the end
    made: list[Server] = []
    yield made
    for server in made:
        server.stop()


def _fill(server: Server) -> None:
    server.sql("create table customers (id serial primary key, email text unique not null, created timestamptz "
               "default now());"
               "create table orders (id serial primary key, customer int references customers(id), amount int, "
               "status text default 'open', meta jsonb);"
               "create index orders_status on orders(status);"
               "insert into customers (email) values ('alice@example.com'), ('bob@example.com');"
               "insert into orders (customer, amount, meta) values (1, 1000, '{\"sku\": \"a\"}'), (2, 2500, null);")


def test_a_dump_at_a_checkpoint_restores_the_tables_as_they_were_after_later_changes(tmp_path: Path, servers) -> None:
    first = Server(tmp_path / "one" / "postgres")
    servers.append(first)
    first.wait_listening()
    _fill(first)
    at_checkpoint = first.tables()
    checkpoint = tmp_path / "checkpoint"
    checkpoint.mkdir()
    size = PostgresSaver(SPEC, first.port, postgres.find_binaries()).save(checkpoint)
    assert size == (checkpoint / DUMP_FILE).stat().st_size > 0
    assert sorted(p.name for p in checkpoint.iterdir()) == [DUMP_FILE], "no partial file left"
    # the turns after the checkpoint change every table
    first.sql("update orders set status = 'paid' where id = 1; delete from orders where id = 2;"
              "insert into customers (email) values ('carol@example.com'); drop index orders_status;")
    assert first.tables() != at_checkpoint
    first.stop()

    episode = tmp_path / "two"
    staged = stage_restore(checkpoint, 3, episode)
    assert staged == size
    second = Server(episode / "postgres", restore_from=episode / postgres.RESTORE_FILE)
    servers.append(second)
    lines = second.wait_listening()
    assert any(ln.startswith(f"postgres: restored {SPEC.database} from {postgres.RESTORE_FILE}") for ln in lines), lines
    # A connection while it starts is refused with "the database system is starting up" (a probe, what the wait
    # through postmaster.pid avoids); a backend still ending when the private server stops is not a probe.
    probed = [ln for ln in second.output if "FATAL" in ln and ("starting up" in ln or "not yet accepting" in ln)]
    assert not probed, "nothing probed the server while it started"
    assert second.tables() == at_checkpoint
    assert second.sql("select indexname from pg_indexes where tablename = 'orders' order by 1").split() == \
        ["orders_pkey", "orders_status"]
    assert second.sql("select tableowner from pg_tables where schemaname = 'public' order by tablename").split() == \
        ["model", "model"], "the app's role owns what it made"
    # the sequences go on where they were: the next customer is the third, as in the recorded run at that turn
    assert second.sql("insert into customers (email) values ('dave@example.com') returning id").split()[0] == "3"
    assert not (episode / postgres.RESTORE_FILE).exists(), "a loaded dump is consumed"


def test_without_a_dump_the_cluster_starts_empty(tmp_path: Path, servers) -> None:
    server = Server(tmp_path / "pg", restore_from=tmp_path / postgres.RESTORE_FILE)  # what a fresh episode runs
    servers.append(server)
    lines = server.wait_listening()
    assert not any("restored" in ln for ln in lines)
    assert server.sql("select count(*) from pg_tables where schemaname = 'public'").strip() == "0"


def test_a_dump_that_does_not_load_fails_the_service_with_one_line(tmp_path: Path) -> None:
    bad = tmp_path / postgres.RESTORE_FILE
    bad.write_bytes(b"PGDMP not really a dump")
    server = Server(tmp_path / "pg", restore_from=bad)
    out, _ = server.proc.communicate(timeout=120)
    assert server.proc.returncode == 2
    last = out.strip().splitlines()[-1]
    assert last.startswith(f"postgres: restoring {postgres.RESTORE_FILE} with pg_restore failed (exit 1): "), out
    assert not (tmp_path / "pg").exists(), "nothing half-made is left"


def test_the_checkpointer_counts_the_dump_and_a_failed_dump_leaves_no_checkpoint(tmp_path: Path, servers) -> None:
    from stripebench_emulator import Emulator

    server = Server(tmp_path / "episode" / "postgres")
    servers.append(server)
    server.wait_listening()
    _fill(server)
    savers = database_savers(SPEC, {postgres.PORT_VAR: str(server.port)})
    assert [s.name for s in savers] == ["postgres"]
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "app.py").write_text("print('hi')\n")
    trace = tmp_path / "episode" / "trace.jsonl"
    emulator = Emulator(seed=1)
    try:
        checkpointer = Checkpointer(trace, workspace, emulator, policy=Policy(), databases=savers, cap_bytes=10**9)
        info = checkpointer.take(1, next_seq=5)
        dump = info.path / DUMP_FILE
        assert info.databases == ["postgres"] and dump.is_file()
        emulator_bytes = (info.path / "emulator.sqlite").stat().st_size
        assert info.bytes_own >= emulator_bytes + dump.stat().st_size, "the dump is in the checkpoint's disk use"
        assert list_checkpoints(trace)[0].databases == ["postgres"], "info.json says what it holds"
        # the cap counts the dumps: a cap below two checkpoints prunes the older one
        second = checkpointer.take(2, next_seq=9)
        checkpointer.cap_bytes = second.disk_bytes + info.disk_bytes - 1
        assert checkpointer.prune() == [1]
        server.stop()  # the database is gone: the next turn cannot be dumped
        with pytest.raises(CheckpointFailed, match="pg_dump of saas_db failed"):
            checkpointer.take(3, next_seq=12)
        assert not (info.path.parent / "3").exists(), "nothing of a failed checkpoint is left"
        assert [c.turn for c in list_checkpoints(trace)] == [2]
    finally:
        emulator.close()


async def test_a_turn_whose_database_cannot_be_saved_says_so_and_the_episode_goes_on(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from stripebench_emulator import Emulator
    from stripebench_tui.core.bus import EventBus
    from stripebench_tui.core.events import Service

    class Unreachable:
        name = "postgres"

        def save(self, where: Path) -> int:
            raise RuntimeError("pg_dump of shop failed (exit 1): connection refused")

    workspace = tmp_path / "workspace"
    workspace.mkdir()
    trace = tmp_path / "episode" / "trace.jsonl"
    emulator = Emulator(seed=1)
    bus = EventBus()
    seen: list = []
    bus.subscribe(seen.append)
    try:
        checkpointer = Checkpointer(trace, workspace, emulator, policy=Policy(), databases=[Unreachable()],
                                    on_taken=lambda info, pruned: seen.append(info))
        bus.turn = 4
        await checkpointer.turn_end_hook(SimpleNamespace(bus=bus, recorder=None))  # type: ignore[arg-type]
        await bus.drain(5)
    finally:
        await bus.close()
        emulator.close()
    assert [(e.service, e.stream, e.text) for e in seen if isinstance(e, Service)] == \
        [("checkpoint", "stderr", "turn 4: no checkpoint: pg_dump of shop failed (exit 1): connection refused")]
    assert list_checkpoints(trace) == [] and checkpointer.taken == []


def test_no_postgres_no_saver() -> None:
    assert database_savers(None, {postgres.PORT_VAR: "5432"}) == []


# ---- end to end: an episode on the pg-shop fixture, then a fork of it at turn N ----

def _tables(trace_path: Path) -> dict[int, list[str]]:
    """Each turn's customers table at the turn's end, as the episode's shell call printed it (its rows)."""
    from stripebench_tui.core.events import ToolResult
    from stripebench_tui.core.trace import open_trace

    return {e.turn: _rows(e.output) for e in open_trace(trace_path).iter_events() if isinstance(e, ToolResult)}


def _rows(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if "|" in ln]


PG_ENVS = Path(__file__).resolve().parents[1] / "fixtures" / "pg_envs"


@pytest.mark.slow
async def test_a_fork_of_a_postgres_episode_restores_its_database_at_turn_n(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from stripebench_tui.core.events import Service
    from stripebench_tui.core.trace import open_trace
    from stripebench_tui.runtime.episode import Episode, EpisodeConfig
    from stripebench_tui.runtime.fork import fork_config, fork_episode
    from stripebench_tui.runtime.restore import RestoredEpisode

    monkeypatch.setenv("STRIPEBENCH_ENVIRONMENTS", str(PG_ENVS))
    parent = await Episode(EpisodeConfig(env="pg-shop", episode_dir=tmp_path / "parent")).run()
    assert parent.reason == "agent_done", parent
    notes = [e.text for e in open_trace(parent.trace_path).iter_events()
             if isinstance(e, Service) and e.service == "checkpoint"]
    assert not [n for n in notes if "no checkpoint" in n], notes
    infos = list_checkpoints(parent.trace_path)
    assert [(i.turn, i.databases) for i in infos] == [(t, ["postgres"]) for t in (1, 2, 3, 4)]
    recorded = _tables(parent.trace_path)
    assert recorded[2] == ["1|alice@example.com|paid", "2|bob@example.com|new"]

    at = 2
    fork = fork_episode(parent.trace_path, at, fork_config(parent.trace_path, "oracle", episode_dir=tmp_path / "fork"))
    assert isinstance(fork, RestoredEpisode)
    seen: dict[str, str] = {}
    continue_from = fork._before_agent

    async def look_then_continue(bus) -> None:  # the episode's EventBus
        url = fork.sandbox.variables()["POSTGRES_URL"]
        out = subprocess.run([PSQL, url, "-w", "-tAc", "select * from customers order by id"], capture_output=True,
                             text=True, timeout=30, env={**os.environ, "PGPASSFILE": os.devnull})
        seen["rows"], seen["error"] = out.stdout, out.stderr
        await continue_from(bus)

    fork._before_agent = look_then_continue  # type: ignore[method-assign]
    result = await fork.run()
    assert result.reason == "agent_done", result
    # before the agent went on: the table as the recorded run left it at turn N (not empty, not as at its end)
    assert seen["error"] == "", seen
    assert _rows(seen["rows"]) == recorded[at]
    events = list(open_trace(result.trace_path).iter_events())
    setup = [e for e in events if e.turn == 0 and isinstance(e, Service)]
    assert any(e.service == "checkpoint" and e.text.startswith(f"restored turn {at} ")
               and "the PostgreSQL database" in e.text for e in setup), [e.text for e in setup]
    assert any(e.service == "postgres" and "restored shop from postgres-restore.dump" in e.text for e in setup)
    # the oracle's next step ran on the restored table and printed what the recorded run printed
    assert _tables(result.trace_path)[at + 1] == recorded[at + 1] == \
        ["2|bob@example.com|new", "3|carol@example.com|new"]


@pytest.mark.slow
async def test_a_resumed_postgres_episode_gets_its_database_back_from_the_last_checkpoint(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    from stripebench_tui.core.events import EpisodeResume, ToolResult
    from stripebench_tui.core.trace import open_trace
    from stripebench_tui.runtime.episode import Episode, EpisodeConfig
    from stripebench_tui.runtime.fork import summary_of
    from stripebench_tui.runtime.resume import resume_config, resumed_episode

    monkeypatch.setenv("STRIPEBENCH_ENVIRONMENTS", str(PG_ENVS))
    episode_dir = tmp_path / "episode"
    whole = await Episode(EpisodeConfig(env="pg-shop", episode_dir=episode_dir)).run()
    trace_path = whole.trace_path
    recorded = _tables(trace_path)
    # made into a run that died in turn 3: its trace as it was when turn 3's checkpoint was about to be taken,
    # no checkpoint after turn 2, and the dead server's cluster left in the episode directory
    infos = {i.turn: i for i in list_checkpoints(trace_path)}
    with trace_path.open("r+b") as fh:
        fh.truncate(infos[3].trace_bytes)
    for turn in (3, 4):
        shutil.rmtree(infos[turn].path)
    (episode_dir / postgres.DATA_DIR).mkdir()
    (episode_dir / postgres.DATA_DIR / "PG_VERSION").write_text("15\n")

    trace = open_trace(trace_path)
    resumed = resumed_episode(trace, resume_config(trace), summary_of)
    result = await resumed.run()
    assert result.reason == "agent_done", result
    events = list(open_trace(trace_path).iter_events())
    [resume] = [e for e in events if isinstance(e, EpisodeResume)]
    assert resume.from_turn == 2
    assert [e.turn for e in events if isinstance(e, ToolResult)] == [1, 2, 3], "turn 3 played once, again"
    # turn 3 deleted Alice and signed up Carol on the database as it was at turn 2: the same table (and ids) as
    # the uninterrupted run's
    assert _tables(trace_path)[3] == recorded[3] == ["2|bob@example.com|new", "3|carol@example.com|new"]
