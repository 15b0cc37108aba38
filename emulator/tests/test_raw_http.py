"""Malformed requests over raw HTTP: always a Stripe-shaped 4xx, never a 500, state unchanged."""

from __future__ import annotations

import httpx
import pytest


@pytest.mark.parametrize("body, content_type", [
    (b'{"email": "a@b.c"}', "application/json"),
    (b"email=%ff%fe", "application/x-www-form-urlencoded"),
    (b"\xff\xfe\x00garbage", "application/x-www-form-urlencoded"),
    (b"address=x&address[city]=y", "application/x-www-form-urlencoded"),
    (b"address[city]=y&address=x", "application/x-www-form-urlencoded"),
    (b"address]=x", "application/x-www-form-urlencoded"),
    (b"metadata[a][b]=c", "application/x-www-form-urlencoded"),
    (b"preferred_locales[]=en&preferred_locales[x]=fr", "application/x-www-form-urlencoded"),
    (b"expand=customer&expand[0]=x", "application/x-www-form-urlencoded"),
    (b"email[]=a", "application/x-www-form-urlencoded"),
    (b"=nothing", "application/x-www-form-urlencoded"),
])
def test_malformed_bodies(api: httpx.Client, body: bytes, content_type: str) -> None:
    response = api.post("/v1/customers", content=body, headers={"Content-Type": content_type})
    assert 400 <= response.status_code < 500, response.text
    error = response.json()["error"]
    assert error["type"] == "invalid_request_error" and error["message"]
    assert api.get("/v1/customers").json()["data"] == []


def test_bracket_arrays_both_forms(api: httpx.Client) -> None:
    indexed = api.post("/v1/customers", content=b"preferred_locales[0]=en&preferred_locales[1]=fr",
                       headers={"Content-Type": "application/x-www-form-urlencoded"})
    appended = api.post("/v1/customers", content=b"preferred_locales[]=en&preferred_locales[]=fr",
                        headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert indexed.json()["preferred_locales"] == appended.json()["preferred_locales"] == ["en", "fr"]


def test_array_of_hashes(api: httpx.Client) -> None:
    response = api.post("/v1/products", data={"name": "x", "marketing_features[][name]": "fast"})
    assert response.status_code == 200, response.text
    response = api.post("/v1/products", content=b"name=y&marketing_features[0][name]=a&marketing_features[1][name]=b",
                        headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert [f["name"] for f in response.json()["marketing_features"]] == ["a", "b"]


def test_get_params_come_from_the_query_string(api: httpx.Client) -> None:
    for email in ("a@example.com", "b@example.com"):
        api.post("/v1/customers", data={"email": email})
    found = api.get("/v1/customers", params={"email": "a@example.com",
                                             "expand[]": "data.invoice_settings.default_payment_method"})
    assert found.status_code == 200
    assert [c["email"] for c in found.json()["data"]] == ["a@example.com"]
    assert api.get("/v1/customers?limit=1&limit[x]=2").status_code == 400
