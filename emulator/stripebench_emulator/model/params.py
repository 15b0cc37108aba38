"""Declared parameters: each endpoint lists what it accepts, so unknown, missing and mistyped params get Stripe's errors.

A spec is a dict ``{name: Param}``; ``validate(spec, raw)`` returns cleaned values (ints as int, booleans as bool,
``""`` as ``None`` where Stripe allows unsetting) and raises a 400 ``ParamError`` naming the param as Stripe does
(``recurring[interval]``).
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Any, cast

from stripebench_emulator.model.errors import invalid, missing_param, unknown_param

_INTEGER = re.compile(r"-?\d{1,18}")
_CURRENCY = re.compile(r"[a-z]{3}")


class Param:
    """Base of all parameter kinds; ``emptyable`` lets ``""`` unset the field (cleaned to ``None``)."""

    def __init__(self, required: bool = False, emptyable: bool = False) -> None:
        self.required = required
        self.emptyable = emptyable

    def clean(self, value: object, name: str) -> Any:
        if value == "" and self.emptyable:
            return None
        return self.convert(value, name)

    def convert(self, value: object, name: str) -> Any:
        return value

    @staticmethod
    def scalar(value: object, name: str, kind: str) -> str:
        if isinstance(value, (dict, list)):
            raise invalid(f"Invalid {kind}: {name} must be a {kind}, not a {'hash' if isinstance(value, dict) else 'array'}",
                          param=name)
        return cast(str, value)  # a form's leaves are strings


class Str(Param):
    """A string, optionally limited to ``max_length`` characters."""

    def __init__(self, required: bool = False, emptyable: bool = False, max_length: int | None = 5000) -> None:
        super().__init__(required, emptyable)
        self.max_length = max_length

    def convert(self, value: object, name: str) -> str:
        if not isinstance(value, str):  # the usual case skips the call
            value = self.scalar(value, name, "string")
        if self.max_length and len(value) > self.max_length:
            raise invalid(f"Invalid string: {value[:20]}...; must be at most {self.max_length} characters", param=name)
        return value


class Int(Param):
    """An integer, optionally bounded."""

    def __init__(self, required: bool = False, emptyable: bool = False, min: int | None = None, max: int | None = None) -> None:
        super().__init__(required, emptyable)
        self.min, self.max = min, max

    def convert(self, value: object, name: str) -> int:
        if not isinstance(value, str):
            value = self.scalar(value, name, "integer")
        if not _INTEGER.fullmatch(value):
            raise invalid(f"Invalid integer: {value}", param=name)
        number = int(value)
        if self.min is not None and number < self.min:
            raise invalid(f"This value must be greater than or equal to {self.min}.", param=name)
        if self.max is not None and number > self.max:
            raise invalid(f"This value must be less than or equal to {self.max}.", param=name)
        return number


class Num(Param):
    """A decimal number such as ``percent_off=25.5``; cleaned to float (or to a string with ``as_string``)."""

    def __init__(self, required: bool = False, emptyable: bool = False, min: float | None = None,
                 max: float | None = None, as_string: bool = False) -> None:
        super().__init__(required, emptyable)
        self.min, self.max, self.as_string = min, max, as_string

    def convert(self, value: object, name: str) -> Any:
        value = self.scalar(value, name, "decimal")
        try:
            number = Decimal(value)
            if not number.is_finite():
                raise InvalidOperation
        except InvalidOperation:
            raise invalid(f"Invalid decimal: {value}", param=name) from None
        if self.min is not None and number < Decimal(str(self.min)):
            raise invalid(f"This value must be greater than or equal to {self.min}.", param=name)
        if self.max is not None and number > Decimal(str(self.max)):
            raise invalid(f"This value must be less than or equal to {self.max}.", param=name)
        return format(number.normalize(), "f") if self.as_string else float(number)


class Bool(Param):
    """``true`` or ``false``."""

    def convert(self, value: object, name: str) -> bool:
        value = self.scalar(value, name, "boolean")
        # Older SDKs (stripe-python before 5) form-encode Python booleans as "True"/"False".
        if value not in ("true", "false", "True", "False"):
            raise invalid(f"Invalid boolean: {value}", param=name)
        return value in ("true", "True")


class Enum(Param):
    """One of a fixed set of strings."""

    def __init__(self, *choices: str, required: bool = False, emptyable: bool = False) -> None:
        super().__init__(required, emptyable)
        self.choices = choices

    def convert(self, value: object, name: str) -> str:
        value = self.scalar(value, name, "string")
        if value not in self.choices:
            options = ", ".join(self.choices[:-1]) + (f", or {self.choices[-1]}" if len(self.choices) > 1 else self.choices[0])
            raise invalid(f"Invalid {name}: must be one of {options}", param=name)
        return value


class Currency(Str):
    """A three-letter ISO currency code, lower-cased."""

    def convert(self, value: object, name: str) -> str:
        value = super().convert(value, name).lower()
        if not _CURRENCY.fullmatch(value):
            raise invalid(f"Invalid currency: {value}. Stripe currently supports these currencies: usd, eur, gbp, ...",
                          param=name)
        return value


class Hash(Param):
    """A nested hash with its own declared fields."""

    def __init__(self, fields: dict[str, Param], required: bool = False, emptyable: bool = False) -> None:
        super().__init__(required, emptyable)
        self.fields = fields

    def convert(self, value: object, name: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise invalid(f"Invalid hash: {name} must be a hash", param=name)
        return validate(self.fields, value, prefix=name)


class AnyHash(Param):
    """A hash with free keys whose values all follow ``values`` (e.g. ``currency_options[eur][...]``)."""

    def __init__(self, values: Param, required: bool = False, emptyable: bool = False) -> None:
        super().__init__(required, emptyable)
        self.values = values

    def convert(self, value: object, name: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise invalid(f"Invalid hash: {name} must be a hash", param=name)
        return {k: self.values.clean(v, f"{name}[{k}]") for k, v in value.items()}


class Metadata(Param):
    """Stripe metadata: string values; ``""`` for a key unsets it, ``metadata=""`` unsets all (cleaned to ``None``)."""

    def __init__(self) -> None:
        super().__init__(emptyable=True)

    def convert(self, value: object, name: str) -> dict[str, str | None]:
        if not isinstance(value, dict):
            raise invalid(f"Invalid hash: {name} must be a hash", param=name)
        if len(value) > 50:
            raise invalid("You can have up to 50 metadata keys.", param=name)
        out: dict[str, str | None] = {}
        for key, item in value.items():
            if isinstance(item, (dict, list)):
                raise invalid(f"Invalid value for {name}[{key}]: metadata values must be strings", param=f"{name}[{key}]")
            if len(key) > 40:
                raise invalid(f"Metadata keys can have up to 40 characters: {key}", param=f"{name}[{key}]")
            if len(item) > 500:
                raise invalid(f"Metadata values can have up to 500 characters, but you passed in a value that is {len(item)} "
                              f"characters.", param=f"{name}[{key}]")
            out[key] = item if item != "" else None
        return out


class Array(Param):
    """An array of ``item`` values (``a[0]=x`` or ``a[]=x``)."""

    def __init__(self, item: Param, required: bool = False, emptyable: bool = False, max_items: int | None = None) -> None:
        super().__init__(required, emptyable)
        self.item = item
        self.max_items = max_items

    def convert(self, value: object, name: str) -> list[Any]:
        if isinstance(value, dict):  # a[5]=x alone arrives as a list already; a hash here is a real mistake
            raise invalid(f"Invalid array: {name} must be an array", param=name)
        if not isinstance(value, list):
            value = [value]
        if self.max_items and len(value) > self.max_items:
            raise invalid(f"Invalid array: {name} can have at most {self.max_items} items", param=name)
        return [self.item.clean(v, f"{name}[{i}]") for i, v in enumerate(value)]


_RANGE_OPERATORS: dict[str, Param] = {op: Int() for op in ("gt", "gte", "lt", "lte")}


class Range(Param):
    """A list filter such as ``created``: an integer, or a hash of ``gt``/``gte``/``lt``/``lte``."""

    def convert(self, value: object, name: str) -> dict[str, int]:
        if isinstance(value, dict):
            return validate(_RANGE_OPERATORS, value, prefix=name)
        return {"eq": Int().convert(value, name)}


# The required names of each spec, in the spec's order (a spec is made once, with its endpoint, and never changed):
# a request checks those few instead of walking every declared param. Keyed by the spec's id, holding the spec so
# that the id cannot be reused while the entry lives.
_REQUIRED: dict[int, tuple[dict[str, Param], int, tuple[str, ...]]] = {}
_REQUIRED_MAX = 4096


def _required(spec: dict[str, Param]) -> tuple[str, ...]:
    hit = _REQUIRED.get(id(spec))
    if hit is not None and hit[0] is spec and hit[1] == len(spec):
        return hit[2]
    names = tuple(key for key, param in spec.items() if param.required)
    if len(_REQUIRED) >= _REQUIRED_MAX:
        _REQUIRED.clear()
    _REQUIRED[id(spec)] = (spec, len(spec), names)
    return names


def validate(spec: dict[str, Param], raw: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Check ``raw`` against ``spec``: unknown params first (as Stripe does), then missing, then each value."""
    for key in raw:
        if key not in spec:
            raise unknown_param(f"{prefix}[{key}]" if prefix else key)
    for key in _required(spec):
        if key not in raw:
            raise missing_param(f"{prefix}[{key}]" if prefix else key)
    return {key: spec[key].clean(value, f"{prefix}[{key}]" if prefix else key) for key, value in raw.items()}


def matches_range(value: int, bounds: dict[str, int] | None) -> bool:
    """True when ``value`` satisfies a cleaned ``Range`` filter."""
    if not bounds:
        return True
    checks = {"eq": value.__eq__, "gt": value.__gt__, "gte": value.__ge__, "lt": value.__lt__, "lte": value.__le__}
    return all(checks[op](bound) for op, bound in bounds.items())
