"""The Starlette application: ``/v1/*`` goes through ``dispatch.handle``; ``/_emulator/*`` and pages are routes."""

from __future__ import annotations

import inspect

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from stripebench_tui.emulator.control import control_routes
from stripebench_tui.emulator.dispatch import finish, handle
from stripebench_tui.emulator.engine import Emulator
from stripebench_tui.emulator.registry import PAGE_ROUTES

_METHODS = ["GET", "POST", "DELETE", "PUT", "PATCH", "OPTIONS"]


def create_app(emulator: Emulator) -> Starlette:
    """Build the ASGI app serving ``emulator``."""

    async def api(request: Request) -> Response:
        reply = None
        for hook in list(emulator.request_hooks):
            outcome = hook(request.method, request.url.path, dict(request.headers))
            reply = await outcome if inspect.isawaitable(outcome) else outcome
            if reply is not None:
                reply = finish(reply, "req_" + emulator.ids.token("req", 14),
                               request.headers.get("stripe-version") or emulator.api_version)
                break
        if reply is None:
            body = await request.body()
            reply = handle(emulator, request.method, request.url.path, request.url.query, body, dict(request.headers))
        return Response(reply.encoded(), status_code=reply.status, headers=reply.headers, media_type="application/json")

    routes: list[BaseRoute] = list(control_routes(emulator))
    for path, methods, factory in PAGE_ROUTES:
        routes.append(Route(path, factory(emulator), methods=methods))
    # Everything else, /v1 or not, gets Stripe's JSON errors rather than Starlette's plain-text 404/405.
    routes.append(Route("/{rest:path}", api, methods=_METHODS))
    app = Starlette(routes=routes)
    app.state.emulator = emulator
    return app
