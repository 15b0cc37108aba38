"""How resources plug in: a ``Resource`` per Stripe object type, with routes, a renderer and expandable fields.

A resource module creates ``resource = Resource("customer", prefix="cus", noun="customer", ...)``, decorates its
handlers with ``@resource.route(METHOD, PATH, params={...})`` and optionally ``@resource.renderer``; listing the
module in ``api/__init__.py`` is the whole registration. Handlers take ``(ctx, params)`` (plus path
parameters as keyword arguments) and return an internal object (a dict with ``object`` and ``id``), a list page
from ``ctx.list_page``, or any plain dict; the app renders objects for the caller's API version and expands.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from stripebench_emulator.model.params import Param

Handler = Callable[..., Any]
Renderer = Callable[[dict[str, Any], "Any"], dict[str, Any]]


@dataclass
class Route:
    """One endpoint: method, path pattern (``/v1/customers/{id}``), declared params and handler."""

    method: str
    path: str
    handler: Handler
    params: dict[str, Param]
    resource: Resource
    # True where Stripe also accepts a publishable key (stripe.js: confirm with client_secret, create a PM).
    publishable: bool = False
    regex: re.Pattern[str] = field(init=False)

    def __post_init__(self) -> None:
        pattern = re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]+)", self.path)
        self.regex = re.compile(f"^{pattern}$")


@dataclass
class Resource:
    """A Stripe object type the emulator serves.

    ``expandable`` maps a dotted field path in the rendered object (``customer``, ``promotion.coupon``) to the
    object type its id refers to, which is what ``expand[]`` may replace.
    """

    object: str
    prefix: str | None = None
    noun: str | None = None
    expandable: dict[str, str] = field(default_factory=dict)
    # Fields Stripe leaves out unless expanded (price ``currency_options``); the renderer adds them when
    # ``ctx.expand_paths`` asks, and expand() accepts these names without error.
    includable: set[str] = field(default_factory=set)
    routes: list[Route] = field(default_factory=list)
    render_fn: Renderer | None = None
    # A date when the renderer only changes the shape for API versions before it (and for ``expand[]``): later
    # versions skip it, so a hot object (customers) renders as fast as one without a renderer.
    render_before: str | None = None
    # An internal key that, set on an object, makes the renderer run at every version all the same (a customer's
    # ``_discount``, rendered into its ``discount``).
    render_if: str | None = None
    # True when the renderer only sets, replaces or removes top-level keys and never changes a nested value in
    # place: it may then work on a shallow copy of a stored object instead of a deep one.
    shallow_render: bool = False

    def __post_init__(self) -> None:
        self.noun = self.noun or self.object.replace("_", " ")
        RESOURCES[self.object] = self

    def route(self, method: str, path: str, params: dict[str, Param] | None = None,
              publishable: bool = False) -> Callable[[Handler], Handler]:
        """Register the decorated function as the handler of ``METHOD path`` (``publishable``: pk_test_ keys too)."""
        def decorate(fn: Handler) -> Handler:
            route = Route(method.upper(), path, fn, dict(params or {}), self, publishable)
            self.routes.append(route)
            # A literal path (``/v1/invoices/upcoming``) goes before an ``{id}`` route that would swallow it, so a
            # module registering later (billing previews) need not be imported before the resource it extends.
            shadow = next((i for i, r in enumerate(ROUTES) if "{" not in path and r.method == route.method
                           and r.regex.match(path)), None)
            ROUTES.insert(len(ROUTES) if shadow is None else shadow, route)
            return fn

        return decorate

    def renderer(self, fn: Renderer) -> Renderer:
        """Register ``fn(obj, ctx) -> dict`` to shape this object for ``ctx.api_version``."""
        self.render_fn = fn
        return fn


RESOURCES: dict[str, Resource] = {}
ROUTES: list[Route] = []
# Non-API pages (hosted Checkout, stripe.js stand-in): (path, methods, factory(emulator) -> async endpoint).
PAGE_ROUTES: list[tuple[str, list[str], Callable[[Any], Any]]] = []


def page_route(path: str, methods: list[str] | None = None) -> Callable[[Callable[[Any], Any]], Callable[[Any], Any]]:
    """Register ``factory(emulator)`` returning a Starlette endpoint for a browser page such as ``/c/pay/{id}``."""
    def decorate(factory: Callable[[Any], Any]) -> Callable[[Any], Any]:
        PAGE_ROUTES.append((path, methods or ["GET"], factory))
        return factory

    return decorate


# Routes by the shape of their path: (collection, number of segments, last segment or None when it is a
# parameter), ``customers`` being the collection of ``/v1/customers/{id}``. Rebuilt when ROUTES changes (its length
# or last entry: routes are appended at import, tests add and remove some). A request tries the one or two routes
# of its shape instead of every route's regex.
_INDEX: dict[tuple[str, int, str | None], list[Route]] = {}
# The same lists by method too: a request tries only routes of its own method; the others matter only when none of
# those matches (then the path may exist under another method).
_BY_METHOD: dict[tuple[str, str, int, str | None], list[Route]] = {}
_ANYWHERE: list[Route] = []  # routes whose collection segment is a parameter (none today)
_INDEXED: tuple[int, Route | None] = (-1, None)


def _shape(parts: list[str]) -> tuple[str, int]:
    """A path's collection (``customers`` in ``/v1/customers/{id}``) and its number of segments."""
    return parts[2] if len(parts) > 2 else "", len(parts)


