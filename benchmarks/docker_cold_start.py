"""Environment cold start: the docker sandbox (cached image) vs the local sandbox, until the services are healthy.

    python benchmarks/docker_cold_start.py [--env bookings-payments] [--runs 3]

Each side: a fresh episode directory, the emulator, the sandbox prepared and started
(docker: engine, cached image, new container), the seed script run and every service
healthy, then everything stopped (not timed). The image is built once before timing.
Runs are interleaved (the machine is shared) and each side keeps its median. The last
line is the ratio docker/local; the target is docker ≤ 8 s.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from stripebench_tui.core.bus import EventBus
from stripebench_tui.envs.catalog import find_environment
from stripebench_tui.runtime.docker_engine import connect
from stripebench_tui.runtime.docker_images import ensure_image
from stripebench_tui.runtime.docker_sandbox import DockerSandbox
from stripebench_tui.runtime.local import LocalSandbox
from stripebench_tui.stripe_account.backend import start_backend


async def cold_start(kind: str, env_id: str, root: Path) -> float:
    """Seconds from nothing to every service healthy in one sandbox of ``kind``."""
    env = find_environment(env_id)
    episode_dir = Path(tempfile.mkdtemp(prefix=f"{kind}-", dir=root))
    backend = start_backend(seed=0, api_version=env.manifest.stripe.api_version)
    bus = EventBus()
    started = time.perf_counter()
    box = (DockerSandbox if kind == "docker" else LocalSandbox)(env, episode_dir, backend.env_vars())
    try:
        box.prepare()
        if hasattr(box, "start"):
            await box.start(bus)
        await box.run_seed(bus)
        await box.start_services(bus)
        return time.perf_counter() - started
    finally:
        await box.stop()
        await bus.close(timeout=2)
        backend.close()


def main() -> None:
    """Build the image if needed, then time both sides ``--runs`` times each, interleaved."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="bookings-payments")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    tag, built = ensure_image(connect(), find_environment(args.env), progress=lambda s: print("  " + s))
    print(f"image {tag} ({'built now' if built else 'cached'})")
    times: dict[str, list[float]] = {"local": [], "docker": []}
    with tempfile.TemporaryDirectory(prefix="cold-start-") as tmp:
        for i in range(args.runs):
            for kind in ("local", "docker"):
                seconds = asyncio.run(cold_start(kind, args.env, Path(tmp)))
                times[kind].append(seconds)
                print(f"run {i + 1} {kind:6s} {seconds:6.2f} s")
    local, docker = statistics.median(times["local"]), statistics.median(times["docker"])
    print(f"local  sandbox cold start (median of {args.runs}): {local:.2f} s")
    print(f"docker sandbox cold start (median of {args.runs}, cached image): {docker:.2f} s (target <= 8 s)")
    print(f"ratio docker/local: {docker / local:.2f}x")


if __name__ == "__main__":
    main()
