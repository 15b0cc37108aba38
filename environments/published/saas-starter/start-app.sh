#!/usr/bin/env bash
# The app service: migrations, the seed once per episode, then `next dev` in the foreground (the agent's edits
# reload it). A restart (the agent stopped the server) migrates again, which changes nothing already applied.
set -euo pipefail
echo "start-app: pnpm db:migrate"
pnpm db:migrate
marker="${EPISODE_DIR:?}/.saas-starter-seeded"
if [ ! -e "$marker" ]; then
  echo "start-app: pnpm db:seed"
  pnpm db:seed
  touch "$marker"
fi
echo "start-app: pnpm dev --port ${APP_PORT:?}"
exec pnpm dev --port "$APP_PORT"
