"""Handing a paid order to the warehouse. Each call ships one parcel: call it once per paid order."""

import time


def fulfil_order(conn, order_id, source):
    """Record a fulfilment of ``order_id`` (``source`` says what triggered it), take one off stock, mark it fulfilled."""
    order = conn.execute("SELECT * FROM orders WHERE id = ?", (order_id,)).fetchone()
    if order is None:
        raise LookupError(f"no order {order_id}")
    conn.execute("INSERT INTO fulfillments (order_id, source, created_at) VALUES (?, ?, ?)",
                 (order_id, source, int(time.time())))
    conn.execute("UPDATE products SET stock = stock - 1 WHERE slug = ?", (order["product"],))
    conn.execute("UPDATE orders SET status = 'fulfilled' WHERE id = ?", (order_id,))
    print(f"fulfilled order {order_id} ({source})", flush=True)
