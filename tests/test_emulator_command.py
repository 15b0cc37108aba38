"""`stripebench emulator` serves the emulator distribution as before (its own command is tested in emulator/tests)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys

import httpx


def test_stripebench_emulator_command_serves_with_its_token_and_refuses_bad_options() -> None:
    proc = subprocess.Popen([sys.executable, "-m", "stripebench_tui", "emulator", "--port", "0", "--seed", "3"],
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        assert proc.stderr is not None
        url = re.search(r"http://[\d.]+:\d+", proc.stderr.readline()).group(0)
        made = httpx.post(f"{url}/v1/customers", data={"email": "tui@example.com"},
                          headers={"Authorization": "Bearer sk_test_tui_command"}, timeout=10)
        assert made.status_code == 200 and made.json()["email"] == "tui@example.com"
        header, token = re.search(r"(Stripebench-Control-Token): (\S+)", proc.stderr.readline()).groups()
        assert httpx.get(f"{url}/_emulator/health", timeout=10).status_code == 403
        assert httpx.get(f"{url}/_emulator/health", headers={header: token}, timeout=10).json()["seed"] == 3
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=10)
    bad = subprocess.run([sys.executable, "-m", "stripebench_tui", "emulator", "--api-version", "latest"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "not a Stripe API version" in bad.stderr and "Traceback" not in bad.stderr
    short = subprocess.run([sys.executable, "-m", "stripebench_tui", "emulator", "--control-token", "abc"],
                           capture_output=True, text=True, timeout=60)
    assert short.returncode == 2 and "--control-token must be at least 16 characters" in short.stderr
