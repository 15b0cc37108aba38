"""Real test mode's request log: a local pass-through proxy to api.stripe.com in front of every process.

On the emulator the request log listens to the emulator itself. Real Stripe cannot be asked, so the episode starts
the grading's recording proxy (``grading.stripe_proxy.StripeProxy``, faults off) and makes its URL the backend's
``api_base``: the app, the seed, the agent's shell (``STRIPE_API_BASE``, and the SDK preloads that read it), the
watcher and the graders all call Stripe through it, and ``RequestLog.attach_proxy`` turns each answer into an event.
A page's stripe.js still talks to Stripe directly; those requests are not in the log.
"""

from __future__ import annotations

from typing import Any

from stripebench_tui.grading.stripe_proxy import StripeProxy
from stripebench_tui.stripe_account.backend import StripeBackend

STRIPE_API = "https://api.stripe.com"


def start_request_proxy(backend: StripeBackend, upstream: str | None = None) -> Any:
    """Start the proxy to ``upstream`` (default: the backend's base, else api.stripe.com); sets ``backend.api_base``."""
    proxy = StripeProxy(upstream=upstream or backend.api_base or STRIPE_API, fault_methods=())  # never a fault
    backend.api_base = proxy.url
    return proxy


__all__ = ["STRIPE_API", "start_request_proxy"]
