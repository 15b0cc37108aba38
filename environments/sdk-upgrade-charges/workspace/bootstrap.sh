#!/usr/bin/env bash
# Make the service's virtualenv (.venv) if it does not exist yet and install requirements.txt into it.
# The venv sees the system site-packages (Flask); whatever it installs itself (stripe) shadows them.
# .venv/bin/pip is a small wrapper around the system pip aimed at this venv (quicker than bootstrapping pip).
set -euo pipefail
cd "$(dirname "$0")"
if [ ! -x .venv/bin/python ]; then
  python3 -m venv --system-site-packages --without-pip .venv
  cat > .venv/bin/pip <<'PIP'
#!/usr/bin/env bash
exec python3 -m pip --disable-pip-version-check --python "$(dirname "$0")/python" "$@"
PIP
  chmod +x .venv/bin/pip
  .venv/bin/pip install -q --no-deps -r requirements.txt
fi
