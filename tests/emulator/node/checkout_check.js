// Checkout Sessions through the official stripe-node SDK; prints one JSON line of results for pytest.
// Usage: STRIPE_NODE_PREFIX=<npm prefix> EMULATOR_URL=http://127.0.0.1:PORT node checkout_check.js
'use strict';
const assert = require('assert');
const path = require('path');

const Stripe = require(path.join(process.env.STRIPE_NODE_PREFIX, 'node_modules', 'stripe'));
const base = new URL(process.env.EMULATOR_URL);
const stripe = new Stripe('sk_test_node_checkout', {
  host: base.hostname, port: Number(base.port), protocol: 'http', maxNetworkRetries: 0,
});

async function main() {
  const checks = { version: stripe.getApiField('version') };
  const price = await stripe.prices.create({ unit_amount: 1800, currency: 'usd', product_data: { name: 'Node mug' } });
  const embedded = await stripe.checkout.sessions.create({
    mode: 'payment', ui_mode: 'embedded_page', line_items: [{ price: price.id, quantity: 2 }],
    return_url: 'https://shop.test/return?session_id={CHECKOUT_SESSION_ID}', allow_promotion_codes: true,
  });
  assert.ok(embedded.client_secret.startsWith(embedded.id + '_secret_'));
  checks.embedded = [embedded.ui_mode, embedded.amount_total];

  const hosted = await stripe.checkout.sessions.create({
    mode: 'payment', ui_mode: 'hosted', success_url: 'https://shop.test/ok',
    line_items: [{ price: price.id, quantity: 1 }],
  }, { apiVersion: '2025-09-30.clover' });
  checks.hosted = [hosted.ui_mode, hosted.url.startsWith(process.env.EMULATOR_URL + '/c/pay/')];

  try {
    await stripe.checkout.sessions.create({ mode: 'payment', ui_mode: 'embedded', return_url: 'https://shop.test',
      line_items: [{ price: price.id, quantity: 1 }] });
    checks.old_name = 'accepted';
  } catch (err) {
    checks.old_name = [err.type, err.param];
  }

  const items = await stripe.checkout.sessions.listLineItems(embedded.id, { expand: ['data.price.product'] });
  checks.line_items = [items.data[0].quantity, items.data[0].amount_total, items.data[0].price.product.name];
  await stripe.checkout.sessions.expire(hosted.id);
  const open = await stripe.checkout.sessions.list({ status: 'open' });
  checks.open = open.data.map((s) => s.id === embedded.id);
  console.log(JSON.stringify({ ok: true, checks }));
}

main().catch((err) => {
  console.log(JSON.stringify({ ok: false, error: String(err && err.stack || err) }));
  process.exitCode = 1;
});
