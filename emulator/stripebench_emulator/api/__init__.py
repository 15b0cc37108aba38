"""Every resource module; importing this package registers their routes.

How to add a resource (e.g. ``payment_intents``):

1. Create ``api/payment_intents.py`` with ``resource = Resource("payment_intent", prefix="pi",
   noun="payment intent", expandable={"customer": "customer", "latest_charge": "charge"})``.
   ``expandable`` maps a dotted field of the *rendered* object to the object type its id points at;
   ``includable`` names fields rendered only when expanded (see prices' ``currency_options``).
2. Declare params per endpoint with ``stripebench_emulator.model.params`` (``Str``, ``Int``, ``Bool``, ``Enum``,
   ``Currency``, ``Num``, ``Hash({...})``, ``AnyHash``, ``Array``, ``Metadata``, ``Range``; ``required=True``,
   ``emptyable=True`` for ``""``-unsets). Anything undeclared gets "Received unknown parameter"; ``expand`` is
   handled centrally. Lists start from ``{**LIST_PARAMS, "customer": Str()}`` (limit, cursors, ``created``).
3. Write handlers ``@resource.route("POST", "/v1/payment_intents/{id}/confirm", params=CONFIRM)`` taking
   ``(ctx, params, id)``. Use ``ctx.get(kind, id, param=...)`` (404 ``No such …``), ``ctx.new_id("pi")``,
   ``ctx.now()``, ``ctx.save(obj)``, ``ctx.emit("payment_intent.succeeded", obj, previous=before)``; return the
   stored object (``ctx.list_page(kind, params, url, where=...)`` for lists). Raise ``errors.StripeError``
   (``invalid``, ``missing_param``, ``no_such``; ``status=402, type="card_error", decline_code=...`` for
   declines). A raised error rolls back every save and event of the request.
4. Version-specific shapes go in ``@resource.renderer`` (``ctx.version_at_least(versions.X)``); store one
   canonical form, keep internal fields under ``_names`` (never rendered).
5. Import the module below. Literal paths (``/v1/customers/search``) must be registered before ``/{id}`` ones.

Browser pages (hosted Checkout, the stripe.js stand-in) register with ``registry.page_route(path)`` on a
``factory(emulator) -> async Starlette endpoint``; ``ctx.base_url`` is the address the caller used.
"""

from stripebench_emulator.api import (  # noqa: F401  # noqa: F401  # noqa: F401  # noqa: F401  # noqa: F401  # noqa: F401
                                      balance_transactions,
                                      charges,
                                      checkout_sessions,
                                      coupons,
                                      customers,
                                      discounts,
                                      events,  # noqa: F401
                                      invoice_actions,
                                      invoice_items,
                                      invoice_payments,  # noqa: F401
                                      invoice_previews,
                                      invoices,
                                      meters,
                                      payment_intents,
                                      payment_methods,
                                      payouts,
                                      plans,
                                      prices,
                                      products,
                                      promotion_codes,
                                      refunds,
                                      setup_intents,
                                      shipping_rates,  # noqa: F401
                                      sources,
                                      subscription_items,
                                      subscription_schedules,
                                      subscriptions,
                                      tax_ids,
                                      tax_rates,
                                      test_clocks,
                                      tokens,
                                      webhook_endpoints,  # noqa: F401
)
