"""The emulator stands alone: importing and running it loads nothing of stripebench-tui or its heavy dependencies."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

# (not rich: httpx, a dependency, imports it for its own command line when it happens to be installed)
FOREIGN = ("stripebench_tui", "textual", "playwright", "docker", "typer", "mcp", "anthropic", "openai", "jinja2")

PROBE = textwrap.dedent("""
    import json, sys
    import stripebench_emulator
    from stripebench_emulator import running_emulator
    import httpx
    with running_emulator(seed=1) as server:  # every resource module is imported by now, and a request served
        made = httpx.post(server.url + "/v1/customers", data={"email": "alone@example.com"},
                          headers={"Authorization": "Bearer sk_test_alone"}, timeout=10)
    print(json.dumps({"status": made.status_code, "modules": sorted(sys.modules)}))
""")


def test_importing_and_serving_the_emulator_loads_nothing_of_stripebench_tui() -> None:
    run = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert result["status"] == 200
    loaded = [m for m in result["modules"] if m.split(".")[0] in FOREIGN]
    assert loaded == [], loaded
    assert "stripebench_emulator.api.customers" in result["modules"]  # the probe did load the API


def test_the_module_runs_as_a_command_and_says_what_it_takes() -> None:
    run = subprocess.run([sys.executable, "-m", "stripebench_emulator", "--help"], capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 0, run.stderr
    assert "--control-token" in run.stdout and "fidelity" in run.stdout
