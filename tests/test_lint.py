"""The linter and the import order pass over both packages and both test trees (``[tool.ruff]`` in pyproject.toml).

It runs ruff through this interpreter (``python -m ruff``, never a console script by name) with the project's own
configuration: pyflakes, pycodestyle's errors, isort, bugbear, pyupgrade and blind ``except``. A ``# noqa`` says why
(ruff itself reports one that silences nothing, RUF100).
"""

from __future__ import annotations

import io
import re
import subprocess
import sys
import tokenize
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINTED = ["stripebench_tui", "emulator/stripebench_emulator", "tests", "emulator/tests"]
RULES = {"F", "E", "I", "B", "UP", "BLE"}  # issue #43: at least these
NOQA = re.compile(r"#\s*noqa\b(?P<codes>:\s*[A-Z]+[0-9]+(?:\s*,\s*[A-Z]+[0-9]+)*)?(?P<rest>.*)", re.IGNORECASE)


def ruff(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise", *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_the_configuration_selects_the_rules_and_the_dev_extras_install_ruff() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    config = project["tool"]["ruff"]
    assert config["target-version"] == "py311"
    assert RULES <= set(config["lint"]["select"])
    assert {"stripebench_tui", "stripebench_emulator", "tests"} <= set(config["lint"]["isort"]["known-first-party"])
    assert any(re.match(r"ruff\b", dep) for dep in project["project"]["optional-dependencies"]["dev"])


def test_both_packages_and_their_tests_have_no_findings() -> None:
    ran = ruff(*LINTED)
    why = "ruff's findings (fix them, or say why in a `# noqa: CODE - reason`)"
    assert ran.returncode == 0, f"{why}:\n{ran.stdout[-6000:]}{ran.stderr[-2000:]}"


def test_the_linter_does_fail_on_an_unused_import_and_an_unsorted_block(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import sys\nimport json\n\ntry:\n    pass\nexcept Exception:\n    pass\n")
    ran = ruff("--config", str(ROOT / "pyproject.toml"), str(bad))
    assert ran.returncode == 1
    assert {"F401", "I001", "BLE001"} <= set(re.findall(r"\b([A-Z]+[0-9]+)\b", ran.stdout)), ran.stdout


def unexplained_noqa(paths: list[Path]) -> list[str]:
    """``file:line`` of each ``# noqa`` comment without named codes or without a reason after them."""
    found = []
    for root in paths:
        for path in sorted(root.rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            for tok in tokenize.generate_tokens(io.StringIO(text).readline):
                if tok.type != tokenize.COMMENT:
                    continue
                m = NOQA.search(tok.string)
                if m and (not m.group("codes") or not re.search(r"[a-z]{3}", m.group("rest"))):
                    where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
                    found.append(f"{where}:{tok.start[0]} {tok.string}")
    return found


def test_every_noqa_names_its_rule_and_says_why(tmp_path: Path) -> None:
    assert unexplained_noqa([ROOT / p for p in LINTED]) == []
    probe = tmp_path / "probe"
    probe.mkdir()
    (probe / "a.py").write_text("import os  # noqa: F401\nimport re  # noqa\nimport sys  # noqa: F401 - re-exported\n"
                                "text = '# noqa: E501'\n")
    assert [line.split(" ", 1)[0].rsplit(":", 1)[1] for line in unexplained_noqa([probe])] == ["1", "2"]
