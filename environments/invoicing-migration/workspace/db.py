"""The studio's SQLite database: the catalogue and the bookings (legacy ones once migrated, and new purchases)."""

import os
import sqlite3

SCHEMA = """
CREATE TABLE IF NOT EXISTS catalogue (
    sku         TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    unit_amount INTEGER NOT NULL,      -- smallest currency unit (cents)
    currency    TEXT NOT NULL DEFAULT 'usd'
);
CREATE TABLE IF NOT EXISTS bookings (
    id          TEXT PRIMARY KEY,      -- the legacy booking_id (LB-...) or bk_... for a new purchase
    source      TEXT NOT NULL,         -- 'legacy' (migrated from legacy_bookings.csv) or 'web'
    sku         TEXT NOT NULL REFERENCES catalogue(sku),
    email       TEXT NOT NULL,
    quantity    INTEGER NOT NULL DEFAULT 1,
    amount      INTEGER NOT NULL,      -- cents
    currency    TEXT NOT NULL,
    status      TEXT NOT NULL,         -- paid | paid_offline | open | void
    customer    TEXT,                  -- cus_...
    invoice     TEXT,                  -- in_...
    created_at  TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP
);
"""

CATALOGUE = [
    ("reformer-10", "Reformer Pilates, 10-class pass", 18000, "usd"),
    ("private-session", "Private session (60 min)", 7000, "usd"),
    ("breathwork-workshop", "Breathwork workshop", 4500, "usd"),
    ("yoga-month", "Yoga unlimited, one month", 9500, "usd"),
]


def path() -> str:
    """Where the database lives: $DATABASE_PATH, else studio.db beside the app."""
    return os.environ.get("DATABASE_PATH") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "studio.db")


def connect() -> sqlite3.Connection:
    """A connection with dict-like rows; creates the schema and the catalogue on first use."""
    conn = sqlite3.connect(path(), timeout=10)
    conn.row_factory = sqlite3.Row
    conn.executescript(SCHEMA)
    conn.executemany("INSERT OR IGNORE INTO catalogue (sku, name, unit_amount, currency) VALUES (?, ?, ?, ?)",
                     CATALOGUE)
    conn.commit()
    return conn
