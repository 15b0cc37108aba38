"""The shared dev server's watch list: what restarts the app and what does not (the restart itself, end to end, is
tests/environments/test_checkout_migration.py::test_devserver_restarts_the_app_when_its_code_changes)."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from types import ModuleType

from stripebench_tui.envs.manifest import SHARED_DIR


def _devserver() -> ModuleType:
    spec = importlib.util.spec_from_file_location("shared_devserver", SHARED_DIR / "devserver.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _touch(path: Path, ns: int) -> None:
    os.utime(path, ns=(ns, ns))


def test_code_schema_templates_and_installed_packages_are_watched_other_files_are_not(tmp_path: Path) -> None:
    dev = _devserver()
    patterns = dev.WATCHED
    for name in ("app.py", "schema.sql", "templates/index.html", "notes.txt", "shop.db"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x")
        _touch(tmp_path / name, 1_000_000_000)
    site = tmp_path / ".venv" / "lib" / "python3.11" / "site-packages"
    (site / "stripe-4.2.0.dist-info").mkdir(parents=True)
    before = dev.snapshot(tmp_path, patterns)
    for unwatched in ("notes.txt", "shop.db"):  # the app's own database changes on every request
        _touch(tmp_path / unwatched, 2_000_000_000)
    assert dev.snapshot(tmp_path, patterns) == before
    for watched in ("app.py", "schema.sql", "templates/index.html"):
        _touch(tmp_path / watched, 3_000_000_000)
        assert dev.snapshot(tmp_path, patterns) != before, watched
        _touch(tmp_path / watched, 1_000_000_000)
    assert dev.snapshot(tmp_path, patterns) == before
    (site / "stripe-4.2.0.dist-info").rename(site / "stripe-16.1.0.dist-info")  # an upgrade
    assert dev.snapshot(tmp_path, patterns) != before
    assert dev.snapshot(tmp_path, patterns + ("*.txt",)) != dev.snapshot(tmp_path, patterns)  # --watch adds


def test_the_options_default_to_app_py_and_a_short_settle() -> None:
    dev = _devserver()
    args = dev.parse_args([])
    assert (args.app, args.watch, args.settle) == ("app.py", [], 0.4)
    args = dev.parse_args(["--settle", "1.0", "--watch", "*.txt", "--watch", "data/*.json"])
    assert (args.settle, args.watch) == (1.0, ["*.txt", "data/*.json"])
