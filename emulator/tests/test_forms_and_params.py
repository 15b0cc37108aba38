"""Unit tests for bracket-notation decoding and declared-parameter validation."""

from __future__ import annotations

import pytest

from stripebench_emulator.model.errors import StripeError
from stripebench_emulator.model.forms import parse_form
from stripebench_emulator.model.params import Array, Bool, Enum, Hash, Int, Metadata, Num, Range, Str, validate


def test_parse_nested_and_arrays() -> None:
    parsed = parse_form("a[b][c]=1&l[]=x&l[]=y&i[1]=q&i[0]=p&h[][n]=1&h[][n]=2&h[][m]=3&e=")
    assert parsed == {"a": {"b": {"c": "1"}}, "l": ["x", "y"], "i": ["p", "q"],
                      "h": [{"n": "1"}, {"n": "2", "m": "3"}], "e": ""}


def test_validate_cleans_and_names_nested_params() -> None:
    spec = {"n": Int(min=0), "b": Bool(), "s": Str(emptyable=True), "m": Metadata(), "x": Num(as_string=True),
            "e": Enum("a", "b"), "h": Hash({"k": Int(required=True)}), "l": Array(Int()), "c": Range()}
    cleaned = validate(spec, {"n": "3", "b": "false", "s": "", "m": {"k": "", "j": "v"}, "x": "1.50", "e": "b",
                              "h": {"k": "2"}, "l": ["1", "2"], "c": {"gte": "5"}})
    assert cleaned == {"n": 3, "b": False, "s": None, "m": {"k": None, "j": "v"}, "x": "1.5", "e": "b",
                       "h": {"k": 2}, "l": [1, 2], "c": {"gte": 5}}
    with pytest.raises(StripeError) as err:
        validate(spec, {"h": {}})
    assert err.value.param == "h[k]" and err.value.code == "parameter_missing"
    with pytest.raises(StripeError) as err:
        validate(spec, {"l": ["1", "x"]})
    assert err.value.param == "l[1]" and err.value.message == "Invalid integer: x"
    with pytest.raises(StripeError) as err:
        validate(spec, {"e": "c"})
    assert err.value.message == "Invalid e: must be one of a, or b"
    with pytest.raises(StripeError) as err:
        validate(spec, {"n": {"a": "1"}})
    assert err.value.param == "n"


def test_the_one_pass_reading_of_plain_forms_agrees_with_the_general_parser(monkeypatch) -> None:
    """Plain forms take a shortcut (forms._flat); on 5,000 random forms, brackets, list-like names, escapes and bad
    input included, the answer (or the 400) is the general parser's."""
    import random

    from stripebench_emulator.model import forms
    from stripebench_emulator.model.errors import StripeError

    def outcome(text: str) -> tuple[str, object]:
        try:
            return "ok", forms.parse_form(text)
        except StripeError as exc:
            return "error", exc.message

    rng = random.Random(12)
    names = ["a", "email", "0", "1", "a[b]", "a[]", "a[0]", "a%5Bb%5D", "", "x+y", "caf%C3%A9", "%FF", "m[k][j]", "%"]
    values = ["1", "", "x%40y", "a+b", "%E2%82%AC", "%ZZ", "[", "=="]
    texts = ["&".join(rng.choice(names) + ("=" + rng.choice(values) if rng.random() < 0.9 else "")
                      for _ in range(rng.randint(1, 4))) for _ in range(5000)]
    shortcut = [outcome(text) for text in texts]
    assert sum(1 for kind, value in shortcut if kind == "ok" and isinstance(value, dict) and value) > 1000
    monkeypatch.setattr(forms, "_flat", lambda text: None)
    assert [outcome(text) for text in texts] == shortcut


def test_names_and_values_are_decoded_as_the_standard_library_decodes_them() -> None:
    """forms._decode is urllib's unquote (strict UTF-8) with + as a space, in one pass: on 20,000 random strings of
    escapes (valid, cut short, not hex, upper and lower case), multi-byte characters whole or split, bytes that are
    not UTF-8, pluses and plain text, it gives the same string or raises the same error."""
    import random
    from urllib.parse import unquote

    from stripebench_emulator.model.forms import _decode

    def outcome(decode, text: str) -> tuple[str, str]:
        try:
            return "ok", decode(text)
        except UnicodeDecodeError:
            return "error", ""

    rng = random.Random(7)
    pieces = ["%40", "%5B", "%5d", "%C3%A9", "%C3", "%A9", "%E2%82%AC", "%E2%82", "%FF", "%ZZ", "%4", "%", "%%41",
              "+", "a", "x y", "é", "€", "=", "&", "0", "%20"]
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 6))) for _ in range(20_000)]
    ours = [outcome(_decode, text) for text in texts]
    assert sum(kind == "error" for kind, _ in ours) > 1000 and sum(kind == "ok" for kind, _ in ours) > 5000
    assert ours == [outcome(lambda t: unquote(t.replace("+", " "), errors="strict"), text) for text in texts]
