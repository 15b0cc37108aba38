"""Throughput of our Stripe emulator against the framework floor and localstripe, same workload, same machine.

Each client loops: create customer, create payment intent (pm_card_visa), confirm it, retrieve it, list customers.
The servers run as subprocesses, one after another:

* ``floor`` — the same Starlette + uvicorn stack (same uvicorn settings) answering every route of the workload
  with a constant JSON body: what no emulator on this stack can beat. Ours is reported as a fraction of it
  (target ≥ 0.5, our p99 < 5 ms).
* ``localstripe`` — pip-installed from PyPI into a temporary venv (or ``--venv``; skip with ``--no-localstripe``);
  target: ours ≥ 30× its req/s.

* ``ours-python`` (with ``--also-python``) — ours again with ``STRIPEBENCH_PURE_PYTHON=1``: the same emulator not
  compiled (``scripts/setup.sh`` compiles its API modules with Cython, see ``emulator/stripebench_emulator/model/compiled.py``),
  to show what compiling gives, side by side.
* ``frame`` (with ``--frame``) — the emulator's own serving path (its ASGI app on the same uvicorn) with the API
  work replaced by constant replies of the sizes and headers ours sends on each route: what serving costs before
  the emulator does any work. Ours' CPU per request minus the frame's is the emulator's own work per request,
  and the script prints what that work may cost for ours to reach 0.5 of the floor.

Prints req/s, p50, p99, server CPU and minor page faults per request for each, then the fractions and the
verdict. Floor and ours run in pairs (order alternating), five rounds by default, and the verdict takes the
medians, with the spread printed: one pair alone swings with the machine's load.

Page faults: ours keeps every object and event it makes (Stripe's API can list them later), so it touches new
memory, about three quarters of a 4 KB page per request; the floor keeps nothing. Each round also prints what
touching a fresh page costs at that moment: on a VM whose host takes idle guest memory back, that ranges from about
2 us to over 20 us, so rounds where it is high cost ours more than the floor.

    python benchmarks/emulator_throughput.py --clients 8 --seconds 5 --rounds 5
"""

from __future__ import annotations

import argparse
import asyncio
import json
import mmap
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import httpx

KEY = "sk_test_bench_123"
# What the floor answers: enough for the workload to go on (an id to confirm, a status that is not an error).
FLOOR_BODY = json.dumps({"id": "pi_floor", "object": "payment_intent", "status": "succeeded"}, indent=2).encode()
FLOOR_ROUTES = [("/v1/customers", ["GET", "POST"]), ("/v1/payment_intents", ["POST"]),
                ("/v1/payment_intents/{id}/confirm", ["POST"]), ("/v1/payment_intents/{id}", ["GET"])]


def serve_floor(port: int) -> None:
    """The framework floor: Starlette routes for the workload's paths, each a constant JSON body, on uvicorn."""
    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    async def constant(request: Request) -> Response:
        await request.body()  # read the form as the emulator does
        return Response(FLOOR_BODY, media_type="application/json")

    app = Starlette(routes=[Route(path, constant, methods=methods) for path, methods in FLOOR_ROUTES])
    # The emulator's own uvicorn settings (emulator/server.py), so only the work behind the routes differs.
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off", access_log=False)


def serve_frame(port: int) -> None:
    """The emulator's app and uvicorn settings, its API work replaced by constant replies of ours' real sizes."""
    import uvicorn

    from stripebench_emulator.web import app as app_module
    from stripebench_emulator.web.dispatch import handle
    from stripebench_emulator.model.engine import Emulator
    from stripebench_emulator.web.server import bind

    emulator = Emulator()
    headers = {"authorization": f"Bearer {KEY}", "content-type": "application/x-www-form-urlencoded"}

    def call(method: str, path: str, form: dict | None = None, query: str = "") -> Any:
        reply = handle(emulator, method, path, query, urlencode(form or {}).encode(), headers)
        if reply.status != 200:
            raise SystemExit(f"frame: the emulator answered {method} {path} with {reply.status}")
        return reply

    for _ in range(10):  # a full first page for the list
        customer = call("POST", "/v1/customers", {"email": "bench@example.com"})
    pi = call("POST", "/v1/payment_intents", {"amount": "2000", "currency": "usd", "customer": customer.body["id"],
                                              "payment_method": "pm_card_visa"})
    replies = {("POST", "customers"): customer, ("POST", "payment_intents"): pi,
               ("POST", "confirm"): call("POST", f"/v1/payment_intents/{pi.body['id']}/confirm"),
               ("GET", "payment_intents"): call("GET", f"/v1/payment_intents/{pi.body['id']}"),
               ("GET", "customers"): call("GET", "/v1/customers", query="limit=10")}

    class Constant:
        """A reply whose body was encoded once (the emulator encodes each reply: that is part of its work)."""

        def __init__(self, reply: Any) -> None:
            self.status, self.headers, self.body = reply.status, dict(reply.headers), reply.encoded()

        def encoded(self) -> bytes:
            return self.body

    constant = {key: Constant(reply) for key, reply in replies.items()}

    def answer(_emulator: Any, method: str, path: str, *_args: Any, **_kwargs: Any) -> Constant:
        last = path.rstrip("/").rsplit("/", 1)[-1]
        parts = path.split("/")
        kind = "confirm" if last == "confirm" else parts[2] if len(parts) > 2 else ""
        return constant.get((method, kind)) or constant[("GET", "customers")]

    # Only in this benchmark's own subprocess: the app's /v1 path calls the module's ``handle``.
    app_module.handle = answer
    sock = bind("127.0.0.1", port)
    config = uvicorn.Config(app_module.create_app(emulator), log_level="warning", lifespan="off", access_log=False)
    uvicorn.Server(config).run(sockets=[sock])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until_up(url: str, proc: subprocess.Popen, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"server for {url} exited with {proc.returncode}")
        try:
            httpx.get(f"{url}/v1/customers", headers={"Authorization": f"Bearer {KEY}"}, timeout=1)
            return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise SystemExit(f"server at {url} did not start within {timeout} s")


