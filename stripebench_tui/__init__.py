"""stripebench-tui: watch, replay and debug AI agent episodes on Stripe integration tasks."""

__version__ = "0.1.0"
