// Stripebench's Node preload (NODE_OPTIONS=--require <this file>): `new Stripe(key)` of an unmodified app talks to
// $STRIPE_API_BASE. The stripe-node constructor takes host, port and protocol in its config; this wraps the
// constructor the app gets from require('stripe') (and, through the ESM hooks beside this file, from
// `import Stripe from 'stripe'`) so that those three default to the episode's base. An app that sets any of them
// itself keeps its own. With STRIPE_API_BASE empty (real Stripe test mode) nothing is installed.
'use strict';

const Module = require('node:module');
const path = require('node:path');
const { pathToFileURL } = require('node:url');

const ADDRESS_KEYS = ['host', 'port', 'protocol'];

function addressOf(base) {
  const url = new URL(base);
  const protocol = url.protocol.replace(/:$/, '');
  return { host: url.hostname, port: Number(url.port || (protocol === 'https' ? 443 : 80)), protocol };
}

function withAddress(config, address) {
  const given = config && typeof config === 'object' ? config : {};
  if (ADDRESS_KEYS.some((key) => given[key] !== undefined)) return config;
  return Object.assign({}, address, given);
}

const wrapped = new WeakMap();

// The stripe constructor, its config's address defaulting to `address`; statics, prototype and instanceof unchanged.
function wrap(Stripe, address) {
  if (typeof Stripe !== 'function') return Stripe;
  if (wrapped.has(Stripe)) return wrapped.get(Stripe);
  const proxy = new Proxy(Stripe, {
    construct(target, args, newTarget) {
      const [key, config, ...rest] = args;
      return Reflect.construct(target, [key, withAddress(config, address), ...rest], newTarget === proxy ? target : newTarget);
    },
    apply(target, self, args) {
      const [key, config, ...rest] = args;
      return Reflect.apply(target, self, [key, withAddress(config, address), ...rest]);
    },
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      return value === target ? proxy : value; // Stripe.default / Stripe.Stripe
    },
  });
  wrapped.set(Stripe, proxy);
  wrapped.set(proxy, proxy);
  return proxy;
}

// require('stripe') and require('/…/node_modules/stripe'); not the SDK's own internal requires.
function namesStripe(id) {
  return id === 'stripe' || /[\\/]node_modules[\\/]stripe[\\/]?$/.test(id);
}

const base = (process.env.STRIPE_API_BASE || '').trim();
if (base) {
  const address = addressOf(base);
  const original = Module.prototype.require;
  Module.prototype.require = function require(id) {
    const exported = original.apply(this, arguments);
    return typeof id === 'string' && namesStripe(id) ? wrap(exported, address) : exported;
  };
  if (typeof Module.register === 'function') { // Node >= 20.6: ESM imports go through hooks of their own
    Module.register(pathToFileURL(path.join(__dirname, 'stripe-hooks.mjs')).href, {
      data: { preload: pathToFileURL(__filename).href },
    });
  }
  module.exports = { wrap: (Stripe) => wrap(Stripe, address), address };
} else {
  module.exports = { wrap: (Stripe) => Stripe, address: null };
}
