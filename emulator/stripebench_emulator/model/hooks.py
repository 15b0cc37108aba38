"""The contract of the hooks an ``Emulator`` calls, for code outside the package that registers one (the episode's
request log): what a response hook receives and what a delivery hook hears.

* ``ResponseHook``: ``hook(method, path, query, body, headers, reply, seconds)`` after every answered ``/v1`` request,
  on the serving thread; quick, never raising. ``reply`` is a ``HookReply``: the answer's status, JSON body and
  headers, read by attribute.
* ``DeliveryHook``: ``hook(delivery)`` after every webhook delivery attempt, on the delivering thread, with the
  delivery's public fields (``web.webhooks.WebhookDispatcher.attempt_record``); quick, never raising.

Request hooks (fault injection) are the package's own (``web.faults``) and answer with its ``web.dispatch.Reply``.
"""

from __future__ import annotations

from typing import Any, Protocol


class HookReply(Protocol):
    """An answered request as a response hook sees it (``web.dispatch.Reply`` is one)."""

    @property
    def status(self) -> int: ...

    @property
    def body(self) -> dict[str, Any]: ...  # a decoded Stripe object or error, whatever the route answered

    @property
    def headers(self) -> dict[str, str]: ...


class ResponseHook(Protocol):
    """Called after every answered ``/v1`` request (``Emulator.response_hooks``)."""

    def __call__(self, method: str, path: str, query: str, body: bytes, headers: dict[str, str], reply: HookReply,
                 seconds: float, /) -> None: ...


class DeliveryHook(Protocol):
    """Called after every webhook delivery attempt (``Emulator.delivery_hooks``) with its public fields."""

    def __call__(self, delivery: dict[str, Any], /) -> None: ...
