import { redirect } from 'next/navigation';
import { stripe } from '@/lib/payments/stripe';
import { EmbeddedCheckoutForm } from './embedded-checkout-form';

// The Checkout Session made by the pricing page's action, mounted in this page (ui_mode: 'embedded').
export default async function CheckoutPage({
  searchParams,
}: {
  searchParams: Promise<{ session_id?: string }>;
}) {
  const { session_id: sessionId } = await searchParams;
  if (!sessionId) {
    redirect('/pricing');
  }
  const session = await stripe.checkout.sessions.retrieve(sessionId);
  if (session.status !== 'open' || !session.client_secret) {
    redirect('/pricing');
  }

  return (
    <main className="max-w-3xl mx-auto px-4 sm:px-6 lg:px-8 py-12">
      <EmbeddedCheckoutForm
        clientSecret={session.client_secret}
        publishableKey={process.env.STRIPE_PUBLISHABLE_KEY!}
      />
    </main>
  );
}
