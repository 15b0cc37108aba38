import Stripe from 'stripe';
import { redirect } from 'next/navigation';
import type { Team } from '../db/schema';
import {
  getTeamByStripeCustomerId,
  getUser,
  updateTeamSubscription,
} from '../db/queries';

// STRIPE_API_BASE (in .env) points the client at another Stripe API, e.g. a local one; unset, it is api.stripe.com.
const apiBase = process.env.STRIPE_API_BASE ? new URL(process.env.STRIPE_API_BASE) : null;

export const stripe = new Stripe(process.env.STRIPE_SECRET_KEY!, {
  apiVersion: '2025-04-30.basil',
  ...(apiBase && {
    host: apiBase.hostname,
    port: apiBase.port || (apiBase.protocol === 'https:' ? 443 : 80),
    protocol: apiBase.protocol.replace(':', '') as 'http' | 'https',
  }),
});

// Start a hosted Checkout subscription for the signed-in user's team and send the browser to it.
export async function createCheckoutSession({
  team,
  priceId,
}: {
  team: Team | null;
  priceId: string;
}) {
  const user = await getUser();

  if (!team || !user) {
    redirect(`/sign-up?redirect=checkout&priceId=${priceId}`);
  }

  const session = await stripe.checkout.sessions.create({
    mode: 'subscription',
    line_items: [{ price: priceId, quantity: 1 }],
    success_url: `${process.env.BASE_URL}/api/stripe/checkout?session_id={CHECKOUT_SESSION_ID}`,
    cancel_url: `${process.env.BASE_URL}/pricing`,
    customer: team.stripeCustomerId || undefined,
    client_reference_id: user.id.toString(),
    allow_promotion_codes: true,
    subscription_data: { trial_period_days: 14 },
  });

  redirect(session.url!);
}

// A Customer Portal session for the team's subscription (teams without one are sent to /pricing).
export async function createCustomerPortalSession(team: Team) {
  if (!team.stripeCustomerId || !team.stripeProductId) {
    redirect('/pricing');
  }

  // The portal needs a configuration; make one on first use that lets customers
  // switch between the product's prices, update their card and cancel.
  let configuration: Stripe.BillingPortal.Configuration;
  const configurations = await stripe.billingPortal.configurations.list({
    limit: 1,
  });
  if (configurations.data.length > 0) {
    configuration = configurations.data[0];
  } else {
    const product = await stripe.products.retrieve(team.stripeProductId);
    if (!product.active) {
      throw new Error("Team's product is not active in Stripe");
    }
    const prices = await stripe.prices.list({
      product: product.id,
      active: true,
    });
    if (prices.data.length === 0) {
      throw new Error("No active prices found for the team's product");
    }

    configuration = await stripe.billingPortal.configurations.create({
      business_profile: { headline: 'Manage your subscription' },
      features: {
        subscription_update: {
          enabled: true,
          default_allowed_updates: ['price', 'quantity', 'promotion_code'],
          proration_behavior: 'create_prorations',
          products: [
            { product: product.id, prices: prices.data.map((p) => p.id) },
          ],
        },
        subscription_cancel: { enabled: true, mode: 'at_period_end' },
        payment_method_update: { enabled: true },
      },
    });
  }

  return stripe.billingPortal.sessions.create({
    customer: team.stripeCustomerId,
    return_url: `${process.env.BASE_URL}/dashboard`,
    configuration: configuration.id,
  });
}

// Mirror a subscription's state (from a customer.subscription.* webhook) onto its team.
export async function handleSubscriptionChange(
  subscription: Stripe.Subscription
) {
  const customerId =
    typeof subscription.customer === 'string'
      ? subscription.customer
      : subscription.customer.id;
  const status = subscription.status;

  const team = await getTeamByStripeCustomerId(customerId);
  if (!team) {
    console.error('Team not found for Stripe customer:', customerId);
    return;
  }

  if (status === 'active' || status === 'trialing') {
    const price = subscription.items.data[0]?.price;
    const product =
      typeof price?.product === 'string'
        ? await stripe.products.retrieve(price.product)
        : price?.product;
    await updateTeamSubscription(team.id, {
      stripeSubscriptionId: subscription.id,
      stripeProductId: product?.id ?? null,
      planName: product && !product.deleted ? product.name : null,
      subscriptionStatus: status,
    });
  } else if (status === 'canceled' || status === 'unpaid') {
    await updateTeamSubscription(team.id, {
      stripeSubscriptionId: null,
      stripeProductId: null,
      planName: null,
      subscriptionStatus: status,
    });
  }
}

// Active recurring prices, flattened for the pricing page.
export async function getStripePrices() {
  const prices = await stripe.prices.list({
    expand: ['data.product'],
    active: true,
    type: 'recurring',
  });

  return prices.data.map((price) => ({
    id: price.id,
    productId:
      typeof price.product === 'string' ? price.product : price.product.id,
    unitAmount: price.unit_amount,
    currency: price.currency,
    interval: price.recurring?.interval,
    trialPeriodDays: price.recurring?.trial_period_days,
  }));
}

// Active products, flattened for the pricing page.
export async function getStripeProducts() {
  const products = await stripe.products.list({
    active: true,
    expand: ['data.default_price'],
  });

  return products.data.map((product) => ({
    id: product.id,
    name: product.name,
    description: product.description,
    defaultPriceId:
      typeof product.default_price === 'string'
        ? product.default_price
        : product.default_price?.id,
  }));
}
