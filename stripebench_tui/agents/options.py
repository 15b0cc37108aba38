"""Options shared by the LLM agents, read from keyword options first and the environment second."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any

from stripebench_tui.agents.retry import RetryCallback, RetryPolicy
from stripebench_tui.errors import UserError


@dataclass
class LlmOptions:
    """Everything an LLM agent is configured with."""

    model: str
    api_key: str | None = None
    base_url: str | None = None
    max_tokens: int = 8192
    temperature: float | None = None
    timeout: float = 300.0  # seconds per request
    max_tries: int = 5
    network_tries: int = 3
    backoff_base: float = 1.0
    backoff_max: float = 30.0
    retry_after_max: float = 120.0
    price: tuple[float, float] | None = None  # USD per million tokens (in, out); overrides the price table
    on_retry: RetryCallback | None = None
    clock: Callable[[], float] = time.perf_counter  # what time to first token and latency are read from

    def retry_policy(self) -> RetryPolicy:
        """The retry settings as a policy for ``call_with_retries``."""
        return RetryPolicy(
            max_tries=self.max_tries,
            network_tries=self.network_tries,
            backoff_base=self.backoff_base,
            backoff_max=self.backoff_max,
            retry_after_max=self.retry_after_max,
            on_retry=self.on_retry,
        )


_NAMES = {f.name for f in fields(LlmOptions)}


def read_options(
    agent: str,
    options: dict[str, Any],
    *,
    key_env: str,
    base_url_env: str,
    model_env: str,
    default_model: str,
) -> LlmOptions:
    """Validate ``options`` (UserError for an unknown name) and fill model, key and base URL from the environment."""
    unknown = sorted(set(options) - _NAMES)
    if unknown:
        raise UserError(f"agent {agent!r} has no option {', '.join(unknown)}; options: {', '.join(sorted(_NAMES))}")
    given = {k: v for k, v in options.items() if v is not None}
    given.setdefault("model", os.environ.get(model_env) or default_model)
    given.setdefault("api_key", os.environ.get(key_env) or None)
    given.setdefault("base_url", os.environ.get(base_url_env) or None)
    if given.get("price") is not None:
        price_in, price_out = given["price"]
        given["price"] = (float(price_in), float(price_out))
    for name in ("max_tries", "network_tries"):
        if int(given.get(name, 1)) < 1:
            raise UserError(f"agent {agent!r}: {name} must be at least 1")
    return LlmOptions(**given)
