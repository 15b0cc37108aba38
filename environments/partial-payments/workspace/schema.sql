-- Ridgeline Coworking's member billing. The seed fills members; the app records payments.
CREATE TABLE IF NOT EXISTS members (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    email TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    stripe_customer TEXT NOT NULL,
    stripe_subscription TEXT NOT NULL,
    stripe_invoice TEXT NOT NULL      -- the subscription's open invoice for this year
);
CREATE TABLE IF NOT EXISTS payments (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    member_id INTEGER NOT NULL REFERENCES members (id),
    stripe_invoice TEXT NOT NULL,
    checkout_session TEXT NOT NULL,   -- cs_...
    payment_intent TEXT NOT NULL,     -- pi_... that paid this part
    amount INTEGER NOT NULL,          -- cents
    amount_remaining INTEGER NOT NULL, -- what the invoice still owed once this part was recorded
    status TEXT NOT NULL,             -- 'paid'
    created_at TEXT NOT NULL DEFAULT (datetime('now'))
);
