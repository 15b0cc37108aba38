"""Sprocket Cloud's SQLite database: the plans the product team sells, the customer accounts and their
subscriptions."""

import os
import sqlite3

SCHEMA = """
CREATE TABLE IF NOT EXISTS plans (
    id          TEXT PRIMARY KEY,      -- what POST /signup names: trial_14, annual, usage, ...
    position    INTEGER NOT NULL,      -- order on the pricing page
    name        TEXT NOT NULL,
    description TEXT NOT NULL          -- the business model, as the product team wrote it
);
CREATE TABLE IF NOT EXISTS accounts (
    id              TEXT PRIMARY KEY,  -- ac_...
    company         TEXT NOT NULL,
    email           TEXT NOT NULL,
    stripe_customer TEXT NOT NULL,     -- cus_... (made by onboarding, with the card the company gave)
    created_at      TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE TABLE IF NOT EXISTS subscriptions (
    id                  INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id          TEXT NOT NULL REFERENCES accounts(id),
    plan                TEXT NOT NULL REFERENCES plans(id),
    stripe_subscription TEXT,          -- sub_...
    status              TEXT NOT NULL, -- the Stripe subscription's status (trialing, active, ...)
    created_at          TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at          TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP
);
"""


def path() -> str:
    """Where the database lives: $DATABASE_PATH, else plans.db beside the app."""
    return os.environ.get("DATABASE_PATH") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "plans.db")


def connect() -> sqlite3.Connection:
    """A connection with dict-like rows; creates the schema on first use (seed.py fills the plans and accounts)."""
    conn = sqlite3.connect(path(), timeout=10)
    conn.row_factory = sqlite3.Row
    conn.executescript(SCHEMA)
    return conn
