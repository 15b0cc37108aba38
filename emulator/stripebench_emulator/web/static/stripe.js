// Stand-in for https://js.stripe.com/v3 served by the Stripe emulator. Supports: Stripe(pk);
// initEmbeddedCheckout / createEmbeddedCheckoutPage; redirectToCheckout; elements().create("card");
// createPaymentMethod; confirmCardPayment; confirmCardSetup; handleNextAction / handleCardAction;
// retrievePaymentIntent / retrieveSetupIntent; and the Payment Element (card only) with confirmPayment / confirmSetup. API calls run inside frames on the emulator's origin (the card element, or a hidden
// controller frame), like the real stripe.js, so the merchant page needs no CORS and never sees card numbers.
(function () {
  "use strict";
  const ORIGIN = __EMULATOR_ORIGIN__;
  let sequence = 0;
  const pending = {};
  const listeners = {};

  window.addEventListener("message", (event) => {
    if (event.origin !== ORIGIN) return;
    const msg = event.data || {};
    if (msg.type === "stripe-emulator:result" && pending[msg.id]) {
      pending[msg.id](msg.result);
      delete pending[msg.id];
    }
    (listeners[msg.type] || []).slice().forEach((fn) => fn(msg));
  });

  function on(type, fn) {
    (listeners[type] = listeners[type] || []).push(fn);
    return () => { listeners[type] = listeners[type].filter((f) => f !== fn); };
  }

  function integrationError(message) {
    const err = new Error(message);
    err.name = "IntegrationError";
    return err;
  }

  function frameReady(iframe, elementId) {
    return new Promise((resolve) => {
      const off = on("stripe-emulator:ready", (msg) => {
        if (msg.element === elementId) { off(); resolve(iframe); }
      });
    });
  }

  function ask(iframe, key, op, args) {
    const id = "op" + (++sequence);
    return new Promise((resolve) => {
      pending[id] = resolve;
      iframe.contentWindow.postMessage({ type: "stripe-emulator:op", id, op, key, args }, ORIGIN);
    });
  }

  function resolveTarget(target) {
    const node = typeof target === "string" ? document.querySelector(target) : target;
    if (!node) throw integrationError("The selector you specified (" + target + ") applies to no DOM elements.");
    return node;
  }

  function intentId(secret) {
    if (typeof secret !== "string" || secret.indexOf("_secret_") < 0) {
      throw integrationError("Invalid value for clientSecret: it should be a client secret of the form ${id}_secret_${secret}.");
    }
    return secret.split("_secret_")[0];
  }

  // -- 3-D Secure challenge: a modal with the emulator's challenge page, resolved when it reports back ----------
  function challenge(url, intent) {
    return new Promise((resolve) => {
      const overlay = document.createElement("div");
      overlay.setAttribute("data-stripe-emulator", "3ds");
      overlay.style.cssText = "position:fixed;inset:0;background:rgba(26,31,54,.45);display:flex;" +
        "align-items:center;justify-content:center;z-index:2147483647";
      const frame = document.createElement("iframe");
      frame.name = "stripe-challenge-frame";
      frame.title = "3D Secure authentication";
      frame.src = url;
      frame.style.cssText = "width:460px;max-width:94vw;height:340px;border:0;border-radius:10px;background:#fff";
      overlay.appendChild(frame);
      document.body.appendChild(overlay);
      const off = on("stripe-emulator:3ds-complete", (msg) => {
        if (msg.payment_intent !== intent) return;
        off();
        overlay.remove();
        resolve();
      });
    });
  }

  function StripeStandIn(key, options) {
    if (!(this instanceof StripeStandIn)) return new StripeStandIn(key, options);
    if (typeof key !== "string" || !/^pk_(test|live)_/.test(key)) {
      throw integrationError("Invalid API Key provided: " + key + ". Use your publishable key (pk_test_…).");
    }
    this._key = key;
    this._controller = null;
  }

  StripeStandIn.prototype._api = function (method, path, data) {
    if (!this._controller) {
      const frame = document.createElement("iframe");
      frame.name = "stripe-controller";
      frame.title = "Stripe controller";
      frame.setAttribute("aria-hidden", "true");
      frame.style.cssText = "display:none";
      const ready = frameReady(frame, "controller");
      frame.src = ORIGIN + "/elements/card?element=controller";
      document.body.appendChild(frame);
      this._controller = ready;
    }
    return this._controller.then((frame) => ask(frame, this._key, "api", { method, path, data }));
  };

  // Turn a confirm reply (an intent or {error}) into {paymentIntent} / {error}, running 3-D Secure when asked.
  StripeStandIn.prototype._settle = async function (reply, kind, secret) {
    const field = kind === "setup_intent" ? "setupIntent" : "paymentIntent";
    if (reply.error) {
      const out = { error: reply.error };
      if (reply.error[kind]) out.error[kind] = reply.error[kind];
      return out;
    }
    if (reply.status === "requires_action" && reply.next_action) {
      const action = reply.next_action;
      const url = (action.use_stripe_sdk && action.use_stripe_sdk.stripe_js) ||
                  (action.redirect_to_url && action.redirect_to_url.url);
      await challenge(url, reply.id);
      const path = (kind === "setup_intent" ? "/v1/setup_intents/" : "/v1/payment_intents/") + encodeURIComponent(reply.id);
      reply = await this._api("GET", path, { client_secret: secret });
      if (reply.error) return { error: reply.error };
    }
    if (reply.last_payment_error || reply.last_setup_error) {
      const err = Object.assign({}, reply.last_payment_error || reply.last_setup_error);
      err[kind] = reply;
      return { error: err };
    }
    return { [field]: reply };
  };

  // -- Embedded Checkout ----------------------------------------------------------------------------------------
  StripeStandIn.prototype.initEmbeddedCheckout = async function (options) {
    options = options || {};
    if (!options.fetchClientSecret && !options.clientSecret) {
      throw integrationError("initEmbeddedCheckout needs fetchClientSecret (or clientSecret).");
    }
    const secret = options.clientSecret || await options.fetchClientSecret();
    const sessionId = intentId(secret);
    let iframe = null;
    let offComplete = null;
    let offResize = null;
    return {
      mount(target) {
        if (iframe) throw integrationError("This embedded Checkout is already mounted.");
        const node = resolveTarget(target);
        iframe = document.createElement("iframe");
        iframe.name = "embedded-checkout";
        iframe.title = "Embedded Checkout";
        iframe.src = ORIGIN + "/c/embedded/" + encodeURIComponent(sessionId) + "?secret=" + encodeURIComponent(secret);
        iframe.style.cssText = "width:100%;min-height:760px;border:0;display:block";
        iframe.setAttribute("allow", "payment *");
        node.appendChild(iframe);
        offResize = on("stripe-emulator:checkout-resize", (msg) => {
          if (msg.session === sessionId && iframe) {
            iframe.style.minHeight = "0";
            iframe.style.height = Math.max(msg.height, 400) + "px";
          }
        });
        offComplete = on("stripe-emulator:checkout-complete", (msg) => {
          if (msg.session !== sessionId) return;
          if (typeof options.onComplete === "function") options.onComplete();
          if (msg.redirect) window.location.assign(msg.redirect);
        });
      },
      unmount() {
        if (iframe) iframe.remove();
        iframe = null;
        if (offComplete) offComplete();
        if (offResize) offResize();
      },
      destroy() { this.unmount(); },
    };
  };
  StripeStandIn.prototype.createEmbeddedCheckoutPage = StripeStandIn.prototype.initEmbeddedCheckout;

  StripeStandIn.prototype.redirectToCheckout = function (options) {
    if (!options || !options.sessionId) {
      return Promise.resolve({ error: { type: "validation_error", message: "redirectToCheckout needs a sessionId." } });
    }
    window.location.assign(ORIGIN + "/c/pay/" + encodeURIComponent(options.sessionId));
    return new Promise(() => {});
  };

  // -- Elements ---------------------------------------------------------------------------------------------------
  StripeStandIn.prototype.elements = function (options) {
    const stripe = this;
    const created = {};
    options = options || {};
    return {
      _clientSecret: options.clientSecret || null,
      create(type, opts) {
        // The Payment Element is served as a card form: the emulator knows card test numbers only.
        if (type !== "card" && type !== "payment") {
          throw integrationError("The emulator's stripe.js supports the 'card' and 'payment' elements, not '" + type + "'.");
        }
        if (created[type]) throw integrationError("Can only create one Element of type " + type + ".");
        const element = new CardElement(stripe, opts || {}, type);
        created[type] = element;
        return element;
      },
      getElement(type) { return created[type] || null; },
      submit() {
        const element = created.payment || created.card;
        if (!element) return Promise.resolve({ error: { type: "validation_error", message: "Create and mount a payment Element first." } });
        return element._ask("validate", {});
      },
      update(next) { if (next && next.clientSecret) this._clientSecret = next.clientSecret; return Promise.resolve(); },
      fetchUpdates() { return Promise.resolve({}); },
    };
  };

  function CardElement(stripe, options, type) {
    this._stripe = stripe;
    this._type = type || "card";
    this._id = this._type + (++sequence);
    this._handlers = {};
    this._frame = null;
    this._ready = null;
    on("stripe-emulator:change", (msg) => {
      if (msg.element !== this._id) return;
      const event = Object.assign({}, msg.event, { elementType: this._type });
      if (this._type === "payment") event.value = { type: "card" };
      (this._handlers.change || []).forEach((fn) => fn(event));
    });
  }
  CardElement.prototype.mount = function (target) {
    const node = resolveTarget(target);
    const frame = document.createElement("iframe");
    frame.name = "stripe-card-element";
    frame.title = "Secure card payment input frame";
    frame.style.cssText = "width:100%;height:150px;border:0;display:block";
    this._ready = frameReady(frame, this._id);
    frame.src = ORIGIN + "/elements/card?element=" + encodeURIComponent(this._id);
    node.appendChild(frame);
    this._frame = frame;
    this._ready.then(() => (this._handlers.ready || []).forEach((fn) => fn({ elementType: "card" })));
  };
  CardElement.prototype.on = function (event, handler) {
    (this._handlers[event] = this._handlers[event] || []).push(handler);
    return this;
  };
  CardElement.prototype.off = function (event, handler) {
    this._handlers[event] = (this._handlers[event] || []).filter((h) => h !== handler);
    return this;
  };
  CardElement.prototype._ask = function (op, args) {
    if (!this._frame) return Promise.reject(integrationError("The card Element is not mounted."));
    return this._ready.then((frame) => ask(frame, this._stripe._key, op, args));
  };
  CardElement.prototype.clear = function () { this._ask("clear", {}); };
  CardElement.prototype.focus = function () { this._ask("focus", {}); };
  CardElement.prototype.update = function () {};
  CardElement.prototype.unmount = function () { if (this._frame) this._frame.remove(); this._frame = null; };
  CardElement.prototype.destroy = CardElement.prototype.unmount;

  // -- Payment methods and intents ------------------------------------------------------------------------------
  StripeStandIn.prototype.createPaymentMethod = function (typeOrData, element, data) {
    let opts = typeOrData;
    if (typeof typeOrData === "string") opts = Object.assign({ type: typeOrData, card: element }, data || {});
    if (opts && opts.elements && !opts.card) {
      opts = Object.assign({}, opts, { card: opts.elements.getElement("payment") || opts.elements.getElement("card"),
                                       billing_details: (opts.params || {}).billing_details || opts.billing_details });
    }
    if (!opts || !(opts.card instanceof CardElement)) {
      return Promise.resolve({ error: { type: "validation_error", message: "createPaymentMethod needs card: a mounted card Element." } });
    }
    return opts.card._ask("createPaymentMethod", { billing_details: opts.billing_details });
  };

  StripeStandIn.prototype.confirmCardPayment = async function (clientSecret, data, options) {
    const id = intentId(clientSecret);
    data = data || {};
    const pm = data.payment_method;
    let reply;
    if (pm && typeof pm === "object" && pm.card instanceof CardElement) {
      reply = await pm.card._ask("confirmCardPayment", { clientSecret, billing_details: pm.billing_details,
        setup_future_usage: data.setup_future_usage, return_url: data.return_url });
    } else {
      const body = { client_secret: clientSecret };
      if (typeof pm === "string") body.payment_method = pm;
      if (data.setup_future_usage) body.setup_future_usage = data.setup_future_usage;
      if (data.return_url) body.return_url = data.return_url;
      reply = await this._api("POST", "/v1/payment_intents/" + encodeURIComponent(id) + "/confirm", body);
    }
    if (options && options.handleActions === false && !reply.error) return { paymentIntent: reply };
    return this._settle(reply, "payment_intent", clientSecret);
  };

  StripeStandIn.prototype.confirmCardSetup = async function (clientSecret, data) {
    const id = intentId(clientSecret);
    data = data || {};
    const pm = data.payment_method;
    let reply;
    if (pm && typeof pm === "object" && pm.card instanceof CardElement) {
      reply = await pm.card._ask("confirmCardSetup", { clientSecret, billing_details: pm.billing_details });
    } else {
      const body = { client_secret: clientSecret };
      if (typeof pm === "string") body.payment_method = pm;
      reply = await this._api("POST", "/v1/setup_intents/" + encodeURIComponent(id) + "/confirm", body);
    }
    return this._settle(reply, "setup_intent", clientSecret);
  };

  // Payment Element confirmations: like confirmCardPayment / confirmCardSetup, then the redirect Stripe makes.
  StripeStandIn.prototype._confirmWithElements = async function (kind, options) {
    options = options || {};
    const elements = options.elements;
    const secret = options.clientSecret || (elements && elements._clientSecret);
    const params = options.confirmParams || {};
    const redirect = options.redirect || "always";
    if (!elements) throw integrationError("Invalid value for " + (kind === "setup_intent" ? "confirmSetup" : "confirmPayment") + ": elements should be an Elements group.");
    if (!secret) throw integrationError("Pass clientSecret (or create Elements with one) to confirm.");
    if (redirect !== "if_required" && !params.return_url) {
      throw integrationError("Missing value for confirmParams.return_url: return_url is required when redirect is 'always'.");
    }
    const element = elements.getElement("payment") || elements.getElement("card");
    if (!element) throw integrationError("Create and mount a payment Element before confirming.");
    const billing = (params.payment_method_data || {}).billing_details;
    const op = kind === "setup_intent" ? "confirmCardSetup" : "confirmCardPayment";
    const reply = await element._ask(op, { clientSecret: secret, billing_details: billing,
      setup_future_usage: params.setup_future_usage });
    const result = await this._settle(reply, kind, secret);
    const intent = result.paymentIntent || result.setupIntent;
    if (intent && redirect !== "if_required") {
      const query = new URLSearchParams({ [kind]: intent.id, [kind + "_client_secret"]: secret,
                                          redirect_status: "succeeded" });
      window.location.assign(params.return_url + (params.return_url.indexOf("?") < 0 ? "?" : "&") + query.toString());
      return new Promise(() => {});
    }
    return result;
  };
  StripeStandIn.prototype.confirmPayment = function (options) {
    return this._confirmWithElements("payment_intent", options);
  };
  StripeStandIn.prototype.confirmSetup = function (options) {
    return this._confirmWithElements("setup_intent", options);
  };

  StripeStandIn.prototype.retrieveSetupIntent = async function (clientSecret) {
    const reply = await this._api("GET", "/v1/setup_intents/" + encodeURIComponent(intentId(clientSecret)),
                                  { client_secret: clientSecret });
    return reply.error ? { error: reply.error } : { setupIntent: reply };
  };

  StripeStandIn.prototype.retrievePaymentIntent = async function (clientSecret) {
    const reply = await this._api("GET", "/v1/payment_intents/" + encodeURIComponent(intentId(clientSecret)),
                                  { client_secret: clientSecret });
    return reply.error ? { error: reply.error } : { paymentIntent: reply };
  };

  StripeStandIn.prototype.handleNextAction = async function (options) {
    const clientSecret = options && options.clientSecret;
    const isSetup = /^seti_/.test(intentId(clientSecret));
    const path = (isSetup ? "/v1/setup_intents/" : "/v1/payment_intents/") + encodeURIComponent(intentId(clientSecret));
    const reply = await this._api("GET", path, { client_secret: clientSecret });
    return this._settle(reply, isSetup ? "setup_intent" : "payment_intent", clientSecret);
  };
  StripeStandIn.prototype.handleCardAction = function (clientSecret) {
    return this.handleNextAction({ clientSecret });
  };

  // Card tokens are the oldest API; the stand-in answers them with an error that says what to use instead.
  StripeStandIn.prototype.createToken = function () {
    return Promise.resolve({ error: { type: "validation_error",
      message: "The emulator's stripe.js makes no card tokens: use createPaymentMethod or confirmCardPayment." } });
  };

  // The release the page asked for (@stripe/stripe-js loads https://js.stripe.com/<release>/stripe.js and checks
  // it); 3 for the classic /v3 script.
  const loadedFrom = (document.currentScript && document.currentScript.src) || "";
  const release = /\/([a-z]+)\/stripe\.js(?:[?#]|$)/.exec(loadedFrom);
  StripeStandIn.version = release ? release[1] : 3;

  window.Stripe = StripeStandIn;
})();
