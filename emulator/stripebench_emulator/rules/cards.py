"""Stripe's test cards (docs.stripe.com/testing): the one place numbers, magic ids and tokens map to outcomes.

Internal API (no routes):

* ``card_for_number(number) -> TestCard`` — any Luhn-valid number works; unknown numbers behave like a plain
  successful card of the brand their prefix suggests. ``None`` for numbers failing the Luhn check
  (Stripe's ``incorrect_number``). 4242424242424241 is the documented incorrect-number card.
* ``card_for_magic_id(pm_or_token_id) -> TestCard | None`` — ``pm_card_visa``, ``pm_card_chargeDeclined``,
  ``tok_visa``, ``tok_chargeDeclinedInsufficientFunds``, … (case-sensitive, like Stripe).
* ``TestCard.decline_error(...)`` — the 402 ``card_error`` a declined charge raises (code, decline_code, message).
* ``TestCard.outcome`` — ``"success"``, ``"decline"`` (charge fails), ``"decline_after_auth"`` (3DS then decline).
  ``TestCard.three_d_secure`` — ``None``, ``"on_session"`` (asks when used on session, not for off-session
  payments after setup; 4000002500003155), ``"always"`` (asks every time; 4000002760003184) or ``"required"``
  (3DS2 cards 4000000000003220/3063). ``TestCard.attach_fails`` — declining cards also fail when attached to a
  customer, except 4000000000000341 (attach succeeds, charges fail).
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass, replace
from typing import Any

from stripebench_emulator.model.errors import StripeError

# code, decline_code, message — what Stripe puts in a declined charge's error.
DECLINES: dict[str, tuple[str, str, str]] = {
    "generic_decline": ("card_declined", "generic_decline", "Your card was declined."),
    "insufficient_funds": ("card_declined", "insufficient_funds", "Your card has insufficient funds."),
    "lost_card": ("card_declined", "lost_card", "Your card was declined."),
    "stolen_card": ("card_declined", "stolen_card", "Your card was declined."),
    "expired_card": ("expired_card", "expired_card", "Your card has expired."),
    "incorrect_cvc": ("incorrect_cvc", "incorrect_cvc", "Your card's security code is incorrect."),
    "processing_error": ("processing_error", "processing_error",
                         "An error occurred while processing your card. Try again in a little bit."),
    "card_velocity_exceeded": ("card_declined", "card_velocity_exceeded",
                               "Your card was declined for making repeated attempts too frequently or exceeding its "
                               "amount limit."),
    "fraudulent": ("card_declined", "fraudulent", "Your card was declined."),
    "authentication_required": ("authentication_required", "authentication_required",
                                "Your card was declined. This transaction requires authentication."),
}


@dataclass(frozen=True)
class TestCard:
    """A test card's details and what happens when it is charged."""

    number: str
    brand: str = "visa"
    funding: str = "credit"
    country: str = "US"
    outcome: str = "success"  # success | decline | decline_after_auth
    decline: str | None = None  # a DECLINES key
    three_d_secure: str | None = None  # None | on_session | always | required
    attach_fails: bool = False
    exp_month: int = 12
    exp_year: int = 2034
    networks: tuple[str, ...] = ()  # co-branded cards (Cartes Bancaires + Visa); empty means just the brand

    @property
    def last4(self) -> str:
        return self.number[-4:]

    def decline_error(self, **extra: Any) -> StripeError:
        """The 402 card_error for this card's decline; ``extra`` adds charge, payment_intent, … to the body."""
        code, decline_code, message = DECLINES[self.decline or "generic_decline"]
        return StripeError(message, status=402, type="card_error", code=code, decline_code=decline_code,
                           extra=extra)

    def card_hash(self) -> dict[str, Any]:
        """The ``card`` hash of a PaymentMethod made from this card. Its nested hashes are the same for every
        PaymentMethod of this card, so all of them share one copy (read only, like every stored value)."""
        return {
            "brand": self.brand, "checks": _CHECKS, "country": self.country,
            "display_brand": self.networks[0] if self.networks else self.brand, "exp_month": self.exp_month,
            "exp_year": self.exp_year, "fingerprint": _fingerprint(self.number), "funding": self.funding,
            "generated_from": None, "last4": self.last4, "networks": _networks(self.networks or (self.brand,)),
            "regulated_status": "unregulated", "three_d_secure_usage": _THREE_D_SECURE_USAGE, "wallet": None,
        }


