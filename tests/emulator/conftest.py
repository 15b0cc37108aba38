"""Fixtures for the emulator's own tests (defined in fixtures.py so other test packages can import them)."""

from tests.emulator.fixtures import api, emulator, emulator_server, stripe_client, stripe_sdk  # noqa: F401
