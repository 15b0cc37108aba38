"""Emulator-only controls under ``/_emulator/``: health, reset and the clock (faults and webhook settings and
deliveries are in ``faults`` and ``webhooks``). Graders never need these.

They change or reveal the very state a grader reads, so the agent must not reach them: every ``/_emulator/``
request must carry the server's control token in the ``Stripebench-Control-Token`` header (``CONTROL_HEADER``),
else ``app`` answers it with a 403. The token is made per server (``new_control_token``); only whoever started the
server holds it (the runtime registers it as a secret, so traces and logs redact it), never the agent.
"""

from __future__ import annotations

import hmac
import json
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from stripebench_emulator.api import account_clock
from stripebench_emulator.model.engine import TOKEN_PREFIX, Emulator, new_control_token  # noqa: F401 - control's names
from stripebench_emulator.model.forms import parse_form
from stripebench_emulator.web.bodies import json_object, whole_number
from stripebench_emulator.web.limits import MAX_CLOCK


async def _body(request: Request) -> dict[str, Any]:
    raw = await request.body()
    if not raw:
        return dict(request.query_params)
    if "json" in request.headers.get("content-type", ""):
        return json_object(raw)
    try:
        return parse_form(raw.decode())
    except Exception:  # noqa: BLE001  (any malformed control body is the caller's mistake)
        raise ValueError("the body must be a JSON object or a form") from None


CONTROL_HEADER = "Stripebench-Control-Token"
CONTROL_PREFIX = "/_emulator"
_FORBIDDEN_MESSAGE = (f"The emulator's control endpoints need a control token: send the {CONTROL_HEADER} header "
                      "with the token `stripebench emulator` printed at start (or the one it was given).")




def is_control_path(path: str) -> bool:
    """Whether ``path`` is under ``/_emulator`` (however many leading slashes, any case)."""
    return ("/" + path.lstrip("/")).lower().startswith(CONTROL_PREFIX)


def token_matches(expected: str, given: str | None) -> bool:
    """Constant-time comparison of a presented token with the server's."""
    return bool(expected) and given is not None and hmac.compare_digest(expected.encode(), given.encode())


def forbidden_body() -> bytes:
    """The 403 answer's JSON body (one line)."""
    return json.dumps({"error": {"type": "permission_error", "message": _FORBIDDEN_MESSAGE}}).encode()


def _error(message: str, status: int = 400) -> JSONResponse:
    return JSONResponse({"error": {"type": "invalid_request_error", "message": message}}, status_code=status)


def control_routes(emulator: Emulator) -> list[Route]:
    """Starlette routes for the control endpoints of ``emulator``."""

    async def health(request: Request) -> JSONResponse:
        return JSONResponse({"ok": True, "api_version": emulator.api_version, "seed": emulator.seed,
                             "now": emulator.clock.now()})

    async def reset(request: Request) -> JSONResponse:
        emulator.reset()
        return JSONResponse({"ok": True})

    async def clock(request: Request) -> JSONResponse:
        if request.method == "POST":
            try:
                body = await _body(request)
                with emulator.store.lock:
                    # forward, what falls due on the way runs for the objects on no test clock (account_clock)
                    if "advance" in body:
                        now = emulator.clock.now()
                        seconds = whole_number(body["advance"], "advance", -now, MAX_CLOCK - now)
                        account_clock.move_to(emulator, now + seconds, freeze=emulator.clock.frozen_at is not None)
                    elif "set" in body:
                        account_clock.move_to(emulator, whole_number(body["set"], "set", 0, MAX_CLOCK),
                                              freeze=str(body.get("freeze", "false")).lower() == "true")
                    elif "freeze" in body:
                        frozen = str(body["freeze"]).lower() == "true"
                        emulator.clock.set(emulator.clock.now(), freeze=frozen)
                    else:
                        return _error("Send one of: advance=SECONDS, set=UNIX_TIME (with freeze=true|false), freeze=true|false.")
                    emulator.store.flush_idempotency()
            except (ValueError, TypeError) as exc:
                return _error(f"Invalid clock request: {exc}")
        return JSONResponse(emulator.clock.state())

    return [
        Route("/_emulator/health", health, methods=["GET"]),
        Route("/_emulator/reset", reset, methods=["POST"]),
        Route("/_emulator/clock", clock, methods=["GET", "POST"]),
    ]
