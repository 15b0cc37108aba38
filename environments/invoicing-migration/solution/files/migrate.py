"""Move legacy_bookings.csv into Stripe (Products, Prices, Customers, Invoices) and the bookings table.

Run: python3 migrate.py   (reads STRIPE_SECRET_KEY, STRIPE_API_BASE and STRIPE_API_VERSION)

Re-runnable: every object is looked up before it is made (prices by lookup key, customers by email, invoices by
their customer and metadata[legacy_booking_id]), and an invoice found half way (a draft, an open one) is moved on
from where it stopped. Nothing is created twice and no card is charged twice.
"""

import csv
import os
from decimal import Decimal

import stripe

import db

if os.environ.get("STRIPE_API_BASE"):
    stripe.api_base = os.environ["STRIPE_API_BASE"]
stripe.api_key = os.environ.get("STRIPE_SECRET_KEY", "")
if os.environ.get("STRIPE_API_VERSION"):
    stripe.api_version = os.environ["STRIPE_API_VERSION"]

CSV = os.path.join(os.path.dirname(os.path.abspath(__file__)), "legacy_bookings.csv")
STATUSES = ("paid", "paid_offline", "open", "void")


def legacy_rows():
    with open(CSV, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def cents(amount):
    return int((Decimal(amount) * 100).to_integral_value())


def ensure_price(item):
    """The sku's active Price (lookup_key = sku), with its Product; made once."""
    found = stripe.Price.list(lookup_keys=[item["sku"]], active=True, limit=1).data
    if found:
        return found[0]
    product = next((p for p in stripe.Product.list(limit=100).auto_paging_iter()
                    if p.metadata.to_dict().get("sku") == item["sku"] and p.active), None)
    if product is None:
        product = stripe.Product.create(name=item["name"], metadata={"sku": item["sku"]})
    price = stripe.Price.create(product=product.id, unit_amount=item["unit_amount"], currency=item["currency"],
                                lookup_key=item["sku"], metadata={"sku": item["sku"]})
    stripe.Product.modify(product.id, default_price=price.id)
    return price


def ensure_customer(email, customers):
    if email not in customers:
        found = stripe.Customer.list(email=email, limit=1).data
        customers[email] = found[0] if found else stripe.Customer.create(email=email)
    return customers[email]


def find_invoice(customer, booking_id):
    for invoice in stripe.Invoice.list(customer=customer.id, limit=100).auto_paging_iter():
        if invoice.metadata.to_dict().get("legacy_booking_id") == booking_id:
            return invoice
    return None


def card_for(customer):
    """An attached test card (pm_card_visa) to pay 'paid' bookings with; attached once per customer."""
    cards = stripe.PaymentMethod.list(customer=customer.id, type="card", limit=1).data
    return cards[0].id if cards else stripe.PaymentMethod.attach("pm_card_visa", customer=customer.id).id


def migrate_one(row, prices, customers):
    booking_id, status = row["booking_id"], row["status"]
    if status not in STATUSES:
        raise SystemExit(f"{booking_id}: unknown status {status!r}")
    price = prices[row["item"]]
    customer = ensure_customer(row["customer_email"].strip().lower(), customers)
    invoice = find_invoice(customer, booking_id)
    if invoice is None:
        params = {"collection_method": "send_invoice", "days_until_due": 30} if status == "open" else {}
        invoice = stripe.Invoice.create(customer=customer.id, currency=price.currency, auto_advance=False,
                                        pending_invoice_items_behavior="exclude",
                                        metadata={"legacy_booking_id": booking_id}, **params)
    if invoice.status == "draft":
        if not invoice.lines.data:
            stripe.InvoiceItem.create(customer=customer.id, invoice=invoice.id, pricing={"price": price.id},
                                      quantity=int(row["quantity"]), metadata={"legacy_booking_id": booking_id})
        invoice = stripe.Invoice.finalize_invoice(invoice.id)
    if invoice.status == "open":
        if status == "paid":
            invoice = stripe.Invoice.pay(invoice.id, payment_method=card_for(customer))
        elif status == "paid_offline":
            invoice = stripe.Invoice.pay(invoice.id, paid_out_of_band=True)
        elif status == "void":
            invoice = stripe.Invoice.void_invoice(invoice.id)
    expected = cents(row["amount"])
    if invoice.total != expected:
        print(f"warning: {booking_id}: invoice {invoice.id} totals {invoice.total}, the CSV says {expected}")
    return {"id": booking_id, "source": "legacy", "sku": row["item"], "email": customer.email,
            "quantity": int(row["quantity"]), "amount": expected, "currency": row["currency"], "status": status,
            "customer": customer.id, "invoice": invoice.id, "created_at": row["booked_on"]}, invoice.status


def main():
    conn = db.connect()
    catalogue = [dict(r) for r in conn.execute("SELECT * FROM catalogue ORDER BY sku")]
    prices = {item["sku"]: ensure_price(item) for item in catalogue}
    customers = {}
    for row in legacy_rows():
        booking, state = migrate_one(row, prices, customers)
        columns = ", ".join(booking)
        conn.execute(f"INSERT INTO bookings ({columns}) VALUES ({', '.join('?' for _ in booking)}) "
                     f"ON CONFLICT(id) DO UPDATE SET customer = excluded.customer, invoice = excluded.invoice, "
                     f"status = excluded.status, amount = excluded.amount", list(booking.values()))
        conn.commit()
        print(f"{booking['id']}: {booking['status']} -> {booking['invoice']} ({state})")
    conn.close()


if __name__ == "__main__":
    main()
