"""The type checker passes over both packages, the app's and the emulator's (``[tool.mypy]`` in pyproject.toml).

It runs mypy through this interpreter (``python -m mypy``, never a console script by name) with the project's own
configuration, so a change that breaks a declared type at a seam fails the suite like a failing test.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_typed_packages_pass_the_type_checker(tmp_path: Path) -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert set(config["files"]) == {"stripebench_tui", "emulator/stripebench_emulator"}
    assert "exclude" not in config, "every module of both packages is checked"
    ran = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(ROOT / ".mypy_cache")], cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    assert ran.returncode == 0, ran.stdout[-4000:] + ran.stderr[-2000:]
    assert "Success: no issues found" in ran.stdout


def test_the_checker_does_fail_on_a_wrong_type(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("def double(x: int) -> int:\n    return x * 2\n\n\ndouble('two')\n")
    ran = subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", "--config-file", "/dev/null", str(bad)],
                         capture_output=True, text=True, timeout=300)
    assert ran.returncode == 1 and 'incompatible type "str"; expected "int"' in ran.stdout


# Parameters annotated bare ``Any`` where a real type is known say nothing at a seam; decoded JSON is ``JSONValue``
# (core/json_value.py), a value walked with ``isinstance`` is ``object``. What is left is this many, may only go down
# (issue #32: 213 at the start; the emulator: 84 at issue #43), and each says why in a ``# Any: …`` comment above its
# function or on its own line.
MAX_BARE_ANY = 25
MAX_BARE_ANY_EMULATOR = 1
EMULATOR = ROOT / "emulator" / "stripebench_emulator"


def bare_any_parameters(root: Path, unexplained: bool = False) -> list[str]:
    """``file:line function(parameter)`` of each parameter annotated bare ``Any`` (only those without a ``# Any:``
    reason, with ``unexplained``)."""
    import ast

    found = []
    for path in sorted(root.rglob("*.py")):
        lines = path.read_text(encoding="utf-8").splitlines()
        for node in ast.walk(ast.parse("\n".join(lines))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                for arg in node.args.posonlyargs + node.args.args + node.args.kwonlyargs:
                    if isinstance(arg.annotation, ast.Name) and arg.annotation.id == "Any":
                        said = any("# Any:" in lines[i] for i in range(max(first - 2, 0), arg.lineno))
                        if not (unexplained and said):
                            found.append(f"{path.relative_to(root.parent)}:{node.lineno} {node.name}({arg.arg})")
    return found


def test_bare_any_parameters_only_go_down_and_each_says_why() -> None:
    found = bare_any_parameters(ROOT / "stripebench_tui")
    assert len(found) <= MAX_BARE_ANY, "\n".join(found)
    assert bare_any_parameters(ROOT / "stripebench_tui", unexplained=True) == []


def test_the_emulator_s_bare_any_parameters_only_go_down_and_each_says_why() -> None:
    found = bare_any_parameters(EMULATOR)
    assert len(found) <= MAX_BARE_ANY_EMULATOR, "\n".join(found)
    assert bare_any_parameters(EMULATOR, unexplained=True) == []


def test_the_count_sees_a_bare_any_parameter(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "m.py").write_text("from typing import Any\n\ndef f(a: Any, b: int, *, c: 'Any' = 1) -> Any: ...\n\n\n"
                              "# Any: a reason\ndef g(d: Any) -> None: ...\n")
    assert bare_any_parameters(pkg) == ["pkg/m.py:3 f(a)", "pkg/m.py:7 g(d)"]
    assert bare_any_parameters(pkg, unexplained=True) == ["pkg/m.py:3 f(a)"]
