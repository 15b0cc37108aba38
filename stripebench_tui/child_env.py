"""The environment every child process of stripebench inherits from this machine: an allow-list, not everything.

Tool servers, services, the seed and setup scripts, a grader's copy of the app and our own helper processes get
only the variables named here from stripebench's environment, plus the episode's own variables (ports, URLs,
Stripe settings) and the process tag, which their callers add. Whatever else the runner holds, a model provider's
key (``ANTHROPIC_API_KEY``, ``OPENAI_API_KEY``…) above all, never reaches the agent's tools or the app.

What passes, and why:

* ``PATH``, ``HOME``, ``USER``, ``LOGNAME``, ``SHELL``: finding programs and the user's home (pip, npm, caches).
* ``LANG``, ``LANGUAGE``, ``LC_*``, ``TERM``, ``TZ``: text encoding, terminal and time zone.
* ``TMPDIR``, ``TMP``, ``TEMP``: where temporary files go.
* ``SSL_CERT_FILE``, ``SSL_CERT_DIR``, ``REQUESTS_CA_BUNDLE``, ``CURL_CA_BUNDLE``, ``NODE_EXTRA_CA_CERTS``,
  ``PIP_*``: CA bundles and pip's settings, so installing packages works behind a TLS-inspecting proxy.
* ``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY``, ``NO_PROXY`` (either case): the network as this machine reaches
  it; a password in a proxy URL is registered as a secret (``runner_secrets``).
* ``PYTHONPATH``, ``VIRTUAL_ENV``: the same Python packages as stripebench (tool servers run our modules).
* ``STRIPEBENCH_*``, ``PLAYWRIGHT_BROWSERS_PATH``: our own settings (tool timeouts, Chromium, caches).
* ``DOCKER_HOST``, ``DOCKER_CERT_PATH``, ``DOCKER_TLS_VERIFY``, ``DOCKER_CONFIG``, ``DOCKER_CONTEXT``: the relays
  of the docker sandbox reach the engine (commands inside the container get only the episode's variables).

``runner_secrets`` lists the values of this machine's variables that look like credentials, so the trace and the
logs redact them even where a process received them some other way.

The allow-list keeps the key out of every child's environment, but in the local sandbox the agent's commands run
as the same user (or root) as stripebench, and ``/proc/<stripebench's pid>/environ`` shows the environment this
process was started with. ``hide_from_proc_environ`` overwrites given values in that block (Linux), so walking up
the process tree finds no key there either; Python's ``os.environ`` keeps its own copy and is not affected.
"""

from __future__ import annotations

import ctypes
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from urllib.parse import quote, urlsplit

ALLOWED_NAMES = frozenset({
    "PATH", "HOME", "USER", "LOGNAME", "SHELL",
    "LANG", "LANGUAGE", "TERM", "TZ",
    "TMPDIR", "TMP", "TEMP",
    "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS",
    "PYTHONPATH", "VIRTUAL_ENV",
    "PLAYWRIGHT_BROWSERS_PATH",
    "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy", "no_proxy",
    "DOCKER_HOST", "DOCKER_CERT_PATH", "DOCKER_TLS_VERIFY", "DOCKER_CONFIG", "DOCKER_CONTEXT",
})
ALLOWED_PREFIXES = ("LC_", "PIP_", "STRIPEBENCH_")

# Names of variables whose values are credentials (ANTHROPIC_API_KEY, GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY, …).
_SECRET_NAME = re.compile(r"(?i)(API_?KEY|TOKEN|SECRET|SECRET_KEY|ACCESS_KEY|PRIVATE_KEY|PASSWORD|PASSWD)$")
MIN_RUNNER_SECRET = 8  # shorter values ("1", "true") would mangle ordinary text when redacted


def allowed(name: str) -> bool:
    """Whether a variable of this machine's environment may pass to child processes."""
    return name in ALLOWED_NAMES or name.startswith(ALLOWED_PREFIXES)


def base_env(source: Mapping[str, str] | None = None) -> dict[str, str]:
    """The allowed part of ``source`` (default: this process's environment)."""
    source = os.environ if source is None else source
    return {k: v for k, v in source.items() if allowed(k)}


def runner_secrets(source: Mapping[str, str] | None = None) -> list[str]:
    """Values of ``source`` (default: this process's environment) whose names say they are credentials, and the
    passwords of proxy URLs (``http://user:password@proxy:3128``)."""
    source = os.environ if source is None else source
    found = [v for k, v in source.items() if _SECRET_NAME.search(k) and len(v) >= MIN_RUNNER_SECRET]
    for name, value in source.items():
        if name.lower().endswith("_proxy") and "@" in value:
            try:
                password = urlsplit(value).password
            except ValueError:
                continue
            if password:
                found += [password, quote(password, safe="")]
    return found


def hide_from_proc_environ(values: Iterable[str]) -> int:
    """Overwrite (with ``*``) every variable value equal to one of ``values`` in this process's initial environment
    block, the one ``/proc/<pid>/environ`` shows; returns how many were hidden (0 where there is no such block)."""
    wanted = {v.encode() for v in values if v}
    if not wanted:
        return 0
    try:
        # /proc/self/stat: fields after the command name (in parentheses) start at field 3; env_start is field 50
        fields = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
        start, end = int(fields[47]), int(fields[48])
        block = Path("/proc/self/environ").read_bytes()
    except (OSError, ValueError, IndexError):
        return 0
    if not start or end - start != len(block):
        return 0
    hidden, offset = 0, 0
    for entry in block.split(b"\0"):
        name, sep, value = entry.partition(b"=")
        if sep and value in wanted:
            ctypes.memset(start + offset + len(name) + 1, ord("*"), len(value))
            hidden += 1
        offset += len(entry) + 1
    return hidden


__all__ = ["ALLOWED_NAMES", "ALLOWED_PREFIXES", "allowed", "base_env", "hide_from_proc_environ", "runner_secrets"]
