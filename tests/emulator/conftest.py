"""Fixtures for the emulator tests that need stripebench-tui's own pieces (its Chromium helper) or Node.js; the
emulator's own tests are in emulator/tests."""

from stripebench_emulator.testing import api, emulator, emulator_server, stripe_client, stripe_sdk  # noqa: F401 - pytest fixtures, requested by name below
