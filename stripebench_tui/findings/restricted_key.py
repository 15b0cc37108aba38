"""*Unrestricted key*: the app calls Stripe with the account's full secret key where the task asks for a restricted one.

A restricted key (``rk_``) limits what a leaked or misused credential can do. Whether the task asks for one is the
environment's to say (``[expects] restricted_key = true`` in its manifest, which the trace header carries); without
that this never fires, since most tasks hand the app ``STRIPE_SECRET_KEY`` on purpose. It fires on the first request
after setup (turn 0 is the environment's own seed) made by the app's code (``source`` app: an official SDK's) with an
``sk_`` key, read from the request's ``key_kind`` (the trace never holds the key). A script the agent runs with the
SDK looks the same as the app; graders' requests, the agent's curl and a page's stripe.js are left out.
"""

from __future__ import annotations

from stripebench_tui.core.events import Event, Finding, Header, StripeRequest
from stripebench_tui.findings.base import finding

NAME = "unrestricted-key"


class UnrestrictedKey:
    """See the module docstring."""

    name = NAME
    wants = (Header.type, StripeRequest.type)

    def __init__(self) -> None:
        self.asked = False  # the header says the app must use a restricted key
        self.fired = False

    def feed(self, event: Event) -> list[Finding] | None:
        if isinstance(event, Header):
            self.asked = bool(event.expects.get("restricted_key"))
            return None
        assert isinstance(event, StripeRequest)
        if not self.asked or self.fired or event.source != "app" or event.turn < 1 \
                or not event.key_kind.startswith("sk_"):
            return None
        self.fired = True
        return [finding(NAME, f"the app called {event.method} {event.path} with a secret key ({event.key_kind}) where "
                              "the task asks for its restricted key (rk_)",
                        [{"request_id": event.request_id}, {"seq": event.seq}], turn=event.turn, seq=event.seq)]

    def finish(self, reason: str) -> None:
        return None


__all__ = ["NAME", "UnrestrictedKey"]
