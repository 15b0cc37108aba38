"""Run one command inside an episode container, as if it ran here: ``docker exec -i`` through the SDK.

    python -m stripebench_tui.runtime.docker_exec CONTAINER [--user U] [--workdir D] [-i] -- ARGV...

stdin (with ``-i``), stdout and stderr are relayed, and the exit code is the command's,
so the local machinery (tool-server stdio, service log pumps, restarts, health checks)
works unchanged with a container. The command's environment is the JSON object in
``$STRIPEBENCH_EXEC_ENV`` (only the episode's variables, never this machine's). The
command runs in a session of its own inside the container; SIGTERM/SIGINT here is
passed on to that whole session (SIGKILL after a grace period). If the container
stops, this says so on stderr and exits with 125.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import sys
import threading
import time
import uuid

ENV_VAR = "STRIPEBENCH_EXEC_ENV"
EXIT_CONTAINER_GONE = 125
KILL_GRACE = 2.0
PID_DIR = "/tmp/.stripebench-exec"

# Inside the container: a new session (so a signal reaches everything the command started), its id in a file.
# An exec'd process may already lead its process group, where setsid() is refused: then a child does it.
_WRAP = """
import os, sys
if os.getpid() == os.getpgid(0):
    pid = os.fork()
    if pid:
        code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        sys.exit(code if code >= 0 else 128 - code)
os.setsid()
os.makedirs(sys.argv[1], exist_ok=True)
with open(os.path.join(sys.argv[1], sys.argv[2]), "w") as f:
    f.write(str(os.getpid()))
os.execvp(sys.argv[3], sys.argv[3:])
"""
_KILL = ("import os, sys, signal\n"
         "try:\n    os.killpg(int(open(sys.argv[1]).read()), int(sys.argv[2]))\n"
         "except (OSError, ValueError):\n    pass\n")


def exec_argv(container: str, argv: list[str], *, user: str | None = None, workdir: str | None = None,
              interactive: bool = False) -> list[str]:
    """The local command line that runs ``argv`` in ``container`` (python -m this module)."""
    out = [sys.executable, "-m", "stripebench_tui.runtime.docker_exec", container]
    if user:
        out += ["--user", user]
    if workdir:
        out += ["--workdir", workdir]
    if interactive:
        out.append("-i")
    return out + ["--", *argv]


def writable_socket(sock: socket.socket | socket.SocketIO) -> socket.socket:
    """A socket to send the command's input on, from what ``exec_start(socket=True)`` returned.

    docker-py returns the TLS socket itself over https, but over a unix or plain TCP connection
    the read-only ``socket.SocketIO`` that http.client read the response through; a socket made
    from a duplicate of its descriptor writes and half-closes the same connection.
    """
    if isinstance(sock, socket.socket):
        return sock
    return socket.socket(fileno=os.dup(sock.fileno()))


def _gone_message(container: object) -> str:
    try:
        container.reload()  # type: ignore[attr-defined]
        state = container.attrs.get("State", {})  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - removed meanwhile
        return f"stripebench: container {getattr(container, 'name', '?')} is gone"
    if state.get("Running"):
        return ""
    oom = " (killed: out of memory)" if state.get("OOMKilled") else ""
    return (f"stripebench: container {getattr(container, 'name', '?')} stopped with exit code "
            f"{state.get('ExitCode')}{oom}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m stripebench_tui.runtime.docker_exec")
    parser.add_argument("container")
    parser.add_argument("--user")
    parser.add_argument("--workdir")
    parser.add_argument("-i", "--interactive", action="store_true")
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--" not in argv:
        parser.error("give the command after --")
    split = argv.index("--")
    args, command = parser.parse_args(argv[:split]), argv[split + 1:]
    if not command:
        parser.error("give the command after --")

    # the SDK only in the relay process: docker_sandbox and harness.in_container import this module for exec_argv and ENV_VAR
    import docker
    from docker.utils.socket import frames_iter

    client = docker.from_env()
    try:
        container = client.containers.get(args.container)
    except Exception as exc:  # noqa: BLE001 - any failure to look it up means no container to run in
        print(f"stripebench: container {args.container} not found ({str(exc).splitlines()[0][:200]})", file=sys.stderr)
        return EXIT_CONTAINER_GONE
    if container.status != "running":
        print(_gone_message(container) or f"stripebench: container {args.container} is {container.status}",
              file=sys.stderr)
        return EXIT_CONTAINER_GONE
    env = json.loads(os.environ.get(ENV_VAR) or "{}")
    pid_name = uuid.uuid4().hex
    wrapped = ["python3", "-c", _WRAP, PID_DIR, pid_name, *command]
    exec_id = client.api.exec_create(container.id, wrapped, stdin=args.interactive, stdout=True, stderr=True,
                                     tty=False, environment=env, workdir=args.workdir, user=args.user or "")["Id"]
    sock = client.api.exec_start(exec_id, socket=True)
    raw = writable_socket(sock)

    def forward(sig: int) -> None:
        def kill(signum: int) -> None:
            try:
                client.api.exec_start(client.api.exec_create(
                    container.id, ["python3", "-c", _KILL, f"{PID_DIR}/{pid_name}", str(signum)],
                    user=args.user or "")["Id"])
            except Exception:  # noqa: BLE001 - the container went away: nothing left to signal
                pass

        def run() -> None:
            kill(sig)
            deadline = time.monotonic() + KILL_GRACE
            while time.monotonic() < deadline:
                if not client.api.exec_inspect(exec_id).get("Running"):
                    return
                time.sleep(0.1)
            kill(signal.SIGKILL)

        threading.Thread(target=run, daemon=True).start()

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda signum, frame: forward(signum))

    if args.interactive:
        def pump_stdin() -> None:
            try:
                while True:
                    data = os.read(0, 65536)
                    if not data:
                        break
                    raw.sendall(data)
            except OSError:
                pass
            try:
                raw.shutdown(socket.SHUT_WR)  # the command sees end of input
            except OSError:
                pass

        threading.Thread(target=pump_stdin, daemon=True).start()

    try:
        for stream, data in frames_iter(sock, tty=False):
            os.write(2 if stream == 2 else 1, data)
    except (OSError, ValueError):
        pass
    code = None
    for _ in range(50):  # the exit code is recorded a moment after the stream ends
        info = client.api.exec_inspect(exec_id)
        if not info.get("Running"):
            code = info.get("ExitCode")
            break
        time.sleep(0.02)
    gone = _gone_message(container)
    if not gone and (code is None or code >= 128):  # killed: maybe with its container, whose state lags a little
        time.sleep(0.3)
        gone = _gone_message(container)
    if gone:
        print(gone, file=sys.stderr)
        return EXIT_CONTAINER_GONE
    return int(code) if code is not None else EXIT_CONTAINER_GONE


if __name__ == "__main__":
    sys.exit(main())
