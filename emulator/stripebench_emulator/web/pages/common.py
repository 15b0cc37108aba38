"""What every browser page shares: static files, a request context for page work, transactions, CORS headers."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from starlette.requests import Request
from starlette.responses import FileResponse, PlainTextResponse, Response

from stripebench_emulator.model.context import RequestContext
from stripebench_emulator.model.errors import StripeError
from stripebench_emulator.model.registry import page_route

if TYPE_CHECKING:
    from stripebench_emulator.model.engine import Emulator

log = logging.getLogger(__name__)
STATIC = Path(__file__).resolve().parent.parent / "static"
# Apps on other origins load stripe.js from the emulator and call it; the pages hold no secrets worth guarding.
CORS = {"Access-Control-Allow-Origin": "*", "Access-Control-Allow-Headers": "*",
        "Access-Control-Allow-Methods": "GET, POST, OPTIONS"}
_TYPES = {".js": "application/javascript", ".css": "text/css", ".html": "text/html"}
T = TypeVar("T")


def page_context(emulator: Emulator, request: Request) -> RequestContext:
    """A context for page work at the account's API version, addressed as the browser reached us.

    No request id: events the pages cause (``checkout.session.completed``) came from no API request, as on Stripe.
    """
    host = request.headers.get("host")
    return RequestContext(emulator, emulator.api_version, request_id=None, method=request.method, path=request.url.path,
                          base_url=f"http://{host}" if host else None)


def transaction_result(emulator: Emulator, request: Request, work: Callable[[RequestContext], T]) -> T | Any:
    """Run ``work(ctx)`` in one emulator transaction; a Stripe error becomes ``(400, {"error": …})``."""
    ctx = page_context(emulator, request)
    try:
        with emulator.transaction():
            return work(ctx)
    except StripeError as err:
        return err.status, {"error": {"message": err.message, "code": err.code, "decline_code": err.decline_code}}
    except Exception:  # an emulator bug: rolled back, logged, and shown to the page as an error, not a bare 500
        log.exception("emulator bug on page %s %s", request.method, request.url.path)
        return 500, {"error": {"message": "The Stripe emulator hit an internal error; see its log."}}


@page_route("/static/{name}")
def static_file(emulator: Emulator) -> Callable[[Request], Any]:
    """The pages' CSS and scripts (only files that exist directly in ``static/``)."""
    async def endpoint(request: Request) -> Response:
        name = request.path_params["name"]
        path = STATIC / name
        if "/" in name or name.startswith(".") or not path.is_file():
            return PlainTextResponse("Not found", status_code=404)
        return FileResponse(path, media_type=_TYPES.get(path.suffix, "application/octet-stream"),
                            headers={**CORS, "Cache-Control": "no-cache"})

    return endpoint
