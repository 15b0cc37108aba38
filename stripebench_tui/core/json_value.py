"""``JSONValue``: a decoded JSON (or TOML) value whose shape the code does not know in advance — a model API's
body, a Stripe object, a grader's report, an ATIF document. It is ``Any`` by design: such values are read by
walking them and checking what each part is (``isinstance``), which a precise recursive type would only make the
type checker reject. A parameter annotated with it says that, where a bare ``Any`` would say nothing."""

from __future__ import annotations

from typing import Any

JSONValue = Any
