"""Pointing an unmodified app's Stripe SDK at the episode's backend: the per-language preloads and their variables.

An environment with ``stripe_preload = true`` gets, in every process the episode starts (its services, setup
and seed, the agent's shell, graders' copies of the app; in both sandboxes), variables that make the official
SDKs load a small preload of ours (the files beside this module) which sets their API base to
``STRIPE_API_BASE``: Python through ``sitecustomize`` on ``PYTHONPATH``, Node through
``NODE_OPTIONS=--require``, Ruby through ``RUBYOPT=-r``. Against real Stripe test mode (``STRIPE_API_BASE``
empty) nothing is added: the SDKs' default, api.stripe.com, is already right. docs/stripe-preload.md says why
this design rather than an HTTPS endpoint posing as api.stripe.com, and what Java and .NET apps need.
The sandboxes (``runtime``) and graders' processes (``grading``) both apply it, so this imports nothing of ours.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

PRELOAD_DIR = Path(__file__).resolve().parent
PYTHON_DIR = "python"  # holds sitecustomize.py alone: everything in it becomes importable
NODE_FILE = "node/stripe-preload.cjs"
RUBY_FILE = "ruby/stripebench_stripe_preload.rb"
# Set by a grader's process: the Ruby preload marks its requests with X-Stripebench-Source (the request log's source).
REQUEST_SOURCE_VAR = "STRIPEBENCH_REQUEST_SOURCE"


def preload_env(env: Mapping[str, str], *, root: str | os.PathLike[str] = PRELOAD_DIR,
                pythonpath: str | None = None) -> dict[str, str]:
    """The variables to add to ``env`` (a process environment holding the episode's Stripe variables).

    ``root`` is where ``stripebench_tui/preload`` is as the process sees it (a container mounts it elsewhere);
    ``pythonpath`` is the ``PYTHONPATH`` to extend when ``env`` does not say (an image's own). Existing
    ``NODE_OPTIONS`` and ``RUBYOPT`` are kept, ours appended; nothing is added twice.
    """
    if not env.get("STRIPE_API_BASE", "").strip():
        return {}
    base = PurePosixPath(root) if not isinstance(root, Path) else root
    python_dir, node_file, ruby_file = (str(base / part) for part in (PYTHON_DIR, NODE_FILE, RUBY_FILE))
    current = env.get("PYTHONPATH", pythonpath or "")
    entries = [p for p in current.split(os.pathsep) if p and p != python_dir]
    added = {"PYTHONPATH": os.pathsep.join([python_dir, *entries])}
    node_option = f"--require {_node_quote(node_file)}"
    node_options = env.get("NODE_OPTIONS", "")
    if node_option not in node_options:
        added["NODE_OPTIONS"] = f"{node_options} {node_option}".strip()
    # RUBYOPT has no quoting: a path with a space cannot be given (stripebench's own install path would need one)
    ruby_option = f"-r{ruby_file}"
    rubyopt = env.get("RUBYOPT", "")
    if " " not in ruby_file and ruby_option not in rubyopt.split():
        added["RUBYOPT"] = f"{rubyopt} {ruby_option}".strip()
    return added


def _node_quote(path: str) -> str:
    """A path as NODE_OPTIONS reads it (double quotes when it has a space or a quote)."""
    if not any(c in path for c in ' "\\'):
        return path
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


__all__ = ["PRELOAD_DIR", "REQUEST_SOURCE_VAR", "preload_env"]
