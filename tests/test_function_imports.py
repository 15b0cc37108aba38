"""Every import inside a function of ``stripebench_tui`` says why it is there, in a comment; the rest sit at the top.

An import belongs at the top of its module, where a reader sees what the module stands on. One inside a function
is kept only for a reason worth a comment: a heavy dependency loaded late (Textual, Playwright, an SDK, the
emulator) so that a command's start-up stays quick, an optional dependency that may be absent (Ray, uvloop), a
module run in another process. The comment sits on the import's line, on the line above it, or on the line above a
run of imports that follow one another (one reason for the run). The emulator holds the same rule for its own
modules (``emulator/tests/test_emulator_layering.py``).
"""

from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent.parent / "stripebench_tui"


def _reasons(source: str) -> dict[int, str]:
    """The comment on each line that has one, markers for tools (``noqa``, ``type: ignore``, ``pragma``) removed."""
    said: dict[int, str] = {}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type != tokenize.COMMENT:
            continue
        text = token.string.lstrip("#").strip()
        for marker in ("noqa", "type: ignore", "pragma"):
            if text.startswith(marker):
                text = ""
        if text:
            said[token.start[0]] = text
    return said


def unexplained_function_imports(root: Path) -> list[str]:
    """``file:line`` of each import inside a function (nested ones included) with no reason given."""
    found: list[str] = []
    for path in sorted(root.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        said = _reasons(source)
        lines = source.splitlines()
        for func in ast.walk(ast.parse(source, filename=str(path))):
            if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for statements in _bodies(func):
                run_start = None
                for statement in statements:
                    if not isinstance(statement, (ast.Import, ast.ImportFrom)):
                        run_start = None
                        continue
                    if run_start is None:
                        run_start = statement.lineno
                    first = statement.lineno
                    if any(line in said for line in (first, first - 1, run_start - 1)) or _said_inside(statement, said):
                        continue
                    found.append(f"{path.relative_to(root.parent)}:{first}: {lines[first - 1].strip()}")
    return sorted(set(found))


def _bodies(func: ast.AST) -> list[list[ast.stmt]]:
    """Every statement list inside ``func`` (its body, and those of its ifs, loops, withs and tries)."""
    out: list[list[ast.stmt]] = []
    for node in ast.walk(func):
        for field in ("body", "orelse", "finalbody"):
            value = getattr(node, field, None)
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                out.append(value)
        if isinstance(node, ast.Try):
            out.extend(handler.body for handler in node.handlers)
        if isinstance(node, ast.Match):
            out.extend(case.body for case in node.cases)
    return out


def _said_inside(statement: ast.stmt, said: dict[int, str]) -> bool:
    """A comment inside a parenthesised import that spans lines."""
    end = statement.end_lineno or statement.lineno
    return any(line in said for line in range(statement.lineno, end + 1))


def test_function_level_imports_say_why() -> None:
    found = unexplained_function_imports(PACKAGE_DIR)
    assert found == [], f"{len(found)} import(s) inside functions with no reason (move each to the top, or say why):\n" + \
        "\n".join(found)


# The checker on made-up modules: it must see what it claims to forbid.

def _tree(tmp_path: Path, text: str) -> Path:
    root = tmp_path / "stripebench_tui"
    root.mkdir()
    (root / "mod.py").write_text(text)
    return root


def test_the_checker_sees_an_unexplained_import_in_a_function_and_in_a_nested_block(tmp_path: Path) -> None:
    root = _tree(tmp_path, "def f():\n    import json\n    if True:\n        import shlex\n")
    assert unexplained_function_imports(root) == ["stripebench_tui/mod.py:2: import json",
                                                  "stripebench_tui/mod.py:4: import shlex"]


def test_a_reason_on_the_line_above_covers_the_run_of_imports_below_it_and_no_more(tmp_path: Path) -> None:
    root = _tree(tmp_path, "def f():\n"
                           "    # Textual is heavy: loaded only when the screen opens\n"
                           "    import textual\n"
                           "    from textual import app\n"
                           "    x = 1\n"
                           "    import json\n")
    assert unexplained_function_imports(root) == ["stripebench_tui/mod.py:6: import json"]


def test_a_tool_marker_is_no_reason_but_a_comment_on_the_line_is(tmp_path: Path) -> None:
    root = _tree(tmp_path, "def f():\n"
                           "    import ray  # noqa: F401\n"
                           "    import uvloop  # optional: absent on Windows\n"
                           "    from a import (b,  # in a child process only\n"
                           "                   c)\n")
    assert unexplained_function_imports(root) == ["stripebench_tui/mod.py:2: import ray  # noqa: F401"]


def test_module_level_imports_are_not_counted(tmp_path: Path) -> None:
    root = _tree(tmp_path, "import json\ntry:\n    import ray\nexcept ImportError:\n    ray = None\n"
                           "class A:\n    x = 1\n")
    assert unexplained_function_imports(root) == []
