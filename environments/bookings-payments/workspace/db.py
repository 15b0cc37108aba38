"""The studio's SQLite database: the class catalogue and the bookings."""

import os
import sqlite3

SCHEMA = """
CREATE TABLE IF NOT EXISTS classes (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    price       INTEGER NOT NULL,      -- smallest currency unit (cents)
    currency    TEXT NOT NULL DEFAULT 'usd',
    min_deposit INTEGER NOT NULL,      -- the smallest partial payment accepted
    product     TEXT                   -- the Stripe product id (written by seed.py)
);
CREATE TABLE IF NOT EXISTS bookings (
    id              TEXT PRIMARY KEY,  -- bk_...
    class_id        TEXT NOT NULL REFERENCES classes(id),
    email           TEXT NOT NULL,
    channel         TEXT NOT NULL,     -- 'web' or 'partner'
    status          TEXT NOT NULL,     -- paid | deposit_paid | card_saved | partially_refunded | refunded
    price           INTEGER NOT NULL,
    currency        TEXT NOT NULL,
    amount_paid     INTEGER NOT NULL DEFAULT 0,
    amount_refunded INTEGER NOT NULL DEFAULT 0,
    customer        TEXT,              -- cus_...
    payment_intent  TEXT,              -- pi_... (null when nothing was charged)
    setup_intent    TEXT,              -- seti_... (only when the card was saved for later)
    payment_method  TEXT,              -- pm_...
    created_at      TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP
);
"""

CLASSES = [
    ("reformer-pilates", "Reformer Pilates (60 min)", 3500, "usd", 1000),
    ("vinyasa-flow", "Vinyasa Flow (75 min)", 2800, "usd", 800),
    ("spin-45", "Spin 45", 2200, "usd", 500),
]


def path() -> str:
    """Where the database lives: $DATABASE_PATH, else bookings.db beside the app."""
    return os.environ.get("DATABASE_PATH") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "bookings.db")


def connect() -> sqlite3.Connection:
    """A connection with rows as dicts-like objects; creates the schema and catalogue on first use."""
    conn = sqlite3.connect(path(), timeout=10)
    conn.row_factory = sqlite3.Row
    conn.executescript(SCHEMA)
    conn.executemany("INSERT OR IGNORE INTO classes (id, name, price, currency, min_deposit) VALUES (?, ?, ?, ?, ?)",
                     CLASSES)
    conn.commit()
    return conn
