"""The published benchmark's own folders (a checkout of github.com/stripe/ai), for the drills that run them.

``STRIPEBENCH_STRIPE_AI`` names a checkout (its ``benchmarks/`` folders are used in place, and must come out
unchanged); without it, the folders are exported from this machine's mirror of the repository, a bare git
directory at ``MIRROR``. With neither, the tests fail saying so: they are never skipped where they should run.
A mirror may lack its largest blobs (galtee's client/img/annecy.png): ``git archive`` then stops, so such a
folder is exported file by file without them (``MISSING_OK`` names the ones a drill may do without).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

CHECKOUT_VAR = "STRIPEBENCH_STRIPE_AI"
MIRROR = Path("/work/.mirror/stripe+ai/repo")
# Files a mirror may lack that no grader, server or oracle reads (pictures of the client pages).
MISSING_OK = {"environment/client/img/annecy.png"}


def validated_score(table: str, plan: str) -> float:
    """The score ``stripebench validate``'s table prints for ``plan`` (oracle, no-op or a mutant)."""
    found = re.search(rf"│ {re.escape(plan)}\s+│\s+([0-9.]+)\s+│", table)
    assert found, f"no row for {plan} in:\n{table}"
    return float(found.group(1))


def ruby_envs_path(folder: Path) -> str:
    """``stripebench envs --path FOLDER``'s output, held to say nothing is missing and where the gems come from."""
    envs = subprocess.run([sys.executable, "-m", "stripebench_tui", "envs", "--path", str(folder)], capture_output=True,
                          text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert envs.returncode == 0 and "MISSING" not in envs.stdout, envs.stdout + envs.stderr
    assert re.search(r"here: Ruby \S+; gems from (the registry|local sources)", envs.stdout), envs.stdout
    return envs.stdout


def validate(path: Path) -> str:
    """``stripebench validate PATH``'s output, held to exit 0."""
    done = subprocess.run([sys.executable, "-m", "stripebench_tui", "validate", str(path)], capture_output=True,
                          text=True, timeout=2400, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    return done.stdout


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
    if done.returncode != 0 and "invalid object" in done.stderr:
        return _export_by_file(name, scratch)
    if done.returncode != 0:
        pytest.fail(f"git archive of benchmarks/{name} from {MIRROR} failed: {done.stderr.strip()}")
    with tarfile.open(archive) as tar:
        tar.extractall(scratch, filter="tar")
    return scratch / "benchmarks" / name


def _export_by_file(name: str, scratch: Path) -> Path:
    """``benchmarks/<name>`` blob by blob, leaving out those the mirror lacks (each must be in ``MISSING_OK``)."""
    listed = subprocess.run(["git", f"--git-dir={MIRROR}", "ls-tree", "-r", "-z", "HEAD", f"benchmarks/{name}"],
                            capture_output=True, text=True, check=True, timeout=120).stdout
    root = scratch / "benchmarks" / name
    for entry in filter(None, listed.split("\0")):
        meta, path = entry.split("\t", 1)
        mode, _, blob = meta.split()
        rel = path.removeprefix(f"benchmarks/{name}/")
        got = subprocess.run(["git", f"--git-dir={MIRROR}", "cat-file", "blob", blob], capture_output=True, timeout=120)
        if got.returncode != 0:
            if rel not in MISSING_OK:
                pytest.fail(f"the mirror {MIRROR} lacks {path}, which {name} needs")
            continue
        target = scratch / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(got.stdout)
        if mode == "100755":
            target.chmod(0o755)
    return root
