"""The emulator driven by the official stripe-node SDK (installed from npm into a cache directory if missing)."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from platformdirs import user_cache_dir

SCRIPT = Path(__file__).parent / "node" / "sdk_check.js"
STRIPE_NODE_MAJOR = "23"  # the major line current when this was written (pins a 2026 API version)


def _stripe_node() -> Path:
    """The npm prefix holding stripe-node, installed on first use.

    Test workers run in parallel and more than one test needs it: the install runs under an exclusive lock and
    counts as done only once npm has finished (a marker written after it), never when a half-extracted package is
    already visible to another worker."""
    default = Path(user_cache_dir("stripebench")) / f"node-stripe-{STRIPE_NODE_MAJOR}"
    prefix = Path(os.environ.get("STRIPEBENCH_NODE_CACHE") or default)
    marker = prefix / ".installed"
    prefix.parent.mkdir(parents=True, exist_ok=True)
    with open(prefix.parent / f"{prefix.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not marker.exists():
            shutil.rmtree(prefix, ignore_errors=True)  # an install that did not finish
            prefix.mkdir(parents=True)
            done = subprocess.run(["npm", "install", "--prefix", str(prefix), "--no-audit", "--no-fund",
                                   f"stripe@{STRIPE_NODE_MAJOR}"], capture_output=True, text=True, timeout=240)
            assert done.returncode == 0, f"npm install stripe@{STRIPE_NODE_MAJOR} failed:\n{done.stderr[-2000:]}"
            marker.write_text(STRIPE_NODE_MAJOR)
    return prefix


@pytest.mark.node
@pytest.mark.slow
def test_stripe_node_sdk_end_to_end(emulator):
    assert shutil.which("node") and shutil.which("npm"), "Node.js 20 and npm are part of this machine's setup"
    prefix = _stripe_node()
    run = subprocess.run(["node", str(SCRIPT)], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "STRIPE_NODE_PREFIX": str(prefix), "EMULATOR_URL": emulator.url})
    lines = [line for line in run.stdout.splitlines() if line.startswith("{")]
    assert lines, f"no result from the node script:\n{run.stdout}\n{run.stderr}"
    result = json.loads(lines[-1])
    assert result["ok"], result.get("error")
    assert run.returncode == 0
    checks = result["checks"]
    assert checks["payment_intent"] == "succeeded" and checks["decline"] == "insufficient_funds"
    assert checks["refund"] == 1000 and checks["events"] == ["payment_intent.succeeded"]
    assert checks["webhook"].startswith("evt_")


@pytest.mark.node
@pytest.mark.slow
def test_stripe_node_pays_an_invoice_in_two_parts(emulator):
    assert shutil.which("node") and shutil.which("npm"), "Node.js 20 and npm are part of this machine's setup"
    run = subprocess.run(["node", str(SCRIPT.parent / "invoice_check.js")], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "STRIPE_NODE_PREFIX": str(_stripe_node()), "EMULATOR_URL": emulator.url})
    lines = [line for line in run.stdout.splitlines() if line.startswith("{")]
    assert lines, f"no result from the node script:\n{run.stdout}\n{run.stderr}"
    result = json.loads(lines[-1])
    assert result["ok"], result.get("error")
    checks = result["checks"]
    assert checks["after_first"] == ["open", 2000, 3000]
    assert checks["refused"] == ["StripeInvalidRequestError", "paid_out_of_band"]
    assert checks["after_second"] == ["paid", 5000, 0]
    assert checks["payments"] == [2000, 3000]


@pytest.mark.node
@pytest.mark.slow
def test_checkout_sessions_with_stripe_node(emulator):
    import json
    import os
    import shutil
    import subprocess
    from pathlib import Path

    assert shutil.which("node") and shutil.which("npm"), "Node.js 20 and npm are part of this machine's setup"
    script = Path(__file__).parent / "node" / "checkout_check.js"
    run = subprocess.run(["node", str(script)], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "STRIPE_NODE_PREFIX": str(_stripe_node()), "EMULATOR_URL": emulator.url})
    lines = [line for line in run.stdout.splitlines() if line.startswith("{")]
    assert lines, f"no result from the node script:\n{run.stdout}\n{run.stderr}"
    result = json.loads(lines[-1])
    assert result["ok"], result.get("error")
    checks = result["checks"]
    assert checks["embedded"] == ["embedded_page", 3600]
    assert checks["hosted"] == ["hosted", True]
    assert checks["old_name"] == ["StripeInvalidRequestError", "ui_mode"]
    assert checks["line_items"] == [2, 3600, "Node mug"]
    assert checks["open"] == [True]
