// Drives the emulator with the official stripe-node SDK; prints one JSON line of results for pytest.
// Usage: STRIPE_NODE_PREFIX=<npm prefix> EMULATOR_URL=http://127.0.0.1:PORT node sdk_check.js
'use strict';
const assert = require('assert');
const http = require('http');
const path = require('path');

const Stripe = require(path.join(process.env.STRIPE_NODE_PREFIX, 'node_modules', 'stripe'));
const base = new URL(process.env.EMULATOR_URL);
const stripe = new Stripe('sk_test_node_123', {
  host: base.hostname, port: Number(base.port), protocol: 'http', maxNetworkRetries: 0,
});

function receiveOne() {
  // A local endpoint that resolves with the first webhook it gets.
  return new Promise((resolveServer) => {
    let resolveHook;
    const hook = new Promise((r) => { resolveHook = r; });
    const server = http.createServer((req, res) => {
      const chunks = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        res.writeHead(200); res.end();
        resolveHook({ body: Buffer.concat(chunks).toString('utf8'), signature: req.headers['stripe-signature'] });
      });
    });
    server.listen(0, '127.0.0.1', () => resolveServer({ server, hook, url: `http://127.0.0.1:${server.address().port}/hook` }));
  });
}

async function main() {
  const checks = {};
  const customer = await stripe.customers.create({ email: 'node@example.com', metadata: { sdk: 'node' } });
  assert.ok(customer.id.startsWith('cus_'));
  assert.strictEqual((await stripe.customers.retrieve(customer.id)).email, 'node@example.com');
  checks.customers = customer.id;

  const product = await stripe.products.create({ name: 'Node T-shirt' });
  const price = await stripe.prices.create({ product: product.id, unit_amount: 2500, currency: 'usd' });
  assert.strictEqual(price.product, product.id);
  assert.strictEqual(price.unit_amount, 2500);
  checks.prices = price.id;

  const receiver = await receiveOne();
  const endpoint = await stripe.webhookEndpoints.create({ url: receiver.url, enabled_events: ['payment_intent.succeeded'] });
  assert.ok(endpoint.secret.startsWith('whsec_'));

  const pi = await stripe.paymentIntents.create({
    amount: price.unit_amount, currency: 'usd', customer: customer.id, payment_method_types: ['card'],
  });
  assert.strictEqual(pi.status, 'requires_payment_method');
  const confirmed = await stripe.paymentIntents.confirm(pi.id, { payment_method: 'pm_card_visa' });
  assert.strictEqual(confirmed.status, 'succeeded');
  assert.ok(confirmed.latest_charge.startsWith('ch_'));
  checks.payment_intent = confirmed.status;

  let declined = null;
  try {
    await stripe.paymentIntents.create({
      amount: 1000, currency: 'usd', payment_method: 'pm_card_chargeDeclinedInsufficientFunds',
      payment_method_types: ['card'], confirm: true,
    });
  } catch (err) {
    declined = err;
  }
  assert.ok(declined, 'the decline card must fail');
  assert.strictEqual(declined.type, 'StripeCardError');
  assert.strictEqual(declined.code, 'card_declined');
  assert.strictEqual(declined.decline_code, 'insufficient_funds');
  checks.decline = declined.decline_code;

  const refund = await stripe.refunds.create({ payment_intent: confirmed.id, amount: 1000 });
  assert.strictEqual(refund.status, 'succeeded');
  assert.strictEqual((await stripe.charges.retrieve(confirmed.latest_charge)).amount_refunded, 1000);
  checks.refund = refund.amount;

  const events = await stripe.events.list({ type: 'payment_intent.succeeded' });
  assert.strictEqual(events.data.length, 1);
  assert.strictEqual(events.data[0].data.object.id, confirmed.id);
  checks.events = events.data.map((e) => e.type);

  const delivered = await Promise.race([
    receiver.hook, new Promise((_, reject) => setTimeout(() => reject(new Error('no webhook within 10 s')), 10000)),
  ]);
  const event = stripe.webhooks.constructEvent(delivered.body, delivered.signature, endpoint.secret);
  assert.strictEqual(event.type, 'payment_intent.succeeded');
  assert.strictEqual(event.data.object.id, confirmed.id);
  assert.throws(() => stripe.webhooks.constructEvent(delivered.body, delivered.signature, 'whsec_wrong'));
  checks.webhook = event.id;
  receiver.server.close();

  console.log(JSON.stringify({ ok: true, checks }));
}

main().catch((err) => {
  console.log(JSON.stringify({ ok: false, error: String(err && err.stack || err) }));
  process.exitCode = 1;
});
