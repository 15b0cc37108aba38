"""The shapes the sdk-upgrades-ruby apps and grader read, per API version: stripe-ruby 7.1 pins 2022-08-01, 13.x
2025-02-24.acacia, and the upgraded apps (stripe 15) set 2025-03-31.basil. One test per difference.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

OLD, ACACIA, BASIL = "2022-08-01", "2025-02-24.acacia", "2025-03-31.basil"


def _call(emulator: Any, method: str, path: str, version: str, data: dict[str, str] | None = None,
          params: list[tuple[str, str]] | None = None) -> httpx.Response:
    return httpx.request(method, f"{emulator.url}{path}", data=data, params=params, timeout=10,
                         headers={"Authorization": "Bearer sk_test_x", "Stripe-Version": version})


def _ok(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    return response.json()


@pytest.fixture
def paid_invoice(emulator: Any) -> dict[str, Any]:
    """An invoice of one 25.00 item, finalized and paid with a saved card (as the invoice grader makes it)."""
    customer = _ok(_call(emulator, "POST", "/v1/customers", BASIL, {"email": "inv@example.com"}))
    pm = _ok(_call(emulator, "POST", "/v1/payment_methods", BASIL, {"type": "card", "card[token]": "tok_visa"}))
    _ok(_call(emulator, "POST", f"/v1/payment_methods/{pm['id']}/attach", BASIL, {"customer": customer["id"]}))
    price = _ok(_call(emulator, "POST", "/v1/prices", BASIL, {"currency": "usd", "unit_amount": "2500",
                                                              "product_data[name]": "Service"}))
    invoice = _ok(_call(emulator, "POST", "/v1/invoices", BASIL, {"customer": customer["id"], "auto_advance": "false",
                                                                  "default_payment_method": pm["id"]}))
    _ok(_call(emulator, "POST", "/v1/invoiceitems", BASIL, {"customer": customer["id"], "invoice": invoice["id"],
                                                             "pricing[price]": price["id"]}))
    _ok(_call(emulator, "POST", f"/v1/invoices/{invoice['id']}/finalize", BASIL))
    paid = _ok(_call(emulator, "POST", f"/v1/invoices/{invoice['id']}/pay", ACACIA))
    return {"invoice": invoice["id"], "payment_intent": paid["payment_intent"], "price": price["id"]}


def test_payment_intent_lists_its_charges_on_2022_08_01_and_names_its_latest_charge_on_basil(emulator):
    pi = _ok(_call(emulator, "POST", "/v1/payment_intents", OLD, {
        "amount": "2000", "currency": "usd", "payment_method_types[]": "card", "payment_method": "pm_card_visa",
        "confirm": "true"}))
    old = _ok(_call(emulator, "GET", f"/v1/payment_intents/{pi['id']}", OLD))
    assert old["charges"]["object"] == "list" and "latest_charge" not in old
    [charge] = old["charges"]["data"]
    assert charge["id"].startswith("ch_") and charge["amount"] == 2000 and charge["status"] == "succeeded"
    new = _ok(_call(emulator, "GET", f"/v1/payment_intents/{pi['id']}", BASIL))
    assert "charges" not in new and new["latest_charge"] == charge["id"]
    refused = _call(emulator, "GET", f"/v1/payment_intents/{pi['id']}", BASIL, params=[("expand[]", "charges")])
    assert refused.status_code == 400 and refused.json()["error"]["message"] == "This property cannot be expanded (charges)."
    # what the upgraded server reads instead: the charges listed by PaymentIntent
    listed = _ok(_call(emulator, "GET", "/v1/charges", BASIL, params=[("payment_intent", pi["id"]), ("limit", "1")]))
    assert [c["id"] for c in listed["data"]] == [charge["id"]]


def test_invoice_names_its_payment_intent_and_paid_flags_on_acacia_only(emulator, paid_invoice):
    old = _ok(_call(emulator, "GET", f"/v1/invoices/{paid_invoice['invoice']}", ACACIA))
    assert old["payment_intent"] == paid_invoice["payment_intent"]
    assert (old["paid"], old["paid_out_of_band"], old["status"]) == (True, False, "paid")
    new = _ok(_call(emulator, "GET", f"/v1/invoices/{paid_invoice['invoice']}", BASIL))
    assert new["status"] == "paid" and not {"payment_intent", "paid", "paid_out_of_band"} & set(new)


def test_payment_intent_names_its_invoice_before_basil_only(emulator, paid_invoice):
    path = f"/v1/payment_intents/{paid_invoice['payment_intent']}"
    assert _ok(_call(emulator, "GET", path, ACACIA))["invoice"] == paid_invoice["invoice"]
    expanded = _ok(_call(emulator, "GET", path, ACACIA, params=[("expand[]", "invoice")]))
    assert expanded["invoice"]["id"] == paid_invoice["invoice"]
    assert "invoice" not in _ok(_call(emulator, "GET", path, BASIL))
    assert _call(emulator, "GET", path, BASIL, params=[("expand[]", "invoice")]).status_code == 400


def test_invoice_payments_on_basil_as_the_grader_and_solution_list_them(emulator, paid_invoice):
    # the grader: expand data.payment, then read payment.payment_intent as an id
    by_invoice = _ok(_call(emulator, "GET", "/v1/invoice_payments", BASIL,
                           params=[("invoice", paid_invoice["invoice"]), ("expand[]", "data.payment")]))
    assert by_invoice["data"][0]["payment"] == {"type": "payment_intent", "payment_intent": paid_invoice["payment_intent"]}
    # the solution: find the invoice by its PaymentIntent
    by_intent = _ok(_call(emulator, "GET", "/v1/invoice_payments", BASIL, params=[
        ("payment[type]", "payment_intent"), ("payment[payment_intent]", paid_invoice["payment_intent"]),
        ("expand[]", "data.invoice")]))
    assert by_intent["data"][0]["invoice"]["id"] == paid_invoice["invoice"]
    unknown = _call(emulator, "GET", "/v1/invoice_payments", BASIL, params=[("payment_intent", paid_invoice["payment_intent"])])
    assert unknown.status_code == 400 and unknown.json()["error"]["code"] == "parameter_unknown"


def test_a_line_price_under_pricing_expands_on_basil_and_plain_hashes_are_no_expansion_level(emulator, paid_invoice):
    path = f"/v1/invoices/{paid_invoice['invoice']}"
    got = _ok(_call(emulator, "GET", path, BASIL, params=[("expand[]", "lines.data.pricing.price_details.price")]))
    price = got["lines"]["data"][0]["pricing"]["price_details"]["price"]
    assert price["id"] == paid_invoice["price"] and price["unit_amount"] == 2500
    # five levels through the invoice (data, invoice, lines, data, price): Stripe's four-level limit
    deep = _call(emulator, "GET", "/v1/invoice_payments", BASIL, params=[
        ("invoice", paid_invoice["invoice"]), ("expand[]", "data.invoice.lines.data.pricing.price_details.price")])
    assert deep.status_code == 400 and "more than 4 levels" in deep.json()["error"]["message"]
    # before basil the line carries its whole price and has no pricing to expand
    old = _ok(_call(emulator, "GET", path, ACACIA))
    assert old["lines"]["data"][0]["price"]["id"] == paid_invoice["price"]
    assert _call(emulator, "GET", path, ACACIA,
                 params=[("expand[]", "lines.data.pricing.price_details.price")]).status_code == 400


@pytest.fixture
def subscriber(emulator: Any) -> dict[str, Any]:
    """A customer with a default card, two active monthly subscriptions and one canceled."""
    customer = _ok(_call(emulator, "POST", "/v1/customers", ACACIA, {"email": "sub@example.com"}))
    pm = _ok(_call(emulator, "POST", "/v1/payment_methods", ACACIA, {"type": "card", "card[token]": "tok_visa"}))
    _ok(_call(emulator, "POST", f"/v1/payment_methods/{pm['id']}/attach", ACACIA, {"customer": customer["id"]}))
    _ok(_call(emulator, "POST", f"/v1/customers/{customer['id']}", ACACIA,
              {"invoice_settings[default_payment_method]": pm["id"]}))
    price = _ok(_call(emulator, "POST", "/v1/prices", ACACIA, {"currency": "usd", "unit_amount": "1000",
                                                               "recurring[interval]": "month", "product_data[name]": "Plan"}))
    subs = [_ok(_call(emulator, "POST", "/v1/subscriptions", ACACIA,
                      {"customer": customer["id"], "items[0][price]": price["id"]}))
            for _ in range(3)]
    _ok(_call(emulator, "DELETE", f"/v1/subscriptions/{subs[2]['id']}", ACACIA))
    return {"customer": customer["id"], "subscription": subs[0]["id"]}


def test_subscription_period_is_on_the_subscription_on_acacia_and_on_its_items_on_basil(emulator, subscriber):
    path = f"/v1/subscriptions/{subscriber['subscription']}"
    old = _ok(_call(emulator, "GET", path, ACACIA))
    assert old["current_period_end"] > old["current_period_start"] > 0
    assert "current_period_start" not in old["items"]["data"][0]
    new = _ok(_call(emulator, "GET", path, BASIL))
    assert "current_period_start" not in new and "current_period_end" not in new
    item = new["items"]["data"][0]
    assert (item["current_period_start"], item["current_period_end"]) == (old["current_period_start"], old["current_period_end"])


def test_include_total_count_counts_every_match_on_acacia_and_is_an_unknown_parameter_on_basil(emulator, subscriber):
    wanted = [("customer", subscriber["customer"]), ("include[]", "total_count"), ("limit", "1")]
    active = _ok(_call(emulator, "GET", "/v1/subscriptions", ACACIA, params=[*wanted, ("status", "active")]))
    assert active["total_count"] == 2 and len(active["data"]) == 1 and active["has_more"] is True
    everything = _ok(_call(emulator, "GET", "/v1/subscriptions", ACACIA, params=[*wanted, ("status", "all")]))
    assert everything["total_count"] == 3
    assert "total_count" not in _ok(_call(emulator, "GET", "/v1/subscriptions", ACACIA,
                                          params=[("customer", subscriber["customer"])]))
    refused = _call(emulator, "GET", "/v1/subscriptions", BASIL, params=wanted)
    assert refused.status_code == 400 and refused.json()["error"]["message"] == "Received unknown parameter: include"
    # what the upgraded server does instead: every subscription, counted by status
    listed = _ok(_call(emulator, "GET", "/v1/subscriptions", BASIL, params=[("customer", subscriber["customer"]),
                                                                             ("status", "all"), ("limit", "100")]))
    assert sorted(s["status"] for s in listed["data"]) == ["active", "active", "canceled"]
