"""The stripe.js stand-in (``/v3``), its card element frame and the 3-D Secure challenge page.

Apps load ``/v3`` from ``$STRIPE_JS_URL`` instead of js.stripe.com. The script talks to this emulator's ``/v1`` API
with the publishable key (the routes Stripe opens to ``pk_test_`` keys, with a client secret). Card details are
typed into ``/elements/card`` (an iframe on the emulator's origin, as on Stripe), which makes those API calls itself.
``/3ds/authenticate/{pi}`` is where a PaymentIntent's ``next_action`` points: Complete / Fail buttons.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from html import escape
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response

from stripebench_emulator.api import setup_intents
from stripebench_emulator.model.registry import page_route
from stripebench_emulator.rules import intents
from stripebench_emulator.web.pages.common import CORS, STATIC, transaction_result

if TYPE_CHECKING:
    from stripebench_emulator.model.context import RequestContext
    from stripebench_emulator.model.engine import Emulator


def _origin(request: Request) -> str:
    host = request.headers.get("host") or request.url.netloc
    return f"{request.url.scheme}://{host}"


@page_route("/v3")
def stripe_js(emulator: Emulator) -> Callable[[Request], Any]:
    """The stand-in script, with this emulator's address baked in."""
    async def endpoint(request: Request) -> Response:
        source = (STATIC / "stripe.js").read_text().replace("__EMULATOR_ORIGIN__", json.dumps(_origin(request)))
        return Response(source, media_type="application/javascript", headers={**CORS, "Cache-Control": "no-cache"})

    return endpoint


page_route("/v3/")(stripe_js)


@page_route("/elements/card")
def card_frame(emulator: Emulator) -> Callable[[Request], Any]:
    """The card element's iframe document: Card number, Expiration, CVC."""
    async def endpoint(request: Request) -> Response:
        return HTMLResponse((STATIC / "card-element.html").read_text())

    return endpoint


_CHALLENGE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>3D Secure test page</title>
<link rel="stylesheet" href="/static/checkout.css"></head><body class="element">
<div class="dialog" role="dialog" aria-labelledby="t" style="margin:24px auto">
<h2 id="t">Authentication required</h2>
<p>This is the emulator's 3-D Secure test page for a payment of <strong>{amount}</strong>.
Choose how the check ends.</p>
<div class="row"><button class="primary" id="complete" type="button">Complete</button>
<button class="secondary" id="fail" type="button">Fail</button></div>
<p class="form-error" id="error" role="alert"></p></div>
<script>
const intent = {intent};
async function finish(success) {{
  const body = new URLSearchParams({{client_secret: intent.client_secret, success: success ? "true" : "false"}});
  const reply = await (await fetch(location.pathname, {{method: "POST", body}})).json();
  if (reply.error) {{ document.getElementById("error").textContent = reply.error.message; return; }}
  if (window.parent !== window) {{
    window.parent.postMessage({{type: "stripe-emulator:3ds-complete", payment_intent: intent.id}}, "*");
  }} else if (reply.return_url) {{
    location.assign(reply.return_url);
  }}
}}
document.getElementById("complete").onclick = () => finish(true);
document.getElementById("fail").onclick = () => finish(false);
</script></body></html>"""


@page_route(intents.AUTHENTICATE_PATH, methods=["GET", "POST"])
def challenge(emulator: Emulator) -> Callable[[Request], Any]:
    """GET: the Complete / Fail page; POST (client_secret, success): finish the PaymentIntent's authentication."""
    async def endpoint(request: Request) -> Response:
        pi_id = request.path_params["id"]
        form = dict(parse_qsl((await request.body()).decode(errors="replace"))) if request.method == "POST" \
            else dict(request.query_params)
        secret = str(form.get("client_secret") or "")

        return_url: list[str | None] = [None]

        def load(ctx: RequestContext) -> Any:
            kind, complete = (("setup_intent", setup_intents.complete_authentication) if pi_id.startswith("seti_")
                              else ("payment_intent", intents.complete_authentication))
            pi = ctx.find(kind, pi_id)
            if pi is None or pi.get("client_secret") != secret:
                return None
            return_url[0] = ((pi.get("next_action") or {}).get("redirect_to_url") or {}).get("return_url")
            if request.method == "POST" and pi["status"] == "requires_action":
                pi = complete(ctx, pi, str(form.get("success")) == "true")
            return pi

        pi = transaction_result(emulator, request, load)
        if not isinstance(pi, dict):
            message = "No such payment (or wrong client secret)."
            if request.method == "POST":
                return JSONResponse({"error": {"message": message}}, status_code=404)
            return HTMLResponse(f"<!doctype html><p>{escape(message)}</p>", status_code=404)
        if request.method == "GET":
            amount = f"{pi['amount'] / 100:.2f} {pi['currency'].upper()}" if "amount" in pi else "a saved card"
            intent = json.dumps({"id": pi["id"], "client_secret": secret}).replace("<", "\\u003c")
            return HTMLResponse(_CHALLENGE.format(amount=escape(amount), intent=intent))
        reply: dict[str, Any] = {"status": pi["status"]}
        if return_url[0]:
            status = "succeeded" if pi["status"] in ("succeeded", "requires_capture") else "failed"
            sep = "&" if "?" in return_url[0] else "?"
            reply["return_url"] = return_url[0] + sep + urlencode({pi["object"]: pi["id"],
                                                                f"{pi['object']}_client_secret": secret,
                                                                "redirect_status": status})
        return JSONResponse(reply, headers=CORS)

    return endpoint
