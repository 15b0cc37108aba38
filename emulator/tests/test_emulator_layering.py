"""The emulator's layers, read from its source: every import, function-level ones included.

Layers, lowest first, each a subpackage: ``model`` (store, context, params, rendering, search, versions, ids, errors,
events, the route registry, the engine: the account's state and transactions), ``rules`` (Billing over time,
invoices' payments, discounts and redemptions), ``api`` (one module per Stripe resource), ``web`` (the app, server,
controls, dispatch, pages, stripe.js, faults, webhooks). The package's own top-level modules (its front, the command
line, the compiled loader and its build, the fidelity gauge, the pytest fixtures) sit above them all. Imports may
point down or sideways, never up, and no two files may import each other through any path. An import inside a
function (which would hide a loop from the import system) is allowed only with a comment saying why.

(The package grew as one import loop of 62 files, issue #31. The file is not called test_layering.py: pytest
imports the suite's tests by file name, and tests/test_layering.py has that one.)
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = "stripebench_emulator"
PACKAGE_DIR = Path(__file__).resolve().parents[1] / PACKAGE
LAYERS = ("model", "rules", "api", "web", "front")



def short(module: str) -> str:
    return module[len(PACKAGE) + 1:] if module != PACKAGE else ""


def layer_of(name: str) -> str:
    """The layer of a module: its subpackage, or ``front`` for the package's own top-level modules ("" is its
    ``__init__``)."""
    first, _, rest = name.partition(".")
    if first in LAYERS[:-1]:
        return first
    if rest:
        raise AssertionError(f"{name}: a subpackage that is no layer (put it in one)")
    return "front"


def modules(root: Path) -> dict[str, Path]:
    found = {}
    for path in sorted(root.rglob("*.py")):
        if any(part.startswith(".") for part in path.relative_to(root).parts):
            continue  # .compiled: builds, not source
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join([root.name, *parts])] = path
    return found


def imports(root: Path) -> dict[str, dict[str, int]]:
    """module -> imported module of ours -> first line (``from pkg import mod`` names the module, relative imports
    resolved, importlib calls included)."""
    mods = modules(root)
    graph: dict[str, dict[str, int]] = {}
    for module, path in mods.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")
                    parts = parts[: len(parts) - (node.level - 1)]
                    base = ".".join(parts + ([node.module] if node.module else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names]
            elif (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
                  and isinstance(node.args[0].value, str) and getattr(node.func, "attr", getattr(node.func, "id", ""))
                  in ("import_module", "__import__")):
                targets = [node.args[0].value]
            for target in targets:
                if target in mods and target != module:
                    graph.setdefault(module, {}).setdefault(target, node.lineno)
    return graph


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan, iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, {}))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            v, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, {})))))
                elif child in on_stack:
                    low[v] = min(low[v], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
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
    return sorted(groups)


def upward(graph: dict[str, dict[str, int]]) -> set[tuple[str, str]]:
    return {(short(a), short(b)) for a, targets in graph.items() for b in targets
            if LAYERS.index(layer_of(short(b))) > LAYERS.index(layer_of(short(a)))}


GRAPH = imports(PACKAGE_DIR)


def test_every_module_has_a_layer() -> None:
    assert len(GRAPH) > 50
    for module in modules(PACKAGE_DIR):
        layer_of(short(module))


def test_no_import_points_up() -> None:
    assert sorted(upward(GRAPH)) == []


def test_no_two_files_import_each_other() -> None:
    assert [[short(m) for m in group] for group in cycles(GRAPH)] == []


def function_level_imports(root: Path) -> list[str]:
    """``file:line`` of each import of the package's own modules inside a function with no comment on its line or
    the line above saying why."""
    found = []
    for path in modules(root).values():
        lines = path.read_text(encoding="utf-8").splitlines()
        tree = ast.parse("\n".join(lines), filename=str(path))
        for func in ast.walk(tree):
            if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(func):
                names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                         else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else
                         ["."] if isinstance(node, ast.ImportFrom) else [])
                if not any(n == "." or n.split(".")[0] == root.name for n in names):
                    continue
                said = "#" in lines[node.lineno - 1] or "#" in lines[node.lineno - 2]
                if not said:
                    found.append(f"{path.relative_to(root.parent)}:{node.lineno}")
    return sorted(set(found))


def test_function_level_imports_say_why() -> None:
    assert function_level_imports(PACKAGE_DIR) == []


# The checker itself on made-up packages: it must see what it claims to forbid.

def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / PACKAGE
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    for d in [root, *[p for p in root.rglob("*") if p.is_dir()]]:
        (d / "__init__.py").touch()
    return root


def test_the_checker_sees_a_function_level_upward_import_and_the_cycle_it_makes(tmp_path: Path) -> None:
    root = _package(tmp_path, {
        "rules/billing_cycle.py": "def renew():\n    from stripebench_emulator.api import invoices\n",
        "api/invoices.py": "from ..rules import billing_cycle\n",
    })
    graph = imports(root)
    assert upward(graph) == {("rules.billing_cycle", "api.invoices")}
    assert cycles(graph) == [["stripebench_emulator.api.invoices", "stripebench_emulator.rules.billing_cycle"]]


def test_the_checker_sees_importlib_and_a_longer_cycle(tmp_path: Path) -> None:
    root = _package(tmp_path, {
        "model/store.py": "import importlib\nimportlib.import_module('stripebench_emulator.model.events')\n",
        "model/events.py": "from stripebench_emulator.model import context\n",
        "model/context.py": "import stripebench_emulator.model.store\n",
    })
    assert [[short(m) for m in g] for g in cycles(imports(root))] == [["model.context", "model.events", "model.store"]]
    assert upward(imports(root)) == set()


def test_the_checker_sees_an_unexplained_function_level_import(tmp_path: Path) -> None:
    root = _package(tmp_path, {
        "api/coupons.py": "def f():\n    from stripebench_emulator.rules import redemption\n",
        "api/prices.py": "def f():\n    # only this path needs it\n    from stripebench_emulator.rules import catalog\n",
        "api/products.py": "def f():\n    import json\n",
    })
    assert function_level_imports(root) == [f"{PACKAGE}/api/coupons.py:2"]


def test_the_checker_sees_the_front_imported_from_below(tmp_path: Path) -> None:
    root = _package(tmp_path, {"model/store.py": "from stripebench_emulator import testing\n", "testing.py": ""})
    assert upward(imports(root)) == {("model.store", "testing")}


@pytest.mark.parametrize("name, layer", [("model.store", "model"), ("rules.billing_cycle", "rules"),
                                         ("api.customers", "api"), ("web.pages.checkout", "web"), ("", "front"),
                                         ("fidelity", "front")])
def test_layers_by_name(name: str, layer: str) -> None:
    assert layer_of(name) == layer


def test_a_module_in_no_layer_is_refused() -> None:
    with pytest.raises(AssertionError, match="no layer"):
        layer_of("resources.customers")
