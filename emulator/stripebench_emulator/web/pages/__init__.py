"""Browser pages the emulator serves: hosted/embedded Checkout, the stripe.js stand-in, card element, 3-D Secure.

Importing this package registers their routes (``registry.page_route``); ``api/__init__`` imports it.
"""

from stripebench_emulator.web.pages import checkout, common, invoice, stripejs  # noqa: F401 - imported for the routes it registers