def localstripe_python(venv: Path | None) -> tuple[Path, Path | None]:
    """A Python with localstripe installed; creates a temporary venv unless one is given (returned for cleanup)."""
    made = None
    if venv is None:
        made = Path(tempfile.mkdtemp(prefix="localstripe-venv-"))
        venv = made
    python = venv / "bin" / "python"
    try:
        if not python.exists():
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        check = subprocess.run([str(python), "-c", "import localstripe"], capture_output=True)
        if check.returncode != 0:
            print(f"installing localstripe from PyPI into {venv} …", file=sys.stderr)
            subprocess.run([str(python), "-m", "pip", "install", "-q", "localstripe"], check=True)
    except subprocess.CalledProcessError as exc:
        if made is not None:
            shutil.rmtree(made, ignore_errors=True)
        raise SystemExit(f"could not install localstripe into {venv}: {exc}") from None
    return python, made


class Connection:
    """A minimal keep-alive HTTP/1.1 client: cheap enough that the servers, not the client, set the pace."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def request(self, method: str, path: str, form: dict | None = None) -> tuple[int, bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        body = urlencode(form or {}).encode()
        head = (f"{method} {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\nAuthorization: Bearer {KEY}\r\n"
                f"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {len(body)}\r\n\r\n")
        self.writer.write(head.encode() + body)
        raw = await self.reader.readuntil(b"\r\n\r\n")
        lines = raw.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:] if line)}
        if "content-length" in headers:
            data = await self.reader.readexactly(int(headers["content-length"]))
        else:  # chunked
            parts = []
            while True:
                size = int((await self.reader.readuntil(b"\r\n")).strip(), 16)
                chunk = await self.reader.readexactly(size + 2)
                if size == 0:
                    break
                parts.append(chunk[:-2])
            data = b"".join(parts)
        if headers.get("connection", "").lower() == "close":
            await self.close()
        return status, data

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = self.reader = None


async def client_loop(url: str, stop_at: float, max_iterations: int, latencies: list[float],
                      errors: list[str]) -> None:
    parsed = urlsplit(url)
    conn = Connection(parsed.hostname or "127.0.0.1", parsed.port or 80)

    async def call(method: str, path: str, data: dict | None = None) -> dict:
        started = time.perf_counter()
        status, body = await conn.request(method, path, data)
        latencies.append((time.perf_counter() - started) * 1000)
        if status != 200:
            errors.append(f"{method} {path}: {status} {body[:200]!r}")
            return {}
        return json.loads(body)

    try:
        for _ in range(max_iterations):
            if time.monotonic() >= stop_at:
                return
            customer = await call("POST", "/v1/customers", {"email": "bench@example.com"})
            pi = await call("POST", "/v1/payment_intents", {"amount": "2000", "currency": "usd",
                                                             "customer": customer.get("id", ""),
                                                             "payment_method": "pm_card_visa"})
            if not pi:
                continue
            confirmed = await call("POST", f"/v1/payment_intents/{pi['id']}/confirm")
            if confirmed and confirmed.get("status") != "succeeded":
                errors.append(f"confirm gave status {confirmed.get('status')}")
            await call("GET", f"/v1/payment_intents/{pi['id']}")
            await call("GET", "/v1/customers?limit=10")
    finally:
        await conn.close()


async def drive(url: str, clients: int, seconds: float, max_iterations: int) -> dict:
    latencies: list[float] = []
    errors: list[str] = []
    started = time.monotonic()
    stop_at = started + seconds
    await asyncio.gather(*(client_loop(url, stop_at, max_iterations, latencies, errors) for _ in range(clients)))
    elapsed = time.monotonic() - started
    latencies.sort()
    return {
        "requests": len(latencies), "rps": len(latencies) / elapsed,
        "p50": statistics.median(latencies) if latencies else float("nan"),
        "p99": latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] if latencies else float("nan"),
        "errors": errors,
    }


def counters(pid: int) -> tuple[float, int]:
    """User + system CPU seconds and minor page faults of a process so far (Linux /proc): load-independent costs."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"), int(fields[7])
    except (OSError, ValueError, IndexError):
        return float("nan"), 0


