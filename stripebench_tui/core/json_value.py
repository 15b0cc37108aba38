"""``JSONValue``: a decoded JSON (or TOML) value whose shape the code does not know in advance — a model API's
body, a Stripe object, a grader's report, an ATIF document. It is the recursive type of what ``json.loads`` returns:
an object, an array, a string, a number, a boolean or null. Code reading one walks it and checks what each part is
(``isinstance``), which narrows it; code that knows a part's shape from a schema it checked says so with ``cast``.
A parameter annotated with it says "decoded JSON" where a bare ``Any`` would say nothing.

What is not JSON (an SDK object read by attribute, a reply object, a stream chunk) gets its own type or a Protocol,
never this one."""

from __future__ import annotations

from typing import TypeAlias

JSONValue: TypeAlias = dict[str, "JSONValue"] | list["JSONValue"] | str | int | float | bool | None
