"""Setup of the published Next.js + PostgreSQL SaaS-starter folders: a cold first episode against warm ones.

    python benchmarks/saas_starter_setup.py [--checkout ~/ai] [--warm 2]

For each folder: one cold episode (an empty stripebench cache: pnpm itself and every npm package fetched from the
registry into a new store; npm's own download cache is left as it is), then ``--warm`` episodes on that cache.
Each is timed from nothing to every service healthy, in phases: packages (pnpm install), setup (lib/ and .env),
postgres (a new cluster), app (migrations, the seed, `next dev` answering its first page). Then everything is
stopped (not timed). The last line per folder is warm/cold; the target is a warm setup under 60 s.

The folders come from ``--checkout`` (a checkout of github.com/stripe/ai), else this machine's mirror of it.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import tarfile
import tempfile
import time
from pathlib import Path

from stripebench_tui.core.bus import EventBus
from stripebench_tui.core.events import Event, Service
from stripebench_tui.envs.benchfolder import load_bench_environment
from stripebench_tui.runtime.local import LocalSandbox
from stripebench_tui.stripe_account.backend import start_backend

FOLDERS = ("saas-starter-embedded-checkout", "saas-starter-partial-payments")
MIRROR = Path("/work/.mirror/stripe+ai/repo")
WARM_TARGET = 60.0


def folder_of(name: str, checkout: Path | None, scratch: Path) -> Path:
    if checkout is not None:
        return checkout / "benchmarks" / name
    archive = scratch / f"{name}.tar"
    with archive.open("wb") as out:
        subprocess.run(["git", f"--git-dir={MIRROR}", "archive", "HEAD", f"benchmarks/{name}"], stdout=out, check=True,
                       stderr=subprocess.PIPE)  # the mirror lacks blobs of other folders; git says so and goes on
    with tarfile.open(archive) as tar:
        tar.extractall(scratch, filter="tar")
    return scratch / "benchmarks" / name


async def setup_once(folder: Path, root: Path) -> dict[str, float]:
    """Seconds per phase from nothing to every service healthy, and the total."""
    env = load_bench_environment(folder)
    backend = start_backend(seed=0, api_version=env.manifest.stripe.api_version)
    episode_dir = Path(tempfile.mkdtemp(prefix="episode-", dir=root))
    bus = EventBus()
    healthy: dict[str, float] = {}
    started = time.perf_counter()

    def seen(event: Event) -> None:
        if isinstance(event, Service) and event.status == "healthy":
            healthy[event.service] = time.perf_counter() - started

    bus.subscribe(seen)
    box = LocalSandbox(env, episode_dir, backend.env_vars())
    try:
        box.prepare()
        await box.install_dependencies(bus)
        packages = time.perf_counter() - started
        await box.run_setup(bus)
        setup = time.perf_counter() - started
        await box.run_seed(bus)
        await box.start_services(bus)
        total = time.perf_counter() - started
        await bus.drain(5)
    finally:
        await box.stop()
        await bus.close()
        backend.close()
    return {"packages": packages, "setup": setup - packages, "postgres": healthy.get("postgres", setup) - setup,
            "app": total - healthy.get("postgres", setup), "total": total}


def line(label: str, t: dict[str, float]) -> str:
    phases = "  ".join(f"{k} {t[k]:5.1f}" for k in ("packages", "setup", "postgres", "app"))
    return f"  {label:<6} {t['total']:6.1f} s   ({phases})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkout", type=Path, help="a checkout of github.com/stripe/ai (default: this machine's mirror)")
    parser.add_argument("--warm", type=int, default=2, help="warm episodes per folder after the cold one")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="saas-setup-") as tmp:
        scratch = Path(tmp)
        for name in FOLDERS:
            folder = folder_of(name, args.checkout.expanduser() if args.checkout else None, scratch)
            os.environ["STRIPEBENCH_CACHE"] = str(Path(tempfile.mkdtemp(prefix="cache-", dir=scratch)))
            print(f"{name}:", flush=True)
            cold = asyncio.run(setup_once(folder, scratch))
            print(line("cold", cold), flush=True)
            warm = [asyncio.run(setup_once(folder, scratch)) for _ in range(args.warm)]
            for t in warm:
                print(line("warm", t), flush=True)
            median = statistics.median(t["total"] for t in warm)
            verdict = "under" if median < WARM_TARGET else "OVER"
            print(f"  warm/cold {median / cold['total']:.2f} (warm median {median:.1f} s, {verdict} the {WARM_TARGET:g} s target)",
                  flush=True)


if __name__ == "__main__":
    main()
