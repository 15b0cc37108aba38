"""The import rules of docs/architecture.md, read from the source (every import, function-level ones included).

A "package" here is a first-level name under stripebench_tui: a subpackage (core, runtime, tui…)
or a top-level module (cli, errors, chromium). The rules:

- no two packages import each other, directly or through others (no package-level cycle), and no two files
  either (no file-level cycle, inside a package as between packages);
- ``core`` imports nothing of ours but ``errors`` (edges meet it through its protocols);
- ``runtime`` does not import ``tui`` and ``grading`` does not import ``runtime``;
- only ``commands`` (the CLI glue) imports ``tui``;
- the emulator is a distribution of its own (``emulator/``, import package ``stripebench_emulator``): it imports
  nothing of ``stripebench_tui``, and ``stripebench_tui`` imports only its front (the package itself), never one of
  its modules. Its inner layers are held by ``emulator/tests/test_emulator_layering.py``.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = "stripebench_tui"
PACKAGE_DIR = Path(__file__).resolve().parent.parent / ROOT
EMULATOR = "stripebench_emulator"
EMULATOR_DIR = Path(__file__).resolve().parent.parent / "emulator" / EMULATOR

CORE_MAY_IMPORT = {"errors"}
FORBIDDEN = {("runtime", "tui"), ("grading", "runtime")}
TUI_IMPORTED_ONLY_BY = {"commands"}


@dataclass(frozen=True)
class Import:
    module: str  # the importing module, dotted
    line: int
    target: str  # the imported module, dotted

    @property
    def source_package(self) -> str:
        return package_of(self.module)

    @property
    def target_package(self) -> str:
        return package_of(self.target)

    def __str__(self) -> str:
        return f"{self.module}:{self.line} imports {self.target}"


def package_of(dotted: str) -> str:
    parts = dotted.split(".")
    return parts[1] if len(parts) > 1 else ""


def module_name(path: Path, root_dir: Path) -> str:
    rel = path.relative_to(root_dir.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_in(path: Path, root_dir: Path) -> list[Import]:
    """Every import of one of our modules in ``path``: top-level, in functions, relative, and importlib calls."""
    module = module_name(path, root_dir)
    is_package = path.name == "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[Import] = []
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                base = base if is_package else base[:-1]
                base = base[: len(base) - (node.level - 1)]
                prefix = ".".join(base)
                if node.module:
                    targets = [f"{prefix}.{node.module}"]
                else:  # from . import x, y: each name may be a module
                    targets = [f"{prefix}.{alias.name}" for alias in node.names]
            elif node.module:
                targets = [node.module]
                # from stripebench_tui import tui: the name is the package
                if node.module == ROOT:
                    targets = [f"{ROOT}.{alias.name}" for alias in node.names]
        elif (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str) and _is_import_call(node.func)):
            targets = [node.args[0].value]
        for target in targets:
            if target == ROOT or target.startswith(ROOT + "."):
                found.append(Import(module, node.lineno, target))
    return found


def _is_import_call(func: ast.expr) -> bool:
    """importlib.import_module(...) or __import__(...)."""
    if isinstance(func, ast.Attribute):
        return func.attr == "import_module"
    return isinstance(func, ast.Name) and func.id in ("import_module", "__import__")


def all_imports(root_dir: Path) -> list[Import]:
    return [imp for path in sorted(root_dir.rglob("*.py")) for imp in imports_in(path, root_dir)]


def package_graph(imports: list[Import]) -> dict[str, dict[str, list[Import]]]:
    """package -> imported package -> the imports that make that edge (within a package is not an edge)."""
    graph: dict[str, dict[str, list[Import]]] = defaultdict(lambda: defaultdict(list))
    for imp in imports:
        src, dst = imp.source_package, imp.target_package
        if src and dst and src != dst:
            graph[src][dst].append(imp)
    return graph


def cycles(graph: dict[str, dict[str, list[Import]]]) -> list[list[str]]:
    """The strongly connected groups of more than one package (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    nodes = set(graph) | {d for targets in graph.values() for d in targets}
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return sorted(groups)


def file_graph(imports: list[Import], modules: set[str]) -> dict[str, dict[str, list[Import]]]:
    """module -> imported module -> the imports that make that edge. ``from pkg.mod import Name`` is an edge to
    ``pkg.mod``; ``from pkg import mod`` (resolved by ``imports_in``) to ``pkg.mod``; a name that is no module of
    ours stands for the nearest module that holds it."""
    graph: dict[str, dict[str, list[Import]]] = defaultdict(lambda: defaultdict(list))
    for imp in imports:
        target = imp.target
        while target not in modules and "." in target:
            target = target.rpartition(".")[0]
        if target in modules and target != imp.module:
            graph[imp.module][target].append(imp)
    return graph


def file_cycles(root_dir: Path) -> list[str]:
    """Every group of files that import each other, with the imports that tie it, one readable line each."""
    modules = {module_name(path, root_dir) for path in root_dir.rglob("*.py")}
    graph = file_graph(all_imports(root_dir), modules)
    out = []
    for group in cycles(graph):
        edges = [str(graph[a][b][0]) for a in group for b in group if b in graph.get(a, {})]
        out.append(f"import cycle between files {', '.join(group)}: " + "; ".join(edges))
    return out


def violations(root_dir: Path) -> list[str]:
    """Every broken rule, one readable line each (with the import lines that break it)."""
    graph = package_graph(all_imports(root_dir))
    out: list[str] = []
    for group in cycles(graph):
        edges = [str(graph[a][b][0]) for a in group for b in group if b in graph.get(a, {})]
        out.append(f"import cycle between packages {', '.join(group)}: " + "; ".join(edges))
    for dst, imps in graph.get("core", {}).items():
        if dst not in CORE_MAY_IMPORT:
            out += [f"core imports an edge package: {imp}" for imp in imps]
    for src, dst in sorted(FORBIDDEN):
        out += [f"{src} must not import {dst}: {imp}" for imp in graph.get(src, {}).get(dst, [])]
    for src, targets in sorted(graph.items()):
        if src not in TUI_IMPORTED_ONLY_BY:
            out += [f"only {', '.join(sorted(TUI_IMPORTED_ONLY_BY))} may import tui: {imp}" for imp in targets.get("tui", [])]
    return out


def imported_names(path: Path) -> list[tuple[int, str]]:
    """(line, dotted name) of every absolute import in ``path``, function-level ones and importlib calls included."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.append((node.lineno, node.module))
        elif (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str) and _is_import_call(node.func)):
            found.append((node.lineno, node.args[0].value))
    return found


def emulator_boundary_violations(tui_dir: Path, emulator_dir: Path) -> list[str]:
    """stripebench_tui reaching past the emulator's front, and the emulator importing stripebench_tui."""
    out: list[str] = []
    for path in sorted(tui_dir.rglob("*.py")):
        for line, name in imported_names(path):
            if name.startswith(EMULATOR + "."):
                out.append(f"{path.relative_to(tui_dir.parent)}:{line} imports {name}: use the {EMULATOR} front")
    for path in sorted(emulator_dir.rglob("*.py")):
        for line, name in imported_names(path):
            if name == ROOT or name.startswith(ROOT + "."):
                out.append(f"{path.relative_to(emulator_dir.parent)}:{line} imports {name}: the emulator stands alone")
    return out


def test_the_emulator_and_stripebench_tui_meet_only_at_its_front() -> None:
    assert len(list(EMULATOR_DIR.rglob("*.py"))) > 50  # it did find the emulator
    assert emulator_boundary_violations(PACKAGE_DIR, EMULATOR_DIR) == []


def test_the_boundary_check_sees_both_directions(tmp_path: Path) -> None:
    tui, emu = tmp_path / ROOT, tmp_path / EMULATOR
    (tui / "stripe_account").mkdir(parents=True)
    emu.mkdir()
    (tui / "stripe_account" / "backend.py").write_text(
        "from stripebench_emulator import EmulatorServer\ndef f():\n    from stripebench_emulator.model.store import Store\n")
    (emu / "engine.py").write_text("import importlib\nimportlib.import_module('stripebench_tui.errors')\n")
    assert emulator_boundary_violations(tui, emu) == [
        "stripebench_tui/stripe_account/backend.py:3 imports stripebench_emulator.model.store: "
        "use the stripebench_emulator front",
        "stripebench_emulator/engine.py:2 imports stripebench_tui.errors: the emulator stands alone"]


def test_the_packages_follow_the_import_rules() -> None:
    found = all_imports(PACKAGE_DIR)
    assert len({imp.module for imp in found}) > 100  # it did read the package
    assert violations(PACKAGE_DIR) == []


def test_no_two_files_import_each_other() -> None:
    assert file_cycles(PACKAGE_DIR) == []


def tui_part_cycles(root_dir: Path) -> list[list[str]]:
    """Groups of the TUI's parts (apps, screens, components, widgets, sources, keymaps…) that import each other."""
    graph: dict[str, dict[str, list[Import]]] = defaultdict(lambda: defaultdict(list))
    for imp in all_imports(root_dir):
        src, dst = imp.module.split("."), imp.target.split(".")
        if src[1:2] == dst[1:2] == ["tui"] and len(src) > 3 and len(dst) > 2 and src[2] != dst[2]:
            graph[src[2]][dst[2]].append(imp)
    return cycles(graph)


def test_the_tuis_parts_import_one_way() -> None:
    """Screens own components; components never reach back into a screen (they post messages instead)."""
    assert tui_part_cycles(PACKAGE_DIR) == []


def test_the_tui_part_check_sees_screens_and_components_importing_each_other(tmp_path: Path) -> None:
    pkg = _write(tmp_path, {"tui/screens/episode.py": "from stripebench_tui.tui.components import debugger\n",
                            "tui/components/debugger.py": "def f():\n    from stripebench_tui.tui.screens.episode import X\n"})
    assert tui_part_cycles(pkg) == [["components", "screens"]]


# The checker itself, on a made-up package: it must see what it claims to forbid.

def _write(root: Path, files: dict[str, str]) -> Path:
    pkg = root / ROOT
    for rel, text in files.items():
        path = pkg / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for d in [pkg, *[p for p in pkg.rglob("*") if p.is_dir()]]:
        (d / "__init__.py").touch()
    return pkg


def test_the_checker_finds_a_cycle_made_by_a_function_level_import(tmp_path: Path) -> None:
    pkg = _write(tmp_path, {
        "grading/validation.py": "def run():\n    from stripebench_tui.runtime.episode import Episode\n",
        "runtime/episode.py": "from stripebench_tui.grading import validation\n",
    })
    found = violations(pkg)
    assert any(v.startswith("import cycle between packages grading, runtime") for v in found), found
    assert any("grading must not import runtime: stripebench_tui.grading.validation:2" in v for v in found), found


def test_the_checker_finds_runtime_to_tui_and_core_to_an_edge(tmp_path: Path) -> None:
    pkg = _write(tmp_path, {
        "runtime/fork.py": "import importlib\nimportlib.import_module('stripebench_tui.tui.apps.live_app')\n",
        "core/state.py": "from ..formats import text\nfrom stripebench_tui.errors import UserError\n",
        "errors.py": "",
        "formats/text.py": "",
        "tui/apps/live_app.py": "",
    })
    found = violations(pkg)
    assert "runtime must not import tui: stripebench_tui.runtime.fork:2 imports stripebench_tui.tui.apps.live_app" in found
    assert "core imports an edge package: stripebench_tui.core.state:1 imports stripebench_tui.formats" in found
    assert not any("errors" in v for v in found)  # core may import errors


@pytest.mark.parametrize("source, expected", [
    ("from . import b", "stripebench_tui.pkg.b"),
    ("from .b import c", "stripebench_tui.pkg.b"),
    ("from .. import tui", "stripebench_tui.tui"),
    ("from stripebench_tui import tui", "stripebench_tui.tui"),
    ("import stripebench_tui.tui.apps.replay_app as app", "stripebench_tui.tui.apps.replay_app"),
])
def test_relative_and_aliased_imports_resolve(tmp_path: Path, source: str, expected: str) -> None:
    pkg = _write(tmp_path, {"pkg/a.py": f"def f():\n    {source}\n"})
    assert [imp.target for imp in imports_in(pkg / "pkg" / "a.py", pkg)] == [expected]


def test_the_file_check_sees_a_loop_inside_one_package_through_a_name_and_a_type_only_import(tmp_path: Path) -> None:
    pkg = _write(tmp_path, {
        "core/agent.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .executor import Outcome\n",
        "core/executor.py": "from stripebench_tui.core.agent import ToolSpec\n",
        "core/state.py": "from stripebench_tui.core import agent\n",
    })
    assert violations(pkg) == []  # one package: no rule between packages is broken
    assert file_cycles(pkg) == ["import cycle between files stripebench_tui.core.agent, stripebench_tui.core.executor: "
                                "stripebench_tui.core.agent:3 imports stripebench_tui.core.executor; "
                                "stripebench_tui.core.executor:1 imports stripebench_tui.core.agent"]
