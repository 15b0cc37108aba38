"""The compiled emulator: built by setup, loaded only while each module's source is unchanged, off on request."""

from __future__ import annotations

import importlib
import importlib.machinery
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from stripebench_emulator.cython_build import build, main
from stripebench_emulator.model import compiled

SUFFIX = importlib.machinery.EXTENSION_SUFFIXES[0]


def test_this_process_runs_the_api_compiled() -> None:
    """After ``make setup`` every API module the tests import is the compiled build (none silently Python)."""
    if os.environ.get(compiled.PURE_VARIABLE, "") not in ("", "0"):
        pytest.skip(f"{compiled.PURE_VARIABLE} is set: this run tests the emulator as plain Python")
    importlib.import_module("stripebench_emulator.api")  # every resource module
    state = compiled.status()
    assert state["compiled"], "no compiled build loaded: run `make setup` (it compiles the emulator)"
    assert state["python"] == [], f"imported as Python (stale or not built; `make setup` rebuilds): {state['python']}"
    store = sys.modules["stripebench_emulator.model.store"]
    assert store.__file__ is not None and store.__file__.endswith(SUFFIX)


def _package(root: Path, name: str, modules: dict[str, str]) -> dict[str, Path]:
    pkg = root / name
    pkg.mkdir(exist_ok=True)
    (pkg / "__init__.py").write_text("")
    for module, text in modules.items():
        (pkg / f"{module}.py").write_text(textwrap.dedent(text))
    return compiled.api_modules(pkg, name)


def _fresh_import(name: str):  # a module
    sys.modules.pop(name, None)
    importlib.invalidate_caches()
    return importlib.import_module(name)


def test_a_module_loads_compiled_until_its_source_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    sources = _package(src, "sbpkg", {
        "shapes": '''
            def card(last4: dict) -> dict:  # an annotation that must not become a C type check
                return {"object": "card", "last4": last4}
        ''',
        "other": """
            def display():  # a dict display of more than 8 string keys, as every Stripe object is
                return {"id": "cus_1", "object": "customer", "address": None, "balance": 0, "created": 1,
                        "currency": None, "email": "a@example.com", "livemode": False, "metadata": {},
                        "name": None, "phone": None, "shipping": None}
        """,
    })
    messages: list[str] = []
    hashes = build(sources, out, jobs=2, announce=messages.append)
    assert set(hashes) == {"sbpkg.shapes", "sbpkg.other"}
    assert "compiling 2 emulator module(s)" in messages[0]
    monkeypatch.syspath_prepend(str(src))
    finder = compiled.CompiledFinder(sources, compiled.read_manifest(out / "manifest.json"), out)
    monkeypatch.setattr(sys, "meta_path", [finder, *sys.meta_path])
    monkeypatch.delitem(sys.modules, "sbpkg", raising=False)

    shapes = _fresh_import("sbpkg.shapes")
    assert shapes.__file__.endswith(SUFFIX) and shapes.__file__.startswith(str(out))
    assert shapes.card("4242") == {"object": "card", "last4": "4242"}  # a str where the annotation says dict
    assert finder.loaded == {"sbpkg.shapes"}
    # its dicts are the compact kind Python makes (not Cython's presized general kind, a fifth bigger), copies too
    other = _fresh_import("sbpkg.other")
    assert other.__file__.endswith(SUFFIX)
    as_python: dict = {}
    exec(compile((src / "sbpkg" / "other.py").read_text(), "other.py", "exec"), as_python)
    assert sys.getsizeof(other.display()) == sys.getsizeof(as_python["display"]())
    assert sys.getsizeof(dict(other.display())) == sys.getsizeof(dict(as_python["display"]()))

    # edited: the Python runs at once, the old build is not used
    (src / "sbpkg" / "shapes.py").write_text("def card(last4):\n    return {'object': 'card', 'last4': last4 * 2}\n")
    shapes = _fresh_import("sbpkg.shapes")
    assert shapes.__file__ == str(src / "sbpkg" / "shapes.py")
    assert shapes.card("42") == {"object": "card", "last4": "4242"}
    assert finder.stale == {"sbpkg.shapes"} and finder.loaded == {"sbpkg.shapes", "sbpkg.other"}

    # the next build compiles only what changed, and the new build is used
    messages.clear()
    hashes = build(sources, out, jobs=2, announce=messages.append)
    assert "compiling 1 emulator module(s)" in messages[0]
    assert build(sources, out, jobs=2, announce=messages.append) == hashes and len(messages) == 2  # nothing to do
    # (in a new process: one process cannot load two builds of an extension from the same path)
    probe = textwrap.dedent(f"""
        import sys
        from pathlib import Path
        from stripebench_emulator.model import compiled
        out = Path({str(out)!r})
        sources = compiled.api_modules(Path({str(src / "sbpkg")!r}), "sbpkg")
        sys.meta_path.insert(0, compiled.CompiledFinder(sources, compiled.read_manifest(out / "manifest.json"), out))
        import sbpkg.shapes as shapes
        print(shapes.__file__, shapes.card("42")["last4"])
    """)
    dist = Path(compiled.__file__).resolve().parents[2]  # the distribution under test, whatever else is installed
    ran = subprocess.run([sys.executable, "-c", probe], env={**os.environ, "PYTHONPATH": f"{src}{os.pathsep}{dist}"},
                         capture_output=True, text=True, check=True, cwd=tmp_path)
    assert ran.stdout.split() == [str(compiled.binary_path("sbpkg.shapes", out)), "4242"]

    # a module that is gone loses its build and its manifest entry
    (src / "sbpkg" / "other.py").unlink()
    hashes = build(compiled.api_modules(src / "sbpkg", "sbpkg"), out, jobs=2, announce=messages.append)
    assert set(hashes) == {"sbpkg.shapes"}
    assert not compiled.binary_path("sbpkg.other", out).exists()
    assert compiled.read_manifest(out / "manifest.json") == hashes


def test_pure_python_variable_turns_compiled_modules_off() -> None:
    probe = ("import stripebench_emulator.model.store as s\nfrom stripebench_emulator.model import compiled\n"
             "print(s.__file__)\nprint(compiled.describe())")
    env = {k: v for k, v in os.environ.items() if k != compiled.PURE_VARIABLE}
    pure = subprocess.run([sys.executable, "-c", probe], env={**env, compiled.PURE_VARIABLE: "1"},
                          capture_output=True, text=True, check=True, cwd="/")
    assert pure.stdout.splitlines()[0].endswith("store.py")
    assert pure.stdout.splitlines()[1] == f"as Python: {compiled.PURE_VARIABLE} is set"  # the emulator's banner says
    default = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True,
                             cwd="/")
    assert default.stdout.splitlines()[0].endswith(SUFFIX)
    assert default.stdout.splitlines()[1] == "compiled"


def test_check_counts_what_is_built_and_current(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--check"]) == 0
    total = len(compiled.api_modules())
    assert capsys.readouterr().out.strip() == f"{total} of {total} emulator modules compiled and current"


def test_the_http_edge_and_pages_stay_python() -> None:
    names = set(compiled.api_modules())
    assert "stripebench_emulator.model.store" in names and "stripebench_emulator.api.charges" in names
    for kept in ("web.app", "web.server", "web.control", "web.faults", "web.webhooks", "model.compiled",
                 "cython_build", "web.pages.checkout", "api", "web"):
        assert f"stripebench_emulator.{kept}" not in names
