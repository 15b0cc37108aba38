"""Products and prices: default prices, inline product data, currency options, lookup keys, list filters."""

from __future__ import annotations

import pytest
import stripe


def test_product_crud_and_default_price(stripe_client: stripe.StripeClient) -> None:
    product = stripe_client.v1.products.create(params={
        "name": "T-shirt", "description": "Cotton", "metadata": {"sku": "ts"},
        "default_price_data": {"currency": "usd", "unit_amount": 2000}})
    assert product.id.startswith("prod_") and product.active is True
    price = stripe_client.v1.prices.retrieve(product.default_price)
    assert price.product == product.id and price.unit_amount == 2000 and price.type == "one_time"

    expanded = stripe_client.v1.products.retrieve(product.id, params={"expand": ["default_price"]})
    assert expanded.default_price.id == price.id and str(expanded.default_price.unit_amount_decimal) == "2000"

    second = stripe_client.v1.prices.create(params={"product": product.id, "currency": "usd", "unit_amount": 1500})
    switched = stripe_client.v1.products.update(product.id, params={"default_price": second.id, "active": False,
                                                                    "description": ""})
    assert switched.default_price == second.id and switched.active is False and switched.description is None

    with pytest.raises(stripe.InvalidRequestError) as err:
        stripe_client.v1.products.delete(product.id)
    assert "prices" in err.value.user_message
    bare = stripe_client.v1.products.create(params={"name": "Bare"})
    assert stripe_client.v1.products.delete(bare.id).deleted is True
    with pytest.raises(stripe.InvalidRequestError) as err:
        stripe_client.v1.products.retrieve(bare.id)
    assert err.value.code == "resource_missing"


def test_default_price_must_belong_to_product(stripe_client: stripe.StripeClient) -> None:
    a = stripe_client.v1.products.create(params={"name": "A"})
    b = stripe_client.v1.prices.create(params={"product_data": {"name": "B"}, "currency": "usd", "unit_amount": 1})
    with pytest.raises(stripe.InvalidRequestError) as err:
        stripe_client.v1.products.update(a.id, params={"default_price": b.id})
    assert err.value.param == "default_price"


def test_recurring_price_with_product_data_and_currency_options(stripe_client: stripe.StripeClient) -> None:
    price = stripe_client.v1.prices.create(params={
        "currency": "usd", "unit_amount": 1000, "recurring": {"interval": "month"},
        "product_data": {"name": "Pro plan"}, "lookup_key": "pro_monthly", "nickname": "Pro",
        "currency_options": {"eur": {"unit_amount": 900}}})
    assert price.type == "recurring"
    assert price.recurring.interval == "month" and price.recurring.interval_count == 1
    assert price.recurring.usage_type == "licensed"
    assert "currency_options" not in price.to_dict()  # only when expanded, as on Stripe
    product = stripe_client.v1.products.retrieve(price.product)
    assert product.name == "Pro plan"

    with_options = stripe_client.v1.prices.retrieve(price.id, params={"expand": ["currency_options"]})
    options = with_options.currency_options.to_dict()
    assert options["eur"]["unit_amount"] == 900 and options["usd"]["unit_amount"] == 1000

    by_key = stripe_client.v1.prices.list(params={"lookup_keys": ["pro_monthly"]})
    assert [p.id for p in by_key.data] == [price.id]


def test_lookup_key_is_unique_unless_transferred(stripe_client: stripe.StripeClient) -> None:
    first = stripe_client.v1.prices.create(params={"product_data": {"name": "P"}, "currency": "usd",
                                                   "unit_amount": 100, "lookup_key": "std"})
    with pytest.raises(stripe.InvalidRequestError) as err:
        stripe_client.v1.prices.create(params={"product_data": {"name": "Q"}, "currency": "usd", "unit_amount": 200,
                                               "lookup_key": "std"})
    assert err.value.param == "lookup_key"
    # The failed request created nothing, not even its inline product.
    assert [p.name for p in stripe_client.v1.products.list().data] == ["P"]
    second = stripe_client.v1.prices.create(params={"product": first.product, "currency": "usd", "unit_amount": 200,
                                                    "lookup_key": "std", "transfer_lookup_key": True})
    assert second.lookup_key == "std"
    assert stripe_client.v1.prices.retrieve(first.id).lookup_key is None


def test_price_list_filters(stripe_client: stripe.StripeClient) -> None:
    product = stripe_client.v1.products.create(params={"name": "Thing"})
    one_time = stripe_client.v1.prices.create(params={"product": product.id, "currency": "usd", "unit_amount": 5})
    monthly = stripe_client.v1.prices.create(params={"product": product.id, "currency": "eur", "unit_amount": 7,
                                                     "recurring": {"interval": "month"}})
    other = stripe_client.v1.prices.create(params={"product_data": {"name": "Other"}, "currency": "usd",
                                                   "unit_amount": 9, "active": False})

    def ids(**params):
        return [p.id for p in stripe_client.v1.prices.list(params=params).auto_paging_iter()]

    assert ids(product=product.id) == [monthly.id, one_time.id]
    assert ids(type="recurring") == [monthly.id]
    assert ids(active=False) == [other.id]
    assert ids(currency="eur") == [monthly.id]
    assert ids(recurring={"interval": "month"}) == [monthly.id]
    listed = stripe_client.v1.prices.list(params={"expand": ["data.product"], "product": product.id})
    assert {p.product.name for p in listed.data} == {"Thing"}
    updated = stripe_client.v1.prices.update(one_time.id, params={"active": False, "metadata": {"k": "v"}})
    assert updated.active is False and updated.metadata.to_dict() == {"k": "v"}


def test_price_validation(stripe_client: stripe.StripeClient) -> None:
    cases = [
        ({"currency": "usd", "unit_amount": 5}, "product"),
        ({"currency": "usd", "product_data": {"name": "x"}}, "unit_amount"),
        ({"unit_amount": 5, "product_data": {"name": "x"}}, "currency"),
        ({"currency": "usd", "unit_amount": 5, "product": "prod_missing"}, "product"),
        ({"currency": "usd", "unit_amount": 5, "product_data": {"name": "x"}, "recurring": {"interval": "fortnight"}},
         "recurring[interval]"),
        ({"currency": "usd", "unit_amount": 5, "product_data": {"name": "x", "colour": "red"}}, "product_data[colour]"),
    ]
    for params, param in cases:
        with pytest.raises(stripe.InvalidRequestError) as err:
            stripe_client.v1.prices.create(params=params)
        assert err.value.param == param, params
    assert stripe_client.v1.prices.list().data == []
    assert stripe_client.v1.products.list().data == []