def _reindex() -> None:
    global _INDEXED
    _INDEX.clear()
    _BY_METHOD.clear()
    _ANYWHERE.clear()
    for route in ROUTES:
        parts = route.path.split("/")
        if len(parts) < 3 or "{" in parts[2] or not route.path.startswith("/v1/"):
            _ANYWHERE.append(route)
        else:
            key = (*_shape(parts), None if "{" in parts[-1] else parts[-1])
            _INDEX.setdefault(key, []).append(route)
            _BY_METHOD.setdefault((route.method, *key), []).append(route)
    _INDEXED = _signature()


def _signature() -> tuple[int, Route | None]:
    return len(ROUTES), ROUTES[-1] if ROUTES else None


_NONE: list[Route] = []


def match(method: str, path: str) -> tuple[Route | None, dict[str, str], bool]:
    """Find the route for a request: (route, path params, whether the path exists under another method)."""
    if _INDEXED[0] != len(ROUTES) or (ROUTES and _INDEXED[1] is not ROUTES[-1]):
        _reindex()
    if path.startswith("/v1/"):
        parts = path.split("/")
        collection, count = _shape(parts)
        # a literal last segment (``/v1/customers/search``) before a parameter (``/v1/customers/{id}``): the
        # registration order too, as ``Resource.route`` puts a literal path before a route that would swallow it
        if not _ANYWHERE:
            for last in (parts[-1], None):
                own = _BY_METHOD.get((method, collection, count, last))
                if own:
                    route, params, _ = first_match(own, method, path)
                    if route is not None:
                        return route, params, True
        candidates = _INDEX.get((collection, count, parts[-1]), _NONE) + _INDEX.get((collection, count, None), _NONE)
    else:
        candidates = _NONE
    if _ANYWHERE:  # keep registration order across both lists
        candidates = sorted(candidates + _ANYWHERE, key=ROUTES.index)
    return first_match(candidates, method, path)


def first_match(routes: list[Route], method: str, path: str) -> tuple[Route | None, dict[str, str], bool]:
    """The first of ``routes`` whose pattern and method fit: (route, path params, whether the path exists under
    another method). ``match`` gives it the few routes of the path's shape; over all ``ROUTES`` it is a full scan."""
    path_exists = False
    for route in routes:
        found = route.regex.match(path)
        if found:
            if route.method == method:
                return route, found.groupdict(), True
            path_exists = True
    return None, {}, path_exists
