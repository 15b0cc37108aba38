// `pnpm db:setup`: in this environment .env is written before you start (the database, the Stripe keys, the auth
// secret). This checks that it holds what the app reads and that PostgreSQL and Stripe answer; it changes nothing.
import dotenv from 'dotenv';

dotenv.config();

const NEEDED = ['POSTGRES_URL', 'STRIPE_SECRET_KEY', 'AUTH_SECRET', 'BASE_URL'];

async function main() {
  const missing = NEEDED.filter((name) => !process.env[name]);
  if (missing.length > 0) {
    throw new Error(`.env lacks ${missing.join(', ')}`);
  }
  const { client } = await import('./drizzle');
  const { stripe } = await import('../payments/stripe');
  try {
    const [{ version }] = await client`select version()`;
    console.log(`PostgreSQL answers: ${String(version).split(' on ')[0]}`);
    const account = await stripe.balance.retrieve();
    console.log(`Stripe answers (livemode: ${account.livemode}).`);
  } finally {
    await client.end();
  }
  console.log('.env is ready: run `pnpm db:migrate`, `pnpm db:seed`, then `pnpm dev`.');
}

main().catch((error) => {
  console.error(`Setup check failed: ${error instanceof Error ? error.message : error}`);
  process.exit(1);
});
