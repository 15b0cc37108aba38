"""Seed the studio's Stripe catalogue: one product per class, its id written into the workspace database.

Idempotent: products have fixed ids, so a second run finds them instead of creating duplicates.
Runs in the workspace with the episode's STRIPE_* variables.
"""

import os
import sys

import stripe

sys.path.insert(0, os.getcwd())
import db  # noqa: E402  (the workspace's own module)


def main() -> None:
    client = stripe.StripeClient(
        os.environ["STRIPE_SECRET_KEY"],
        base_addresses={"api": os.environ["STRIPE_API_BASE"]} if os.environ.get("STRIPE_API_BASE") else None,
        stripe_version=os.environ.get("STRIPE_API_VERSION") or None,
    )
    conn = db.connect()
    for cls in conn.execute("SELECT * FROM classes ORDER BY id").fetchall():
        product_id = "studio_" + cls["id"].replace("-", "_")
        try:
            product = client.v1.products.retrieve(product_id)
        except stripe.InvalidRequestError:
            product = client.v1.products.create(params={
                "id": product_id, "name": cls["name"], "metadata": {"class_id": cls["id"]},
                "default_price_data": {"unit_amount": cls["price"], "currency": cls["currency"]},
            })
        conn.execute("UPDATE classes SET product = ? WHERE id = ?", (product.id, cls["id"]))
        print(f"class {cls['id']}: product {product.id}")
    conn.commit()
    conn.close()


if __name__ == "__main__":
    main()
