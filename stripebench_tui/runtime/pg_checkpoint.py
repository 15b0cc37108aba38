"""The episode's PostgreSQL database in a checkpoint: saved with ``pg_dump``, restored with ``pg_restore``.

At a checkpoint (``runtime.checkpoints``), ``PostgresSaver.save`` writes ``<turn>/postgres.dump``: a custom-format
``pg_dump`` of the app's database, made by the app's role over TCP (its password in the environment, never on a
command line), with the ``pg_dump`` beside the cluster's server (same version). A fork or a resume
(``runtime.restore``) puts that dump at ``$EPISODE_DIR/postgres-restore.dump`` before the services start
(``stage_restore``); the cluster's service loads it into its new cluster before it listens (``runtime.postgres``).

Why a dump and not a copy of the cluster's files:
- consistent by construction: ``pg_dump`` reads the whole database in one repeatable-read snapshot, whatever the
  app's own processes (a worker, a timer) write meanwhile. A file copy is consistent only with the server stopped,
  or between ``pg_backup_start``/``pg_backup_stop`` with the WAL written meanwhile, and WAL replay cannot repair a
  page torn by the copy because the episode's server runs with ``full_page_writes=off`` (and ``fsync=off``);
  ``CHECKPOINT`` alone flushes the buffers but does not stop the next write;
- small: an app's database dumps to kilobytes, compressed; an empty cluster's files are some 40 MB, per checkpoint;
- the restore goes into the fresh cluster the episode makes anyway (``initdb``, role, database), so the cluster's
  password, port and data directory are the new episode's own.
What a dump leaves out, like the cluster the episode makes: other databases the app's role may have created (only
the app's database is saved) and roles (there are none but the app's).

Cost: one ``pg_dump`` per checkpoint, about 0.1 s on a small database here; on restore one extra server start on a
private port. The dump's bytes count in the checkpoint's disk use (``bytes_own``), so the cap prunes them too.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from stripebench_tui.envs.manifest import PostgresSpec
from stripebench_tui.errors import UserError
from stripebench_tui.runtime.postgres import PORT_VAR, RESTORE_FILE, Binaries, client_args, client_env, find_binaries
from stripebench_tui.runtime.reaper import die_with_parent

DUMP_FILE = "postgres.dump"  # in a checkpoint's directory
DUMP_TIMEOUT = 300.0


class DumpFailed(Exception):
    """pg_dump could not save the database (one line: its last message)."""


class PostgresSaver:
    """Saves the app's database into a checkpoint's directory (what ``Checkpointer`` calls for each database)."""

    name = "postgres"

    def __init__(self, spec: PostgresSpec, port: int, binaries: Binaries) -> None:
        self.spec = spec
        self.port = port
        self.binaries = binaries

    def save(self, where: Path) -> int:
        """Write ``where/postgres.dump``; its size in bytes. DumpFailed (nothing left behind) when pg_dump fails."""
        target = where / DUMP_FILE
        partial = where / (DUMP_FILE + ".partial")
        argv = [self.binaries.tool("pg_dump"), *client_args(self.port, self.spec.role, self.spec.database),
                "--format=custom", "--file", str(partial)]
        try:
            done = subprocess.run(argv, env=client_env(self.spec.password), capture_output=True, text=True,
                                  timeout=DUMP_TIMEOUT, preexec_fn=die_with_parent)
        except (OSError, subprocess.TimeoutExpired) as exc:
            partial.unlink(missing_ok=True)
            raise DumpFailed(f"pg_dump of {self.spec.database} failed: {exc}") from None
        if done.returncode != 0:
            partial.unlink(missing_ok=True)
            last = next((ln.strip() for ln in reversed(done.stderr.splitlines()) if ln.strip()), "no output")
            raise DumpFailed(f"pg_dump of {self.spec.database} failed (exit {done.returncode}): {last}")
        os.replace(partial, target)
        return target.stat().st_size


def database_savers(spec: PostgresSpec | None, variables: dict[str, str]) -> list[PostgresSaver]:
    """What a checkpoint of this episode saves besides the emulator and the workspace: its PostgreSQL database
    (an environment with ``[postgres]``, its cluster on ``$POSTGRES_PORT``), or nothing."""
    if spec is None:
        return []
    binaries = find_binaries()
    port = variables.get(PORT_VAR, "")
    if binaries is None or not port.isdigit():
        return []  # the cluster cannot have started either: unavailable_reason says so
    return [PostgresSaver(spec, int(port), binaries)]


def missing_tools() -> str:
    """Why this machine cannot dump and restore a cluster's database ("" when it can)."""
    binaries = find_binaries()
    if binaries is None:
        return "PostgreSQL is not installed"
    absent = [name for name in ("pg_dump", "pg_restore") if not Path(binaries.tool(name)).is_file()]
    return f"{', '.join(absent)} not found in {binaries.bin_dir}" if absent else ""


def stage_restore(checkpoint_dir: Path, turn: int, episode_dir: Path) -> int:
    """Put the checkpoint's dump where the episode's cluster service loads it before listening; its size.
    UserError when the checkpoint holds none (an environment with PostgreSQL needs it)."""
    dump = checkpoint_dir / DUMP_FILE
    if not dump.is_file():
        raise UserError(f"the checkpoint of turn {turn} holds no PostgreSQL database ({dump} is missing): "
                        "fork with --reexecute instead")
    target = episode_dir / RESTORE_FILE
    episode_dir.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(dump, target)
    return target.stat().st_size


__all__ = ["DUMP_FILE", "DumpFailed", "PostgresSaver", "database_savers", "missing_tools", "stage_restore"]
