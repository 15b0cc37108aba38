"""The route index (by path shape) finds what a scan of every route in registration order finds."""

from __future__ import annotations

import re
from typing import Any

import pytest

from stripebench_emulator.model import registry
from stripebench_emulator.model.engine import Emulator
from stripebench_emulator.model.params import Str


def _scan(method: str, path: str) -> tuple[Any, dict[str, str], bool]:
    """The reference: the first route, in registration order, whose pattern and method match (a full scan)."""
    return registry.first_match(registry.ROUTES, method, path)


def _paths() -> set[str]:
    Emulator()  # registers every resource
    paths = {"/v1/customers/", "/v1/", "/v1", "/v1/customers/a/b/c/d", "/x/y", "/v1/nothing_here/1"}
    for route in registry.ROUTES:
        for fill in ("cus_123", "search", "upcoming", "confirm", "pay"):
            paths.add(re.sub(r"\{\w+\}", fill, route.path))
    return paths


@pytest.mark.parametrize("method", ["GET", "POST", "DELETE"])
def test_every_path_finds_what_a_full_scan_finds(method: str) -> None:
    paths = _paths()
    assert len(paths) > 200
    for path in sorted(paths):
        assert registry.match(method, path) == _scan(method, path), (method, path)


def test_a_route_added_later_is_found_and_goes_away_again() -> None:
    Emulator()
    resource = registry.RESOURCES["customer"]
    before = registry.match("POST", "/v1/customers/cus_1/frobnicate")
    assert before[0] is None

    @resource.route("POST", "/v1/customers/{id}/frobnicate", params={"x": Str()})
    def frobnicate(ctx: Any, params: dict[str, Any], id: str) -> dict[str, Any]:
        return {}

    try:
        route, path_params, exists = registry.match("POST", "/v1/customers/cus_1/frobnicate")
        assert route is not None and route.handler is frobnicate and path_params == {"id": "cus_1"} and exists
        assert registry.match("GET", "/v1/customers/cus_1/frobnicate") == (None, {}, True)  # another method
    finally:
        registry.ROUTES.remove(next(r for r in registry.ROUTES if r.handler is frobnicate))
        resource.routes[:] = [r for r in resource.routes if r.handler is not frobnicate]
    assert registry.match("POST", "/v1/customers/cus_1/frobnicate") == (None, {}, False)
