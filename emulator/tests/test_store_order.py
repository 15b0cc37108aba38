"""The store's incrementally kept newest-first order matches a full sort through puts, updates, deletes, rollbacks."""

from __future__ import annotations

import random

import pytest

from stripebench_emulator.model.store import Store, clone


def _expected(store: Store, kind: str) -> list[str]:
    def key(obj: dict) -> tuple[int, int]:
        return obj.get("created", 0), store.seq_of(kind, obj["id"])

    rows = sorted(store.objects.get(kind, {}).values(), key=key, reverse=True)
    return [o["id"] for o in rows]


def test_order_survives_random_writes_and_rollbacks():
    store, rng = Store(), random.Random(5)
    ids: list[str] = []
    for step in range(400):
        action = rng.random()
        with store.transaction():
            if action < 0.5 or not ids:
                obj_id = f"cus_{step}"
                store.put({"object": "customer", "id": obj_id, "created": rng.choice([100, 200, 300, step])})
                ids.append(obj_id)
            elif action < 0.8:
                obj = store.get("customer", rng.choice(ids))
                obj["name"] = str(step)
                if rng.random() < 0.3:
                    obj["created"] = rng.randint(0, 500)
                store.put(obj)
            else:
                victim = ids.pop(rng.randrange(len(ids)))
                store.delete("customer", victim)
        if step % 7 == 0:
            with pytest.raises(RuntimeError):
                with store.transaction():
                    store.put({"object": "customer", "id": "cus_rolled_back", "created": 999})
                    raise RuntimeError("boom")
        assert [o["id"] for o in store.scan("customer")] == _expected(store, "customer")
    assert store.get("customer", "cus_rolled_back") is None
    assert store.seq_of("customer", "cus_rolled_back") == 0  # its place in creation order went with it


def test_creation_order_of_one_second_survives_deletes_updates_and_the_state_file(tmp_path):
    """Objects created in the same second list newest first by creation order, which the store keeps beside the
    objects (they carry no internal counter): a deleted object's stub keeps its place, and so does an object the
    state file rewrote last."""
    path = tmp_path / "state.db"
    store = Store(path)
    for n in range(4):
        with store.transaction():
            store.put({"object": "customer", "id": f"cus_{n}", "created": 100})
    with store.transaction():
        store.put({"object": "customer", "id": "cus_1", "deleted": True, "created": 100})
        store.put({**store.get("customer", "cus_0"), "name": "updated last"})
    expected = ["cus_3", "cus_2", "cus_1", "cus_0"]
    assert [o["id"] for o in store.scan("customer")] == expected
    assert all("_seq" not in o for o in store.scan("customer"))
    store.close()
    reopened = Store(path)
    assert [o["id"] for o in reopened.scan("customer")] == expected
    assert all("_seq" not in o for o in reopened.scan("customer"))
    with reopened.transaction():
        reopened.put({"object": "customer", "id": "cus_4", "created": 100})
    assert reopened.scan("customer")[0]["id"] == "cus_4"  # numbering goes on after the file's last object


def test_scan_sees_updated_objects_not_stale_copies():
    store = Store()
    with store.transaction():
        store.put({"object": "customer", "id": "cus_1", "created": 1, "name": "a"})
    store.scan("customer")
    with store.transaction():
        store.put({**store.get("customer", "cus_1"), "name": "b"})
    assert store.scan("customer")[0]["name"] == "b"


def test_clone_is_deep_and_handles_any_value():
    data = {"a": [1, {"b": None}], "t": (1, 2)}
    copied = clone(data)
    copied["a"][1]["b"] = "changed"
    assert data["a"][1]["b"] is None
    odd = {"x": object()}
    assert clone(odd)["x"] is not None  # falls back to deepcopy for what marshal cannot carry
