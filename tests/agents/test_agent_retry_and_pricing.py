"""Retry bookkeeping and turn prices, without a server."""

from __future__ import annotations

import email.utils
import time

import pytest

from stripebench_tui.agents.pricing import price_for, turn_cost
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


def test_prices():
    assert price_for("claude-sonnet-4-5-20250929") == price_for("claude-sonnet-4-5") == (3.0, 15.0)
    assert price_for("gpt-4o-2024-08-06") == (2.5, 10.0)
    assert price_for("gpt-4o-mini") == (0.15, 0.6)  # its own entry, not gpt-4o's
    assert price_for("gpt-4o-audio-preview") is None  # unknown variants are not guessed
    assert price_for("llama3") is None
    assert turn_cost(None, 10, 10) is None
    assert turn_cost((3.0, 15.0), 1_000_000, 0) == pytest.approx(3.0)
    # 1M input of which 400k cache reads and 100k cache writes.
    assert turn_cost((3.0, 15.0), 1_000_000, 0, cache_write=100_000, cache_read=400_000) == pytest.approx(
        0.5 * 3.0 + 0.1 * 3.0 * 1.25 + 0.4 * 3.0 * 0.1
    )
