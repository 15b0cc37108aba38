"""The package tables of docs/architecture.md and README.md, held to the code: they cannot drift.

docs/architecture.md's "imports (ours)" column must name exactly the packages each package imports (every import
read from the source, as tests/test_layering.py reads them; ``errors`` is left out, every package may import it),
and it must have a row for every package; README's table must list every subpackage.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.test_layering import PACKAGE_DIR, all_imports, package_graph

ROOT = Path(__file__).resolve().parents[1]
ARCHITECTURE = ROOT / "docs" / "architecture.md"
README = ROOT / "README.md"
NOT_PACKAGES = {"__main__"}  # ``python -m stripebench_tui``: the entry point, it only calls ``cli``


def packages() -> set[str]:
    """First-level names under stripebench_tui: subpackages and top-level modules."""
    names = {p.name for p in PACKAGE_DIR.iterdir() if p.is_dir() and any(p.glob("*.py"))}
    names |= {p.stem for p in PACKAGE_DIR.glob("*.py") if p.stem != "__init__"}
    return names - NOT_PACKAGES


def actual_imports() -> dict[str, set[str]]:
    """package -> the other packages of ours it imports (``errors`` and the package's own ``__init__`` names left
    out)."""
    known = packages()
    graph = package_graph(all_imports(PACKAGE_DIR))
    return {name: {t for t in graph.get(name, {}) if t in known and t != "errors"} for name in known}


def table_rows(text: str, header: str) -> list[list[str]]:
    """The cells of each row of the markdown table whose header row starts with ``header``."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows


def documented_imports(cell: str) -> set[str]:
    """``core``, ``agents`` (prices), … : the first backticked name of each comma-separated item; ``—`` is none."""
    if cell in ("—", "-", ""):
        return set()
    names = set()
    for item in re.split(r",(?![^(]*\))", cell):
        found = re.search(r"`([\w.]+)/?`", item)
        if found:
            names.add(found.group(1).split(".")[0])
    return names


def package_name(cell: str) -> str:
    return cell.strip("`").rstrip("/")


def test_the_architecture_table_names_every_package_and_exactly_what_each_imports() -> None:
    rows = table_rows(ARCHITECTURE.read_text(encoding="utf-8"), "| package | role | imports (ours) |")
    actual = actual_imports()
    documented = {package_name(row[0]): documented_imports(row[2]) & set(actual) for row in rows}
    assert sorted(set(actual) - set(documented)) == [], "packages with no row in docs/architecture.md"
    assert sorted(set(documented) - set(actual)) == [], "rows for packages that do not exist"
    wrong = {name: {"documented": sorted(documented[name]), "imports": sorted(actual[name])}
             for name in actual if documented[name] != actual[name]}
    assert wrong == {}


def test_the_readme_table_lists_every_subpackage() -> None:
    rows = table_rows(README.read_text(encoding="utf-8"), "| package | what it holds |")
    listed = {package_name(row[0]) for row in rows}
    subpackages = {p.name for p in PACKAGE_DIR.iterdir() if p.is_dir() and any(p.glob("*.py"))}
    assert sorted(subpackages - listed) == []


@pytest.mark.parametrize("cell, names", [
    ("—", set()),
    ("`core`, `agents` (prices)", {"core", "agents"}),
    ("`core`, `runtime` (process tags, fork), `formats`", {"core", "runtime", "formats"}),
    ("`core`, `findings` (path parsing); the emulator distribution's front (`stripebench_emulator`)",
     {"core", "findings"}),
])
def test_the_imports_column_is_read_as_written(cell: str, names: set[str]) -> None:
    assert documented_imports(cell) == names
