"""`python -m stripebench_tui.gateway`: the gateway on its own prints its URL and dummy key, and writes the events."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx

from stripebench_tui.testing.fake_models import FakeModelServer
from stripebench_tui.testing.fake_wire import ScriptedTurn
from tests.gateway.conftest import REAL_KEY

REPO = Path(__file__).resolve().parents[2]


def test_the_standalone_gateway_forwards_and_records_without_printing_the_key(tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    with FakeModelServer([ScriptedTurn(text="hello")], api_key=REAL_KEY) as fake:
        env = {**os.environ, "PYTHONPATH": str(REPO), "ANTHROPIC_API_KEY": REAL_KEY}
        proc = subprocess.Popen([sys.executable, "-m", "stripebench_tui.gateway", "--base-url",
                                 fake.url, "--events", str(events)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        try:
            word, url, key = proc.stdout.readline().split()
            assert word == "gateway" and key != REAL_KEY
            reply = httpx.post(url + "/v1/messages", headers={"x-api-key": key}, timeout=30,
                               json={"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]})
            assert reply.json()["content"][0]["text"] == "hello"
        finally:
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert REAL_KEY not in out + err
    recorded = [json.loads(line) for line in events.read_text().splitlines()]
    assert [(e["type"], e.get("role"), e["text"], e["turn"]) for e in recorded] == [
        ("model_message", "user", "hi", 0), ("model_message", "assistant", "hello", 1)]
