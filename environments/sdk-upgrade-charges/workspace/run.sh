#!/usr/bin/env bash
# Start the receipts service: make the venv if needed, then serve with the venv's python (restarts on edits).
set -euo pipefail
cd "$(dirname "$0")"
bash bootstrap.sh
exec .venv/bin/python devserver.py --settle 1.0  # pip installs touch files over seconds
