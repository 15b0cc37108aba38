"""Changing a subscription: its items, discounts and the prorations a mid-period change makes.

``items`` params (create and update) are checked like Stripe's (recurring prices only, one interval, one currency);
a change inside a paid period credits the unused time of what was there and charges the remaining time of what is
there now, per second of the period (``proration_behavior``: ``create_prorations`` keeps the lines pending for the
next invoice, ``always_invoice`` bills them at once, ``none`` drops them).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from stripebench_emulator.model.context import RequestContext
from stripebench_emulator.model.errors import invalid, no_such
from stripebench_emulator.model.fields import apply_metadata
from stripebench_emulator.model.params import Array, Bool, Currency, Enum, Hash, Int, Metadata, Num, Str
from stripebench_emulator.rules import billing_cycle as cycle
from stripebench_emulator.rules import billing_discounts, billing_tax, redemption
from stripebench_emulator.rules.catalog import new_price

PRICE_DATA = Hash({"currency": Currency(required=True), "product": Str(required=True),
                   "recurring": Hash({"interval": Enum("day", "week", "month", "year", required=True),
                                      "interval_count": Int(min=1)}, required=True),
                   "unit_amount": Int(min=0), "unit_amount_decimal": Num(min=0, as_string=True),
                   "tax_behavior": Enum("exclusive", "inclusive", "unspecified")})
DISCOUNTS = Array(Hash({"coupon": Str(), "promotion_code": Str(), "discount": Str()}), emptyable=True)
# ``plan`` is the Plans API's name for a recurring price's id (stripe-python still sends it)
ITEM_FIELDS = {"price": Str(), "plan": Str(), "price_data": PRICE_DATA, "quantity": Int(min=0), "metadata": Metadata(),
               "discounts": DISCOUNTS, "tax_rates": Array(Str(), emptyable=True),
               "billing_thresholds": Hash({"usage_gte": Int(min=1)}, emptyable=True)}
UPDATE_ITEM = Hash({**ITEM_FIELDS, "id": Str(), "deleted": Bool(), "clear_usage": Bool()})
CREATE_ITEM = Hash(ITEM_FIELDS)
INVOICE_ITEM = Hash({"price": Str(), "price_data": Hash({"currency": Currency(required=True),
                                                         "product": Str(required=True), "unit_amount": Int(min=0),
                                                         "unit_amount_decimal": Num(min=0, as_string=True),
                                                         "tax_behavior": Enum("exclusive", "inclusive",
                                                                              "unspecified")}),
                     "quantity": Int(min=1), "discounts": DISCOUNTS, "metadata": Metadata(),
                     "tax_rates": Array(Str(), emptyable=True),
                     "period": Hash({"start": Hash({"type": Str(), "timestamp": Int()}),
                                     "end": Hash({"type": Str(), "timestamp": Int()})})})
PRORATION = Enum("always_invoice", "create_prorations", "none")


def resolve_price(ctx: RequestContext, spec: dict[str, Any], param: str, recurring: bool = True) -> dict[str, Any]:
    """The price an item names (``price``, or ``plan`` for a plan: a plan's id is its price's) or describes
    (``price_data``), checked for its ``type``."""
    if "plan" in spec:
        named = [f"{param}[{key}]" for key in ("plan", "price", "price_data") if key in spec]
        if len(named) > 1:
            # Stripe's wording for plan together with price is not published; this is its usual one for a pair
            raise invalid(f"You may only specify one of these parameters: {', '.join(named)}.", param=named[1])
        plan = ctx.find("price", spec["plan"])
        marker = ctx.find("plan", spec["plan"])
        if plan is None or not plan.get("recurring") or (marker is not None and marker.get("deleted")):
            raise no_such("plan", spec["plan"], param=f"{param}[plan]")
        spec = {**{k: v for k, v in spec.items() if k != "plan"}, "price": plan["id"]}
        param_name = f"{param}[plan]"
    else:
        param_name = f"{param}[price]"
    if "price" in spec and "price_data" in spec:
        raise invalid(f"You may only specify one of these parameters: {param}[price], {param}[price_data].",
                      param=f"{param}[price]")
    if "price_data" in spec:
        data = dict(spec["price_data"])
        return new_price(ctx, data, param=f"{param}[price_data]")
    if "price" not in spec:
        raise invalid(f"Missing required param: {param}[price].", param=f"{param}[price]", code="parameter_missing")
    price = ctx.get("price", spec["price"], param=param_name)
    if recurring and price["type"] != "recurring":
        raise invalid("The price specified is set to `type=one_time` but this field only accepts prices with "
                      "`type=recurring`.", param=param_name)
    if not recurring and price["type"] != "one_time":
        raise invalid("The price specified is set to `type=recurring` but this field only accepts prices with "
                      "`type=one_time`.", param=param_name)
    if not price["active"]:
        raise invalid("The price specified is inactive. This field only accepts active prices.",
                      param=param_name)
    return price


def new_item(ctx: RequestContext, sub_id: str, spec: dict[str, Any], now: int, param: str) -> dict[str, Any]:
    """A ``subscription_item`` (stored inside its subscription) for one ``items[]`` entry."""
    price = resolve_price(ctx, spec, param)
    metered = price["recurring"].get("usage_type") == "metered"
    if metered and "quantity" in spec:
        raise invalid("Quantity should not be specified where usage_type is `metered`. Remove quantity from "
                      f"`{param}[quantity]`.", param=f"{param}[quantity]")
    return {"id": ctx.new_id("si"), "object": "subscription_item", "billing_thresholds": None, "created": now,
            "discounts": [], "metadata": {k: v for k, v in (spec.get("metadata") or {}).items() if v is not None},
            "price": price["id"], "quantity": None if metered else spec.get("quantity", 1), "subscription": sub_id,
            "tax_rates": billing_tax.rates_from(ctx, spec.get("tax_rates"), f"{param}[tax_rates]")}


def check_items(ctx: RequestContext, items: list[dict[str, Any]], param: str = "items") -> None:
    """One interval and one currency across the recurring items, no price twice (Stripe's rules)."""
    prices = [ctx.get("price", i["price"]) for i in items]
    intervals = {(p["recurring"]["interval"], p["recurring"].get("interval_count", 1)) for p in prices}
    if len(intervals) > 1:
        raise invalid("Currently, subscriptions can only contain prices with the same recurring interval and "
                      "interval count.", param=param)
    if len({p["currency"] for p in prices}) > 1:
        raise invalid("All prices on a subscription must have the same `currency`.", param=param)
    ids = [p["id"] for p in prices]
    if len(ids) != len(set(ids)):
        raise invalid("Cannot add multiple subscription items with the same price.", param=param)


def discounts_from(ctx: RequestContext, sub: dict[str, Any], specs: list[dict[str, Any]] | None, now: int,
                   param: str = "discounts", checked: bool = True) -> None:
    """Set the subscription's discounts (``[{coupon}|{promotion_code}|{discount}]``); each new coupon or promotion
    code becomes a ``di_`` discount, ``{discount}`` keeps one the subscription has. Each new one is checked and
    counted by ``redemption`` (the amount discounted: the items' charge for a period); ``checked=False`` only
    counts, for a Checkout Session completing with the code it checked when the code was applied (its payment has
    succeeded by then, so a first-time-transaction code would no longer pass). The ``customer.discount.*`` events
    of the change are emitted (see ``billing_discounts.announce``)."""
    old = {entry["id"]: entry for entry in sub.get("_discounts") or []}
    added: list[dict[str, Any]] = []
    sub["_discounts"], sub["discounts"] = [], []
    licensed = [i for i in sub.get("_items") or [] if not cycle.is_metered(ctx, i)]
    amount = sum(cycle.item_amount(ctx, i) for i in licensed)
    currency = ctx.get("price", sub["_items"][0]["price"])["currency"] if sub.get("_items") else None
    for i, spec in enumerate(specs or []):
        if spec.get("discount"):
            if spec["discount"] not in old:
                raise invalid(f"No such discount: '{spec['discount']}'", param=f"{param}[{i}][discount]",
                              code="resource_missing")
            sub["_discounts"].append(old[spec["discount"]])
            sub["discounts"].append(spec["discount"])
            continue
        if checked:
            coupon, promo, _ = redemption.check(ctx, spec, f"{param}[{i}]", customer_id=sub["customer"],
                                                amount=amount, currency=currency, now=now)
        else:
            promo = ctx.get("promotion_code", spec["promotion_code"]) if spec.get("promotion_code") else None
            coupon = ctx.get("coupon", promo["promotion"]["coupon"] if promo else spec["coupon"])
        entry, discount = billing_discounts.redeem(ctx, coupon, (promo or {}).get("id"), customer=sub["customer"],
                                                   subscription=sub["id"], now=now)
        sub["_discounts"].append(entry)
        sub["discounts"].append(entry["id"])
        added.append(discount)
    removed = [ctx.get("discount", di) for di in old if di not in sub["discounts"]]
    billing_discounts.announce(ctx, removed, added)


def invoice_item_lines(ctx: RequestContext, sub: dict[str, Any], specs: list[dict[str, Any]], now: int
                       ) -> list[dict[str, Any]]:
    """``add_invoice_items``: one-time lines added to the next invoice."""
    lines = []
    for i, spec in enumerate(specs):
        price = resolve_price(ctx, spec, f"add_invoice_items[{i}]", recurring=False)
        quantity = spec.get("quantity", 1)
        lines.append({"amount": round(cycle._unit(price) * quantity), "price": price["id"], "quantity": quantity,
                      "period": [now, now], "item": None, "proration": False,
                      "description": cycle.describe(ctx, price, quantity),
                      "tax_rates": billing_tax.rates_from(ctx, spec.get("tax_rates"),
                                                          f"add_invoice_items[{i}][tax_rates]")})
    return lines


def _what(ctx: RequestContext, price: dict[str, Any], quantity: int) -> str:
    product = (ctx.find("product", price.get("product", "")) or {}).get("name", "Item")
    return product if quantity == 1 else f"{quantity} × {product}"


def _day(moment: int) -> str:
    return datetime.fromtimestamp(moment, UTC).strftime("%d %b %Y")


def proration_lines(ctx: RequestContext, sub: dict[str, Any], old: list[dict[str, Any]], new: list[dict[str, Any]],
                    moment: int) -> list[dict[str, Any]]:
    """Credit for the unused time of changed old items, charge for the remaining time of changed new ones."""
    start, end = sub["_period_start"], sub["_period_end"]
    if end <= start or not start <= moment < end:
        return []
    share = (end - moment) / (end - start)
    before = {i["id"]: i for i in old}
    after = {i["id"]: i for i in new}
    lines = []
    for item_id, item in before.items():
        if cycle.is_metered(ctx, item) or after.get(item_id, {}).get("price") == item["price"] and \
                after[item_id].get("quantity") == item.get("quantity"):
            continue
        price = ctx.get("price", item["price"])
        lines.append({"amount": -round(cycle.item_amount(ctx, item) * share), "price": price["id"],
                      "quantity": item["quantity"], "period": [moment, end], "item": item_id, "proration": True,
                      "description": f"Unused time on {_what(ctx, price, item['quantity'])} "
                                     f"after {_day(moment)}", "tax_rates": item.get("tax_rates")})
    for item_id, item in after.items():
        if cycle.is_metered(ctx, item) or before.get(item_id, {}).get("price") == item["price"] and \
                before[item_id].get("quantity") == item.get("quantity"):
            continue
        price = ctx.get("price", item["price"])
        lines.append({"amount": round(cycle.item_amount(ctx, item) * share), "price": price["id"],
                      "quantity": item["quantity"], "period": [moment, end], "item": item_id, "proration": True,
                      "description": f"Remaining time on {_what(ctx, price, item['quantity'])} "
                                     f"after {_day(moment)}", "tax_rates": item.get("tax_rates")})
    return lines


def apply_items(ctx: RequestContext, sub: dict[str, Any], specs: list[dict[str, Any]], now: int) -> None:
    """Apply update-style ``items[]`` (``id`` to change or ``deleted``, no ``id`` to add) to ``sub["_items"]``."""
    items = {i["id"]: dict(i) for i in sub["_items"]}
    for n, spec in enumerate(specs):
        param = f"items[{n}]"
        if spec.get("id"):
            if spec["id"] not in items:
                raise invalid(f"No such subscription item: '{spec['id']}'", param=f"{param}[id]")
            if spec.get("deleted"):
                del items[spec["id"]]
                continue
            item = items[spec["id"]]
            if "price" in spec or "price_data" in spec or "plan" in spec:
                item["price"] = resolve_price(ctx, spec, param)["id"]
            if "quantity" in spec:
                item["quantity"] = spec["quantity"]
            if "tax_rates" in spec:
                item["tax_rates"] = billing_tax.rates_from(ctx, spec["tax_rates"], f"{param}[tax_rates]")
            if "metadata" in spec:
                item["metadata"] = apply_metadata(item["metadata"], spec["metadata"])
        else:
            item = new_item(ctx, sub["id"], spec, now, param)
            items[item["id"]] = item
    if not items:
        raise invalid("A subscription must have at least one active plan. To cancel a subscription, please use the "
                      "cancel API endpoint on /v1/subscriptions.", param="items")
    sub["_items"] = list(items.values())
    check_items(ctx, sub["_items"])
