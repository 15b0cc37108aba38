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

# The order the routes register in, kept as written (a literal path before a parameterised one): not sorted.
# isort: off
from stripebench_emulator.api import events  # noqa: F401 - imported for its routes, here and below
from stripebench_emulator.api import coupons, customers, prices, products, promotion_codes  # noqa: F401 - imported for the routes it registers
from stripebench_emulator.api import (balance_transactions, charges, payment_intents, payment_methods, refunds,  # noqa: F401 - imported for the routes it registers
                                      setup_intents, tokens)
from stripebench_emulator.api import webhook_endpoints  # noqa: F401 - imported for the routes it registers
from stripebench_emulator.api import shipping_rates  # noqa: F401 - imported for the routes it registers
from stripebench_emulator.api import invoice_payments  # noqa: F401 - imported for the routes it registers
from stripebench_emulator.api import checkout_sessions, discounts, invoices, subscriptions  # noqa: F401 - imported for the routes it registers
from stripebench_emulator.api import (invoice_previews, meters, subscription_items, subscription_schedules,  # noqa: F401 - imported for the routes it registers
                                      test_clocks)
from stripebench_emulator.api import invoice_actions, invoice_items  # noqa: F401 - imported for the routes it registers
from stripebench_emulator.api import payouts, plans, sources, tax_ids, tax_rates  # noqa: F401 - imported for the routes it registers
# isort: on
