// An invoice paid in two parts through the official stripe-node SDK; prints one JSON line of results for pytest.
// Usage: STRIPE_NODE_PREFIX=<npm prefix> EMULATOR_URL=http://127.0.0.1:PORT node invoice_check.js
'use strict';
const assert = require('assert');
const path = require('path');

const Stripe = require(path.join(process.env.STRIPE_NODE_PREFIX, 'node_modules', 'stripe'));
const base = new URL(process.env.EMULATOR_URL);
const stripe = new Stripe('sk_test_node_123', {
  host: base.hostname, port: Number(base.port), protocol: 'http', maxNetworkRetries: 0,
});

async function main() {
  const checks = {};
  const customer = await stripe.customers.create({ email: 'node@example.com' });
  const price = await stripe.prices.create({ currency: 'usd', unit_amount: 2500, product_data: { name: 'Seat' } });
  const draft = await stripe.invoices.create({ customer: customer.id });
  await stripe.invoiceItems.create({ customer: customer.id, invoice: draft.id, pricing: { price: price.id }, quantity: 2 });
  const open = await stripe.invoices.finalizeInvoice(draft.id);
  assert.strictEqual(open.status, 'open');
  assert.strictEqual(open.amount_remaining, 5000);
  assert.strictEqual(open.lines.data[0].pricing.price_details.price, price.id);

  const half = await stripe.paymentIntents.create({
    amount: 2000, currency: 'usd', payment_method: 'pm_card_visa', confirm: true,
  });
  const partly = await stripe.invoices.attachPayment(open.id, { payment_intent: half.id });
  checks.after_first = [partly.status, partly.amount_paid, partly.amount_remaining];

  let refused = null;
  try {
    await stripe.invoices.pay(open.id, { paid_out_of_band: true, payment_method: 'pm_card_visa' });
  } catch (err) {
    refused = err;
  }
  assert.ok(refused, 'paid_out_of_band with a payment method must fail');
  checks.refused = [refused.type, refused.param];

  const paid = await stripe.invoices.pay(open.id, { payment_method: 'pm_card_visa' });
  checks.after_second = [paid.status, paid.amount_paid, paid.amount_remaining];
  const payments = await stripe.invoicePayments.list({ invoice: open.id });
  checks.payments = payments.data.map((p) => p.amount_paid).sort((a, b) => a - b);
  console.log(JSON.stringify({ ok: true, checks }));
}

main().catch((err) => {
  console.log(JSON.stringify({ ok: false, error: String(err && err.stack || err) }));
  process.exitCode = 1;
});
