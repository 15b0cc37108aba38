"""Asking whether pip can install elsewhere leaves setuptools importable in the same process.

Looking pip up through the import system (``importlib.util.find_spec("pip")``) makes setuptools' distutils shim
stand down for the rest of the process; the emulator's Cython build, run in-process by its tests, then failed to
import setuptools (an AssertionError naming the standard library's distutils).
"""

from __future__ import annotations

import subprocess
import sys

PROBE = ("from stripebench_tui.runtime import envdeps; can = envdeps._pip_can_target(); "
         "import setuptools; print(can, setuptools.__name__)")


def test_the_pip_check_keeps_setuptools_importable() -> None:
    run = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split() == ["True", "setuptools"]
