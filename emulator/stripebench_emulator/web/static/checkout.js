// The emulator's Checkout page (hosted and embedded): renders the session, applies promotion codes, submits the
// payment form to the emulator's page-only endpoints and shows declines and the 3-D Secure challenge.
// All session text is inserted with textContent, never as HTML.
(function () {
  "use strict";
  const root = document.getElementById("checkout");
  const sessionId = root.dataset.session;
  const secret = root.dataset.secret;
  const embedded = root.dataset.embedded === "true";
  const $ = (id) => document.getElementById(id);
  const ZERO_DECIMAL = ["bif", "clp", "djf", "gnf", "jpy", "kmf", "krw", "mga", "pyg", "rwf", "ugx", "vnd", "vuv",
                        "xaf", "xof", "xpf"];
  let state = null;

  function money(amount, currency) {
    const cur = (currency || "usd").toLowerCase();
    const value = ZERO_DECIMAL.includes(cur) ? amount : amount / 100;
    try {
      return new Intl.NumberFormat("en-US", { style: "currency", currency: cur.toUpperCase() }).format(value);
    } catch (e) {
      return value.toFixed(2) + " " + cur.toUpperCase();
    }
  }

  function endpoint(action) {
    return "/_checkout/" + encodeURIComponent(sessionId) + "/" + action + (secret ? "?secret=" + encodeURIComponent(secret) : "");
  }

  async function call(action, body) {
    const response = await fetch(endpoint(action), body === undefined ? {} : {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
    });
    return response.json();
  }

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function render(s) {
    state = s;
    $("merchant").textContent = s.merchant;
    $("total-label").textContent = s.mode === "subscription" ? "Subscribe" : s.mode === "setup" ? "Set up payment" : "Pay";
    const items = $("items");
    items.replaceChildren();
    s.items.forEach((item, index) => {
      const li = el("li");
      const left = el("div");
      left.appendChild(el("div", "name", item.name));
      left.appendChild(el("div", "meta", "Qty " + item.quantity + " · " + money(item.unit_amount, s.currency) +
                                         (item.interval ? " / " + item.interval : " each")));
      if (item.interval && s.trial_days) {
        left.appendChild(el("div", "meta", "Then " + money(item.full_amount, s.currency) + " per " + item.interval));
      }
      if (item.adjustable) {
        const picker = el("input", "qty");
        picker.type = "number";
        picker.min = item.adjustable.minimum;
        picker.max = item.adjustable.maximum;
        picker.value = item.quantity;
        picker.setAttribute("aria-label", "Quantity of " + item.name);
        picker.addEventListener("change", async () => {
          const result = await call("quantity", { item: index, quantity: parseInt(picker.value, 10) });
          if (result.state) render(result.state);
          if (result.error) showError(result);
        });
        left.appendChild(picker);
      }
      li.appendChild(left);
      li.appendChild(el("div", "amount", money(item.amount_subtotal, s.currency)));
      items.appendChild(li);
    });
    const showTotals = s.mode !== "setup";
    $("totals").hidden = !showTotals;
    $("total-amount").textContent = showTotals ? money(s.total, s.currency) : "";
    $("subtotal").textContent = money(s.subtotal, s.currency);
    $("total").textContent = money(s.total, s.currency);
    $("discount-row").hidden = !s.discount;
    $("discount").textContent = "−" + money(s.discount, s.currency);
    $("discount-label").textContent = s.promotion_code ? "Discount (" + s.promotion_code + ")" : "Discount";
    $("shipping-row").hidden = !s.shipping;
    if (s.shipping) {
      $("shipping-label").textContent = "Shipping (" + s.shipping.name + ")";
      $("shipping").textContent = money(s.shipping.amount, s.currency);
    }
    if ($("tax")) $("tax").textContent = money(s.tax, s.currency);
    const offers = $("optional-items");
    if (offers) {
      offers.replaceChildren();
      s.optional_items.forEach((offer) => {
        const li = el("li");
        const left = el("div");
        left.appendChild(el("div", "name", offer.name));
        left.appendChild(el("div", "meta", "Qty " + offer.quantity + " · " + money(offer.unit_amount, s.currency) + " each"));
        li.appendChild(left);
        const add = el("button", "secondary", "Add");
        add.type = "button";
        add.setAttribute("aria-label", "Add " + offer.name);
        add.addEventListener("click", async () => {
          const result = await call("optional", { item: offer.index });
          if (result.state) render(result.state);
          if (result.error) showError(result);
        });
        li.appendChild(add);
        offers.appendChild(li);
      });
      $("optional-block").hidden = s.optional_items.length === 0;
    }
    const email = $("email");
    if (s.email && !email.value) email.value = s.email;
    email.readOnly = !!s.email_locked;
    $("submit").textContent = s.submit_label;
    if (s.cancel_url) {
      $("cancel-block").hidden = false;
      $("cancel-link").href = s.cancel_url;
    }
    if (s.status !== "open") finished(s.status === "complete" ? "Your payment is complete." : "This Checkout Session has expired.");
  }

  function finished(text) {
    $("payment-form").hidden = true;
    $("done").hidden = false;
    $("done-text").textContent = text;
  }

  function showError(result) {
    const err = result.error || {};
    document.querySelectorAll(".invalid").forEach((n) => n.classList.remove("invalid"));
    if (err.field === "promotion_code") {
      $("promotion_code-error").textContent = err.message;
      return;
    }
    $("error").textContent = err.message || "Something went wrong.";
    if (err.field && $(err.field)) $(err.field).classList.add("invalid");
  }

  function complete(result) {
    const redirect = result.redirect;
    if (embedded) {
      window.parent.postMessage({ type: "stripe-emulator:checkout-complete", session: sessionId, redirect: redirect }, "*");
    }
    if (redirect && !embedded) {
      window.location.assign(redirect);
      return;
    }
    finished(state && state.mode === "setup" ? "Your payment details are saved." : "Your payment is complete.");
  }

  async function handle(result) {
    if (result.state) render(result.state);
    if (result.error) {
      showError(result);
    } else if (result.requires_action) {
      $("challenge").hidden = false;
      $("challenge-complete").focus();
      return;
    } else if (result.status === "complete") {
      complete(result);
      return;
    }
    $("submit").disabled = false;
    $("submit").textContent = state ? state.submit_label : "Pay";
  }

  function formData() {
    const data = {};
    for (const input of $("payment-form").querySelectorAll("input, select")) {
      if (input.type === "radio") {
        if (input.checked) data[input.name] = input.value;
      } else if (input.type === "checkbox") {
        data[input.name] = input.checked ? "on" : "";
      } else {
        data[input.name] = input.value;
      }
    }
    return data;
  }

  $("payment-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    $("error").textContent = "";
    $("submit").disabled = true;
    $("submit").textContent = "Processing…";
    try {
      await handle(await call("submit", formData()));
    } catch (e) {
      await handle({ error: { message: "Could not reach the emulator: " + e } });
    }
  });

  async function authenticate(success) {
    $("challenge").hidden = true;
    await handle(await call("authenticate", { success: success }));
  }
  $("challenge-complete").addEventListener("click", () => authenticate(true));
  $("challenge-fail").addEventListener("click", () => authenticate(false));

  if ($("promo-block")) {
    $("apply-promo").addEventListener("click", async () => {
      $("promotion_code-error").textContent = "";
      const result = await call("promotion", { code: $("promotion_code").value });
      if (result.state) render(result.state);
      if (result.error) showError(result);
    });
    $("promotion_code").addEventListener("keydown", (event) => {
      if (event.key === "Enter") { event.preventDefault(); $("apply-promo").click(); }
    });
  }
  document.querySelectorAll("input[name=shipping_rate]").forEach((radio) => {
    radio.addEventListener("change", async () => {
      const result = await call("shipping", { rate: radio.value });
      if (result.state) render(result.state);
      if (result.error) showError(result);
    });
  });
  $("card_number").addEventListener("input", (event) => {
    const digits = event.target.value.replace(/\D/g, "").slice(0, 19);
    event.target.value = digits.replace(/(\d{4})(?=\d)/g, "$1 ");
  });
  $("expiry").addEventListener("input", (event) => {
    const digits = event.target.value.replace(/\D/g, "").slice(0, 4);
    event.target.value = digits.length > 2 ? digits.slice(0, 2) + " / " + digits.slice(2) : digits;
  });

  call("state").then((result) => {
    if (result.error) { showError(result); $("submit").disabled = true; return; }
    render(result.state);
  });
  if (embedded && window.ResizeObserver) {  // keep the parent's iframe as tall as the form
    new ResizeObserver(() => {
      const height = document.documentElement.scrollHeight;
      window.parent.postMessage({ type: "stripe-emulator:checkout-resize", session: sessionId, height: height }, "*");
    }).observe(document.body);
  }
})();
