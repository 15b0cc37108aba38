"""``POST /v1/customers`` with ``tax_id_data``: the tax IDs are created under the customer and announced."""

from __future__ import annotations

import httpx
import pytest
import stripe


def test_tax_id_data_creates_the_customers_tax_ids(stripe_client: stripe.StripeClient) -> None:
    customer = stripe_client.v1.customers.create(params={
        "email": "vat@example.com",
        "tax_id_data": [{"type": "eu_vat", "value": "DE123456789"}, {"type": "us_ein", "value": "12-3456789"}]})
    listed = stripe_client.v1.customers.tax_ids.list(customer.id)
    assert sorted((t.type, t.value, t.country, t.customer) for t in listed.data) == [
        ("eu_vat", "DE123456789", "DE", customer.id), ("us_ein", "12-3456789", "US", customer.id)]
    assert {t.verification.status for t in listed.data} == {"pending", "unavailable"}
    one = stripe_client.v1.customers.tax_ids.retrieve(customer.id, listed.data[0].id)
    assert one.id == listed.data[0].id
    events = stripe_client.v1.events.list(params={"limit": 10}).data
    types = [e.type for e in reversed(events)]  # oldest first
    assert types == ["customer.created", "customer.tax_id.created", "customer.tax_id.created"]
    assert {e.data.object.id for e in events if e.type == "customer.tax_id.created"} == {t.id for t in listed.data}


def test_a_bad_tax_id_value_refuses_the_whole_customer(stripe_client: stripe.StripeClient) -> None:
    with pytest.raises(stripe.InvalidRequestError) as refused:
        stripe_client.v1.customers.create(params={
            "tax_id_data": [{"type": "eu_vat", "value": "DE123456789"}, {"type": "eu_vat", "value": "nope"}]})
    assert refused.value.code == "tax_id_invalid" and refused.value.param == "tax_id_data[1][value]"
    assert stripe_client.v1.customers.list().data == []  # rolled back: no customer, no tax id
    assert stripe_client.v1.events.list().data == []


def test_tax_id_data_entries_need_type_and_value(api: httpx.Client) -> None:
    missing = api.post("/v1/customers", data={"tax_id_data[0][value]": "DE123456789"})
    assert missing.status_code == 400
    error = missing.json()["error"]
    assert error["type"] == "invalid_request_error" and error["param"] == "tax_id_data[0][type]"
    odd = api.post("/v1/customers", data={"tax_id_data[0][type]": "eu_vat", "tax_id_data[0][value]": "DE123456789",
                                          "tax_id_data[0][colour]": "blue"})
    assert odd.status_code == 400 and "colour" in odd.json()["error"]["message"]
