"""Episode formats other than the live trace: plain-text renderings and ATIF import/export."""
