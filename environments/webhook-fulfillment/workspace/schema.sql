CREATE TABLE IF NOT EXISTS products (
    slug TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    unit_amount INTEGER NOT NULL,
    currency TEXT NOT NULL,
    stripe_price TEXT NOT NULL,
    stock INTEGER NOT NULL,
    position INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS orders (
    id TEXT PRIMARY KEY,
    product TEXT NOT NULL REFERENCES products (slug),
    status TEXT NOT NULL DEFAULT 'pending',          -- pending | fulfilled
    checkout_session TEXT,
    created_at INTEGER NOT NULL
);
-- One row per time an order was fulfilled (a parcel handed to the warehouse). Exactly one per paid order.
CREATE TABLE IF NOT EXISTS fulfillments (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    order_id TEXT NOT NULL REFERENCES orders (id),
    source TEXT NOT NULL,
    created_at INTEGER NOT NULL
);
