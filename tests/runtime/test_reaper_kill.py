"""kill_tagged: a process a tagged one starts while it is being stopped is stopped too, and nothing is left when it
returns."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys

from stripebench_tui.runtime.reaper import TAG_VAR, kill_tagged, tagged_pids

# On SIGTERM this parent starts a child (tagged like it, as the environment is inherited) and only then exits:
# the child is born after kill_tagged's first look.
PARENT = """
import signal, subprocess, sys, time
def stop(*_):
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    sys.exit(0)
signal.signal(signal.SIGTERM, stop)
print("ready", flush=True)
time.sleep(600)
"""

# Ignores SIGTERM: only the SIGKILL after the grace stops it.
STUBBORN = """
import signal, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
print("ready", flush=True)
time.sleep(600)
"""


def _start(code: str, tag: str) -> subprocess.Popen:
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                               env={**os.environ, TAG_VAR: tag}, start_new_session=True)
    assert process.stdout is not None and process.stdout.readline() == "ready\n"
    return process


def test_a_child_started_while_stopping_is_stopped_too() -> None:
    tag = f"test-{secrets.token_hex(4)}"
    parent = _start(PARENT, tag)
    try:
        assert tagged_pids(tag) == [parent.pid]
        assert kill_tagged(tag, grace=3.0) == 2  # the parent, then the child it started on SIGTERM
        assert tagged_pids(tag) == []
        assert parent.wait(5) == 0
    finally:
        kill_tagged(tag, grace=0.1)


def test_a_process_that_ignores_sigterm_is_gone_when_kill_tagged_returns() -> None:
    tag = f"test-{secrets.token_hex(4)}"
    stubborn = _start(STUBBORN, tag)
    try:
        assert kill_tagged(tag, grace=0.2) == 1
        assert tagged_pids(tag) == []
        assert stubborn.wait(5) == -9
    finally:
        kill_tagged(tag, grace=0.1)
