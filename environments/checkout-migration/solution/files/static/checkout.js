// Embedded Checkout: the server creates a Checkout Session for the cart and returns its
// client secret; Stripe's form mounts inside #checkout and sends the customer to the
// return page (/checkout/return?session_id=…) once paid.
(async function () {
  const container = document.getElementById("checkout");
  const errors = document.getElementById("checkout-errors");
  const stripe = Stripe(container.dataset.publishableKey);

  async function fetchClientSecret() {
    const response = await fetch("/api/checkout-session", { method: "POST" });
    const body = await response.json();
    if (!response.ok) {
      throw new Error(body.error || "Could not start the checkout.");
    }
    return body.clientSecret;
  }

  try {
    const checkout = await stripe.initEmbeddedCheckout({ fetchClientSecret });
    checkout.mount("#checkout");
  } catch (err) {
    errors.textContent = err.message;
  }
})();
