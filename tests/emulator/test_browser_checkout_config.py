"""A session's configuration read off the hosted and embedded Checkout pages in Debian's Chromium, and paid through
them: custom text, consent, custom fields, tax ids, shipping choices, optional items, trials, the submit wording,
and no field the session does not need (so label-based automation finds exactly one of each).
"""

from __future__ import annotations

from typing import Any

import pytest
import stripe

from tests.emulator.test_browser_checkout import _fill_card, browser, merchant, page  # noqa: F401 - pytest fixtures, requested by name below

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(120)]


def _price(client: stripe.StripeClient, name: str, amount: int, currency: str = "usd", **extra: Any) -> Any:
    return client.v1.prices.create(params={"currency": currency, "unit_amount": amount,
                                           "product_data": {"name": name}, **extra})


def _hosted(client: stripe.StripeClient, site: Any, **params: Any) -> Any:
    return client.v1.checkout.sessions.create(params={
        "mode": "payment", "success_url": site.url + "/return?session_id={CHECKOUT_SESSION_ID}", **params})


def _every_field_is_visible(scope: Any) -> None:
    fields = scope.locator("form input, form select")
    assert fields.count() > 0
    for i in range(fields.count()):
        assert fields.nth(i).is_visible(), fields.nth(i).get_attribute("id")


def test_gym_configuration_is_readable_and_answered_on_the_hosted_page(page, stripe_client, merchant):  # noqa: F811 - pytest fixtures imported above, requested by name
    gift = _price(stripe_client, "Gift", 2500, "eur")
    pin = _price(stripe_client, "Pin", 400, "eur")
    session = _hosted(stripe_client, merchant, submit_type="donate", locale="de",
                      line_items=[{"price": gift.id, "quantity": 1}],
                      optional_items=[{"price": pin.id, "quantity": 2}],
                      custom_text={"submit": {"message": "Thank you for giving."},
                                   "after_submit": {"message": "Receipt by email."},
                                   "shipping_address": {"message": "We post a card."},
                                   "terms_of_service_acceptance": {"message": "I accept the charity's terms"}},
                      consent_collection={"terms_of_service": "required", "promotions": "auto"},
                      custom_fields=[
                          {"key": "dedication", "label": {"type": "custom", "custom": "In honour of"},
                           "type": "text", "optional": True},
                          {"key": "chapter", "label": {"type": "custom", "custom": "Local chapter"},
                           "type": "dropdown", "dropdown": {"options": [{"label": "North", "value": "north"},
                                                                        {"label": "South", "value": "south"}]}},
                          {"key": "member", "label": {"type": "custom", "custom": "Member number"},
                           "type": "numeric", "numeric": {"minimum_length": 4}}],
                      tax_id_collection={"enabled": True}, automatic_tax={"enabled": True},
                      shipping_address_collection={"allowed_countries": ["DE"]},
                      shipping_options=[
                          {"shipping_rate_data": {"display_name": "Letter", "type": "fixed_amount",
                                                  "fixed_amount": {"amount": 0, "currency": "eur"}}},
                          {"shipping_rate_data": {"display_name": "Courier", "type": "fixed_amount",
                                                  "fixed_amount": {"amount": 900, "currency": "eur"}}}])
    page.goto(session.url)
    page.get_by_text("Gift").first.wait_for()
    assert page.locator("html").get_attribute("lang") == "de"
    for text in ("Thank you for giving.", "Receipt by email.", "We post a card."):
        assert page.get_by_text(text, exact=True).is_visible()
    assert page.get_by_role("button", name="Donate").is_visible()
    terms = page.get_by_label("I accept the charity's terms")
    offers = page.get_by_label("Keep me updated with news and personalized offers")
    assert terms.get_attribute("type") == offers.get_attribute("type") == "checkbox"
    assert page.get_by_label("Local chapter").locator("option").all_inner_texts() == ["Select…", "North", "South"]
    assert page.get_by_role("radio", name="Letter · Free").is_checked()
    assert page.locator("#tax-row").is_visible()
    _every_field_is_visible(page)

    page.get_by_role("radio", name="Courier · €9.00").check()
    page.locator("#total").filter(has_text="34,00").or_(page.locator("#total").filter(has_text="34.00")).wait_for()
    page.get_by_role("button", name="Add Pin").click()
    page.locator("#total").filter(has_text="42").wait_for()

    _fill_card(page, "4242424242424242")
    shipping = page.get_by_role("group", name="Shipping address")
    shipping.get_by_label("Address line 1").fill("Hauptstr. 1")
    shipping.get_by_label("City").fill("Berlin")
    shipping.get_by_label("Postal code").fill("10115")
    page.get_by_label("Member number").fill("98765")
    page.get_by_label("Local chapter").select_option("south")
    page.get_by_label("Tax ID").fill("DE123456789")
    page.get_by_role("button", name="Donate").click()
    page.locator("#error").filter(has_text="terms of service").wait_for()
    terms.check()
    page.get_by_role("button", name="Donate").click()
    page.wait_for_url(f"{merchant.url}/return?session_id={session.id}")

    done = stripe_client.v1.checkout.sessions.retrieve(session.id)
    assert (done.status, done.payment_status, done.amount_total) == ("complete", "paid", 2500 + 800 + 900)
    assert {f.key: (f.text or f.dropdown or f.numeric).value for f in done.custom_fields} == {
        "dedication": None, "chapter": "south", "member": "98765"}
    assert done.consent.to_dict() == {"promotions": "opt_out", "terms_of_service": "accepted"}
    assert done.customer_details.tax_ids[0].value == "DE123456789"


