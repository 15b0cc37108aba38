"""The environment image's cache key: unchanged environment, same tag; any change, a new one."""

from __future__ import annotations

import shutil
from pathlib import Path

from stripebench_tui.envs.catalog import load_environment
from stripebench_tui.runtime.docker_images import content_hash, generated_dockerfile

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "envs" / "tiny-shop"


def test_hash_follows_files_and_base_image_but_not_caches(tmp_path: Path) -> None:
    root = tmp_path / "tiny-shop"
    shutil.copytree(FIXTURE, root)
    env = load_environment(root)
    first = content_hash(env, "sha256:aaa")
    assert content_hash(env, "sha256:aaa") == first
    assert content_hash(env, "sha256:bbb") != first  # a new base image rebuilds
    (root / "workspace" / "__pycache__").mkdir(exist_ok=True)
    (root / "workspace" / "__pycache__" / "x.pyc").write_bytes(b"junk")
    assert content_hash(env, "sha256:aaa") == first  # byte-code caches do not count
    (root / "workspace" / "app.py").write_text((root / "workspace" / "app.py").read_text() + "\n# changed\n")
    assert content_hash(env, "sha256:aaa") != first


def test_generated_dockerfile_bakes_tool_deps_and_requirements() -> None:
    text = generated_dockerfile("stripebench/base:bookworm", has_requirements=True, has_ca=True)
    assert text.startswith("FROM stripebench/base:bookworm\n")
    assert "mcp==" in text and "stripe==" in text and "-r /opt/stripebench-env/requirements.txt" in text
    assert "PYTHONPATH=/opt/stripebench" in text
    assert "ENV PIP_CERT" not in text  # the build-time CA is not left in the image's environment


def test_the_declared_requirements_are_baked_in_and_hashed_even_with_setup_commands(tmp_path: Path) -> None:
    from stripebench_tui.runtime.docker_images import _requirements

    root = tmp_path / "tiny-shop"
    shutil.copytree(FIXTURE, root)
    outside = tmp_path / "deps.txt"  # a requirements file outside the environment directory's hashed files
    outside.write_text("flask>=3.0\n")
    manifest = root / "environment.toml"
    lines = manifest.read_text().splitlines()
    first_table = next(i for i, line in enumerate(lines) if line.startswith("["))
    lines[first_table:first_table] = ['requirements = "../deps.txt"', 'setup = ["true"]']
    manifest.write_text("\n".join(lines) + "\n")
    env = load_environment(root)
    assert _requirements(env) == root / "../deps.txt"  # setup commands no longer opt out
    first = content_hash(env, "sha256:aaa")
    outside.write_text("flask>=3.1\n")
    assert content_hash(env, "sha256:aaa") != first
