"""The hosted invoice page (an invoice's ``hosted_invoice_url``): lines, amounts, and a card form while it is open.

The form posts to ``/i/{id}/pay`` (no script needed): the card becomes a PaymentMethod and pays what remains, as
``POST /v1/invoices/{id}/pay`` would, on-session; the browser is sent back to the page, which then shows the
outcome (``Paid``, or the decline message).
"""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from stripebench_emulator.model.errors import StripeError
from stripebench_emulator.model.registry import page_route
from stripebench_emulator.rules import invoice_lifecycle, methods
from stripebench_emulator.web.pages.common import transaction_result

if TYPE_CHECKING:
    from stripebench_emulator.model.context import RequestContext
    from stripebench_emulator.model.engine import Emulator

_MISSING = "<!doctype html><title>Invoice</title><p>This invoice does not exist.</p>"
_STATUS = {"paid": "Paid", "open": "Due", "void": "Void", "uncollectible": "Uncollectible", "draft": "Draft"}


def _money(amount: int, currency: str) -> str:
    return f"{amount / 100:,.2f} {currency.upper()}"


def _card_form(invoice: dict[str, Any]) -> str:
    due = escape(_money(invoice["amount_remaining"], invoice["currency"]))
    return f"""<form class="pay" method="post" action="/i/{escape(invoice['id'])}/pay" aria-label="Pay invoice">
<label for="card_number">Card number</label><input id="card_number" name="card_number" inputmode="numeric"
 autocomplete="cc-number" placeholder="1234 1234 1234 1234" required>
<label for="card_expiry">Expiration (MM / YY)</label><input id="card_expiry" name="card_expiry" autocomplete="cc-exp"
 placeholder="MM / YY" required>
<label for="card_cvc">CVC</label><input id="card_cvc" name="card_cvc" inputmode="numeric" autocomplete="cc-csc"
 placeholder="CVC" required>
<button type="submit" class="submit">Pay {due}</button></form>"""


def _page(invoice: dict[str, Any], error: str | None) -> str:
    currency = invoice["currency"]
    rows = "".join(f"<li><div><div class=name>{escape(line['description'] or '')}</div></div>"
                   f"<div class=amount>{escape(_money(line['amount'], currency))}</div></li>"
                   for line in invoice["_lines"])
    payable = invoice["status"] in ("open", "uncollectible") and invoice["amount_remaining"] > 0
    message = f'<p class="error" role="alert">{escape(error)}</p>' if error else ""
    return f"""<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>Invoice {escape(invoice.get('number') or invoice['id'])}</title><link rel="stylesheet" href="/static/checkout.css">
</head><body><main class="checkout"><section class="summary" aria-label="Invoice">
<div class="merchant"><span class="badge">TEST MODE</span> Stripe emulator</div>
<p class="total-label">Invoice {escape(invoice.get('number') or '')} · {escape(invoice['status'])}</p>
<p class="total">{escape(_money(invoice['amount_paid'] or invoice['amount_due'], currency))}</p>
<p class="status" id="invoice_status">{_STATUS.get(invoice['status'], invoice['status'])}</p>
<ul class="items">{rows}</ul>
<dl class="totals"><div><dt>Subtotal</dt><dd>{escape(_money(invoice['subtotal'], currency))}</dd></div>
<div><dt>Amount due</dt><dd>{escape(_money(invoice['amount_due'], currency))}</dd></div>
<div class="grand"><dt>Amount paid</dt><dd>{escape(_money(invoice['amount_paid'], currency))}</dd></div>
<div><dt>Amount remaining</dt><dd>{escape(_money(invoice['amount_remaining'], currency))}</dd></div></dl>
</section><section class="form" aria-label="Payment">{message}{_card_form(invoice) if payable else ""}</section>
</main></body></html>"""


@page_route("/i/{invoice_id}")
def hosted_invoice(emulator: Emulator) -> Callable[[Request], Any]:
    """Invoice number, status, lines and amounts; a card form while something remains to pay."""
    async def endpoint(request: Request) -> Response:
        invoice = transaction_result(emulator, request, lambda ctx: ctx.find("invoice", request.path_params["invoice_id"]))
        if not isinstance(invoice, dict) or invoice.get("object") != "invoice" or invoice.get("deleted") \
                or invoice["status"] == "draft":  # Stripe gives a draft no hosted page
            return HTMLResponse(_MISSING, status_code=404)
        return HTMLResponse(_page(invoice, request.query_params.get("error")))

    return endpoint


def _expiry(text: str) -> tuple[int, int]:
    month, _, year = text.replace(" ", "").partition("/")
    if not (month.isdigit() and year.isdigit() and 1 <= int(month) <= 12):
        raise StripeError("Your card's expiration date is incomplete.", status=402, type="card_error",
                          code="invalid_expiry_month")
    return int(month), 2000 + int(year) if len(year) == 2 else int(year)


@page_route("/i/{invoice_id}/pay", methods=["POST"])
def pay_hosted_invoice(emulator: Emulator) -> Callable[[Request], Any]:
    """Pay the invoice with the typed card, then show the page again (with the error, if any)."""
    async def endpoint(request: Request) -> Response:
        invoice_id = request.path_params["invoice_id"]
        form = await request.form()

        def work(ctx: RequestContext) -> Any:
            invoice = ctx.get("invoice", invoice_id, param="invoice")
            month, year = _expiry(str(form.get("card_expiry", "")))
            pm = methods.create_card(ctx, str(form.get("card_number", "")).replace(" ", ""), month, year,
                                             str(form.get("card_cvc", "")) or None)
            outcome = invoice_lifecycle.pay_invoice(ctx, invoice, payment_method=pm["id"], off_session=False)
            return outcome.message if isinstance(outcome, StripeError) else None

        result = transaction_result(emulator, request, work)
        error = result if isinstance(result, str) else (result[1]["error"]["message"] if isinstance(result, tuple)
                                                        else None)
        target = f"/i/{invoice_id}" + (f"?error={quote(error)}" if error else "")
        return RedirectResponse(target, status_code=303)

    return endpoint