def test_plain_session_has_no_fields_it_does_not_need(page, stripe_client, merchant):  # noqa: F811 - pytest fixtures imported above, requested by name
    price = _price(stripe_client, "Mug", 1200)
    session = _hosted(stripe_client, merchant, line_items=[{"price": price.id, "quantity": 1}])
    page.goto(session.url)
    page.get_by_role("button", name="Pay").wait_for()
    assert page.locator("#reuse-agreement").count() == 0  # a one-time payment keeps no card
    for label in ("Country", "Address line 1", "City", "Postal code", "Phone number", "Promotion code", "Tax ID",
                  "I agree to the Terms of Service"):
        assert page.get_by_label(label).count() == 0, label
    assert page.locator("fieldset[hidden], [hidden] input, [hidden] select").count() == 0
    _every_field_is_visible(page)
    assert page.locator("form input, form select").evaluate_all("(els) => els.map((e) => e.id)") == [
        "email", "card_number", "expiry", "cvc", "name"]


def test_billing_and_shipping_each_have_one_set_of_address_fields(page, stripe_client, merchant):  # noqa: F811 - pytest fixtures imported above, requested by name
    price = _price(stripe_client, "Lamp", 4500)
    session = _hosted(stripe_client, merchant, line_items=[{"price": price.id, "quantity": 1}],
                      billing_address_collection="required", shipping_address_collection={"allowed_countries": ["US"]})
    page.goto(session.url)
    page.get_by_role("button", name="Pay").wait_for()
    assert page.get_by_label("Country").count() == 2
    for group in ("Shipping address", "Billing address"):
        assert page.get_by_role("group", name=group).get_by_label("City").count() == 1
    _every_field_is_visible(page)


@pytest.mark.parametrize("submit_type,label", [("book", "Book"), ("pay", "Pay"), ("auto", "Pay")])
def test_submit_type_sets_the_button(page, stripe_client, merchant, submit_type, label):  # noqa: F811 - pytest fixtures imported above, requested by name
    price = _price(stripe_client, "Class", 3000)
    session = _hosted(stripe_client, merchant, submit_type=submit_type,
                      line_items=[{"price": price.id, "quantity": 1}])
    page.goto(session.url)
    assert page.get_by_role("button", name=label, exact=True).is_visible()


def test_trial_is_shown_and_nothing_is_due_today(page, stripe_client, merchant):  # noqa: F811 - pytest fixtures imported above, requested by name
    monthly = _price(stripe_client, "Coaching", 1800, recurring={"interval": "month"})
    session = _hosted(stripe_client, merchant, mode="subscription", subscription_data={"trial_period_days": 14},
                      line_items=[{"price": monthly.id, "quantity": 1}])
    page.goto(session.url)
    page.get_by_text("14 days free").wait_for()
    assert page.locator("#reuse-agreement").is_visible()  # the card is kept for the charges after the trial
    # the page's script draws the items and the total after the server's HTML (which says "14 days free"): wait
    page.get_by_text("Then $18.00 per month").wait_for()
    assert page.locator("#total").inner_text() == "$0.00"
    _fill_card(page, "4242424242424242")
    page.get_by_role("button", name="Subscribe").click()
    page.wait_for_url(f"{merchant.url}/return?session_id={session.id}")
    done = stripe_client.v1.checkout.sessions.retrieve(session.id)
    assert stripe_client.v1.subscriptions.retrieve(done.subscription).status == "trialing"


def test_embedded_checkout_shows_consent_and_custom_text(page, stripe_client, merchant):  # noqa: F811 - pytest fixtures imported above, requested by name
    price = _price(stripe_client, "Ticket", 5000)
    merchant.session_params = {"line_items": [{"price": price.id, "quantity": 1}], "submit_type": "book",
                               "custom_text": {"submit": {"message": "Seats are held for 10 minutes."}},
                               "consent_collection": {"terms_of_service": "required"}}
    page.goto(merchant.url + "/embedded")
    frame = page.frame_locator("iframe[name=embedded-checkout]")
    frame.get_by_text("Seats are held for 10 minutes.").wait_for()
    _fill_card(frame, "4242424242424242")
    frame.get_by_label("I agree to the Terms of Service").check()
    frame.get_by_role("button", name="Book").click()
    session_id = merchant.created[-1]
    page.wait_for_url(f"{merchant.url}/return?session_id={session_id}")
    done = stripe_client.v1.checkout.sessions.retrieve(session_id)
    assert (done.payment_status, done.consent.terms_of_service) == ("paid", "accepted")
