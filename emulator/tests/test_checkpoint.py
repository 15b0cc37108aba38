"""Checkpoints of a running emulator (``save_checkpoint`` / ``restore_checkpoint``): the restored state answers as
the saved one did, later changes stay out of it, and a webhook delivery waiting for its retry is delivered at once."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
import stripe

from stripebench_emulator import restore_checkpoint, running_emulator, save_checkpoint
from stripebench_emulator.testing import TEST_KEY


def _client(emu) -> stripe.StripeClient:
    return stripe.StripeClient(TEST_KEY, base_addresses={"api": emu.url}, max_network_retries=0)


class _Receiver:
    """Answers the first POST with 500, later ones with 200; ``second`` is set when a second POST arrives."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []
        self.second = threading.Event()
        me = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                me.bodies.append(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                self.send_response(500 if len(me.bodies) == 1 else 200)
                self.send_header("Content-Length", "0")
                self.end_headers()
                if len(me.bodies) >= 2:
                    me.second.set()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.parametrize("with_state_file", [True, False])
def test_restored_checkpoint_is_the_saved_state(tmp_path: Path, with_state_file: bool) -> None:
    state = tmp_path / "live.sqlite" if with_state_file else None
    with running_emulator(seed=3, state=state) as emu:
        client = _client(emu)
        httpx.post(f"{emu.url}/_emulator/clock", headers=emu.control_headers,
                   json={"set": 1_700_000_000, "freeze": True}).raise_for_status()
        kept = client.v1.customers.create(params={"email": "a@example.com"}, options={"idempotency_key": "k1"})
        client.v1.customers.update(kept.id, params={"name": "Kept"})
        saved_objects = {kind: dict(bucket) for kind, bucket in emu.emulator.store.objects.items()}
        size = save_checkpoint(emu.emulator, tmp_path / "cp.sqlite")
        assert size > 0
        later = client.v1.customers.create(params={"email": "later@example.com"})  # after the checkpoint
        next_after_checkpoint = later.id
    restore_checkpoint(tmp_path / "cp.sqlite", tmp_path / "restored.sqlite")
    with running_emulator(seed=3, state=tmp_path / "restored.sqlite") as emu:
        restored = emu.emulator.store.objects
        assert {k: set(v) for k, v in restored.items()} == {k: set(v) for k, v in saved_objects.items()}
        for kind, bucket in saved_objects.items():
            for object_id, obj in bucket.items():
                assert restored[kind][object_id] == obj, (kind, object_id)
        client = _client(emu)
        assert client.v1.customers.retrieve(kept.id).name == "Kept"
        replay = client.v1.customers.create(params={"email": "a@example.com"}, options={"idempotency_key": "k1"})
        assert replay.id == kept.id and replay.last_response.headers["Idempotent-Replayed"] == "true"
        again = client.v1.customers.create(params={"email": "later@example.com"})
        assert again.id == next_after_checkpoint  # the id counters are the checkpoint's, not the later ones
        assert again.created == 1_700_000_000  # the frozen clock too
    assert not (tmp_path / "cp.sqlite-wal").exists()


def test_a_waiting_webhook_delivery_is_sent_after_restore(tmp_path: Path) -> None:
    receiver = _Receiver()
    try:
        with running_emulator(seed=1) as emu:
            httpx.post(f"{emu.url}/_emulator/webhook_settings", headers=emu.control_headers,
                       json={"retry_base_seconds": 3600}).raise_for_status()
            attempted = threading.Event()
            emu.emulator.delivery_hooks.append(lambda attempt: attempted.set())
            client = _client(emu)
            client.v1.webhook_endpoints.create(params={"url": receiver.url, "enabled_events": ["customer.created"]})
            customer = client.v1.customers.create(params={"email": "w@example.com"})
            assert attempted.wait(10)  # answered 500: the retry waits an hour (or is still being logged)
            save_checkpoint(emu.emulator, tmp_path / "cp.sqlite")
        assert not receiver.second.is_set()
        restore_checkpoint(tmp_path / "cp.sqlite", tmp_path / "restored.sqlite")
        with running_emulator(seed=1, state=tmp_path / "restored.sqlite") as emu:
            assert receiver.second.wait(10), "the waiting delivery was not sent after the restore"
            assert customer.id.encode() in receiver.bodies[1]
            assert emu.emulator.webhooks.wait_idle(timeout=10)
            [record] = emu.emulator.webhooks.public_log()
            assert record["status"] == "succeeded" and record["attempts"][-1]["status_code"] == 200
            assert len(receiver.bodies) == 2
    finally:
        receiver.close()
