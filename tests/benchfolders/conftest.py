"""Benchmark-folder tests: our fixtures in the published layout, hashed so a test can prove they stay unchanged."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

FOLDERS = Path(__file__).resolve().parents[1] / "fixtures" / "benchfolders"


def tree_hash(root: Path) -> str:
    """A hash of every path, file content and mode under ``root`` (anything written there changes it)."""
    digest = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        digest.update(str(p.relative_to(root)).encode() + b"\0" + oct(p.stat().st_mode).encode())
        if p.is_file():
            digest.update(p.read_bytes())
    return digest.hexdigest()


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Generated plans go to a cache of the test's own; no real Stripe key in reach."""
    cache = tmp_path_factory.mktemp("cache")
    monkeypatch.setenv("STRIPEBENCH_CACHE", str(cache))
    monkeypatch.delenv("STRIPE_SECRET_KEY", raising=False)
    return cache
