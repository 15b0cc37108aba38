// Trailhead's checkout. Three of the shop's scripts move focus, each once and only on the shopper's own events:
// the form redraws itself after the third character of the email (the "welcome back" lookup), the address
// search opens on the fourth character of the street address, and the rewards banner takes the keyboard at the
// first key pressed in the name on the card (the key's character goes to the banner too).
(function () {
  const $ = (id) => document.getElementById(id);
  const CONTACT = ["email", "name", "line1", "city", "postal_code", "country"];
  let emailInputs = 0, redrawn = false, streetInputs = 0, searched = false, bannerShown = false, customer = null;

  function drawContact(values) {
    $("contact-fields").innerHTML = $("contact-template").innerHTML;
    for (const id of CONTACT) if (values[id] !== undefined) $(id).value = values[id];
    $("email").addEventListener("input", onEmail);
    $("line1").addEventListener("input", onStreet);
  }

  function onEmail() {
    emailInputs += 1;
    if (!redrawn && emailInputs === 3) {
      redrawn = true;
      const values = {};
      for (const id of CONTACT) values[id] = $(id).value;
      drawContact(values); // the new inputs are not focused: the rest of what is typed goes nowhere
      $("email-note").textContent = "We'll send your receipt to this address.";
    }
  }

  function onStreet() {
    streetInputs += 1;
    if (!searched && streetInputs === 4) {
      searched = true;
      $("address-popover").hidden = false;
      $("address_search").focus();
    }
  }

  function closeSearch() {
    $("address-popover").hidden = true;
    $("line1").focus();
  }

  $("address_search").addEventListener("keydown", (event) => {
    if (event.key === "Escape") closeSearch();
  });
  $("close-popover").addEventListener("click", closeSearch);
  for (const button of document.querySelectorAll(".suggestion")) {
    button.addEventListener("click", () => {
      $("line1").value = button.dataset.line1;
      $("city").value = button.dataset.city;
      $("postal_code").value = button.dataset.postal;
      closeSearch();
    });
  }

  $("cardholder").addEventListener("keydown", () => {
    if (bannerShown) return;
    bannerShown = true;
    $("banner").hidden = false;
    $("banner_email").focus();
  });
  $("banner-dismiss").addEventListener("click", () => { $("banner").hidden = true; });

  async function post(path, body) {
    const answer = await fetch(path, {method: "POST", headers: {"Content-Type": "application/json"},
                                      body: JSON.stringify(body)});
    return {ok: answer.ok, status: answer.status, data: await answer.json()};
  }

  $("continue").addEventListener("click", async () => {
    const body = {};
    for (const id of CONTACT) body[id] = $(id).value;
    const result = await post("/api/details", body);
    if (!result.ok) {
      $("contact-error").textContent = "Could not continue: " + result.data.error.message;
      return;
    }
    customer = result.data.customer;
    $("contact-error").textContent = "";
    $("contact-done").textContent = "Contact & shipping saved.";
    $("payment").hidden = false;
  });

  $("pay").addEventListener("click", async () => {
    const result = await post("/api/pay", {customer, card_number: $("card_number").value,
                                           cardholder: $("cardholder").value,
                                           promotion_code: $("promotion_code").value});
    if (!result.ok) {
      $("payment-error").textContent = "Payment failed: " + result.data.error.message;
      return;
    }
    $("payment-error").textContent = "";
    $("payment").hidden = true;
    $("confirmation").hidden = false;
    $("confirmation-text").textContent = "Order confirmed: #" + result.data.order + ", paid $" +
      (result.data.amount / 100).toFixed(2) + ".";
  });

  drawContact({});
})();
