// ESM half of stripe-preload.cjs (registered by it with module.register): `import Stripe from 'stripe'` and
// `import { Stripe } from 'stripe'` get the same wrapped constructor as require('stripe'). The specifier 'stripe'
// resolves to a small generated module that imports the real package and re-exports it, the constructor wrapped.
const SCHEME = 'stripebench-stripe:';
let preload = '';

export function initialize(data) {
  preload = data.preload;
}

export async function resolve(specifier, context, next) {
  if (specifier !== 'stripe' || (context.parentURL || '').startsWith(SCHEME)) return next(specifier, context);
  const real = await next(specifier, context);
  return { url: SCHEME + encodeURIComponent(real.url), format: 'module', shortCircuit: true };
}

export async function load(url, context, next) {
  if (!url.startsWith(SCHEME)) return next(url, context);
  const real = JSON.stringify(decodeURIComponent(url.slice(SCHEME.length)));
  const source = [
    `import Real, * as all from ${real};`,
    `import preload from ${JSON.stringify(preload)};`,
    `export * from ${real};`,
    'const wrapped = preload.wrap(Real);',
    // A named Stripe export (the ESM build has one) is the same constructor: wrap it too. A local export
    // shadows the one `export *` would bring.
    "export const Stripe = typeof all.Stripe === 'function' ? preload.wrap(all.Stripe) : all.Stripe;",
    'export default wrapped;',
  ].join('\n');
  return { format: 'module', source, shortCircuit: true };
}
