"""Create the shop's SQLite database, which the published folder does not ship (its server and init script expect it).

Run in the workspace (the folder's environment/): writes server/db.sqlite3 with the two products and three
discount codes the task's README and grader name. Never touches the benchmark folder itself.
"""

import sqlite3
from pathlib import Path

db = Path("server/db.sqlite3")
if not db.exists():
    conn = sqlite3.connect(db)
    conn.executescript("""
    CREATE TABLE inventory (id TEXT PRIMARY KEY, name TEXT NOT NULL, description TEXT, image_url TEXT);
    CREATE TABLE costs (id TEXT PRIMARY KEY, product TEXT NOT NULL REFERENCES inventory(id), unit_amount INTEGER NOT NULL,
                        currency TEXT NOT NULL);
    CREATE TABLE discounts (code TEXT PRIMARY KEY, amount_off INTEGER, percent_off REAL);
    """)
    conn.executemany("INSERT INTO inventory VALUES (?, ?, ?, ?)", [
        ("1", "Asparagus", "A bunch of green asparagus", ""),
        ("2", "Ethiopean coffee beans", "Whole beans, 250 g", ""),
    ])
    conn.executemany("INSERT INTO costs VALUES (?, ?, ?, ?)", [("c1", "1", 899, "usd"), ("c2", "2", 1899, "usd")])
    conn.executemany("INSERT INTO discounts VALUES (?, ?, ?)", [("SAVE20", None, 20.0), ("SAVE10", None, 10.0), ("5OFF", 500, None)])
    conn.commit()
    conn.close()
    print(f"created {db}")
