"""The hosted invoice page (an invoice's ``hosted_invoice_url``): a read-only receipt of a paid invoice."""

from __future__ import annotations

from html import escape
from typing import Any, Callable

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from stripebench_tui.emulator.pages.common import transaction_result
from stripebench_tui.emulator.registry import page_route


def _money(amount: int, currency: str) -> str:
    return f"{amount / 100:,.2f} {currency.upper()}"


@page_route("/i/{invoice_id}")
def hosted_invoice(emulator: Any) -> Callable[[Request], Any]:
    """Invoice number, status, lines and the amount paid."""
    async def endpoint(request: Request) -> Response:
        invoice = transaction_result(emulator, request, lambda ctx: ctx.find("invoice", request.path_params["invoice_id"]))
        if not isinstance(invoice, dict) or invoice.get("object") != "invoice":
            return HTMLResponse("<!doctype html><title>Invoice</title><p>This invoice does not exist.</p>", status_code=404)
        currency = invoice["currency"]
        rows = "".join(f"<li><div><div class=name>{escape(line['description'] or '')}</div></div>"
                       f"<div class=amount>{escape(_money(line['amount'], currency))}</div></li>"
                       for line in invoice["_lines"])
        return HTMLResponse(f"""<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>Invoice {escape(invoice.get('number') or invoice['id'])}</title><link rel="stylesheet" href="/static/checkout.css">
</head><body><main class="checkout"><section class="summary" aria-label="Invoice">
<div class="merchant"><span class="badge">TEST MODE</span> Stripe emulator</div>
<p class="total-label">Invoice {escape(invoice.get('number') or '')} · {escape(invoice['status'])}</p>
<p class="total">{escape(_money(invoice['amount_paid'] or invoice['amount_due'], currency))}</p>
<ul class="items">{rows}</ul>
<dl class="totals"><div><dt>Subtotal</dt><dd>{escape(_money(invoice['subtotal'], currency))}</dd></div>
<div class="grand"><dt>Amount paid</dt><dd>{escape(_money(invoice['amount_paid'], currency))}</dd></div></dl>
</section></main></body></html>""")

    return endpoint