_CHECKS = {"address_line1_check": None, "address_postal_code_check": None, "cvc_check": "pass"}
_THREE_D_SECURE_USAGE = {"supported": True}


@functools.cache  # one per network list: a handful of test cards make nearly every PaymentMethod
def _networks(available: tuple[str, ...]) -> dict[str, Any]:
    return {"available": list(available), "preferred": None}


def _card(number: str, brand: str = "visa", **kw: Any) -> TestCard:
    return TestCard(number, brand, **kw)


_CARDS = [
    _card("4242424242424242"),
    _card("4000056655665556", funding="debit"),
    _card("5555555555554444", "mastercard"),
    _card("2223003122003222", "mastercard"),
    _card("5200828282828210", "mastercard", funding="debit"),
    _card("5105105105105100", "mastercard", funding="prepaid"),
    _card("378282246310005", "amex"),
    _card("371449635398431", "amex"),
    _card("6011111111111117", "discover"),
    _card("6011000990139424", "discover"),
    _card("3056930009020004", "diners"),
    _card("36227206271667", "diners"),
    _card("3566002020360505", "jcb", country="JP"),
    _card("6200000000000005", "unionpay", country="CN"),
    _card("4000000760000002", country="BR"),
    _card("4000001240000000", country="CA"),
    _card("4000008260000000", country="GB"),
    _card("4000002500000003", country="FR"),
    _card("4000002760000016", country="DE"),
    _card("4000002500001001", country="FR", networks=("cartes_bancaires", "visa")),  # Cartes Bancaires co-brand
    _card("4000000000000077"),  # charge succeeds, funds added to available balance
    # declines
    _card("4000000000000002", outcome="decline", decline="generic_decline", attach_fails=True),
    _card("4000000000009995", outcome="decline", decline="insufficient_funds", attach_fails=True),
    _card("4000000000009987", outcome="decline", decline="lost_card", attach_fails=True),
    _card("4000000000009979", outcome="decline", decline="stolen_card", attach_fails=True),
    _card("4000000000000069", outcome="decline", decline="expired_card", attach_fails=True),
    _card("4000000000000127", outcome="decline", decline="incorrect_cvc", attach_fails=True),
    _card("4000000000000119", outcome="decline", decline="processing_error", attach_fails=True),
    _card("4000000000006975", outcome="decline", decline="card_velocity_exceeded", attach_fails=True),
    _card("4100000000000019", outcome="decline", decline="fraudulent", attach_fails=True),
    _card("4000000000000341", outcome="decline", decline="generic_decline"),  # attaches fine, charges fail
    # 3-D Secure
    _card("4000002500003155", three_d_secure="on_session"),
    _card("4000002760003184", three_d_secure="always"),
    _card("4000008260003178", three_d_secure="always", outcome="decline_after_auth", decline="insufficient_funds"),
    _card("4000000000003220", three_d_secure="required"),
    _card("4000000000003063", three_d_secure="required"),
    _card("4000000000003055"),  # 3DS supported, not required
    _card("4000008400001629", three_d_secure="required", outcome="decline_after_auth", decline="generic_decline"),
]
BY_NUMBER: dict[str, TestCard] = {c.number: c for c in _CARDS}

