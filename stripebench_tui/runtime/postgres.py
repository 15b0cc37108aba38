"""A PostgreSQL cluster of the episode's own, from Debian's package: never the machine's system cluster.

An environment whose app needs PostgreSQL runs this as a service (``python -m stripebench_tui.runtime.postgres
serve …``, health on its TCP port). It makes a new cluster in the episode's directory (``initdb``, listening on
127.0.0.1 only, on the port the episode gave it), creates the role and the database the task names, then runs
``postgres`` in the foreground until it is told to stop (SIGTERM/SIGINT): then it shuts the server down fast and
removes the cluster, so nothing half-made is left for a later run.

A fork or a resume restores the database of a checkpoint (``runtime.pg_checkpoint``) through this same service: the
episode puts the checkpoint's dump at ``$EPISODE_DIR/postgres-restore.dump`` and ``serve --restore-from`` loads it
with ``pg_restore`` into the new cluster before the cluster listens on the episode's port, so the health check (and
every service after it) only ever sees the restored database. The load happens on a private port the server then
leaves (a restart, a fraction of a second): the port is the health check's signal.

Nobody on this machine gets in without a password: TCP connections authenticate with scram-sha-256 (the app's role
with the password its URL carries), the Unix socket lives in the 0700 data directory with peer authentication, and
the superuser's password is random, made for this cluster alone and kept in a 0600 file inside the data directory
(``superuser.password``). No password is ever on a command line (``ps`` shows those): the role's comes from an
environment variable the episode sets (``POSTGRES_PASSWORD``), the superuser's reaches ``initdb`` as a file.

As root, the server runs as the ``postgres`` user the package made (``initdb`` refuses root); the cluster goes
where that user can reach it: the given directory, else a fresh one under the system's temporary directory.
Every failure is one line naming the cause and the fix, with exit code 2.
"""

from __future__ import annotations

import argparse
import os
import pwd
import re
import secrets
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

from stripebench_tui.envs.manifest import SQL_NAME, Health, PostgresSpec, ServiceSpec
from stripebench_tui.runtime.reaper import die_with_parent
from stripebench_tui.runtime.services import free_port, port_is_free

BIN_VAR = "STRIPEBENCH_PG_BIN"  # a PostgreSQL bin directory to use instead of Debian's newest
DEBIAN_ROOT = Path("/usr/lib/postgresql")
SERVER_USER = "postgres"  # the system user Debian's package creates, for running as root
INSTALL_FIX = f"apt-get install postgresql (Debian's package), or set {BIN_VAR} to a directory holding initdb and postgres"
SERVICE_NAME = "postgres"
PORT_VAR = "POSTGRES_PORT"
URL_VAR = "POSTGRES_URL"
PASSWORD_VAR = "POSTGRES_PASSWORD"  # the app role's password, for the service (never on its command line)
SUPERUSER_PASSWORD_FILE = "superuser.password"  # inside the data directory, 0600, the server user's
DATA_DIR = "postgres"  # the cluster's directory in the episode directory
RESTORE_FILE = "postgres-restore.dump"  # in the episode directory: a checkpoint's dump the cluster starts from
READY_TIMEOUT = 60.0  # seconds the server may take to accept connections on its private port before a restore
_NAME = re.compile(SQL_NAME)


class ClusterProblem(Exception):
    """Why the cluster cannot be made or started, with the fix (one line)."""


@dataclass(frozen=True)
class Binaries:
    bin_dir: Path
    version: str

    @property
    def initdb(self) -> str:
        return str(self.bin_dir / "initdb")

    @property
    def postgres(self) -> str:
        return str(self.bin_dir / "postgres")

    def tool(self, name: str) -> str:
        """A client program beside the server (``pg_dump``, ``pg_restore``): the same version."""
        return str(self.bin_dir / name)


def service_spec(spec: PostgresSpec) -> ServiceSpec:
    """The service an environment's ``[postgres]`` becomes: this module, healthy when its port accepts."""
    command = (f"{shlex.quote(sys.executable)} -m stripebench_tui.runtime.postgres serve "
               f"--data \"$EPISODE_DIR/{DATA_DIR}\" --port \"${PORT_VAR}\" --role {spec.role} "
               f"--password-env {PASSWORD_VAR} --database {spec.database} "
               f"--restore-from \"$EPISODE_DIR/{RESTORE_FILE}\"")
    return ServiceSpec(name=SERVICE_NAME, command=command, ports=[PORT_VAR],
                       health=Health(tcp=f"127.0.0.1:${{{PORT_VAR}}}", timeout=spec.timeout))


def url_for(spec: PostgresSpec, port: int | str) -> str:
    """What the app connects to (``POSTGRES_URL``)."""
    return _url(spec.role, spec.password, spec.database, port)


