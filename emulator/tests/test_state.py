"""Persistence with a state file, seeded ids, the clock and reset controls, and the CLI command."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
import stripe

from stripebench_emulator import running_emulator
from stripebench_emulator.testing import TEST_KEY


def _client(emu) -> stripe.StripeClient:
    return stripe.StripeClient(TEST_KEY, base_addresses={"api": emu.url}, max_network_retries=0)


def _workload(client: stripe.StripeClient) -> list[str]:
    customer = client.v1.customers.create(params={"email": "w@example.com"})
    client.v1.customers.list()  # reads must not shift later ids
    price = client.v1.prices.create(params={"currency": "usd", "unit_amount": 100, "product_data": {"name": "W"}})
    coupon = client.v1.coupons.create(params={"percent_off": 10})
    promo = client.v1.promotion_codes.create(params={"promotion": {"type": "coupon", "coupon": coupon.id}})
    events = [e.id for e in client.v1.events.list(params={"limit": 100}).data]
    return [customer.id, price.id, price.product, coupon.id, promo.id, promo.code, *events]


def test_same_seed_same_ids() -> None:
    with running_emulator(seed=42) as a, running_emulator(seed=42) as b, running_emulator(seed=43) as c:
        first, second, other = _workload(_client(a)), _workload(_client(b)), _workload(_client(c))
    assert first == second
    assert not set(first) & set(other)


def test_reset_restarts_seeded_ids() -> None:
    with running_emulator(seed=7) as emu:
        before = _workload(_client(emu))
        httpx.post(f"{emu.url}/_emulator/reset", headers=emu.control_headers).raise_for_status()
        assert _client(emu).v1.customers.list().data == []
        assert _workload(_client(emu)) == before


def test_state_file_survives_restart(tmp_path: Path) -> None:
    state = tmp_path / "stripe.db"
    with running_emulator(seed=5, state=state) as emu:
        client = _client(emu)
        customer = client.v1.customers.create(params={"email": "keep@example.com"}, options={"idempotency_key": "k1"})
        client.v1.customers.update(customer.id, params={"name": "Kept"})
        with pytest.raises(stripe.InvalidRequestError):
            client.v1.customers.update(customer.id, params={"name": "Lost", "bogus": "1"})
        # What the next customer would have been called had this server kept running (not persisted: no request).
        next_id = emu.emulator.ids.new("cus")
    with running_emulator(seed=5, state=state) as emu:
        client = _client(emu)
        again = client.v1.customers.retrieve(customer.id)
        assert again.name == "Kept" and again.email == "keep@example.com"
        assert [e.type for e in client.v1.events.list().data] == ["customer.updated", "customer.created"]
        replay = client.v1.customers.create(params={"email": "keep@example.com"}, options={"idempotency_key": "k1"})
        assert replay.id == customer.id and replay.last_response.headers["Idempotent-Replayed"] == "true"
        # Seeded ids continue where they stopped instead of starting over and colliding with stored ones.
        fresh = client.v1.customers.create(params={"email": "new@example.com"})
        assert fresh.id == next_id != customer.id


def test_clock_controls(emulator, stripe_client: stripe.StripeClient) -> None:
    url = f"{emulator.url}/_emulator/clock"
    ctl = emulator.control_headers
    frozen = httpx.post(url, headers=ctl, json={"set": 1_700_000_000, "freeze": True}).json()
    assert frozen == {"now": 1_700_000_000, "frozen": True, "offset": frozen["offset"]}
    assert stripe_client.v1.customers.create().created == 1_700_000_000
    assert httpx.post(url, headers=ctl, data={"advance": "3600"}).json()["now"] == 1_700_003_600
    assert stripe_client.v1.customers.create().created == 1_700_003_600
    assert httpx.get(url, headers=ctl).json()["now"] == 1_700_003_600
    assert httpx.post(url, headers=ctl, json={"advance": "soon"}).status_code == 400
    assert httpx.post(url, headers=ctl, json={}).status_code == 400
    assert httpx.post(f"{emulator.url}/_emulator/reset", headers=ctl).json() == {"ok": True}
    assert httpx.get(url, headers=ctl).json()["frozen"] is False


def test_cli_serves_until_interrupted(tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "stripebench_emulator", "--port", "0", "--seed", "1",
                             "--state", str(tmp_path / "s.db")], stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        line = proc.stderr.readline()
        url = re.search(r"http://[\d.]+:\d+", line).group(0)
        response = httpx.post(f"{url}/v1/customers", data={"email": "cli@example.com"},
                              headers={"Authorization": f"Bearer {TEST_KEY}"})
        assert response.status_code == 200 and response.json()["email"] == "cli@example.com"
        # The control token is printed for the human at the terminal, and opens the controls.
        header, token = re.search(r"(Stripebench-Control-Token): (\S+)", proc.stderr.readline()).groups()
        assert httpx.get(f"{url}/_emulator/health").status_code == 403
        assert httpx.get(f"{url}/_emulator/health", headers={header: token}).json()["seed"] == 1
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=10)
    assert (tmp_path / "s.db").exists()


def test_cli_takes_a_control_token_and_refuses_a_short_one() -> None:
    token = "my-own-control-token-0123"
    proc = subprocess.Popen([sys.executable, "-m", "stripebench_emulator", "--port", "0",
                             "--control-token", token], stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        url = re.search(r"http://[\d.]+:\d+", proc.stderr.readline()).group(0)
        assert token in proc.stderr.readline()
        reset = httpx.post(f"{url}/_emulator/reset", headers={"Stripebench-Control-Token": token})
        assert reset.json() == {"ok": True}
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=10)
    short = subprocess.run([sys.executable, "-m", "stripebench_emulator", "--control-token", "abc"],
                           capture_output=True, text=True, timeout=30)
    assert short.returncode == 2 and "--control-token must be at least 16 characters" in short.stderr
    assert "Traceback" not in short.stderr and len(short.stderr.strip().splitlines()) == 1


def test_cli_rejects_bad_version() -> None:
    result = subprocess.run([sys.executable, "-m", "stripebench_emulator", "--api-version", "latest"],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode != 0 and "not a Stripe API version" in result.stderr and "Traceback" not in result.stderr
