// `pnpm db:seed`: the test user and team in Postgres, and the Base and Plus plans in Stripe.
// Safe to run again: an existing user and existing products are kept.
import { eq } from 'drizzle-orm';
import { teamMembers, teams, users } from './schema';
import { hashPassword } from '../auth/session';

const PLANS = [
  { name: 'Base', unitAmount: 800 },
  { name: 'Plus', unitAmount: 1200 },
];

async function main() {
  // Imported here so that a missing setting (POSTGRES_URL …) ends in the one-line message below.
  const { client, db } = await import('./drizzle');
  const { stripe } = await import('../payments/stripe');

  try {
    const email = 'test@test.com';
    const [found] = await db.select().from(users).where(eq(users.email, email)).limit(1);
    if (found) {
      console.log(`User ${email} already exists.`);
    } else {
      const [user] = await db
        .insert(users)
        .values({ email, passwordHash: await hashPassword('admin123'), role: 'owner' })
        .returning();
      const [team] = await db.insert(teams).values({ name: 'Test Team' }).returning();
      await db.insert(teamMembers).values({ teamId: team.id, userId: user.id, role: 'owner' });
      console.log(`Created user ${email} (password admin123), owner of "Test Team".`);
    }

    const existing = await stripe.products.list({ active: true, limit: 100 });
    for (const plan of PLANS) {
      if (existing.data.some((product) => product.name === plan.name)) {
        console.log(`Stripe product "${plan.name}" already exists.`);
        continue;
      }
      const product = await stripe.products.create({
        name: plan.name,
        description: `${plan.name} subscription plan`,
      });
      await stripe.prices.create({
        product: product.id,
        unit_amount: plan.unitAmount,
        currency: 'usd',
        recurring: { interval: 'month', trial_period_days: 7 },
      });
      console.log(`Created Stripe product "${plan.name}" (${product.id}).`);
    }
  } finally {
    await client.end();
  }
}

main()
  .then(() => console.log('Seed finished.'))
  .catch((error) => {
    console.error(`Seed failed: ${error instanceof Error ? error.message : error}`);
    process.exit(1);
  });
