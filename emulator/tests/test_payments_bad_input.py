"""Random malformed requests to the payment endpoints get Stripe-shaped 4xx answers, never a 500."""

from __future__ import annotations

import random

from stripebench_emulator.model.engine import Emulator
from stripebench_emulator.model.registry import ROUTES
from stripebench_emulator.web.dispatch import handle

MODULES = ("payment_intents", "payment_methods", "charges", "refunds", "setup_intents", "webhook_endpoints", "tokens",
           "balance_transactions")
VALUES = ["", "abc", "-1", "0", "99999999999999999999", "pm_card_visa", "tok_chargeDeclined", "true",
          "pm_card_authenticationRequired", "usd"]
HEADERS = {"Authorization": "Bearer sk_test_x", "Host": "127.0.0.1"}


def test_random_bad_params_never_500():
    emu = Emulator(seed=3)
    customer = handle(emu, "POST", "/v1/customers", "", b"", HEADERS).body["id"]
    pi = handle(emu, "POST", "/v1/payment_intents", "",
                b"amount=500&currency=usd&payment_method=pm_card_visa&confirm=true", HEADERS).body
    ids = [customer, pi["id"], pi["latest_charge"], "nope",
           handle(emu, "POST", "/v1/setup_intents", "", b"", HEADERS).body["id"]]
    rng = random.Random(1)
    routes = [r for r in ROUTES if r.handler.__module__.rsplit(".", 1)[-1] in MODULES]
    assert len(routes) >= 30
    statuses = set()
    for route in routes:
        for _ in range(40):
            path = route.path
            for placeholder in ("{id}", "{customer}", "{charge}"):
                path = path.replace(placeholder, rng.choice(ids))
            names = list(route.params) or ["x"]
            parts = []
            for name in rng.sample(names, min(len(names), rng.randint(0, 4))):
                fields = getattr(route.params.get(name), "fields", None)
                suffix = f"[{rng.choice(list(fields) + ['zz'])}]" if fields else ("[0]" if rng.random() < 0.2 else "")
                parts.append(f"{name}{suffix}={rng.choice(VALUES + ids)}")
            body = "&".join(parts)
            post = route.method == "POST"
            reply = handle(emu, route.method, path, "" if post else body, body.encode() if post else b"", HEADERS)
            assert reply.status < 500, (route.method, path, body, reply.body)
            if reply.status >= 400:
                assert reply.body["error"]["type"] in ("invalid_request_error", "card_error", "idempotency_error")
            statuses.add(reply.status)
    assert {200, 400, 404} <= statuses
    emu.close()
