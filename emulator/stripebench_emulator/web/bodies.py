"""The JSON bodies the pages and controls take, and the numbers in them: one object, each number finite and bounded.

A body that is not one JSON object, nests deeper than orjson's 1,024 levels, or spells a number JSON has no room for
(``1e400``, ``NaN``, ``Infinity``) is refused by ``json_object``; a number out of its range by ``whole_number`` or
``real_number``. Each raises ``ValueError`` with a message for the caller, which answers a 400 in Stripe's error shape
(``invalid_body``).
"""

from __future__ import annotations

import math
import re
from typing import Any

import orjson
from starlette.responses import JSONResponse

_WHOLE = re.compile(r"-?[0-9]{1,20}")


def json_object(raw: bytes) -> dict[str, Any]:
    """``raw`` as one JSON object (an empty body is ``{}``)."""
    if not raw.strip():
        return {}
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise ValueError(f"The body must be one JSON object, nested at most 1,024 levels deep, its numbers finite "
                         f"({exc}).") from None
    if not isinstance(value, dict):
        raise ValueError("The body must be one JSON object.")
    return value


def whole_number(value: object, name: str, lowest: int, highest: int) -> int:
    """``value`` (a JSON number or a string of digits) as an int within ``lowest..highest``."""
    number: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, float) and math.isfinite(value) and value.is_integer():
        number = int(value)
    elif isinstance(value, str) and _WHOLE.fullmatch(value.strip()):
        number = int(value)
    if number is None or not lowest <= number <= highest:
        raise ValueError(f"{name} must be a whole number from {lowest:,} to {highest:,}.")
    return number


def real_number(value: object, name: str, lowest: float, highest: float) -> float:
    """``value`` (a JSON number or a numeric string) as a finite float within ``lowest..highest``."""
    number: float | None = None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number = float(value) if abs(value) < 1e300 else None
    elif isinstance(value, str) and len(value) < 64:
        try:
            number = float(value)
        except ValueError:
            number = None
    if number is None or not math.isfinite(number) or not lowest <= number <= highest:
        raise ValueError(f"{name} must be a number from {lowest:g} to {highest:g}.")
    return number


def invalid_body(message: str) -> JSONResponse:
    """The 400 for a refused page or control body, in Stripe's error shape."""
    return JSONResponse({"error": {"type": "invalid_request_error", "message": message}}, status_code=400)
