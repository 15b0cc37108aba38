"""The whole suite runs the emulator with its ownership checks on (``emulator.store``: a stored object changed in
place after it was saved fails the request), in this process and in the emulators it starts as subprocesses."""

import os

from stripebench_tui.emulator.store import CHECKS_VARIABLE

os.environ.setdefault(CHECKS_VARIABLE, "1")
