"""The core stays free of Textual and of the edge packages (docs/architecture.md: edges meet the core through protocols)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import stripebench_tui.core.trace as core_trace

EDGES = ("textual", "stripebench_tui.tui", "stripebench_emulator", "stripebench_tui.runtime", "stripebench_tui.agents",
         "stripebench_tui.tools", "stripebench_tui.stripe_account", "stripebench_tui.formats", "stripebench_tui.grading")


def test_importing_the_core_loads_neither_textual_nor_an_edge_package() -> None:
    code = (
        "import importlib, json, pkgutil, sys\n"
        "import stripebench_tui.core as core\n"
        "for m in pkgutil.iter_modules(core.__path__):\n"
        "    importlib.import_module('stripebench_tui.core.' + m.name)\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    loaded = json.loads(out)
    assert "stripebench_tui.core.trace" in loaded and "stripebench_tui.core.state" in loaded
    bad = [m for m in loaded if any(m == e or m.startswith(e + ".") for e in EDGES)]
    assert bad == []


def test_the_trace_reader_does_not_name_the_formats_package() -> None:
    # Foreign formats are chosen at the edge (formats.open.open_episode), not imported lazily by the core.
    source = Path(core_trace.__file__).read_text()
    assert "stripebench_tui.formats" not in source and "importlib" not in source
