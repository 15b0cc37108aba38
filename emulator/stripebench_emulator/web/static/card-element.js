// The card element's frame: holds the typed card details and makes the API calls that need them, so the card
// number never reaches the merchant's page (as with Stripe's real card element). The parent stand-in sends
// {type: "stripe-emulator:op", id, op, key, args} and gets {type: "stripe-emulator:result", id, result} back.
(function () {
  "use strict";
  const number = document.getElementById("cardnumber");
  const expiry = document.getElementById("exp-date");
  const cvc = document.getElementById("cvc");
  const params = new URLSearchParams(location.search);
  const elementId = params.get("element");

  function brand(digits) {
    if (/^4/.test(digits)) return "visa";
    if (/^3[47]/.test(digits)) return "amex";
    if (/^(5[1-5]|2[2-7])/.test(digits)) return "mastercard";
    if (/^6(011|5)/.test(digits)) return "discover";
    return "unknown";
  }

  function details() {
    const digits = number.value.replace(/\D/g, "");
    const exp = expiry.value.replace(/\D/g, "");
    return { digits, month: exp.slice(0, 2), year: exp.slice(2), cvc: cvc.value.trim() };
  }

  function problem() {
    const d = details();
    if (d.digits.length < 12) return { type: "validation_error", code: "incomplete_number", message: "Your card number is incomplete." };
    if (d.month.length !== 2 || d.year.length < 2) return { type: "validation_error", code: "incomplete_expiry", message: "Your card's expiration date is incomplete." };
    if (d.cvc.length < 3) return { type: "validation_error", code: "incomplete_cvc", message: "Your card's security code is incomplete." };
    return null;
  }

  function changed() {
    const d = details();
    const err = problem();
    window.parent.postMessage({ type: "stripe-emulator:change", element: elementId, event: {
      elementType: "card", empty: !d.digits && !d.month && !d.cvc, complete: !err, brand: brand(d.digits),
      error: err && d.digits.length >= 12 && d.month.length === 2 && d.cvc.length >= 3 ? err : undefined,
    } }, "*");
  }

  number.addEventListener("input", () => {
    number.value = number.value.replace(/\D/g, "").slice(0, 19).replace(/(\d{4})(?=\d)/g, "$1 ");
    changed();
  });
  expiry.addEventListener("input", () => {
    const d = expiry.value.replace(/\D/g, "").slice(0, 4);
    expiry.value = d.length > 2 ? d.slice(0, 2) + " / " + d.slice(2) : d;
    changed();
  });
  cvc.addEventListener("input", changed);

  function form(data, prefix, out) {
    out = out || new URLSearchParams();
    for (const [key, value] of Object.entries(data)) {
      const name = prefix ? prefix + "[" + key + "]" : key;
      if (value === undefined || value === null) continue;
      if (typeof value === "object") form(value, name, out);
      else out.append(name, String(value));
    }
    return out;
  }

  function cardData(billing) {
    const d = details();
    const data = { type: "card", card: { number: d.digits, exp_month: d.month, exp_year: d.year, cvc: d.cvc } };
    if (billing) data.billing_details = billing;
    return data;
  }

  async function api(key, method, path, data) {
    if (method === "GET" && data) {
      path += "?" + form(data).toString();
      data = undefined;
    }
    const response = await fetch(path, { method, body: data ? form(data) : undefined, headers: {
      Authorization: "Bearer " + key, "Content-Type": "application/x-www-form-urlencoded" } });
    return response.json();
  }

  const ops = {
    async createPaymentMethod(key, args) {
      const err = problem();
      if (err) return { error: err };
      const body = await api(key, "POST", "/v1/payment_methods", cardData(args.billing_details));
      return body.error ? { error: body.error } : { paymentMethod: body };
    },
    async confirmCardPayment(key, args) {
      const err = problem();
      if (err) return { error: err };
      const id = args.clientSecret.split("_secret_")[0];
      const data = { client_secret: args.clientSecret, payment_method_data: cardData(args.billing_details) };
      if (args.setup_future_usage) data.setup_future_usage = args.setup_future_usage;
      if (args.return_url) data.return_url = args.return_url;
      return api(key, "POST", "/v1/payment_intents/" + encodeURIComponent(id) + "/confirm", data);
    },
    async confirmCardSetup(key, args) {
      const err = problem();
      if (err) return { error: err };
      const id = args.clientSecret.split("_secret_")[0];
      const data = { client_secret: args.clientSecret, payment_method_data: cardData(args.billing_details) };
      return api(key, "POST", "/v1/setup_intents/" + encodeURIComponent(id) + "/confirm", data);
    },
    async api(key, args) {  // the hidden controller frame: same-origin calls for the stand-in
      return api(key, args.method, args.path, args.data);
    },
    async validate() {
      const err = problem();
      return err ? { error: err } : {};
    },
    async clear() { number.value = ""; expiry.value = ""; cvc.value = ""; changed(); return {}; },
    async focus() { number.focus(); return {}; },
  };

  window.addEventListener("message", async (event) => {
    const msg = event.data || {};
    if (msg.type !== "stripe-emulator:op" || !ops[msg.op]) return;
    let result;
    try {
      result = await ops[msg.op](msg.key, msg.args || {});
    } catch (e) {
      result = { error: { type: "api_connection_error", message: String(e) } };
    }
    event.source.postMessage({ type: "stripe-emulator:result", id: msg.id, result }, "*");
  });
  window.parent.postMessage({ type: "stripe-emulator:ready", element: elementId }, "*");
})();
