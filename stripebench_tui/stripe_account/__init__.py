"""The Stripe side of an episode: which backend (emulator or real test mode) and the watcher of its events."""
