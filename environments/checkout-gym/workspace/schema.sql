-- Pedal & Co.'s Checkout gym. The seed fills catalogue and challenges; the app records attempts.
CREATE TABLE IF NOT EXISTS catalogue (
    slug TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    price_id TEXT NOT NULL,      -- the Stripe Price to charge for this product
    unit_amount INTEGER NOT NULL, -- cents
    currency TEXT NOT NULL,
    recurring TEXT               -- 'month' / 'year' for subscriptions, NULL for one-time prices
);
CREATE TABLE IF NOT EXISTS challenges (
    number INTEGER PRIMARY KEY,
    title TEXT NOT NULL,
    page_url TEXT NOT NULL       -- the Checkout page to reproduce
);
CREATE TABLE IF NOT EXISTS attempts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    challenge INTEGER NOT NULL REFERENCES challenges (number),
    session_id TEXT NOT NULL,    -- the Checkout Session the attempt created
    created_at TEXT NOT NULL DEFAULT (datetime('now'))
);
