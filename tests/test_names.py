"""One name, one meaning: no class name is defined twice in stripebench_tui (two ``ToolResult``s in one data flow,
two ``Limits`` with different defaults, three ``Hit``s… made readers guess which one they had)."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parents[1] / "stripebench_tui"


def classes_defined_twice(root: Path) -> dict[str, list[str]]:
    where: dict[str, list[str]] = defaultdict(list)
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                where[node.name].append(f"{path.relative_to(root.parent)}:{node.lineno}")
    return {name: places for name, places in where.items() if len(places) > 1}


def test_no_class_name_is_defined_twice() -> None:
    assert classes_defined_twice(PACKAGE_DIR) == {}


def test_the_check_sees_a_name_defined_in_two_modules(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "a").mkdir(parents=True)
    (pkg / "a" / "x.py").write_text("class Hit:\n    pass\n")
    (pkg / "y.py").write_text("def f():\n    class Hit:\n        pass\n")
    assert classes_defined_twice(pkg) == {"Hit": ["pkg/a/x.py:1", "pkg/y.py:2"]}
