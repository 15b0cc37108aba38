#!/usr/bin/env bash
# The app's .env in the episode's copy, as the folder's run_inside_docker.sh writes it (never in the folder):
# this episode's own PostgreSQL, its Stripe keys, fresh secrets, the app's URL. Next.js bundles stripe-node, so
# the Node preload cannot reach it: our lib/payments/stripe.ts reads STRIPE_API_BASE.
set -euo pipefail
if [ -e .env ]; then
  echo "write-env: .env exists already; keeping it" >&2
  exit 0
fi
umask 077
random() { head -c "$1" /dev/urandom | od -An -tx1 | tr -d ' \n'; }
cat > .env <<ENV
POSTGRES_URL=${POSTGRES_URL:?no POSTGRES_URL: the environment must ask for [postgres]}
STRIPE_SECRET_KEY=${STRIPE_SECRET_KEY:?}
STRIPE_PUBLISHABLE_KEY=${STRIPE_PUBLISHABLE_KEY:-}
NEXT_PUBLIC_STRIPE_PUBLISHABLE_KEY=${STRIPE_PUBLISHABLE_KEY:-}
STRIPE_API_BASE=${STRIPE_API_BASE:-}
STRIPE_WEBHOOK_SECRET=whsec_$(random 16)
AUTH_SECRET=$(random 32)
BASE_URL=http://localhost:${APP_PORT:?}
ENV
echo "write-env: .env written (POSTGRES_URL, Stripe keys, AUTH_SECRET, BASE_URL=http://localhost:${APP_PORT})"
