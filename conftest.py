"""The suite tests this checkout: its emulator distribution (emulator/) comes first on the path, in this process and in
the processes tests start, as the checkout's stripebench_tui does (pytest runs from the checkout's root).

After ``scripts/setup.sh`` the emulator is installed editable from here anyway; this keeps a checkout beside another
one's install (a worktree, CI's clone) testing its own copy.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

EMULATOR_DIR = str(Path(__file__).resolve().parent / "emulator")

if EMULATOR_DIR not in sys.path:
    sys.path.insert(0, EMULATOR_DIR)
_paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
if EMULATOR_DIR not in _paths:
    os.environ["PYTHONPATH"] = os.pathsep.join([EMULATOR_DIR, *_paths])
