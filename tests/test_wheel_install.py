"""The wheels: stripebench-tui's carries the built-in environments, graders and sample replays, and a plain install
of it with the emulator's own wheel (stripebench-emulator, built from emulator/) runs them.

Builds both wheels, installs them (no dependencies: they come from this interpreter's site-packages) into a fresh venv,
and from a directory far from this checkout runs `stripebench envs`, `validate bookings-payments` and a bundled
sample replay. The environments' app dependencies come from their own cached venvs (nothing from scripts/setup.sh).
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
EMULATOR_FILE_KINDS = {".py", ".typed", ".js", ".css", ".html", ".json", ".png", ".txt"}
BUILT_OR_ARCHIVED = (".whl", ".egg", ".gem", ".jar", ".zip", ".tgz", ".tar.gz", ".so", ".pyc", ".pyd", ".dll")


def _run(argv: list[str], cwd: Path, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.mark.drill
@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_the_installed_wheel_runs_the_bundled_environments_graders_and_replays(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "STRIPEBENCH_ENVIRONMENTS", "STRIPEBENCH_GRADERS", "VIRTUAL_ENV")}
    built = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--disable-pip-version-check", "-q",
                  "-w", str(tmp_path / "dist"), str(REPO)], cwd=tmp_path, env=env, timeout=600)
    assert built.returncode == 0, built.stderr
    built_emulator = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--disable-pip-version-check", "-q",
                           "-w", str(tmp_path / "dist"), str(REPO / "emulator")], cwd=tmp_path, env=env, timeout=600)
    assert built_emulator.returncode == 0, built_emulator.stderr
    [wheel] = list((tmp_path / "dist").glob("stripebench_tui-*.whl"))
    [emulator_wheel] = list((tmp_path / "dist").glob("stripebench_emulator-*.whl"))
    with zipfile.ZipFile(emulator_wheel) as zf:
        emulator_names = zf.namelist()
    assert "stripebench_emulator/web/static/stripe.js" in emulator_names
    assert not [n for n in emulator_names if "/.compiled/" in n or "__pycache__" in n or n.startswith("tests/")]
    # The emulator's own source, its pages' data and the typing marker; nothing third-party or built (a wheel
    # inside the package once shipped in it).
    assert "stripebench_emulator/py.typed" in emulator_names
    foreign = [n for n in emulator_names if not n.startswith("stripebench_emulator-")
               and (not n.startswith("stripebench_emulator/") or Path(n).suffix not in EMULATOR_FILE_KINDS)]
    assert foreign == []
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
    assert "stripebench_tui/bundled/graders/bookings_payments.py" in names
    assert "stripebench_tui/bundled/replays/checkout-migration-400/trace.jsonl" in names
    assert not [n for n in names if "__pycache__" in n or "/.venv/" in n or n.endswith(".pyc")]
    assert "stripebench_tui/py.typed" in names
    assert not [n for n in names + emulator_names if n.endswith(BUILT_OR_ARCHIVED)]

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)], check=True)
    installed = _run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q",
                      "--disable-pip-version-check", "--no-deps", "--ignore-installed", str(emulator_wheel), str(wheel)],
                     cwd=tmp_path, env=env, timeout=300)
    assert installed.returncode == 0, installed.stderr

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    where = _run([str(venv / "bin" / "python"), "-c", "import stripebench_tui; print(stripebench_tui.__file__)"],
                 cwd=elsewhere, env=env, timeout=60)
    package = Path(where.stdout.strip()).parent
    assert package.is_relative_to(venv), where.stdout + where.stderr  # not the editable checkout
    assert (package / "bundled" / "environments" / "bookings-payments" / "environment.toml").is_file()

    emulator_help = _run([str(venv / "bin" / "stripebench-emulator"), "--help"], cwd=elsewhere, env=env, timeout=60)
    assert emulator_help.returncode == 0 and "--control-token" in emulator_help.stdout, emulator_help.stderr

    cli = [str(venv / "bin" / "stripebench")]
    envs = _run([*cli, "envs"], cwd=elsewhere, env=env, timeout=120)
    assert envs.returncode == 0, envs.stderr
    assert {line.split()[0] for line in envs.stdout.splitlines()} >= {
        "bookings-payments", "checkout-migration", "idempotent-payments", "sdk-upgrade-charges", "webhook-fulfillment"}

    replay = _run([*cli, "replay", "replays/checkout-migration-400", "--summary"], cwd=elsewhere, env=env, timeout=120)
    assert replay.returncode == 1, replay.stderr  # the sample where the agent fails: it does not pass
    assert "checkout-migration" in replay.stdout and "Traceback" not in replay.stderr

    validate = _run([*cli, "validate", "bookings-payments"], cwd=elsewhere, env=env, timeout=900)
    assert validate.returncode == 0, validate.stdout + validate.stderr
    assert "oracle" in validate.stdout and "refund-400-as-success" in validate.stdout
