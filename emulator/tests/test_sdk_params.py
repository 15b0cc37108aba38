"""Every parameter stripe-python declares for an endpoint we serve is handled or refused as not modelled
(``parameter_not_modelled``), never as unknown; what no SDK declares stays Stripe's "unknown parameter"."""

from __future__ import annotations

import re

import httpx
import pytest

import stripebench_emulator.api  # noqa: F401 - every route registered
from stripebench_emulator.model import registry
from stripebench_emulator.web import sdk_params

# Routes the SDK has no params class for: previews and deletes that take no body, the balance.
WITHOUT_SDK_PARAMS = {("GET", "/v1/invoices/upcoming"), ("POST", "/v1/invoices/create_preview"),
                      ("DELETE", "/v1/subscriptions/{id}"), ("DELETE", "/v1/subscriptions/{id}/discount"),
                      ("DELETE", "/v1/customers/{id}/discount"), ("GET", "/v1/balance")}


def not_modelled() -> list[tuple[registry.Route, str]]:
    """(route, top-level parameter) the SDK declares and the route does not."""
    found = []
    for route in registry.ROUTES:
        cls = sdk_params.params_class(route)
        if cls is None:
            continue
        for name in sorted(cls.__annotations__):
            if name not in sdk_params.REQUEST_OPTIONS and name != "expand" and name not in route.params:
                found.append((route, name))
    return found


def test_each_route_finds_its_sdk_params_class() -> None:
    missing = {(r.method, r.path) for r in registry.ROUTES if sdk_params.params_class(r) is None}
    assert missing == WITHOUT_SDK_PARAMS
    assert sdk_params.params_class(next(r for r in registry.ROUTES if r.method == "POST" and r.path ==
                                        "/v1/customers")).__name__ == "CustomerCreateParams"


def test_every_declared_parameter_we_do_not_model_is_refused_as_not_modelled(api: httpx.Client) -> None:
    pairs = not_modelled()
    assert len(pairs) > 100  # it did walk the SDK's declarations
    wrong = []
    for route, name in pairs:
        path = re.sub(r"\{\w+\}", "x_gauge", route.path)
        sent = {name: "1"}
        reply = api.request(route.method, path, params=sent if route.method != "POST" else None,
                            data=sent if route.method == "POST" else None)
        error = reply.json().get("error", {})
        if (reply.status_code, error.get("code"), error.get("param"), error.get("type")) != (
                400, "parameter_not_modelled", name, "invalid_request_error"):
            wrong.append(f"{route.method} {route.path} {name}: {reply.status_code} {error}")
    assert wrong == []


@pytest.mark.parametrize("path, data, param, code", [
    ("/v1/customers", {"colour": "blue"}, "colour", "parameter_unknown"),
    ("/v1/customers", {"tax_id_data[0][type]": "eu_vat", "tax_id_data[0][value]": "DE123456789",
                       "tax_id_data[0][colour]": "x"}, "tax_id_data[0][colour]", "parameter_unknown"),
    ("/v1/customers", {"cash_balance[settings][reconciliation_mode]": "manual"}, "cash_balance",
     "parameter_not_modelled"),
    ("/v1/customers", {"invoice_settings[rendering_options][amount_tax_display]": "exclude_tax"},
     "invoice_settings[rendering_options]", "parameter_not_modelled"),
])
def test_nested_and_unknown_parameters(api: httpx.Client, path: str, data: dict, param: str, code: str) -> None:
    reply = api.post(path, data=data)
    error = reply.json()["error"]
    assert reply.status_code == 400 and (error["param"], error["code"]) == (param, code)
    if code == "parameter_unknown":
        assert error["message"] == f"Received unknown parameter: {param}"  # as before, word for word
