"""API versions: the account default and comparisons that resources use to render version-specific shapes."""

from __future__ import annotations

import datetime
import functools
import re
import typing

from stripebench_emulator.model.errors import invalid

_VERSION = re.compile(r"^\d{4}-\d{2}-\d{2}(\.[a-z]+)?$")

# Version dates at which shapes change that the emulator renders differently (see resources/*).
PAYMENT_INTENT_LATEST_CHARGE = "2022-11-15"
PROMOTION_CODE_POLYMORPHIC = "2025-09-30"
CHECKOUT_UI_MODE_PAGE_NAMES = "2026-03-25"
# Customers stopped carrying their ``sources`` list unless it is expanded.
CUSTOMER_SOURCES_NOT_INCLUDED = "2020-08-27"
# Basil moved current_period_start/end from subscriptions onto their items (and invoices lost payment_intent).
SUBSCRIPTION_PERIOD_ON_ITEMS = "2025-03-31"
# Basil also removed the singular ``coupon`` and ``promotion_code`` params (customers, subscriptions, previews).
SINGULAR_COUPON_REMOVED = "2025-03-31"
# ...a PaymentIntent's ``invoice`` (an invoice's payments name its PaymentIntents instead)...
PAYMENT_INTENT_INVOICE_REMOVED = "2025-03-31"
# ...and ``include[]=total_count`` on lists (the sdk-upgrades-ruby subscription server sends it on acacia).
LIST_TOTAL_COUNT_REMOVED = "2025-03-31"


def default_api_version() -> str:
    """The installed stripe-python SDK's pinned API version (the emulator account's default)."""
    import stripe

    return str(stripe.api_version)


@functools.cache
def known_versions() -> frozenset[str]:
    """Every API version Stripe has released, as the installed stripe-python declares them (a webhook endpoint's
    ``api_version`` may be any of them), plus the SDK's own pinned version."""
    import stripe
    from stripe.params import WebhookEndpointCreateParams

    declared = WebhookEndpointCreateParams.__annotations__["api_version"]  # NotRequired[Literal[...]]
    while typing.get_origin(declared) is not typing.Literal and typing.get_args(declared):
        declared = typing.get_args(declared)[0]
    return frozenset(typing.get_args(declared)) | {str(stripe.api_version)}


@functools.cache
def _latest() -> tuple[str, str]:
    """(date, release train) of the newest version the installed SDK knows, e.g. ("2026-10-28", "endive")."""
    date, _, train = max(known_versions()).partition(".")
    return date, train


def _released(version: str) -> bool:
    if version in known_versions():
        return True
    # A newer SDK (stripe-node pins a later month than our stripe-python) sends a version released after the list
    # we have: a later date on this train or a later one (trains go in alphabetical order: acacia, basil, clover…).
    date, _, train = version.partition(".")
    latest_date, latest_train = _latest()
    return date > latest_date and bool(train) and train >= latest_train and _real_date(date)


def _real_date(date: str) -> bool:
    try:
        datetime.date.fromisoformat(date)
    except ValueError:
        return False
    return True


def check_version(version: str, param: str = "Stripe-Version") -> str:
    """Return ``version`` if it is a released Stripe API version, else raise Stripe's 400 naming ``param``."""
    if not _VERSION.match(version) or not _released(version):
        raise invalid(f"Invalid Stripe API version: {version}", param=param, code="invalid_api_version")
    return version


def at_least(version: str, date: str) -> bool:
    """True when ``version`` (e.g. ``2025-09-30.clover``) is on or after ``date`` (``YYYY-MM-DD``)."""
    return version[:10] >= date[:10]
