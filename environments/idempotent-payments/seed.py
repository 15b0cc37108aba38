"""Set up the shop: the app's restricted Stripe key in `.env`, and a few unpaid orders to try payments with.

On the emulator (STRIPE_API_BASE set) any `rk_test_…` key works, so one is made up; against real Stripe,
create a restricted key with only "PaymentIntents: write" in the Dashboard and export it as
STRIPE_RESTRICTED_KEY before the episode. Idempotent: an existing `.env` key and existing orders are kept.
"""

import hashlib
import os
import sys

sys.path.insert(0, os.getcwd())
import db  # noqa: E402  (the workspace's own modules)
import settings  # noqa: E402

SAMPLE_ORDERS = [("ada@example.com", 4200), ("grace@example.com", 1999)]


def restricted_key() -> str:
    if os.environ.get("STRIPE_API_BASE"):
        digest = hashlib.sha256(os.environ.get("STRIPE_SECRET_KEY", "").encode()).hexdigest()[:24]
        return "rk_test_emu" + digest
    key = os.environ.get("STRIPE_RESTRICTED_KEY", "")
    if not key.startswith("rk_test_"):
        sys.exit("idempotent-payments on real Stripe needs STRIPE_RESTRICTED_KEY: an rk_test_ key with only "
                 "'PaymentIntents: write' (create it in the Dashboard under Developers > API keys)")
    return key


def main() -> None:
    env_path = os.path.join(os.getcwd(), ".env")
    existing = open(env_path, encoding="utf-8").read() if os.path.exists(env_path) else ""
    if "STRIPE_RESTRICTED_KEY=" not in existing:
        with open(env_path, "a", encoding="utf-8") as fh:
            fh.write("# The shop's own Stripe key: restricted to PaymentIntents (write).\n")
            fh.write(f"STRIPE_RESTRICTED_KEY={restricted_key()}\n")
    conn = db.connect()
    if conn.execute("SELECT COUNT(*) FROM orders").fetchone()[0] == 0:
        for email, amount in SAMPLE_ORDERS:
            conn.execute("INSERT INTO orders (id, email, amount) VALUES (?, ?, ?)", (db.new_order_id(), email, amount))
        conn.commit()
    print(f"database {settings.DATABASE_PATH}: {conn.execute('SELECT COUNT(*) FROM orders').fetchone()[0]} orders; "
          f"restricted key in {env_path}")
    conn.close()


if __name__ == "__main__":
    main()
