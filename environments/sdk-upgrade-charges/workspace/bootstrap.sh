#!/usr/bin/env bash
# Make the service's virtualenv (.venv) if it does not exist yet. It sees the packages of the python first on PATH
# (stripebench installs requirements.txt there: Flask and stripe 4.2.0) through a .pth file; whatever is installed
# into .venv itself (`.venv/bin/pip install …`, e.g. a newer stripe) comes first and shadows them.
set -euo pipefail
cd "$(dirname "$0")"
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
  base=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  own=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  echo "$base" > "$own/_stripebench_environment.pth"
fi
