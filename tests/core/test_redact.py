"""Secrets never reach a trace: Stripe keys, webhook secrets, Authorization values, registered values, anywhere."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stripebench_tui.core.events import Header, ModelMessage, Operator, StripeObject, ToolCall, ToolResult
from stripebench_tui.core.redact import REDACTED, Redactor, redact
from stripebench_tui.core.trace import TraceWriter, open_trace


@pytest.mark.parametrize(
    "raw, kept, gone",
    [
        ("curl -u sk_test_51HqLyjWDarjtT1zdp7dc: https://api.stripe.com", "sk_test_[REDACTED]:", "51HqLyjWDarjtT1zdp7dc"),
        ("STRIPE_SECRET_KEY=sk_live_abcdef0123456789", "sk_live_[REDACTED]", "abcdef0123456789"),
        ("rk_test_ABCDEFGH12 and rk_live_ZYXWVUT98", "rk_live_[REDACTED]", "ABCDEFGH12"),
        ("Stripe('pk_test_TYooMQauvdEDq54NiTphI7jx')", "pk_test_[REDACTED]", "TYooMQauvdEDq54NiTphI7jx"),
        ("my_sk_test_abcdefghij", "sk_test_[REDACTED]", "abcdefghij"),
        ("STRIPE_WEBHOOK_SECRET=whsec_7f3a9b2c1d0e", "whsec_[REDACTED]", "7f3a9b2c1d0e"),
        ("Authorization: Bearer eyJhbGciOi.J9.xyz", "Authorization: Bearer [REDACTED]", "eyJhbGciOi"),
        ("authorization: Basic c2tfdGVzdF94eXo6", "authorization: Basic [REDACTED]", "c2tfdGVzdF94eXo6"),
        ('{"Authorization": "token-abcdef"}', '"Authorization": "[REDACTED]"', "token-abcdef"),
        ("-H 'authorization: opaque-value-123'", "authorization: [REDACTED]", "opaque-value-123"),
        ("header bearer abcdefghijklmnop", "bearer [REDACTED]", "abcdefghijklmnop"),
    ],
)
def test_known_secret_shapes(raw: str, kept: str, gone: str) -> None:
    out = redact(raw)
    assert kept in out and gone not in out


@pytest.mark.parametrize(
    "raw, kept, gone",
    [
        ("ANTHROPIC_API_KEY=sk-ant-api03-PLANTEDabc_def-0123456789xyz", "sk-ant-api03-[REDACTED]", "PLANTEDabc"),
        ("key: sk-ant-admin01-Zq9Zq9Zq9Zq9Zq9Zq9Zq9", "sk-ant-admin01-[REDACTED]", "Zq9Zq9Zq9"),
        ("export OPENAI_API_KEY=sk-proj-Abc123Def456Ghi789Jkl0", "sk-proj-[REDACTED]", "Abc123Def456"),
        ("client = OpenAI(api_key='sk-9f8e7d6c5b4a39281706aBcD')", "sk-[REDACTED]", "9f8e7d6c5b4a"),
        ("sk-svcacct-AAAABBBBCCCCDDDDEEEE", "sk-svcacct-[REDACTED]", "AAAABBBBCCCC"),
        ("XAI_API_KEY xai-Qw3rTy7UiOp9AsDfGhJkLzXc", "xai-[REDACTED]", "Qw3rTy7UiOp9"),
        ("-H 'x-api-key: opaque1234'", "x-api-key: [REDACTED]", "opaque1234"),
        ('{"api-key": "azure-key-77"}', '"api-key": "[REDACTED]"', "azure-key-77"),
        ("Authorization: Bearer sk-ant-oat01-abcdefghijklmnopqrst", "Bearer [REDACTED]", "abcdefghijklmnopqrst"),
        ("GITHUB_TOKEN=ghp_0123456789abcdef", "GITHUB_TOKEN=[REDACTED]", "ghp_0123456789abcdef"),
        ('MY_PROVIDER_API_KEY="odd-shaped-key"', 'MY_PROVIDER_API_KEY="[REDACTED]"', "odd-shaped-key"),
        ("DB_PASSWORD=hunter22 next", "DB_PASSWORD=[REDACTED] next", "hunter22"),
        ("AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG", "AWS_SECRET_ACCESS_KEY=[REDACTED]", "wJalrXUtnFEMI"),
    ],
)
def test_model_provider_key_shapes(raw: str, kept: str, gone: str) -> None:
    out = redact(raw)
    assert kept in out and gone not in out


def test_ordinary_text_is_left_alone() -> None:
    text = "risk_test_cases, task_live_update, desk_pk_table, ask_test_suite: the whsec prefix, Bearer of news"
    assert redact(text) == text
    text = ("disk-usage-for-the-whole-volume, task-runner-configuration-file, sk-short, xai-small, "
            "max_tokens=8192, input_tokens: 12, the api-key header, TOKEN=abc, secret santa, MAX_TOKENS=8192, "
            "TOKEN_URL=https://example.com/x")
    assert redact(text) == text


def test_registered_values_nested_keys_and_lists() -> None:
    r = Redactor(["hunter2hunter2", "abc"])  # "abc" is too short to redact safely
    value = {"a": [{"deep": "pw=hunter2hunter2"}, ("tuple", "hunter2hunter2")], "hunter2hunter2": 1, "n": 5, "none": None,
             "Authorization": "Bearer x", "abc": "abc"}
    out = r.value(value)
    dumped = json.dumps(out)
    assert "hunter2hunter2" not in dumped and out["n"] == 5 and out["none"] is None
    assert out["a"][0]["deep"] == f"pw={REDACTED}" and out["a"][1] == ["tuple", REDACTED]
    assert out["Authorization"] == REDACTED and out["abc"] == "abc"
    assert value["a"][0]["deep"] == "pw=hunter2hunter2"  # the input is not changed


def test_longer_registered_secret_wins_over_a_shorter_one_inside_it() -> None:
    r = Redactor(["secret", "secret-plus-more"])
    assert r.text("x secret-plus-more y") == f"x {REDACTED} y"


def test_everything_written_to_a_trace_is_redacted(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    env_key = "sk_test_envOwnKey000111"
    with TraceWriter(path, Header(env="e"), secrets=[env_key], inline_cap=200) as w:
        w.write(ModelMessage(t=1, turn=1, text=f"I will use {env_key}", reasoning="the key is sk_live_abcdefghij"))
        w.write(ToolCall(t=2, turn=1, call_id="c", tool="shell",
                         arguments={"command": "curl",
                                    "headers": {"Authorization": "Bearer rk_live_zzzzzzzzzz"}, "argv": ["-u", env_key]}))
        w.write(ToolResult(t=3, turn=1, call_id="c", tool="shell", output=("x" * 300) + " whsec_abcdefghijkl " + env_key))
        w.write(StripeObject(t=4, turn=1, object_id="we_1", object_type="webhook_endpoint",
                             data={"secret": "whsec_abcdefghijkl", "nested": [{"k": env_key}]}))
        w.add_secret("late-registered-value")
        w.write(Operator(t=5, turn=1, action="inject", text="late-registered-value", details={"x": "late-registered-value"}))
    everything = "".join(p.read_bytes().decode("utf-8", "replace") for p in tmp_path.rglob("*") if p.is_file())
    for secret in (env_key, "abcdefghij", "zzzzzzzzzz", "abcdefghijkl", "late-registered-value"):
        assert secret not in everything
    trace = open_trace(path)
    events = list(trace.iter_events())
    result = events[2]
    assert isinstance(result, ToolResult) and result.sidecar  # the sidecar copy was redacted as well
    assert REDACTED in trace.full_output(result)
