"""Build the compiled emulator (see ``compiled``): ``python -m stripebench_emulator.cython_build``.

Compiles with Cython each API module whose source changed since its last build (all of them the first time: about
two minutes on two cores), into ``.compiled/`` beside the package's modules, and records the sources' hashes in its
manifest. What fails to compile stays Python; the command then says why and exits 1.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from stripebench_emulator.model.compiled import (
    OUT,
    PURE_VARIABLE,
    api_modules,
    binary_path,
    read_manifest,
    source_hash,
    stale_modules,
)

# Plain Python semantics: annotations are not C types (``x: dict`` must still accept what Python accepts), and
# functions keep Python's introspection (signatures, ``__name__``, ``__doc__``).
DIRECTIVES = {"language_level": 3, "binding": True, "annotation_typing": False}
SECONDS_PER_MODULE = 3.5  # on one core, Cython then the C compiler (measured here): for the announced estimate


class BuildError(Exception):
    """The compiled build could not be made; the emulator runs as Python."""


def build(sources: dict[str, Path], out: Path = OUT, jobs: int = 0,
          announce: Callable[[str], object] = print) -> dict[str, str]:
    """Compile what is stale among ``sources`` (full name -> file) into ``out``; returns the manifest now on disk.

    Raises ``BuildError`` when Cython or a C compiler is missing or a module does not compile; the builds already
    in ``out`` stay as they were.
    """
    manifest_path = out / "manifest.json"
    builder = builder_id()
    hashes = read_manifest(manifest_path, builder)  # {} when another build made them: all again
    todo = stale_modules(sources, hashes, out)
    gone = [name for name in hashes if name not in sources]
    if not todo and not gone:
        return hashes
    if todo:
        try:
            from Cython.Build import cythonize
            from setuptools import Distribution, Extension
        except ImportError as exc:
            raise BuildError(f"{exc.name} is not installed (pip install cython setuptools)") from None
        if shutil.which(os.environ.get("CC", "cc")) is None:
            raise BuildError(f"no C compiler: {os.environ.get('CC', 'cc')} is not on PATH")
        jobs = jobs or os.cpu_count() or 1
        estimate = max(1, round(len(todo) * SECONDS_PER_MODULE / jobs))
        announce(f"compiling {len(todo)} emulator module(s) with Cython, {jobs} at a time (about {estimate} s)…")
        started = time.monotonic()
        digests = {name: source_hash(path) for name, path in todo.items()}
        with tempfile.TemporaryDirectory(prefix="stripebench-cython-") as scratch:
            # -w: the C that Cython generates draws gcc warnings that say nothing about our code
            extensions = [Extension(name, [str(path)], extra_compile_args=["-w"]) for name, path in todo.items()]
            try:
                translated = cythonize(extensions, compiler_directives=DIRECTIVES, build_dir=scratch, quiet=True,
                                       nthreads=jobs if jobs > 1 else 0, force=True)
            except Exception as exc:  # noqa: BLE001 - Cython's CompileError and friends: report, keep the Python
                raise BuildError(f"Cython could not translate the emulator: {exc}") from None
            for extension in translated:
                for c_file in extension.sources:
                    _python_sized_dicts(Path(c_file))
            lib = Path(scratch) / "lib"
            dist = Distribution({"ext_modules": translated, "script_name": "cython_build.py",
                                 "script_args": ["-q", "build_ext", "--build-lib", str(lib),
                                                 "--build-temp", str(Path(scratch) / "tmp"), "--parallel", str(jobs)]})
            try:
                dist.parse_command_line()
                dist.run_commands()
            except (Exception, SystemExit) as exc:  # noqa: BLE001 - how setuptools reports a compiler's failure
                raise BuildError(f"the C compiler failed on the emulator: {exc}") from None
            for name in todo:
                target = binary_path(name, out)
                target.parent.mkdir(parents=True, exist_ok=True)
                # a new file moved into place, never written over: a running process may have the old one mapped
                fresh = target.with_name(target.name + ".new")
                shutil.copyfile(binary_path(name, lib), fresh)
                os.replace(fresh, target)
                hashes[name] = digests[name]
        announce(f"compiled {len(todo)} module(s) in {time.monotonic() - started:.0f} s into {out}")
    for name in gone:  # a module that no longer exists
        del hashes[name]
        binary_path(name, out).unlink(missing_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    fresh_manifest = manifest_path.with_name(manifest_path.name + ".new")
    fresh_manifest.write_text(json.dumps({"builder": builder, "modules": hashes}, indent=1, sort_keys=True) + "\n")
    os.replace(fresh_manifest, manifest_path)
    return hashes


# How Cython's generated C makes the dict of a ``{...}`` display with more than 8 items: ``_PyDict_NewPresized``, which
# on CPython 3.11+ gives a key table of the general kind (a hash stored with every entry) where Python's own display
# gives the compact kind for string keys. Every Stripe object is such a display (20-50 keys), and the store keeps
# shallow copies, which keep their source's kind: about a fifth more memory per object, and more fresh pages touched
# per request. ``PyDict_New`` grows into the compact kind as Python's dicts do.
_PRESIZED = b"#define __Pyx_PyDict_NewPresized(n)  ((n <= 8) ? PyDict_New() : _PyDict_NewPresized(n))"
_AS_PYTHON = b"#define __Pyx_PyDict_NewPresized(n)  PyDict_New()"


def builder_id() -> str:
    """What made the builds: this module's source and Cython's version (a change to either rebuilds everything)."""
    try:
        cython_version = importlib.metadata.version("cython")
    except importlib.metadata.PackageNotFoundError:
        cython_version = "none"
    return f"{source_hash(Path(__file__))[:16]}-cython-{cython_version}"


def _python_sized_dicts(c_file: Path) -> None:
    """Make the dicts of ``c_file``'s displays the kind Python makes (see ``_PRESIZED``); tests check the result."""
    code = c_file.read_bytes()
    if _PRESIZED in code:
        c_file.write_bytes(code.replace(_PRESIZED, _AS_PYTHON))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m stripebench_emulator.cython_build",
        description="Compile the emulator's API modules with Cython: only those whose source changed since the "
                    "last build. A compiled module is used while its source is unchanged; an edited one runs as "
                    f"Python until the next build. {PURE_VARIABLE}=1 turns compiled modules off.")
    parser.add_argument("--jobs", type=int, default=0, help="modules compiled at once (default: one per CPU)")
    parser.add_argument("--check", action="store_true",
                        help="build nothing: say how many modules are compiled and current; exit 1 if any is not")
    args = parser.parse_args(argv)
    if args.jobs < 0:
        parser.error("--jobs must be 0 (one per CPU) or more")
    sources = api_modules()
    if args.check:
        todo = stale_modules(sources, read_manifest(builder=builder_id()), OUT)
        names = ", ".join(sorted(name.rsplit(".", 1)[-1] for name in todo)) if len(todo) <= 8 else "run the build"
        print(f"{len(sources) - len(todo)} of {len(sources)} emulator modules compiled and current"
              + (f"; stale or not built: {names}" if todo else ""))
        return 1 if todo else 0
    try:
        build(sources, OUT, jobs=args.jobs)
    except BuildError as exc:
        print(f"error: {exc}; the emulator runs as plain Python", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
