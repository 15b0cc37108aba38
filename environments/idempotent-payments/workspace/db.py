"""The shop's SQLite database: orders waiting to be paid."""

import secrets
import sqlite3

import settings

SCHEMA = """
CREATE TABLE IF NOT EXISTS orders (
    id             TEXT PRIMARY KEY,             -- ord_...
    email          TEXT NOT NULL,
    amount         INTEGER NOT NULL,             -- smallest currency unit
    currency       TEXT NOT NULL DEFAULT 'usd',
    status         TEXT NOT NULL DEFAULT 'unpaid',  -- unpaid | paid
    payment_intent TEXT,                         -- pi_... once paid
    created_at     TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP
);
"""


def connect() -> sqlite3.Connection:
    """A connection (rows behave like dicts); creates the schema on first use."""
    conn = sqlite3.connect(settings.DATABASE_PATH, timeout=10)
    conn.row_factory = sqlite3.Row
    conn.executescript(SCHEMA)
    return conn


def new_order_id() -> str:
    return "ord_" + secrets.token_hex(8)
