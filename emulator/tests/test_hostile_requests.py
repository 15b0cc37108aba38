"""Requests meant to break the emulator get Stripe's refusal and leave it serving: in its compiled and plain builds.

Each case runs against a real `stripebench emulator` process (the build setup made, and the same code as plain
Python), then checks that the next ordinary request is answered.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import typing_extensions

from stripebench_emulator.model import compiled
from stripebench_emulator.model.errors import StripeError
from stripebench_emulator.model.forms import MAX_DEPTH, parse_form
from stripebench_emulator.web.dispatch import MAX_BODY_BYTES

KEY = {"Authorization": "Bearer sk_test_hostile"}
FORM = {**KEY, "Content-Type": "application/x-www-form-urlencoded"}


class Served:
    def __init__(self, url: str, banner: str, proc: subprocess.Popen) -> None:
        self.url, self.banner, self.proc = url, banner, proc

    def post(self, path: str, body: bytes | str, **headers: str) -> httpx.Response:
        return httpx.post(self.url + path, content=body, headers={**FORM, **headers}, timeout=30)

    def alive(self) -> None:
        """The process still runs and answers an ordinary request."""
        assert self.proc.poll() is None, f"the emulator died (exit {self.proc.returncode})"
        made = httpx.post(self.url + "/v1/customers", data={"email": "after@example.com"}, headers=KEY, timeout=10)
        assert made.status_code == 200 and made.json()["email"] == "after@example.com"


@pytest.fixture(params=["as built", "plain Python"], scope="module")
def served(request: pytest.FixtureRequest) -> Iterator[Served]:
    env = dict(os.environ)
    env.pop(compiled.PURE_VARIABLE, None)
    if request.param == "plain Python":
        env[compiled.PURE_VARIABLE] = "1"
    proc = subprocess.Popen([sys.executable, "-m", "stripebench_emulator", "--port", "0"], env=env,
                            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    assert proc.stderr is not None
    banner = proc.stderr.readline()  # the first line says where it listens and how it runs
    found = re.search(r"listening on (http://\S+) ", banner)
    assert found, banner
    try:
        yield Served(found.group(1), banner, proc)
    finally:
        proc.terminate()
        proc.wait(10)


def test_each_build_runs_as_it_says(served: Served, request: pytest.FixtureRequest) -> None:
    """The cases below reach the compiled parser in one process and the plain one in the other."""
    if "plain Python" in request.node.callspec.id:
        assert f"as Python: {compiled.PURE_VARIABLE} is set" in served.banner
    else:  # `make setup` compiles the API (emulator/tests/test_compiled.py holds it to that)
        assert served.banner.rstrip().endswith(", compiled)"), served.banner


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 1_000, 50_000])
def test_a_name_nested_deeper_than_any_stripe_parameter_is_a_400_naming_it(served: Served, depth: int) -> None:
    reply = served.post("/v1/customers", "metadata" + "[a]" * depth + "=1")
    assert reply.status_code == 400, reply.text
    error = reply.json()["error"]
    assert error["type"] == "invalid_request_error" and error["param"] == "metadata"
    assert f"more than {MAX_DEPTH} levels" in error["message"]
    served.alive()


def test_the_deepest_allowed_nesting_is_parsed_not_refused(served: Served) -> None:
    reply = served.post("/v1/customers", "metadata" + "[a]" * MAX_DEPTH + "=1")
    # parsed, then refused by the parameter's own rule (metadata values are strings), not by the depth bound
    assert reply.status_code == 400 and "levels" not in reply.json()["error"]["message"]
    served.alive()


def test_a_body_over_the_limit_is_a_413_and_the_server_lives_on(served: Served) -> None:
    reply = served.post("/v1/customers", b"description=" + b"x" * MAX_BODY_BYTES)
    assert reply.status_code == 413
    error = reply.json()["error"]
    assert error["type"] == "invalid_request_error" and f"{MAX_BODY_BYTES:,} bytes" in error["message"]
    assert reply.headers["request-id"].startswith("req_")
    at_limit = served.post("/v1/customers", b"description=" + b"x" * (MAX_BODY_BYTES - len("description=")))
    assert at_limit.status_code == 400  # read whole, then refused by the description's own length rule
    assert "bytes" not in at_limit.json()["error"]["message"]
    served.alive()


def test_an_unknown_but_well_formed_api_version_is_refused_as_stripe_does(served: Served) -> None:
    for version in ("1999-01-01", "2025-13-45.basil", "2026-10-28.zebra", "2099-02-30.zebra", "2099-01-01",
                    "2099-01-01.acacia"):
        reply = httpx.get(served.url + "/v1/customers", headers={**KEY, "Stripe-Version": version}, timeout=10)
        assert reply.status_code == 400, version
        error = reply.json()["error"]
        assert error["code"] == "invalid_api_version" and error["param"] == "Stripe-Version"
        assert error["message"] == f"Invalid Stripe API version: {version}"
    # released versions still pin the request, and so does a release newer than our SDK's list (stripe-node pins a
    # later month than stripe-python): a later date on the newest train or a later train
    for version in ("2020-08-27", "2025-03-31.basil", "2099-01-01.endive", "2099-01-01.zebra"):
        reply = httpx.get(served.url + "/v1/customers", headers={**KEY, "Stripe-Version": version}, timeout=10)
        assert reply.status_code == 200 and reply.headers["stripe-version"] == version
    served.alive()


def test_the_depth_bound_is_above_every_parameter_the_sdk_declares() -> None:
    """The bound refuses only what no Stripe endpoint takes: the SDK's deepest request parameter fits under it."""
    import stripe.params

    deepest = 0
    for info in pkgutil.iter_modules(stripe.params.__path__, "stripe.params."):
        if info.ispkg:
            continue
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if typing_extensions.is_typeddict(value) and value.__module__ == module.__name__:
                deepest = max(deepest, _brackets(value, module))
    assert 6 <= deepest < MAX_DEPTH  # 7 in stripe-python 16 (an invoice preview's schedule_details[phases][0]…)


def _brackets(params: type, module: object, seen: tuple[type, ...] = ()) -> int:
    """How many brackets the deepest leaf under this params class takes (a list index is one more)."""
    best = 0
    for annotation in params.__annotations__.values():
        best = max(best, _depth(annotation, module, (*seen, params)))
    return best


def _depth(annotation: object, module: object, seen: tuple[type, ...]) -> int:
    import typing

    if isinstance(annotation, (str, typing.ForwardRef)):
        name = annotation if isinstance(annotation, str) else annotation.__forward_arg__
        annotation = getattr(module, name, None)
        if annotation is None:
            return 0
    if typing_extensions.is_typeddict(annotation):
        if annotation in seen:
            return 0
        return 1 + _brackets(annotation, sys.modules[annotation.__module__], seen)
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is list:
        return 1 + max((_depth(a, module, seen) for a in args), default=0)
    if origin is dict:
        return 1
    if origin is typing.Literal:
        return 0
    return max((_depth(a, module, seen) for a in args), default=0)


def test_the_parser_refuses_deep_names_before_building_anything() -> None:
    with pytest.raises(StripeError) as refused:
        parse_form("a" + "[b]" * 200_000 + "=1")
    assert refused.value.status == 400 and refused.value.param == "a"
    assert parse_form("a" + "[0]" * MAX_DEPTH + "=1")["a"] != {}


def test_the_hostile_cases_are_in_the_docs() -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert f"more than {MAX_DEPTH} levels" in text and f"over {MAX_BODY_BYTES // 2**20} MiB" in text
