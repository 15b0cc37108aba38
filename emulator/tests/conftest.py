"""The emulator's own tests: they test the package beside them (put first on the path here and for the processes
they start, whatever else is installed), with the fixtures of ``stripebench_emulator.testing``, and with the store's
ownership checks on (``STRIPEBENCH_EMULATOR_CHECKS``), run alone or in the whole suite."""

import os
import sys
from pathlib import Path

_DIST = str(Path(__file__).resolve().parents[1])
if _DIST not in sys.path:
    sys.path.insert(0, _DIST)
if _DIST not in os.environ.get("PYTHONPATH", "").split(os.pathsep):
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (_DIST, os.environ.get("PYTHONPATH", "")) if p)

from stripebench_emulator.model.store import CHECKS_VARIABLE  # noqa: E402 - after the path is set up above
from stripebench_emulator.testing import api, emulator, emulator_server, stripe_client, stripe_sdk  # noqa: E402,F401 - after the path set-up; pytest fixtures

os.environ.setdefault(CHECKS_VARIABLE, "1")
