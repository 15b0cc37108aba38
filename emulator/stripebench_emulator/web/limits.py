"""What one request may take: the size of its head (request line and headers) and how long it may take to arrive."""

from __future__ import annotations

# The request line and header fields together (a Stripe SDK's are under 2 KB).
MAX_HEAD_BYTES = 64 * 1024
# The request target (path and query): under httptools.parse_url's 65,535-byte bound, far above any list call.
MAX_TARGET_BYTES = 32 * 1024
# Seconds a client has to send a whole request once it starts (or its first one once connected).
REQUEST_TIMEOUT = 10.0
# The latest time the clock may be set to: 3000-01-01T00:00:00Z, centuries of billing periods short of the calendar's
# end (datetime stops at the year 9999), and far inside int64.
MAX_CLOCK = 32503680000
