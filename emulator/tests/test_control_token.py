"""The referee's room is locked: every /_emulator/ control wants the server's control token."""

from __future__ import annotations

import json

import httpx
import pytest

from stripebench_emulator import running_emulator
from stripebench_emulator.model.registry import PAGE_ROUTES
from stripebench_emulator.web.control import CONTROL_HEADER

# Every control route and a method it answers (GET where it has one; the others change state).
CONTROLS = [("GET", "/_emulator/health"), ("POST", "/_emulator/reset"), ("GET", "/_emulator/clock"),
            ("POST", "/_emulator/clock"), ("GET", "/_emulator/faults"), ("POST", "/_emulator/faults"),
            ("DELETE", "/_emulator/faults"), ("GET", "/_emulator/webhook_deliveries"),
            ("GET", "/_emulator/webhook_settings"), ("POST", "/_emulator/webhook_settings")]
# Spellings of the same paths a caller might try to slip past the lock with.
DISGUISES = ["/_emulator/no-such-control", "//_emulator/reset", "/_EMULATOR/reset", "/%5Femulator/reset", "/_emulator"]


def test_the_list_above_covers_every_control_route(emulator) -> None:
    from starlette.routing import Route

    from stripebench_emulator.web.app import create_app

    app = create_app(emulator.emulator)
    routes = {(m, r.path) for r in app.routes if isinstance(r, Route) and r.path.startswith("/_emulator")
              for m in (r.methods or ()) if m != "HEAD"}
    assert routes == set(CONTROLS)
    assert {p for p, _, _ in PAGE_ROUTES if p.startswith("/_emulator")} <= {p for _, p in CONTROLS}


@pytest.mark.parametrize("token", [None, "", "sbctl_wrong", "x" * 200], ids=["none", "empty", "wrong", "long"])
def test_without_the_token_every_control_is_403_and_changes_nothing(emulator, api, token) -> None:
    customer = api.post("/v1/customers", data={"email": "kept@example.com"}).json()
    headers = {} if token is None else {CONTROL_HEADER: token}
    for method, path in CONTROLS + [("POST", p) for p in DISGUISES]:
        reply = httpx.request(method, emulator.url + path, headers=headers, json={"advance": 99999}, timeout=5)
        assert reply.status_code == 403, (method, path, reply.status_code)
        error = reply.json()["error"]
        assert "control token" in error["message"] and CONTROL_HEADER in error["message"]
        assert "\n" not in error["message"] and emulator.control_token not in reply.text
    assert api.get(f"/v1/customers/{customer['id']}").json()["email"] == "kept@example.com"  # no reset happened
    assert emulator.emulator.clock.state()["offset"] == 0  # no clock change either


def test_with_the_token_the_controls_work(emulator, api) -> None:
    ctl = emulator.control_headers
    assert httpx.get(f"{emulator.url}/_emulator/health", headers=ctl).json()["ok"] is True
    api.post("/v1/customers")
    assert httpx.post(f"{emulator.url}/_emulator/reset", headers=ctl).json() == {"ok": True}
    assert api.get("/v1/customers").json()["data"] == []
    rule = httpx.post(f"{emulator.url}/_emulator/faults", headers=ctl, json={"kind": "status", "status": 500}).json()
    assert rule["remaining"] == 1 and api.post("/v1/customers").status_code == 500


def test_each_server_has_its_own_token_or_the_one_it_was_given() -> None:
    with running_emulator() as a, running_emulator() as b, running_emulator(control_token="given-token-0123456789") as c:
        assert a.control_token != b.control_token and len(a.control_token) >= 24
        assert c.control_headers == {CONTROL_HEADER: "given-token-0123456789"}
        assert httpx.get(f"{a.url}/_emulator/health", headers=b.control_headers).status_code == 403
        assert httpx.get(f"{c.url}/_emulator/health", headers=c.control_headers).status_code == 200
        assert json.loads(httpx.get(f"{a.url}/_emulator/health").text)["error"]["type"] == "permission_error"