def _url(role: str, password: str, database: str, port: int | str) -> str:
    return f"postgresql://{role}:{password}@127.0.0.1:{port}/{database}"


def find_binaries(environ: dict[str, str] | None = None) -> Binaries | None:
    """``$STRIPEBENCH_PG_BIN``, else the newest ``/usr/lib/postgresql/<version>/bin``; None when neither has both."""
    env = os.environ if environ is None else environ
    candidates: list[Path] = []
    if env.get(BIN_VAR):
        candidates.append(Path(env[BIN_VAR]))
    elif DEBIAN_ROOT.is_dir():
        versions = sorted((d for d in DEBIAN_ROOT.iterdir() if d.name.replace(".", "").isdigit()),
                          key=lambda d: [int(p) for p in d.name.split(".")], reverse=True)
        candidates += [d / "bin" for d in versions]
    for bin_dir in candidates:
        if (bin_dir / "initdb").is_file() and (bin_dir / "postgres").is_file():
            return Binaries(bin_dir, _version(bin_dir))
    return None


def _version(bin_dir: Path) -> str:
    try:
        out = subprocess.run([str(bin_dir / "postgres"), "--version"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        return "?"
    match = re.search(r"(\d+(?:\.\d+)*)", out)
    return match.group(1) if match else "?"


def describe() -> tuple[bool, str]:
    """For ``doctor`` and ``envs --path``: whether episodes can make clusters here, and how to fix it when not."""
    found = find_binaries()
    if found is None:
        return False, f"PostgreSQL not found: {INSTALL_FIX}"
    if os.geteuid() == 0 and _server_user() is None:
        return False, (f"PostgreSQL {found.version} at {found.bin_dir}, but no '{SERVER_USER}' user to run it as (root cannot): "
                       f"{INSTALL_FIX}")
    return True, f"PostgreSQL {found.version} at {found.bin_dir} (each episode makes its own cluster)"


def _server_user() -> pwd.struct_passwd | None:
    try:
        return pwd.getpwnam(SERVER_USER)
    except KeyError:
        return None


@dataclass
class Cluster:
    """One cluster: where it lives, who runs it, and the role and database the app connects as."""

    binaries: Binaries
    data: Path
    port: int
    role: str
    password: str
    database: str
    user: pwd.struct_passwd | None  # run as this user (we are root), else as ourselves
    made_dir: Path  # what to remove at the end (the data directory, or the temporary one holding it)

    @property
    def url(self) -> str:
        return _url(self.role, self.password, self.database, self.port)

    def _popen(self, argv: list[str], **kw: object) -> subprocess.Popen[bytes]:
        if self.user is not None:
            kw.update(user=self.user.pw_uid, group=self.user.pw_gid, extra_groups=[])
        env = {**os.environ, "LC_ALL": "C", "HOME": self.user.pw_dir if self.user else os.environ.get("HOME", "/")}
        kw.setdefault("preexec_fn", die_with_parent)  # killed with this wrapper (kill -9 too): no server outlives it
        return subprocess.Popen(argv, env=env, **kw)  # type: ignore[call-overload]  # kw holds Popen's own options

    def _run(self, argv: list[str], what: str, stdin: bytes | None = None, timeout: float = 120) -> None:
        proc = self._popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        out, _ = proc.communicate(stdin, timeout=timeout)
        text = out.decode(errors="replace")
        if proc.returncode != 0 or "ERROR:" in text:
            last = next((ln.strip() for ln in reversed(text.splitlines()) if ln.strip()), "no output")
            raise ClusterProblem(f"{what} failed (exit {proc.returncode}): {last}")

    @property
    def superuser_password_file(self) -> Path:
        return self.data / SUPERUSER_PASSWORD_FILE

    def init(self) -> None:
        """initdb (password authentication on TCP, peer on the socket, a random superuser password), then the role
        and database in single-user mode (no server or socket needed yet)."""
        pwfile = self._private_file(self.made_dir.parent if self.made_dir == self.data else self.made_dir,
                                    secrets.token_urlsafe(32))
        try:
            self._run([self.binaries.initdb, "-D", str(self.data), "-U", SERVER_USER, "--pwfile", str(pwfile),
                       "--auth-host=scram-sha-256", "--auth-local=peer", "-E", "UTF8", "--locale=C", "--no-sync",
                       "--no-instructions"], "initdb")
            os.replace(pwfile, self.superuser_password_file)  # the data directory is 0700: only the server's user
        finally:
            pwfile.unlink(missing_ok=True)
        sql = (f'CREATE ROLE "{self.role}" LOGIN CREATEDB PASSWORD \'{self.password.replace(chr(39), chr(39) * 2)}\';\n'
               f'CREATE DATABASE "{self.database}" OWNER "{self.role}";\n')
        self._run([self.binaries.postgres, "--single", "-D", str(self.data), "-c", "fsync=off", "postgres"],
                  f"creating role {self.role} and database {self.database}", stdin=sql.encode())

    def _private_file(self, where: Path, text: str) -> Path:
        """A new 0600 file holding ``text``, owned by the server's user (who must read it)."""
        fd, name = tempfile.mkstemp(prefix=".stripebench-pg-", dir=where)
        try:
            os.write(fd, text.encode())
            if self.user is not None:
                os.fchown(fd, self.user.pw_uid, self.user.pw_gid)
        finally:
            os.close(fd)
        return Path(name)

    def start(self, port: int | None = None) -> subprocess.Popen[bytes]:
        """The server in its own session (a service's SIGTERM reaches us, and we stop it fast), on the cluster's
        port unless told another."""
        return self._popen([self.binaries.postgres, "-D", str(self.data), "-p", str(port or self.port),
                            "-h", "127.0.0.1", "-k", str(self.data), "-c", "fsync=off", "-c", "synchronous_commit=off",
                            "-c", "full_page_writes=off"], start_new_session=True)

    def remove(self) -> None:
        shutil.rmtree(self.made_dir, ignore_errors=True)

    def load(self, dump: Path, port: int) -> None:
        """Restore a ``pg_dump -Fc`` of the app's database into this (new) cluster's server at ``port``: as the app's
        role, every object owned by it, all or nothing (one transaction, the first error stops it).

        pg_restore runs as ourselves, not as the server's user: it is a client, and the dump may be where only we
        can read it."""
        argv = [self.binaries.tool("pg_restore"), *client_args(port, self.role, self.database), "--no-owner",
                "--single-transaction", "--exit-on-error", str(dump)]
        try:
            done = subprocess.run(argv, env=client_env(self.password), capture_output=True, text=True, timeout=600,
                                  preexec_fn=die_with_parent)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise ClusterProblem(f"restoring {dump.name} failed: {exc}") from None
        if done.returncode != 0:
            last = next((ln.strip() for ln in reversed(done.stderr.splitlines()) if ln.strip()), "no output")
            raise ClusterProblem(f"restoring {dump.name} with pg_restore failed (exit {done.returncode}): {last}")

    def wait_ready(self, server: subprocess.Popen[bytes], port: int, timeout: float = READY_TIMEOUT) -> None:
        """Until the server at ``port`` accepts connections; ClusterProblem when it exits first or takes longer than
        ``timeout``. Read from ``postmaster.pid`` as ``pg_ctl -w`` does: a probing connection while the server
        starts is a FATAL line in its log."""
        deadline = time.monotonic() + timeout
        pid_file = self.data / "postmaster.pid"
        while True:
            if server.poll() is not None:
                raise ClusterProblem(f"the server exited with code {server.returncode} while starting")
            try:
                lines = pid_file.read_text().splitlines()
            except OSError:
                lines = []
            # line 4 the port, line 8 the server's state ("starting", "ready", "stopping")
            if len(lines) >= 8 and lines[3].strip() == str(port) and lines[7].strip() == "ready":
                return
            if time.monotonic() > deadline:
                raise ClusterProblem(f"the server did not accept connections within {timeout:.0f} s")
            time.sleep(0.02)  # the server writes its state there once; nothing to wake us

    def restore_from(self, dump: Path) -> None:
        """Start the server on a private port, load ``dump``, stop it: the cluster then starts as usual, restored."""
        port = free_port()
        server = self.start(port)
        try:
            self.wait_ready(server, port)
            self.load(dump, port)
        finally:
            _stop(server)


def client_env(password: str) -> dict[str, str]:
    """The environment of a client program (pg_dump, pg_restore) connecting as the app's role: its password in
    ``PGPASSWORD`` (never on a command line), and no ``PG*`` setting of ours steering it elsewhere."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    return {**env, "LC_ALL": "C", "PGPASSWORD": password, "PGPASSFILE": os.devnull, "PGCONNECT_TIMEOUT": "10"}


def client_args(port: int, role: str, database: str) -> list[str]:
    """``-h -p -U -d`` of a database on 127.0.0.1, never prompting for a password."""
    return ["-h", "127.0.0.1", "-p", str(port), "-U", role, "-d", database, "-w"]


def make_cluster(data: Path, port: int, role: str, password: str, database: str,
                 binaries: Binaries | None = None) -> Cluster:
    """Check everything first, then lay out a new, empty data directory (ClusterProblem says what is wrong)."""
    for what, name in (("role", role), ("database", database)):
        if not _NAME.match(name):
            raise ClusterProblem(f"the {what} name {name!r} is not a plain identifier (letters, digits, _)")
    found = binaries or find_binaries()
    if found is None:
        raise ClusterProblem(f"PostgreSQL not found: {INSTALL_FIX}")
    if not port_is_free(port):
        raise ClusterProblem(f"port {port} is taken: stop what listens there, or let the episode pick another port")
    user = None
    if os.geteuid() == 0:
        user = _server_user()
        if user is None:
            raise ClusterProblem(f"running as root and there is no '{SERVER_USER}' user to run PostgreSQL as: {INSTALL_FIX}")
    if data.exists() and any(data.iterdir()):
        raise ClusterProblem(f"{data} exists and is not empty: a cluster is never reused; remove it or choose another directory")
    data.mkdir(parents=True, exist_ok=True)
    made = data
    if user is not None:
        os.chown(data, user.pw_uid, user.pw_gid)
        data.chmod(0o700)
        if not _reachable(data, user):  # e.g. under root's home: use a directory of that user's instead
            data.rmdir()
            made = Path(tempfile.mkdtemp(prefix="stripebench-pg-"))
            data = made / "data"
            data.mkdir(mode=0o700)
            for path in (made, data):
                os.chown(path, user.pw_uid, user.pw_gid)
    return Cluster(found, data, port, role, password, database, user, made)


def _reachable(path: Path, user: pwd.struct_passwd) -> bool:
    """Whether ``user`` can enter every directory above ``path`` (others' execute bit, or theirs)."""
    for parent in path.resolve().parents:
        st = parent.stat()
        if st.st_uid == user.pw_uid:
            continue
        if st.st_gid == user.pw_gid and st.st_mode & 0o010:
            continue
        if not st.st_mode & 0o001:
            return False
    return True


def _stop(server: subprocess.Popen[bytes]) -> None:
    """A fast shutdown (connected apps do not hold it up); killed after 20 s."""
    if server.poll() is not None:
        return
    server.send_signal(signal.SIGINT)
    try:
        server.wait(timeout=20)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()


def serve(cluster: Cluster, out: object = sys.stdout, restore_from: Path | None = None) -> int:
    """Init, (restore,) start, wait; on SIGTERM/SIGINT a fast shutdown and the cluster removed. The server's exit
    code. ``restore_from``: a dump to load first when that file exists (it is removed once loaded)."""
    def say(text: str) -> None:
        print(f"postgres: {text}", file=out, flush=True)  # type: ignore[call-overload]  # a text stream

    stop = {"signal": 0}

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        stop["signal"] = signum

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, on_signal)
    started = time.monotonic()
    try:
        say(f"making a cluster of PostgreSQL {cluster.binaries.version} in {cluster.data}")
        cluster.init()
        say(f"role {cluster.role} and database {cluster.database} made in {time.monotonic() - started:.1f} s")
        if restore_from is not None and restore_from.is_file():
            loading = time.monotonic()
            cluster.restore_from(restore_from)
            say(f"restored {cluster.database} from {restore_from.name} ({restore_from.stat().st_size} bytes) "
                f"in {time.monotonic() - loading:.1f} s")
            restore_from.unlink()  # loaded: a later start of this episode's cluster is not a restore
        server = cluster.start()
        say(f"listening on 127.0.0.1:{cluster.port} ({cluster.url.replace(cluster.password, '***')})")
        while server.poll() is None:
            if stop["signal"]:
                _stop(server)
                break
            try:
                server.wait(timeout=0.2)
            except subprocess.TimeoutExpired:
                pass
        code = server.returncode
        if not stop["signal"]:
            say(f"the server exited by itself with code {code}")
        return 0 if stop["signal"] else (code or 1)
    finally:
        cluster.remove()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m stripebench_tui.runtime.postgres",
        description="Run a throwaway PostgreSQL cluster for one episode (Debian's package), removed when it stops.")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("serve", help="make the cluster, the role and the database, and serve until SIGTERM")
    run.add_argument("--data", type=Path, required=True, help="a new directory for the cluster (never reused)")
    run.add_argument("--port", type=int, required=True, help="the TCP port on 127.0.0.1")
    run.add_argument("--role", required=True)
    run.add_argument("--password-env", required=True, metavar="VAR",
                     help="the environment variable holding the role's password (kept off the command line)")
    run.add_argument("--database", required=True)
    run.add_argument("--restore-from", type=Path, metavar="DUMP",
                     help="a pg_dump -Fc of the database to load before listening, when that file exists")
    args = parser.parse_args(argv)
    password = os.environ.get(args.password_env, "")
    if not password:
        print(f"postgres: ${args.password_env} is empty: it must hold the role's password", file=sys.stderr, flush=True)
        return 2
    try:
        cluster = make_cluster(args.data, args.port, args.role, password, args.database)
        return serve(cluster, restore_from=args.restore_from)
    except ClusterProblem as exc:
        print(f"postgres: {exc}", file=sys.stderr, flush=True)
        return 2


if __name__ == "__main__":
    sys.exit(main())
