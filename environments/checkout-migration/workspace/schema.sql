-- Harbor Tea Co. shop database (SQLite). The seed script fills `products`; the app owns the rest.
CREATE TABLE IF NOT EXISTS products (
    id               TEXT PRIMARY KEY,      -- our slug, e.g. 'sencha'
    name             TEXT NOT NULL,
    description      TEXT NOT NULL DEFAULT '',
    unit_amount      INTEGER NOT NULL,      -- in the smallest currency unit (cents)
    currency         TEXT NOT NULL DEFAULT 'usd',
    stripe_product   TEXT,                  -- prod_…
    stripe_price     TEXT,                  -- price_… (one-time)
    position         INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE IF NOT EXISTS cart_items (
    cart_id     TEXT NOT NULL,              -- random id kept in the visitor's cookie
    product_id  TEXT NOT NULL REFERENCES products(id),
    quantity    INTEGER NOT NULL CHECK (quantity > 0),
    PRIMARY KEY (cart_id, product_id)
);

CREATE TABLE IF NOT EXISTS orders (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    cart_id        TEXT NOT NULL,
    stripe_ref     TEXT UNIQUE,             -- the Stripe object that took the payment (pi_… today)
    amount_total   INTEGER NOT NULL,
    currency       TEXT NOT NULL,
    email          TEXT,
    status         TEXT NOT NULL,           -- 'pending' or 'paid'
    created_at     TEXT NOT NULL DEFAULT (datetime('now'))
);
