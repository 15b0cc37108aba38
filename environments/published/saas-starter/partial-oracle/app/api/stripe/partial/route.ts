import { eq } from 'drizzle-orm';
import { NextRequest, NextResponse } from 'next/server';
import Stripe from 'stripe';
import { db } from '@/lib/db/drizzle';
import { teamMembers, teams } from '@/lib/db/schema';
import { createPartialPaymentSession, stripe } from '@/lib/payments/stripe';

// Where each partial Checkout payment returns: its PaymentIntent is attached to the subscription's first
// invoice; after the first, the customer goes on to the second; after the second, the team gets the plan.
export async function GET(request: NextRequest) {
  const sessionId = request.nextUrl.searchParams.get('session_id');
  if (!sessionId) {
    return NextResponse.redirect(new URL('/pricing', request.url));
  }

  try {
    const session = await stripe.checkout.sessions.retrieve(sessionId);
    const invoiceId = session.metadata?.invoice;
    if (!invoiceId || session.payment_status !== 'paid' || typeof session.payment_intent !== 'string') {
      throw new Error(`Checkout Session ${sessionId} is not a paid partial payment.`);
    }
    // stripe 18.1 has no invoices.attachPayment yet: the endpoint through rawRequest.
    await stripe.rawRequest('POST', `/v1/invoices/${invoiceId}/attach_payment`, {
      payment_intent: session.payment_intent,
    });
    const invoice = await stripe.invoices.retrieve(invoiceId);
    const userId = Number(session.client_reference_id);

    if (session.metadata?.part === '1') {
      const second = await createPartialPaymentSession(invoice, 2, userId);
      return NextResponse.redirect(second.url!);
    }
    if (invoice.status !== 'paid') {
      throw new Error(`Invoice ${invoiceId} is ${invoice.status} after both payments.`);
    }

    const parent = invoice.parent?.subscription_details?.subscription;
    const subscriptionId = typeof parent === 'string' ? parent : parent?.id;
    if (!subscriptionId) {
      throw new Error(`Invoice ${invoiceId} belongs to no subscription.`);
    }
    const subscription = await stripe.subscriptions.retrieve(subscriptionId, {
      expand: ['items.data.price.product'],
    });
    const product = subscription.items.data[0]?.price.product as Stripe.Product;
    const [membership] = await db
      .select({ teamId: teamMembers.teamId })
      .from(teamMembers)
      .where(eq(teamMembers.userId, userId))
      .limit(1);
    if (!membership) {
      throw new Error(`User ${userId} is not in a team.`);
    }
    await db
      .update(teams)
      .set({
        stripeCustomerId: typeof subscription.customer === 'string' ? subscription.customer : subscription.customer.id,
        stripeSubscriptionId: subscription.id,
        stripeProductId: product.id,
        planName: product.name,
        subscriptionStatus: subscription.status,
        updatedAt: new Date(),
      })
      .where(eq(teams.id, membership.teamId));
    return NextResponse.redirect(new URL('/dashboard', request.url));
  } catch (error) {
    console.error('Partial payment failed:', error);
    return NextResponse.redirect(new URL('/pricing?error=partial-payment', request.url));
  }
}
