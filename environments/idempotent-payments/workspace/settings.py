"""The app's settings: environment variables, plus a `.env` file beside the app for values not already set.

`.env` holds the app's own Stripe key (STRIPE_RESTRICTED_KEY, written by the environment's setup); anything
exported in the environment wins over it.
"""

import os

HERE = os.path.dirname(os.path.abspath(__file__))


def load_env_file(path: str = os.path.join(HERE, ".env")) -> None:
    """Set NAME=value lines of ``path`` as environment variables unless they are set already."""
    try:
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except FileNotFoundError:
        return
    for line in lines:
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        name, _, value = line.partition("=")
        os.environ.setdefault(name.strip(), value.strip().strip("'\""))


load_env_file()

APP_PORT = int(os.environ.get("APP_PORT", "5000"))
DATABASE_PATH = os.environ.get("DATABASE_PATH") or os.path.join(HERE, "shop.db")
STRIPE_API_BASE = os.environ.get("STRIPE_API_BASE") or None  # None: api.stripe.com
STRIPE_API_VERSION = os.environ.get("STRIPE_API_VERSION") or None
