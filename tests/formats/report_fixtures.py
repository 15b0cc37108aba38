"""A hand-written trace (raw JSON lines, so not redacted by our writer) with secrets, markup, a long output and a finding."""

from __future__ import annotations

import json
from pathlib import Path

# Shapes the redactor knows, put where a careless importer could leave them.
SECRETS = (
    "sk_test_51Hsecretvalue0123456789",
    "sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345",
    "whsec_abcdef0123456789",
    "hunter2hunter2",  # only as STRIPE_PASSWORD=…; the assignment shape catches it
)
LONG_LINES = 5000
HOSTILE = "<script>alert('x')</script><img src=http://evil.test/x.png>"
PNG_1x1 = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
    "0000000d49444154789c6360f8cfc0f01f0005000201e2b1a3bd0000000049454e44ae426082"
)


def write_raw_trace(directory: Path) -> Path:
    """An episode directory holding trace.jsonl (4 turns) and one screenshot; returns the trace path."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "screenshots").mkdir(exist_ok=True)
    (directory / "screenshots" / "001-page.png").write_bytes(PNG_1x1)
    sk, ant, whsec, password = SECRETS
    long_output = "".join(f"line {i:05d} GET /v1/prices 200\n" for i in range(LONG_LINES))
    events = [
        {"type": "header", "schema": "stripebench.trace/1", "env": "checkout-migration", "agent": "anthropic",
         "model": "claude-test", "title": f"Report test {HOSTILE}", "started": "2026-12-01T10:00:00Z",
         "extra": {"variables": {"STRIPE_SECRET_KEY": sk}}},
        {"seq": 0, "t": 0.1, "turn": 0, "type": "grader_verdict", "criterion": "paid", "status": "pending"},
        {"seq": 1, "t": 1.0, "turn": 1, "type": "model_message", "role": "assistant",
         "text": f"I will use {sk} and {ant}. {HOSTILE}", "tokens_in": 1200, "tokens_out": 80, "cost_usd": 0.0125},
        {"seq": 2, "t": 1.1, "turn": 1, "type": "tool_call", "call_id": "c1", "tool": "shell",
         "arguments": {"command": f"curl -H 'Authorization: Bearer {sk}' $STRIPE_API_BASE/v1/prices"}},
        {"seq": 3, "t": 2.0, "turn": 1, "type": "tool_result", "call_id": "c1", "tool": "shell",
         "output": f"STRIPE_PASSWORD={password}\n" + long_output, "exit_code": 0, "duration": 0.9},
        {"seq": 4, "t": 3.0, "turn": 2, "type": "tool_call", "call_id": "c2", "tool": "shell",
         "arguments": {"command": "python create_session.py"}},
        {"seq": 5, "t": 3.2, "turn": 2, "type": "stripe_request", "request_id": "req_400", "method": "POST",
         "path": "/v1/checkout/sessions", "status": 400, "error_type": "invalid_request_error",
         "error_code": "parameter_missing", "source": "agent"},
        {"seq": 6, "t": 3.5, "turn": 2, "type": "tool_result", "call_id": "c2", "tool": "shell",
         "output": f"stripe.error.InvalidRequestError: Missing line_items (webhook secret {whsec})", "exit_code": 1,
         "duration": 0.5},
        {"seq": 7, "t": 4.0, "turn": 3, "type": "tool_call", "call_id": "c3", "tool": "browser_screenshot",
         "arguments": {}},
        {"seq": 8, "t": 4.4, "turn": 3, "type": "tool_result", "call_id": "c3", "tool": "browser_screenshot",
         "output": "saved", "images": ["screenshots/001-page.png"], "duration": 0.4},
        {"seq": 9, "t": 4.5, "turn": 3, "type": "stripe_object", "object_id": "cs_test_a1", "object_type": "checkout.session",
         "data": {"id": "cs_test_a1", "object": "checkout.session", "status": "complete", "client_secret": f"{sk}"}},
        {"seq": 10, "t": 4.6, "turn": 3, "type": "grader_verdict", "criterion": "paid", "status": "fail",
         "trigger": "evt_1"},
        {"seq": 11, "t": 5.0, "turn": 4, "type": "model_message", "role": "assistant", "text": "The migration is complete."},
        {"seq": 12, "t": 5.1, "turn": 4, "type": "finding", "detector": "400-as-success",
         "message": "the agent called it done after a 400 from Stripe", "severity": "error",
         "evidence": [{"request_id": "req_400"}, {"seq": 11}]},
        {"seq": 13, "t": 5.2, "turn": 4, "type": "grader_verdict", "criterion": "paid", "status": "fail", "final": True},
        {"seq": 14, "t": 5.3, "turn": 4, "type": "episode_end", "reason": "agent_done", "score": 0.0, "passed": False},
    ]
    path = directory / "trace.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    return path
