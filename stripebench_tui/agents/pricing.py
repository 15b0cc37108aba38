"""What a model turn cost, from a maintained price table: the ``genai-prices`` package (Pydantic's, updated with each
provider's list prices, with cached-token and long-context tiers where the provider has them).

A model the table does not know costs ``None`` (shown as unknown), never a guess and never $0. A user can bill at a
price of their own with the agents' ``price`` option (USD per million tokens, input and output), which overrides
the table.
"""

from __future__ import annotations

from dataclasses import dataclass

import genai_prices

# The agents' own provider families, as the table names them.
ANTHROPIC = "anthropic"
OPENAI = "openai"


@dataclass(frozen=True)
class TurnUsage:
    """A turn's tokens: ``tokens_in`` counts every prompt token, the cached ones (written or read) included."""

    tokens_in: int | None
    tokens_out: int | None
    cache_write: int = 0
    cache_read: int = 0


def turn_cost(model: str, usage: TurnUsage, *, provider: str,
              price: tuple[float, float] | None = None) -> float | None:
    """USD for one turn of ``model``; None when the tokens or the model's price are unknown.

    ``price`` (the user's, per million tokens in and out) bills every prompt token at its input price, with
    Anthropic's cache rule (writes 1.25×, reads 0.1×). Otherwise the table's price of ``model`` at ``provider``, the
    family whose API the agent speaks (``anthropic``, ``openai``): a model that family does not sell (a local vLLM's
    or Ollama's behind an OpenAI-compatible URL) leaves the cost unknown.
    """
    if usage.tokens_in is None or usage.tokens_out is None:
        return None
    if price is not None:
        return _at_own_price(price, usage)
    counted = genai_prices.Usage(input_tokens=usage.tokens_in, output_tokens=usage.tokens_out,
                                 cache_write_tokens=usage.cache_write, cache_read_tokens=usage.cache_read)
    try:
        calculation = genai_prices.calc_price(counted, model, provider_id=provider)
    except LookupError:
        return None
    return round(float(calculation.total_price), 8)


def _at_own_price(price: tuple[float, float], usage: TurnUsage) -> float:
    per_in, per_out = price
    assert usage.tokens_in is not None and usage.tokens_out is not None
    plain_in = usage.tokens_in - usage.cache_write - usage.cache_read
    total = (plain_in * per_in + usage.cache_write * per_in * 1.25 + usage.cache_read * per_in * 0.1
             + usage.tokens_out * per_out)
    return round(total / 1_000_000, 8)


__all__ = ["ANTHROPIC", "OPENAI", "TurnUsage", "turn_cost"]
