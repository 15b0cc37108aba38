"""Pieces several resources share: metadata updates, addresses, deleted stubs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stripebench_emulator.model.params import Hash, Str

ADDRESS = Hash({k: Str(emptyable=True) for k in ("city", "country", "line1", "line2", "postal_code", "state")},
               emptyable=True)
SHIPPING = Hash({"address": Hash({k: Str(emptyable=True) for k in ("city", "country", "line1", "line2", "postal_code",
                                                                   "state")}, required=True),
                 "name": Str(required=True), "phone": Str(emptyable=True)}, emptyable=True)


def apply_metadata(current: dict[str, str] | None, cleaned: Mapping[str, str | None] | None) -> dict[str, str]:
    """Stripe's metadata merge: keys set to ``""`` are removed, ``metadata=""`` clears everything."""
    if cleaned is None:
        return {}
    merged = dict(current or {})
    for key, value in cleaned.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = value
    return merged


def full_address(value: dict[str, Any] | None) -> dict[str, Any] | None:
    """An address hash with every key present (Stripe renders missing parts as null)."""
    if value is None:
        return None
    return {k: value.get(k) for k in ("city", "country", "line1", "line2", "postal_code", "state")}


def apply_fields(obj: dict[str, Any], params: dict[str, Any], names: tuple[str, ...]) -> None:
    """Copy plain fields that were sent (``None`` when the caller unset them with ``""``)."""
    for name in names:
        if name in params:
            obj[name] = params[name]


def deleted_stub(obj: dict[str, Any]) -> dict[str, Any]:
    """What Stripe returns for (and after) a delete."""
    return {"id": obj["id"], "object": obj["object"], "deleted": True}
