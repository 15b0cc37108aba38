"""Emulator fixtures: one server per test session, reset before each test through the control endpoint.

Reuse them from any test package's conftest.py with
``from stripebench_emulator.testing import emulator_server, emulator, stripe_client, stripe_sdk, api  # noqa: F401``:
``emulator_server`` (session, an EmulatorServer), ``emulator`` (per test, reset), ``stripe_client`` (a
``stripe.StripeClient`` pointed at it), ``stripe_sdk`` (module-level ``stripe`` configured, restored after) and
``api`` (an ``httpx.Client`` with a test key, for raw HTTP).
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
import stripe

from stripebench_emulator import EmulatorServer, running_emulator

TEST_KEY = "sk_test_emulator_123"


@pytest.fixture(scope="session")
def emulator_server() -> Iterator[EmulatorServer]:
    """One emulator for the whole session (tests reset it through ``emulator``)."""
    with running_emulator() as server:
        yield server


@pytest.fixture
def emulator(emulator_server: EmulatorServer) -> EmulatorServer:
    """The session's emulator, emptied before this test via ``POST /_emulator/reset``."""
    httpx.post(f"{emulator_server.url}/_emulator/reset", headers=emulator_server.control_headers, timeout=10).raise_for_status()
    return emulator_server


@pytest.fixture
def stripe_client(emulator: EmulatorServer) -> stripe.StripeClient:
    """An official ``StripeClient`` talking to the emulator, without network retries (errors surface at once)."""
    return stripe.StripeClient(TEST_KEY, base_addresses={"api": emulator.url}, max_network_retries=0)


@pytest.fixture
def stripe_sdk(emulator: EmulatorServer) -> Iterator[object]:
    """The ``stripe`` module with ``api_base``/``api_key`` pointed at the emulator; restored afterwards."""
    saved = (stripe.api_base, stripe.api_key, stripe.max_network_retries)
    stripe.api_base, stripe.api_key, stripe.max_network_retries = emulator.url, TEST_KEY, 0
    try:
        yield stripe
    finally:
        stripe.api_base, stripe.api_key, stripe.max_network_retries = saved


@pytest.fixture
def api(emulator: EmulatorServer) -> Iterator[httpx.Client]:
    """A raw HTTP client with a test key, for what the SDKs never send (malformed bodies, odd headers)."""
    with httpx.Client(base_url=emulator.url, headers={"Authorization": f"Bearer {TEST_KEY}"}, timeout=10) as client:
        yield client