def first_touch_us(megabytes: int = 32) -> float:
    """What touching a fresh page of memory costs on this machine now, in microseconds (a page fault). On a VM whose
    host takes idle guest memory back, it ranges from about 2 us to over 20 us from one minute to the next."""
    size = megabytes * 1024 * 1024
    with mmap.mmap(-1, size) as region:
        started = time.perf_counter()
        for offset in range(0, size, mmap.PAGESIZE):
            region[offset] = 1
        return (time.perf_counter() - started) * 1e6 / (size // mmap.PAGESIZE)


def how_ours_runs() -> str:
    """Whether ours' server loads the compiled emulator (what ``make setup`` builds): what its banner says."""
    import stripebench_emulator.api  # noqa: F401 - every API module, as the server imports them
    from stripebench_emulator.model.compiled import describe

    return describe()


def run_server(name: str, cmd: list[str], url: str, clients: int, seconds: float, max_iterations: int,
               cwd: str | None = None, env: dict[str, str] | None = None) -> dict:
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=cwd,
                            env=None if env is None else {**os.environ, **env})
    try:
        wait_until_up(url, proc)
        asyncio.run(drive(url, min(clients, 2), 1.0, 5))  # warm-up
        cpu_before, faults_before = counters(proc.pid)
        result = asyncio.run(drive(url, clients, seconds, max_iterations))
        cpu_after, faults_after = counters(proc.pid)
        result["cpu_ms"] = (cpu_after - cpu_before) * 1000 / max(result["requests"], 1)
        result["faults"] = (faults_after - faults_before) / max(result["requests"], 1)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    errs = result["errors"]
    print(f"{name:12s} {result['requests']:7d} requests  {result['rps']:8.1f} req/s  p50 {result['p50']:6.2f} ms  "
          f"p99 {result['p99']:6.2f} ms  server CPU {result['cpu_ms']:5.2f} ms/req  page faults "
          f"{result['faults']:4.2f}/req  errors {len(errs)}" + (f" (first: {errs[0]})" if errs else ""))
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=8, help="concurrent clients (default 8)")
    parser.add_argument("--seconds", type=float, default=5.0, help="time per server and round (default 5)")
    parser.add_argument("--max-iterations", type=int, default=100_000, help="per client cap on workload loops")
    parser.add_argument("--rounds", type=int, default=5,
                        help="floor/ours pairs to run, order alternating; the verdict uses the medians (default 5)")
    parser.add_argument("--venv", type=Path, help="reuse this venv for localstripe instead of a temporary one")
    parser.add_argument("--no-localstripe", action="store_true", help="compare with the framework floor only")
    parser.add_argument("--frame", action="store_true",
                        help="also run the emulator's serving path with constant replies, to split ours' CPU per "
                             "request into serving and the emulator's own work")
    parser.add_argument("--also-python", action="store_true",
                        help="also run ours as plain Python (STRIPEBENCH_PURE_PYTHON=1) each round and print what "
                             "compiling its API modules gives")
    parser.add_argument("--floor-server", type=int, metavar="PORT", help=argparse.SUPPRESS)  # the floor's subprocess
    parser.add_argument("--frame-server", type=int, metavar="PORT", help=argparse.SUPPRESS)  # the frame's
    args = parser.parse_args()
    if args.floor_server:
        serve_floor(args.floor_server)
        return
    if args.frame_server:
        serve_frame(args.frame_server)
        return
    if not 1 <= args.clients <= 256 or not 0 < args.seconds <= 600 or not 1 <= args.rounds <= 20:
        raise SystemExit("--clients must be 1..256, --seconds 0..600 and --rounds 1..20")

    python, made = (None, None) if args.no_localstripe else localstripe_python(args.venv)
    workdir = tempfile.mkdtemp(prefix="emulator-bench-")
    try:
        print(f"workload: create customer, create + confirm payment intent (pm_card_visa), retrieve, list; "
              f"{args.clients} clients, {args.seconds:g} s each" + (f", {args.rounds} rounds" if args.rounds > 1 else ""))
        print(f"ours: {how_ours_runs()}")
        from stripebench_emulator.model.compiled import PURE_VARIABLE  # imported by how_ours_runs: ours-python sets it
        fractions, cpu_ratios, p99s, ours_rps, compiled_gains = [], [], [], [], []
        frame_cpu, ours_cpu, floor_cpu, ours_faults = [], [], [], []
        for round_no in range(args.rounds):
            # floor and ours back to back, the order swapped every round, so a change in machine load between
            # the two runs of a round shows as spread across rounds instead of skewing every ratio one way
            runs = {}
            order = ("floor", "ours") if round_no % 2 == 0 else ("ours", "floor")
            extra = (("ours-python",) if args.also_python else ()) + (("frame",) if args.frame else ())
            for name in order + extra:
                port = free_port()
                cmd = ([sys.executable, str(Path(__file__).resolve()), f"--{name}-server", str(port)]
                       if name in ("floor", "frame")
                       else [sys.executable, "-m", "stripebench_emulator", "--port", str(port)])
                env = {PURE_VARIABLE: "1"} if name == "ours-python" else None
                runs[name] = run_server(name, cmd, f"http://127.0.0.1:{port}", args.clients, args.seconds,
                                        args.max_iterations, env=env)
            floor, ours = runs["floor"], runs["ours"]
            floor_cpu.append(floor["cpu_ms"])
            ours_cpu.append(ours["cpu_ms"])
            if args.frame:
                frame_cpu.append(runs["frame"]["cpu_ms"])
            if args.also_python:
                compiled_gains.append(ours["rps"] / runs["ours-python"]["rps"])
                print(f"compiled / Python: {compiled_gains[-1]:.2f}x ours' req/s; as Python ours is "
                      f"{runs['ours-python']['rps'] / floor['rps']:.2f} of the floor")
            fractions.append(ours["rps"] / floor["rps"])
            cpu_ratios.append(floor["cpu_ms"] / ours["cpu_ms"] if ours["cpu_ms"] else float("nan"))
            p99s.append(ours["p99"])
            ours_rps.append(ours["rps"])
            ours_faults.append(ours["faults"])
            print(f"ours / floor: {fractions[-1]:.2f} of the framework's req/s; server CPU per request "
                  f"{ours['cpu_ms']:.2f} ms vs {floor['cpu_ms']:.2f} ms (load average now {os.getloadavg()[0]:.1f} on "
                  f"{os.cpu_count()} CPUs; a fresh page costs {first_touch_us():.1f} us now)")
        fraction, p99 = statistics.median(fractions), statistics.median(p99s)
        if args.rounds > 1:
            print(f"over {args.rounds} rounds: ours / floor req/s median {fraction:.3f} (spread "
                  f"{min(fractions):.2f}..{max(fractions):.2f}); floor CPU / ours CPU per request median "
                  f"{statistics.median(cpu_ratios):.2f} ({min(cpu_ratios):.2f}..{max(cpu_ratios):.2f}); our p99 median "
                  f"{p99:.2f} ms; our page faults median {statistics.median(ours_faults):.2f}/req")
        if args.also_python:
            print(f"compiled / Python: median {statistics.median(compiled_gains):.2f}x ours' req/s "
                  f"({min(compiled_gains):.2f}..{max(compiled_gains):.2f})")
        if args.frame:
            serving, total, base = (statistics.median(v) * 1000 for v in (frame_cpu, ours_cpu, floor_cpu))
            print(f"where ours' server CPU goes (medians): serving {serving:.0f} us/req (frame), the emulator's own "
                  f"work {total - serving:.0f} us/req; at 0.5 of the floor's {base:.0f} us/req the work could take "
                  f"{2 * base - serving:.0f} us/req")
        verdict = fraction >= 0.5 and p99 < 5
        if python is not None:
            port = free_port()
            theirs = run_server("localstripe", [str(python), "-m", "localstripe", "--port", str(port), "--from-scratch"],
                                f"http://127.0.0.1:{port}", args.clients, args.seconds, args.max_iterations, cwd=workdir)
            ours_median = statistics.median(ours_rps)
            print(f"ratio ours/localstripe: {ours_median / theirs['rps']:.2f}x req/s "
                  f"(p99 {p99:.2f} ms vs {theirs['p99']:.2f} ms; server CPU {theirs['cpu_ms']:.2f} ms/req)")
            verdict = verdict and ours_median >= 30 * theirs["rps"]
        print("targets: ours >= 0.5 of the floor, our p99 < 5 ms" + ("" if python is None else ", >= 30x localstripe")
              + f": {'PASS' if verdict else 'MISS'}")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        if made is not None:
            shutil.rmtree(made, ignore_errors=True)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
