"""Stripe-shaped API errors: raise one anywhere in a handler and the app renders Stripe's error JSON."""

from __future__ import annotations

from typing import Any


class StripeError(Exception):
    """An error the API reports to the caller as ``{"error": {...}}`` with an HTTP status."""

    def __init__(
        self,
        message: str,
        *,
        status: int = 400,
        type: str = "invalid_request_error",
        code: str | None = None,
        param: str | None = None,
        decline_code: str | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.type = type
        self.code = code
        self.param = param
        self.decline_code = decline_code
        self.extra = extra or {}

    def body(self, request_id: str | None = None) -> dict[str, Any]:
        """The JSON body Stripe sends for this error."""
        err: dict[str, Any] = {"type": self.type, "message": self.message}
        if self.code:
            err["code"] = self.code
            err["doc_url"] = f"https://stripe.com/docs/error-codes/{self.code.replace('_', '-')}"
        if self.param:
            err["param"] = self.param
        if self.decline_code:
            err["decline_code"] = self.decline_code
        if request_id:
            err["request_log_url"] = f"https://dashboard.stripe.com/test/logs/{request_id}"
        err.update(self.extra)
        return {"error": err}


class ParamError(StripeError):
    """A request rejected before any handler ran; Stripe does not store these under an idempotency key."""


def invalid(message: str, param: str | None = None, code: str | None = None) -> ParamError:
    """A 400 invalid_request_error about the request's parameters."""
    return ParamError(message, param=param, code=code)


def missing_param(param: str) -> ParamError:
    """Stripe's error for a required parameter that was not sent."""
    return ParamError(f"Missing required param: {param}.", param=param, code="parameter_missing")


def unknown_param(param: str) -> ParamError:
    """Stripe's error for a parameter the endpoint does not accept."""
    return ParamError(f"Received unknown parameter: {param}", param=param, code="parameter_unknown")


def no_such(noun: str | None, object_id: str, param: str = "id") -> StripeError:
    """Stripe's 404 for an id that does not exist, e.g. ``No such customer: 'cus_x'``."""
    return StripeError(f"No such {noun}: '{object_id}'", status=404, code="resource_missing", param=param)