_MAGIC_NUMBERS = {
    "visa": "4242424242424242", "visa_debit": "4000056655665556", "mastercard": "5555555555554444",
    "mastercard_debit": "5200828282828210", "mastercard_prepaid": "5105105105105100", "amex": "378282246310005",
    "discover": "6011111111111117", "diners": "3056930009020004", "jcb": "3566002020360505",
    "unionpay": "6200000000000005", "br": "4000000760000002", "ca": "4000001240000000",
    "us": "4242424242424242", "gb": "4000008260000000", "fr": "4000002500000003", "de": "4000002760000016",
    "cartesBancaires": "4000002500001001",
    "bypassPending": "4000000000000077",
    "chargeDeclined": "4000000000000002", "chargeDeclinedInsufficientFunds": "4000000000009995",
    "chargeDeclinedLostCard": "4000000000009987", "chargeDeclinedStolenCard": "4000000000009979",
    "chargeDeclinedExpiredCard": "4000000000000069", "chargeDeclinedIncorrectCvc": "4000000000000127",
    "chargeDeclinedProcessingError": "4000000000000119",
    "chargeDeclinedVelocityLimitExceeded": "4000000000006975", "chargeDeclinedFraudulent": "4100000000000019",
    "radarBlock": "4100000000000019", "chargeCustomerFail": "4000000000000341",
    "authenticationRequired": "4000002760003184", "authenticationRequiredOnSetup": "4000002500003155",
    "authenticationRequiredChargeDeclinedInsufficientFunds": "4000008260003178",
    "threeDSecure2Required": "4000000000003220", "threeDSecureRequired": "4000000000003063",
    "threeDSecureOptional": "4000000000003055",
}


def card_for_magic_id(magic: str) -> TestCard | None:
    """The card behind ``pm_card_<name>`` / ``tok_<name>`` (also ``pm_card_visa_chargeDeclined…``), or None."""
    for prefix in ("pm_card_", "tok_"):
        if magic.startswith(prefix):
            name = magic[len(prefix):]
            if name in _MAGIC_NUMBERS:
                return BY_NUMBER[_MAGIC_NUMBERS[name]]
            if name.startswith("visa_") and name[5:] in _MAGIC_NUMBERS:  # pm_card_visa_chargeDeclined… aliases
                return BY_NUMBER[_MAGIC_NUMBERS[name[5:]]]
    return None


@functools.lru_cache(maxsize=4096)
def luhn_ok(number: str) -> bool:
    """The card-number checksum Stripe validates before anything else."""
    if not number.isdigit() or not 12 <= len(number) <= 19:
        return False
    total = 0
    for i, ch in enumerate(reversed(number)):
        d = int(ch)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def brand_for(number: str) -> str:
    """The card brand a number's prefix says."""
    if number.startswith("4"):
        return "visa"
    if number[:2] in ("34", "37"):
        return "amex"
    if number[:2] in {"51", "52", "53", "54", "55"} or "2221" <= number[:4] <= "2720":
        return "mastercard"
    if number.startswith(("6011", "65", "644", "645", "646", "647", "648", "649")):
        return "discover"
    if number.startswith(("300", "301", "302", "303", "304", "305", "36", "38")):
        return "diners"
    if number.startswith("35"):
        return "jcb"
    if number.startswith("62"):
        return "unionpay"
    return "unknown"


def card_for_number(number: str, exp_month: int | None = None, exp_year: int | None = None) -> TestCard | None:
    """The test card for a number typed or sent as ``card[number]`` (spaces ignored); None if it fails Luhn."""
    number = number.replace(" ", "").replace("-", "")
    if not luhn_ok(number):
        return None
    card = BY_NUMBER.get(number) or TestCard(number, brand_for(number))
    if exp_month is not None and exp_year is not None:
        card = replace(card, exp_month=exp_month, exp_year=exp_year if exp_year >= 100 else 2000 + exp_year)
    return card


def incorrect_number_error() -> StripeError:
    """Stripe's 402 for a number that fails the checksum."""
    return StripeError("Your card number is incorrect.", status=402, type="card_error", code="incorrect_number",
                       param="number")


@functools.lru_cache(maxsize=1024)  # a card's fingerprint never changes, and a few test cards make most of them
def _fingerprint(number: str) -> str:
    return hashlib.sha256(number.encode()).hexdigest()[:16]
