"""`stripebench doctor` and `stripebench images` against a real engine."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from stripebench_tui.cli import _register_all, app

pytestmark = [pytest.mark.docker]

_register_all()


def test_doctor_reports_engine_base_image_chromium_and_backend(docker_client) -> None:
    done = CliRunner().invoke(app, ["doctor"])
    assert done.exit_code == 0, done.output
    lines = done.output.splitlines()
    version = docker_client.version()["Version"]
    assert any(line.startswith("ok") and f"Docker engine {version}" in line for line in lines)
    assert any(line.startswith("ok") and "base image" in line for line in lines)
    assert any("Chromium" in line for line in lines)
    assert any("Stripe backend: emulator" in line for line in lines)


def test_doctor_fails_with_how_to_fix_when_no_engine(docker_client, monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/none.sock")
    done = CliRunner().invoke(app, ["doctor"])
    assert done.exit_code == 4
    fail = [line for line in done.output.splitlines() if line.startswith("FAIL")]
    assert fail and "no Docker engine reachable" in fail[0] and "start dockerd or point DOCKER_HOST" in fail[0]


def test_images_bootstrap_is_cached_and_build_reuses_an_unchanged_image(docker_client) -> None:
    runner = CliRunner()
    done = runner.invoke(app, ["images", "bootstrap"])
    assert done.exit_code == 0 and "already exists" in done.output, done.output
    first = runner.invoke(app, ["images", "build", "tiny-shop"])
    assert first.exit_code == 0, first.output
    again = runner.invoke(app, ["images", "build", "tiny-shop"])
    assert again.exit_code == 0 and "(cached)" in again.output, again.output
