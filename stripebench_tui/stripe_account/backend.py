"""Choosing the Stripe backend of an episode: the offline emulator (default) or the user's real test mode.

Whichever it is, the app's services, the seed script and the agent's shell find it
through the same environment variables (``StripeBackend.env_vars``), and graders
and the watcher reach it through the official SDK with ``api_base``/``secret_key``.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stripebench_tui.errors import UserError, with_exit_code

if TYPE_CHECKING:
    from stripe._base_address import BaseAddresses

EMULATOR, REAL = "emulator", "stripe"
BACKENDS = (EMULATOR, REAL)
REAL_JS_URL = "https://js.stripe.com/v3"


@dataclass
class StripeBackend:
    """A started Stripe backend; ``close()`` stops an emulator (real Stripe needs nothing)."""

    kind: str  # EMULATOR or REAL
    api_base: str | None  # None for real Stripe (the SDK's default)
    secret_key: str
    publishable_key: str
    js_url: str
    api_version: str | None = None
    server: Any = None  # the EmulatorServer when kind == EMULATOR
    extra_secrets: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        """What the trace header calls it."""
        return "emulator" if self.kind == EMULATOR else "stripe-test-mode"

    def env_vars(self) -> dict[str, str]:
        """Variables given to services, the seed script and the agent's shell."""
        env = {
            "STRIPE_API_BASE": self.api_base or "",
            "STRIPE_SECRET_KEY": self.secret_key,
            "STRIPE_PUBLISHABLE_KEY": self.publishable_key,
            "STRIPE_JS_URL": self.js_url,
        }
        if self.api_version:
            env["STRIPE_API_VERSION"] = self.api_version
        return env

    @property
    def secrets(self) -> list[str]:
        """Values the trace must never contain."""
        return [s for s in (self.secret_key, self.publishable_key, *self.extra_secrets) if s]

    def client(self, **kwargs: Any):  # a stripe.StripeClient
        """An official SDK client for this backend (async calls go through httpx)."""
        # half a second to import; only making a client needs the SDK, not choosing a backend
        import stripe

        base: BaseAddresses = {"api": self.api_base} if self.api_base else {}
        if self.api_version:
            kwargs.setdefault("stripe_version", self.api_version)
        return stripe.StripeClient(self.secret_key, base_addresses=base, http_client=stripe.HTTPXClient(), **kwargs)

    def close(self) -> None:
        """Stop the emulator, if this backend started one."""
        if self.server is not None:
            server, self.server = self.server, None
            server.stop()


def check_test_key(key: str) -> str:
    """The key if it is a test-mode secret or restricted key; UserError (one line) for a live or odd key."""
    key = key.strip()
    if key.startswith(("sk_live_", "rk_live_")):
        raise UserError("refusing a live Stripe key: stripebench only runs against test mode (use an sk_test_ key)")
    if not key.startswith(("sk_test_", "rk_test_")):
        raise UserError("the Stripe key must be a test-mode secret key (sk_test_… or rk_test_…)")
    return key


def start_backend(kind: str = EMULATOR, *, seed: int | None = 0, api_version: str | None = None,
                  stripe_key: str | None = None, state: Path | None = None, port: int = 0) -> StripeBackend:
    """Start the emulator (seeded, on ``port`` or else a free one, kept in ``state`` if given) or select real test
    mode."""
    if kind == EMULATOR:
        # the emulator takes a second to import; real test mode never starts it
        from stripebench_emulator import EmulatorProblem, EmulatorServer

        try:
            server = EmulatorServer(seed=seed, api_version=api_version, state=state, port=port).start()
        except EmulatorProblem as exc:  # a bad state file or version, no port: the user's to fix, in one line
            raise with_exit_code(exc.exit_code, str(exc)) from None
        # Any sk_test_ key works on the emulator; a random one still exercises redaction like a real key.
        # The control token (the /_emulator/ controls) stays with the runtime: a secret, never in env_vars().
        return StripeBackend(
            kind=EMULATOR,
            api_base=server.url,
            secret_key="sk_test_emu" + secrets.token_hex(12),
            publishable_key="pk_test_emu" + secrets.token_hex(12),
            js_url=f"{server.url}/v3",
            api_version=api_version,
            server=server,
            extra_secrets=[server.control_token],
        )
    if kind == REAL:
        key = stripe_key or os.environ.get("STRIPE_SECRET_KEY", "")
        if not key:
            raise UserError("the stripe backend needs your test-mode key: set STRIPE_SECRET_KEY or pass --stripe-key")
        key = check_test_key(key)
        publishable = os.environ.get("STRIPE_PUBLISHABLE_KEY", "")
        if publishable.startswith("pk_live_"):
            raise UserError("refusing a live publishable key in STRIPE_PUBLISHABLE_KEY: use your pk_test_ key")
        return StripeBackend(kind=REAL, api_base=None, secret_key=key, publishable_key=publishable,
                             js_url=REAL_JS_URL, api_version=api_version)
    raise UserError(f"unknown Stripe backend {kind!r}; choose one of {', '.join(BACKENDS)}")


__all__ = ["BACKENDS", "EMULATOR", "REAL", "StripeBackend", "check_test_key", "start_backend"]
