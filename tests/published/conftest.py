"""The published benchmark's own folders (a checkout of github.com/stripe/ai), for the drills that run them.

``STRIPEBENCH_STRIPE_AI`` names a checkout (its ``benchmarks/`` folders are used in place, and must come out
unchanged); without it, the folders are exported from this machine's mirror of the repository, a bare git
directory at ``MIRROR``. With neither, the tests fail saying so: they are never skipped where they should run.
"""

from __future__ import annotations

import os
import subprocess
import tarfile
from pathlib import Path

import pytest

CHECKOUT_VAR = "STRIPEBENCH_STRIPE_AI"
MIRROR = Path("/work/.mirror/stripe+ai/repo")


def published_folder(name: str, scratch: Path) -> Path:
    """``benchmarks/<name>`` of the checkout, or exported from the mirror into ``scratch``."""
    checkout = os.environ.get(CHECKOUT_VAR)
    if checkout:
        folder = Path(checkout).expanduser() / "benchmarks" / name
        if not folder.is_dir():
            pytest.fail(f"{CHECKOUT_VAR}={checkout} has no benchmarks/{name}")
        return folder
    if not (MIRROR / "HEAD").is_file():
        pytest.fail(f"no checkout of github.com/stripe/ai: set {CHECKOUT_VAR} to one (or keep a mirror at {MIRROR})")
    scratch.mkdir(parents=True, exist_ok=True)
    archive = scratch / f"{name}.tar"
    with archive.open("wb") as out:
        done = subprocess.run(["git", f"--git-dir={MIRROR}", "archive", "HEAD", f"benchmarks/{name}"], stdout=out,
                              stderr=subprocess.PIPE, text=True, timeout=120)  # it warns of other folders' blobs
    if done.returncode != 0:
        pytest.fail(f"git archive of benchmarks/{name} from {MIRROR} failed: {done.stderr.strip()}")
    with tarfile.open(archive) as tar:
        tar.extractall(scratch, filter="tar")
    return scratch / "benchmarks" / name
