"""What stripe-python declares each endpoint takes (its ``stripe.params`` request TypedDicts, e.g.
``CustomerCreateParams``), so a parameter Stripe accepts but the emulator does not model is refused as not modelled
(``parameter_not_modelled``), never as unknown. Read only when a request sends a parameter the route does not declare
(the error path), and cached per route.
"""

from __future__ import annotations

import re
import sys
import typing
from typing import Any

import stripe
import stripe.params

from stripebench_emulator.model.errors import ParamError
from stripebench_emulator.model.registry import Route

REQUEST_OPTIONS = frozenset(stripe.RequestOptions.__annotations__)  # api_key, stripe_version…: not form fields
# Object types whose SDK class name is not the type's camel case.
CLASS_NAMES = {"invoiceitem": "InvoiceItem", "tax_id": "TaxId", "billing.meter": "Meter",
               "test_helpers.test_clock": "TestClock", "checkout.session": "Session"}
NAMESPACES = {"billing": "billing", "checkout": "checkout", "test_helpers": "test_helpers"}


def _camel(words: str) -> str:
    return "".join(part.capitalize() for part in re.split(r"[_.]", words) if part)


def _singular(word: str) -> str:
    return word[:-3] + "y" if word.endswith("ies") else word[:-1] if word.endswith("s") else word


def candidates(route: Route) -> list[str]:
    """Names of the SDK's params class for ``route``, most likely first (``PaymentIntentConfirmParams``…)."""
    parts = [p for p in route.path.split("/")[2:] if p]
    if parts and parts[0] in NAMESPACES:
        parts = parts[1:]
    kind = route.resource.object
    cls = CLASS_NAMES.get(kind) or _camel(kind.rpartition(".")[2])
    ids = [i for i, p in enumerate(parts) if p.startswith("{")]
    method = route.method
    if len(parts) == 1:
        return [f"{cls}{'Create' if method == 'POST' else 'List'}Params"]
    if len(parts) == 2 and parts[1] == "search":
        return [f"{cls}SearchParams"]
    if len(parts) == 2 and ids == [1]:
        return {"GET": [f"{cls}RetrieveParams"], "DELETE": [f"{cls}DeleteParams"],
                "POST": [f"{cls}ModifyParams", f"{cls}UpdateParams"]}[method]
    if len(parts) == 3 and ids == [1]:  # /v1/invoices/{id}/finalize, /v1/customers/{customer}/tax_ids
        verb, parent = parts[2], _camel(_singular(parts[0]))
        sub = _camel(_singular(verb))
        return [f"{cls}{_camel(verb)}Params", f"{cls}{_camel(verb)}{cls}Params",
                f"{parent}{'Create' if method == 'POST' else 'List'}{sub}Params",
                f"{parent}List{_camel(verb)}Params", f"{parent}{_camel(verb)}Params"]
    if len(parts) == 4 and ids == [1, 3]:  # /v1/customers/{customer}/tax_ids/{id}
        parent, sub = _camel(_singular(parts[0])), _camel(_singular(parts[2]))
        return [f"{parent}{ {'GET': 'Retrieve', 'DELETE': 'Delete', 'POST': 'Modify'}[method]}{sub}Params"]
    return []


def params_class(route: Route) -> type | None:
    namespace = route.path.split("/")[2] if route.path.count("/") > 2 else ""
    module: Any = getattr(stripe.params, namespace, stripe.params) if namespace in NAMESPACES else stripe.params
    for name in candidates(route):
        found = getattr(module, name, None)
        if isinstance(found, type):
            return found
    return None


def _is_typeddict(value: object) -> bool:
    """A TypedDict class, typing's or typing_extensions' (the SDK's; ``typing.is_typeddict`` on 3.11 sees only
    typing's): a dict subclass with the ``__total__`` every TypedDict class has."""
    return isinstance(value, type) and issubclass(value, dict) and hasattr(value, "__total__")


def _resolve(annotation: object, namespace: dict[str, Any]) -> list[Any]:
    """The TypedDicts (and plain types) an annotation may hold, through NotRequired, Optional, unions and lists."""
    if isinstance(annotation, str):
        try:
            annotation = eval(annotation, namespace)  # the SDK's own annotation text, as get_type_hints does
        except Exception:  # noqa: BLE001 - a name the SDK's module does not bind: treat as a leaf
            return []
    if isinstance(annotation, typing.ForwardRef):
        return _resolve(annotation.__forward_arg__, namespace)
    if _is_typeddict(annotation):
        return [annotation]
    return [found for arg in typing.get_args(annotation) for found in _resolve(arg, namespace)]


def declares(cls: type, param: str) -> bool:
    """True when ``cls`` (a params TypedDict) declares the form parameter ``param`` (``a[b][0][c]``)."""
    names = [n for n in re.split(r"[\[\]]+", param) if n]
    current = [cls]
    for name in names:
        if name.isdigit():
            continue  # a list index: the element's type was already taken
        following = []
        for typed in current:
            annotations = typed.__annotations__
            if name in annotations and name not in REQUEST_OPTIONS:
                following += _resolve(annotations[name], vars(sys.modules[typed.__module__])) or [None]
        if not following:
            return False
        current = [t for t in following if t is not None]
        if not current:
            return name == names[-1]  # a leaf: declared only if it is the last part
    return True


_SEEN: dict[tuple[str, str, str], bool] = {}  # (method, path pattern, param) -> declared; bounded below


def _declared(route: Route, param: str) -> bool:
    key = (route.method, route.path, param)
    if key not in _SEEN:
        if len(_SEEN) > 4096:  # hostile requests may name endless parameters
            _SEEN.clear()
        cls = params_class(route)
        _SEEN[key] = cls is not None and declares(cls, param)
    return _SEEN[key]


def refine(route: Route, error: ParamError) -> ParamError:
    """``error`` (an unknown parameter) as Stripe's refusal of something the emulator does not model, when
    stripe-python declares that parameter for this endpoint; else ``error`` unchanged."""
    if error.code != "parameter_unknown" or not error.param or not _declared(route, error.param):
        return error
    return ParamError(f"The emulator does not model {error.param} on {route.method} {route.path} (Stripe accepts it; "
                      "leave it out, or see what is modelled in the emulator's README).", param=error.param,
                      code="parameter_not_modelled")
