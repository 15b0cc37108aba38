"""Throughput of our Stripe emulator against localstripe, same workload, same machine, one run.

Each client loops: create customer, create payment intent (pm_card_visa), confirm it, retrieve it, list customers.
Both servers run as subprocesses; localstripe is pip-installed from PyPI into a temporary venv (or ``--venv``).
Prints req/s, p50 and p99 per server, and on the last line the ratio ours/localstripe (target ≥ 3×, p99 < 20 ms).

    python benchmarks/emulator_throughput.py --clients 8 --seconds 10
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

KEY = "sk_test_bench_123"


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
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    check = subprocess.run([str(python), "-c", "import localstripe"], capture_output=True)
    if check.returncode != 0:
        print(f"installing localstripe into {venv} …", file=sys.stderr)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "localstripe"], check=True)
    return python, made


async def client_loop(http: httpx.AsyncClient, stop_at: float, max_iterations: int, latencies: list[float],
                      errors: list[str]) -> None:
    async def call(method: str, path: str, data: dict | None = None) -> dict:
        started = time.perf_counter()
        response = await http.request(method, path, data=data)
        latencies.append((time.perf_counter() - started) * 1000)
        if response.status_code != 200:
            errors.append(f"{method} {path}: {response.status_code} {response.text[:200]}")
            return {}
        return response.json()

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


async def drive(url: str, clients: int, seconds: float, max_iterations: int) -> dict:
    latencies: list[float] = []
    errors: list[str] = []
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {KEY}"}, limits=limits,
                                 timeout=30) as http:
        started = time.monotonic()
        stop_at = started + seconds
        await asyncio.gather(*(client_loop(http, stop_at, max_iterations, latencies, errors)
                               for _ in range(clients)))
        elapsed = time.monotonic() - started
    latencies.sort()
    return {
        "requests": len(latencies), "rps": len(latencies) / elapsed,
        "p50": statistics.median(latencies) if latencies else float("nan"),
        "p99": latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] if latencies else float("nan"),
        "errors": errors,
    }


def cpu_seconds(pid: int) -> float:
    """User + system CPU time a process has used (Linux /proc): a load-independent cost measure."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return float("nan")


def run_server(name: str, cmd: list[str], url: str, clients: int, seconds: float, max_iterations: int,
               cwd: str | None = None) -> dict:
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=cwd)
    try:
        wait_until_up(url, proc)
        asyncio.run(drive(url, min(clients, 2), 1.0, 5))  # warm-up
        cpu_before = cpu_seconds(proc.pid)
        result = asyncio.run(drive(url, clients, seconds, max_iterations))
        result["cpu_ms"] = (cpu_seconds(proc.pid) - cpu_before) * 1000 / max(result["requests"], 1)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    errs = result["errors"]
    print(f"{name:12s} {result['requests']:7d} requests  {result['rps']:8.1f} req/s  p50 {result['p50']:6.2f} ms  "
          f"p99 {result['p99']:6.2f} ms  server CPU {result['cpu_ms']:5.2f} ms/req  errors {len(errs)}" + (f" (first: {errs[0]})" if errs else ""))
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=8, help="concurrent clients (default 8)")
    parser.add_argument("--seconds", type=float, default=10.0, help="time per server (default 10)")
    parser.add_argument("--max-iterations", type=int, default=100_000, help="per client cap on workload loops")
    parser.add_argument("--venv", type=Path, help="reuse this venv for localstripe instead of a temporary one")
    args = parser.parse_args()
    if not 1 <= args.clients <= 256 or not 0 < args.seconds <= 600:
        raise SystemExit("--clients must be 1..256 and --seconds 0..600")

    python, made = localstripe_python(args.venv)
    workdir = tempfile.mkdtemp(prefix="emulator-bench-")
    try:
        print(f"workload: create customer, create + confirm payment intent (pm_card_visa), retrieve, list; "
              f"{args.clients} clients, {args.seconds:g} s each")
        port = free_port()
        ours = run_server("ours", [sys.executable, "-c", "from stripebench_tui.cli import main; main()", "emulator", "--port", str(port)],
                          f"http://127.0.0.1:{port}", args.clients, args.seconds, args.max_iterations)
        port = free_port()
        theirs = run_server("localstripe", [str(python), "-m", "localstripe", "--port", str(port), "--from-scratch"],
                            f"http://127.0.0.1:{port}", args.clients, args.seconds, args.max_iterations, cwd=workdir)
        verdict = "PASS" if ours["rps"] >= 3 * theirs["rps"] and ours["p99"] < 20 else "MISS"
        print(f"server CPU per request: ours {ours['cpu_ms']:.2f} ms, localstripe {theirs['cpu_ms']:.2f} ms "
              f"({theirs['cpu_ms'] / ours['cpu_ms']:.2f}x less for ours; load average now "
              f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)")
        print(f"targets: ratio >= 3x and our p99 < 20 ms: {verdict}")
        print(f"ratio ours/localstripe: {ours['rps'] / theirs['rps']:.2f}x req/s "
              f"(p99 {ours['p99']:.2f} ms vs {theirs['p99']:.2f} ms)")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        if made is not None:
            shutil.rmtree(made, ignore_errors=True)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
