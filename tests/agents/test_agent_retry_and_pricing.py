"""Retry bookkeeping and turn prices, without a server."""

from __future__ import annotations

import email.utils
import time

import pytest

from stripebench_tui.agents.pricing import ANTHROPIC, OPENAI, TurnUsage, turn_cost
from stripebench_tui.agents.retry import RetryPolicy, SdkErrors, call_with_retries, retry_after_seconds


def test_retry_after_forms():
    assert retry_after_seconds({"retry-after-ms": "250"}) == 0.25
    assert retry_after_seconds({"retry-after": "3"}) == 3.0
    assert retry_after_seconds({"retry-after": "1.5"}) == 1.5
    soon = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= retry_after_seconds({"retry-after": soon}) <= 31
    assert retry_after_seconds({"retry-after": "soon"}) is None
    assert retry_after_seconds({}) is None and retry_after_seconds(None) is None


def test_backoff_doubles_up_to_the_cap():
    policy = RetryPolicy(backoff_base=1.0, backoff_max=5.0)
    assert [policy.backoff(n) for n in range(1, 6)] == [1.0, 2.0, 4.0, 5.0, 5.0]


class Status(Exception):
    pass


class Connection(Exception):
    pass


class Timeout(Connection):
    pass


async def test_a_bug_is_not_dressed_up_as_a_provider_error():
    calls = []

    async def broken():
        calls.append(1)
        raise KeyError("bug")

    with pytest.raises(KeyError):
        await call_with_retries(broken, SdkErrors(Status, Connection, Timeout), RetryPolicy(), "test")
    assert calls == [1]


def test_prices_come_from_the_maintained_table_with_its_tiers() -> None:
    def cost(model: str, provider: str, tokens_in: int, tokens_out: int = 0, **cache: int) -> float | None:
        return turn_cost(model, TurnUsage(tokens_in, tokens_out, **cache), provider=provider)

    # list prices (USD per million tokens), dated snapshots at their alias's price
    assert cost("claude-sonnet-4-5", ANTHROPIC, 100_000, 10_000) == pytest.approx(0.1 * 3.0 + 0.01 * 15.0)
    assert cost("claude-sonnet-4-5-20250929", ANTHROPIC, 100_000, 10_000) == cost("claude-sonnet-4-5", ANTHROPIC,
                                                                                   100_000, 10_000)
    assert cost("gpt-4o-2024-08-06", OPENAI, 1_000_000) == pytest.approx(2.5)
    assert cost("gpt-4o-mini", OPENAI, 1_000_000) == pytest.approx(0.15)  # its own entry, not gpt-4o's
    # a prompt past 200K tokens bills at Sonnet 4.5's long-context rate (the old table said 3.0 whatever the length)
    assert cost("claude-sonnet-4-5", ANTHROPIC, 1_000_000) == pytest.approx(6.0)
    # cache reads and writes at their own prices (0.1x and 1.25x of Sonnet's input)
    assert cost("claude-sonnet-4-5", ANTHROPIC, 100_000, cache_read=100_000) == pytest.approx(0.1 * 0.3)
    assert cost("claude-sonnet-4-5", ANTHROPIC, 100_000, cache_write=100_000) == pytest.approx(0.1 * 3.75)
    # unknown: a model the family does not sell, or no token counts; never a guess, never $0
    assert cost("llama3", OPENAI, 1000, 10) is None
    assert cost("qwen3-coder", OPENAI, 1000, 10) is None
    assert cost("gpt-5", ANTHROPIC, 1000, 10) is None  # priced at the API it was asked through
    assert turn_cost("gpt-5", TurnUsage(None, 10), provider=OPENAI) is None


def test_the_price_option_bills_every_model_at_the_users_price() -> None:
    own = (3.0, 15.0)
    assert turn_cost("llama3", TurnUsage(1_000_000, 0), provider=OPENAI, price=own) == pytest.approx(3.0)
    # 1M input of which 400k cache reads and 100k cache writes.
    assert turn_cost("anything", TurnUsage(1_000_000, 0, cache_write=100_000, cache_read=400_000),
                     provider=ANTHROPIC, price=own) == pytest.approx(0.5 * 3.0 + 0.1 * 3.0 * 1.25 + 0.4 * 3.0 * 0.1)