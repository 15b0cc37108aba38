// Checkout with the Card Element: the server creates a PaymentIntent for the cart,
// the browser confirms it with the card the customer typed.
(function () {
  const form = document.getElementById("payment-form");
  const stripe = Stripe(form.dataset.publishableKey);
  const elements = stripe.elements();
  const card = elements.create("card", { hidePostalCode: true });
  card.mount("#card-element");

  const errors = document.getElementById("card-errors");
  const payButton = document.getElementById("pay");
  let promotionCode = "";

  card.on("change", (event) => {
    errors.textContent = event.error ? event.error.message : "";
  });

  const money = (cents) => "$" + (cents / 100).toFixed(2);

  document.getElementById("apply-promo").addEventListener("click", async () => {
    const code = document.getElementById("promotion_code").value.trim();
    const message = document.getElementById("promo-message");
    const response = await fetch("/api/promotion", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ code }),
    });
    const body = await response.json();
    if (!response.ok) {
      promotionCode = "";
      message.textContent = body.error;
      return;
    }
    promotionCode = body.code;
    message.textContent = body.code + " applied.";
    document.getElementById("discount").textContent = "−" + money(body.discount);
    document.getElementById("total").innerHTML = "<strong>" + money(body.total) + "</strong>";
  });

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    payButton.disabled = true;
    errors.textContent = "";
    const value = (id) => document.getElementById(id).value.trim();
    const response = await fetch("/api/payment-intent", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        email: value("email"),
        promotion_code: promotionCode,
        shipping: {
          name: value("name"), line1: value("line1"), city: value("city"),
          postal_code: value("postal_code"), country: value("country"),
        },
      }),
    });
    const body = await response.json();
    if (!response.ok) {
      errors.textContent = body.error;
      payButton.disabled = false;
      return;
    }
    const result = await stripe.confirmCardPayment(body.clientSecret, {
      payment_method: {
        card: card,
        billing_details: { name: value("name"), email: value("email") },
      },
    });
    if (result.error) {
      errors.textContent = result.error.message;
      payButton.disabled = false;
      return;
    }
    window.location = "/order/complete?payment_intent=" + encodeURIComponent(result.paymentIntent.id);
  });
})();
