"""Customers through the official SDK: CRUD, metadata, lists, pagination, 404s."""

from __future__ import annotations

import pytest
import stripe


def test_create_retrieve_update_delete(stripe_client: stripe.StripeClient) -> None:
    created = stripe_client.v1.customers.create(params={
        "email": "ada@example.com", "name": "Ada", "metadata": {"plan": "pro", "team": "a"},
        "address": {"line1": "1 Main St", "country": "US"}, "preferred_locales": ["en", "fr"]})
    assert created.id.startswith("cus_") and len(created.id) == len("cus_") + 24
    assert created.object == "customer" and created.livemode is False
    assert created.address.line1 == "1 Main St" and created.address.city is None
    assert created.preferred_locales == ["en", "fr"]

    fetched = stripe_client.v1.customers.retrieve(created.id)
    assert fetched.email == "ada@example.com" and fetched.metadata.to_dict() == {"plan": "pro", "team": "a"}

    updated = stripe_client.v1.customers.update(created.id, params={
        "name": "Ada L.", "description": "", "metadata": {"plan": "", "seats": "3"}})
    assert updated.name == "Ada L." and updated.email == "ada@example.com"
    assert updated.metadata.to_dict() == {"team": "a", "seats": "3"}

    cleared = stripe_client.v1.customers.update(created.id, params={"metadata": "", "email": ""})
    assert cleared.metadata.to_dict() == {} and cleared.email is None

    deleted = stripe_client.v1.customers.delete(created.id)
    assert deleted.deleted is True and deleted.id == created.id
    stub = stripe_client.v1.customers.retrieve(created.id)
    assert stub.to_dict().get("deleted") is True
    with pytest.raises(stripe.InvalidRequestError) as err:
        stripe_client.v1.customers.update(created.id, params={"name": "x"})
    assert err.value.http_status == 404 and err.value.code == "resource_missing"


def test_unknown_customer_is_stripes_404(stripe_client: stripe.StripeClient) -> None:
    with pytest.raises(stripe.InvalidRequestError) as err:
        stripe_client.v1.customers.retrieve("cus_nope")
    assert err.value.http_status == 404
    assert err.value.code == "resource_missing" and err.value.param == "id"
    assert err.value.user_message == "No such customer: 'cus_nope'"


def test_list_is_newest_first_and_paginates(stripe_client: stripe.StripeClient) -> None:
    ids = [stripe_client.v1.customers.create(params={"email": f"u{i}@example.com"}).id for i in range(7)]
    page = stripe_client.v1.customers.list(params={"limit": 3})
    assert [c.id for c in page.data] == ids[::-1][:3]
    assert page.has_more is True and page.url == "/v1/customers"
    assert [c.id for c in page.auto_paging_iter()] == ids[::-1]

    after = stripe_client.v1.customers.list(params={"limit": 2, "starting_after": ids[4]})
    assert [c.id for c in after.data] == [ids[3], ids[2]] and after.has_more is True
    before = stripe_client.v1.customers.list(params={"limit": 2, "ending_before": ids[2]})
    assert [c.id for c in before.data] == [ids[4], ids[3]] and before.has_more is True
    last = stripe_client.v1.customers.list(params={"limit": 100, "starting_after": ids[1]})
    assert [c.id for c in last.data] == [ids[0]] and last.has_more is False


def test_list_filters_email_and_created(stripe_client: stripe.StripeClient, emulator) -> None:
    first = stripe_client.v1.customers.create(params={"email": "a@example.com"})
    emulator.emulator.clock.advance(100)
    second = stripe_client.v1.customers.create(params={"email": "b@example.com"})
    assert [c.id for c in stripe_client.v1.customers.list(params={"email": "b@example.com"}).data] == [second.id]
    newer = stripe_client.v1.customers.list(params={"created": {"gt": first.created}})
    assert [c.id for c in newer.data] == [second.id]
    exact = stripe_client.v1.customers.list(params={"created": first.created})
    assert [c.id for c in exact.data] == [first.id]


def test_limit_out_of_range(stripe_client: stripe.StripeClient) -> None:
    for bad in (0, 101):
        with pytest.raises(stripe.InvalidRequestError) as err:
            stripe_client.v1.customers.list(params={"limit": bad})
        assert err.value.param == "limit"


def test_search(stripe_client: stripe.StripeClient) -> None:
    jane = stripe_client.v1.customers.create(params={"email": "jane@example.com", "name": "Jane Doe",
                                                     "metadata": {"plan": "pro"}})
    bob = stripe_client.v1.customers.create(params={"email": "bob@example.com", "name": "Bob"})
    search = lambda q, **p: [c.id for c in stripe_client.v1.customers.search(params={"query": q, **p}).auto_paging_iter()]
    assert search("name~'jane' AND metadata['plan']:'pro'") == [jane.id]
    assert search("email:'jane@example.com' OR email:'bob@example.com'", limit=1) == [bob.id, jane.id]
    assert search("-name:'Bob'") == [jane.id]
    for bad in ("colour:'red'", "name:'a' AND email:'b' OR phone:'c'", "just words"):
        with pytest.raises(stripe.InvalidRequestError) as err:
            stripe_client.v1.customers.search(params={"query": bad})
        assert err.value.param == "query"
