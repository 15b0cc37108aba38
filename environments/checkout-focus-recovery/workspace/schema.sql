-- Trailhead Outfitters' checkout. The seed fills cart and promotion_codes; the app records customers and orders.
CREATE TABLE IF NOT EXISTS cart (
    sku TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    unit_amount INTEGER NOT NULL,  -- cents
    quantity INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS promotion_codes (
    code TEXT PRIMARY KEY,
    percent_off INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS customers (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    stripe_customer TEXT NOT NULL,  -- the Stripe Customer made from the contact & shipping step
    created_at TEXT NOT NULL DEFAULT (datetime('now'))
);
CREATE TABLE IF NOT EXISTS orders (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    stripe_customer TEXT NOT NULL,
    payment_intent TEXT NOT NULL,
    amount INTEGER NOT NULL,
    promotion_code TEXT,
    status TEXT NOT NULL,          -- 'paid' once the PaymentIntent succeeded
    created_at TEXT NOT NULL DEFAULT (datetime('now'))
);
