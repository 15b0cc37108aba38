"""What a model turn cost, from a small table of list prices.

Prices are USD per million tokens (input, output), as published by each provider
when the entry was added. A model that is not listed costs ``None`` (unknown),
never a guess; a user can supply a price with the agents' ``price`` option.
"""

from __future__ import annotations

import re

PRICES_PER_MTOK: dict[str, tuple[float, float]] = {
    # Anthropic
    "claude-fable-5-2": (8.0, 40.0),
    "claude-fable-5-1": (10.0, 50.0),
    "claude-opus-5-5": (4.0, 20.0),
    "claude-opus-5": (5.0, 25.0),
    "claude-sonnet-5-5": (2.0, 10.0),
    "claude-sonnet-5": (2.0, 10.0),
    "claude-sonnet-4-6": (3.0, 15.0),
    "claude-opus-4-5": (5.0, 25.0),
    "claude-opus-4-1": (15.0, 75.0),
    "claude-opus-4-0": (15.0, 75.0),
    "claude-opus-4": (15.0, 75.0),
    "claude-sonnet-4-5": (3.0, 15.0),
    "claude-sonnet-4-0": (3.0, 15.0),
    "claude-sonnet-4": (3.0, 15.0),
    "claude-3-7-sonnet": (3.0, 15.0),
    "claude-haiku-4-5": (1.0, 5.0),
    "claude-3-5-haiku": (0.8, 4.0),
    # OpenAI (the rate for prompts up to 272K tokens; longer prompts cost more)
    "gpt-6.1-sol": (2.0, 10.0),
    "gpt-6-sol": (2.0, 10.0),
    "gpt-5": (1.25, 10.0),
    "gpt-5-mini": (0.25, 2.0),
    "gpt-5-nano": (0.05, 0.4),
    "gpt-4.1": (2.0, 8.0),
    "gpt-4.1-mini": (0.4, 1.6),
    "gpt-4.1-nano": (0.1, 0.4),
    "gpt-4o": (2.5, 10.0),
    "gpt-4o-mini": (0.15, 0.6),
    "o3": (2.0, 8.0),
    "o4-mini": (1.1, 4.4),
}

# Dated snapshots ("claude-sonnet-4-5-20250929", "gpt-4o-2024-08-06") cost what their alias costs.
_DATE_SUFFIX = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2})$")


def price_for(model: str) -> tuple[float, float] | None:
    """(input, output) USD per million tokens for ``model``, or None when unknown."""
    if model in PRICES_PER_MTOK:
        return PRICES_PER_MTOK[model]
    return PRICES_PER_MTOK.get(_DATE_SUFFIX.sub("", model))


def turn_cost(
    price: tuple[float, float] | None,
    tokens_in: int | None,
    tokens_out: int | None,
    cache_write: int = 0,
    cache_read: int = 0,
) -> float | None:
    """USD for one turn; cache writes bill at 1.25× and cache reads at 0.1× the input price (Anthropic's rule)."""
    if price is None or tokens_in is None or tokens_out is None:
        return None
    per_in, per_out = price
    plain_in = tokens_in - cache_write - cache_read
    total = plain_in * per_in + cache_write * per_in * 1.25 + cache_read * per_in * 0.1 + tokens_out * per_out
    return round(total / 1_000_000, 8)
