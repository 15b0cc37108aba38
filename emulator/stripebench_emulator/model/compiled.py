"""The emulator's API modules compiled with Cython, loaded only while their source is unchanged.

Every request runs through a few dozen small Python functions (parsing, validation, building, storing and rendering
Stripe objects); compiled, the same source does that work in about two thirds of the time
(``benchmarks/emulator_throughput.py`` measures it against the framework floor).

* ``python -m stripebench_emulator.cython_build`` (``scripts/setup.sh`` runs it) compiles each API module whose
  source changed since its last build into ``.compiled/`` beside this file, with a manifest of the sources' hashes.
* ``install()`` (the package runs it first) puts a finder at the front of ``sys.meta_path``. The finder loads a
  module's compiled build only when the source's hash still matches the manifest: an edited module runs as Python
  at once, until the next build.
* ``STRIPEBENCH_PURE_PYTHON=1`` loads no compiled module (for a debugger, a profiler of Python lines, or to compare).

Compiled or not, it is one source: Cython compiles plain Python here (type annotations are not used for typing), so
behaviour does not change; the HTTP edge (app, server, controls, pages) and process plumbing stay Python.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

PACKAGE = "stripebench_emulator"
PACKAGE_DIR = Path(__file__).resolve().parents[1]
OUT = PACKAGE_DIR / ".compiled"
MANIFEST = OUT / "manifest.json"
PURE_VARIABLE = "STRIPEBENCH_PURE_PYTHON"
BUILD_COMMAND = "python -m stripebench_emulator.cython_build"
# Not compiled: package initialisers, this loader and its build, the HTTP edge and process plumbing (thin code
# around uvicorn and Starlette), modules that give Starlette endpoints (faults, webhooks: Starlette tells a request
# handler from an ASGI app by ``inspect.isfunction``, which a compiled function is not), the pages (they also
# find their templates next to their own file), the command line, pytest fixtures (``testing``), the fidelity gauge
# and the hooks' typing contract (``model.hooks``: Protocols, nothing to run). Names inside the package; a package's
# ``__init__`` is never compiled.
PYTHON_ONLY = {"__main__", "model.compiled", "cython_build", "web.app", "web.server", "web.control", "model.gc_policy",
               "web.faults", "web.webhooks", "model.problems", "testing", "fidelity", "fidelity_gaps", "web.sdk_params",
               "model.hooks"}
PYTHON_ONLY_DIRS = {"web.pages"}


def api_modules(root: Path = PACKAGE_DIR, package: str = PACKAGE) -> dict[str, Path]:
    """The modules to compile: full name -> source file."""
    found: dict[str, Path] = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        name = ".".join(parts)
        if (parts[-1] == "__init__" or name in PYTHON_ONLY or parts[0].startswith(".")
                or any(name.startswith(d + ".") for d in PYTHON_ONLY_DIRS)):
            continue
        found[".".join((package, *parts))] = path
    return found


def source_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def binary_path(fullname: str, out: Path = OUT) -> Path:
    """Where the build of ``fullname`` for this interpreter lives (the suffix names the Python version and ABI)."""
    return out.joinpath(*fullname.split(".")).with_name(
        fullname.rsplit(".", 1)[-1] + importlib.machinery.EXTENSION_SUFFIXES[0])


def read_manifest(manifest: Path = MANIFEST, builder: str | None = None) -> dict[str, str]:
    """Full name -> hash of the source each build was made from ({} when there is none or it is unreadable, or
    when ``builder`` is given and the builds were made by another)."""
    try:
        data = json.loads(manifest.read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or (builder is not None and data.get("builder") != builder):
        return {}
    modules = data.get("modules")
    return {k: v for k, v in modules.items() if isinstance(v, str)} if isinstance(modules, dict) else {}


def turned_off() -> bool:
    """True when ``STRIPEBENCH_PURE_PYTHON`` asks for no compiled module."""
    return os.environ.get(PURE_VARIABLE, "") not in ("", "0")


class CompiledFinder(importlib.abc.MetaPathFinder):
    """Finds the compiled build of an API module when it was built from the source as it is now."""

    def __init__(self, sources: dict[str, Path], hashes: dict[str, str], out: Path = OUT) -> None:
        self.sources, self.hashes, self.out = sources, hashes, out
        self.loaded: set[str] = set()
        self.stale: set[str] = set()  # built from an older source: loaded as Python

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        wanted = self.hashes.get(fullname)
        source = self.sources.get(fullname)
        if wanted is None or source is None:
            return None
        binary = binary_path(fullname, self.out)
        try:
            fresh = binary.is_file() and source_hash(source) == wanted
        except OSError:
            fresh = False
        if not fresh:
            self.stale.add(fullname)
            return None
        loader = importlib.machinery.ExtensionFileLoader(fullname, str(binary))
        spec = importlib.util.spec_from_file_location(fullname, binary, loader=loader)
        if spec is not None:
            self.loaded.add(fullname)
        return spec


_finder: CompiledFinder | None = None


def install() -> CompiledFinder | None:
    """Load fresh compiled builds from now on (once per process); None when turned off or nothing is built."""
    global _finder
    if _finder is not None or turned_off():
        return _finder
    hashes = read_manifest()
    if not hashes:
        return None
    _finder = CompiledFinder(api_modules(), hashes)
    sys.meta_path.insert(0, _finder)
    return _finder


def status() -> dict[str, list[str]]:
    """Which API modules this process imported compiled, and which as Python (stale or never built)."""
    loaded = _finder.loaded if _finder is not None else set()
    imported = [name for name in api_modules() if name in sys.modules]
    return {"compiled": sorted(n for n in imported if n in loaded),
            "python": sorted(n for n in imported if n not in loaded)}


def stale_modules(sources: dict[str, Path], hashes: dict[str, str], out: Path = OUT) -> dict[str, Path]:
    """The modules whose build is missing or was made from another source."""
    return {name: path for name, path in sources.items()
            if hashes.get(name) != source_hash(path) or not binary_path(name, out).is_file()}


def describe() -> str:
    """How this process runs the emulator's API, in a few words (for the ``stripebench emulator`` banner)."""
    state = status()
    if not state["compiled"]:
        return f"as Python: {PURE_VARIABLE} is set" if turned_off() else \
            f"as Python: no compiled build: {BUILD_COMMAND} (make setup in a checkout) makes one"
    if state["python"]:
        return (f"compiled, but {len(state['python'])} module(s) changed since the build run as Python "
                f"({BUILD_COMMAND} or make setup)")
    return "compiled"
