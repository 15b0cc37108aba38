"""Stripebench's Python preload: the official ``stripe`` SDK of an unmodified app talks to ``$STRIPE_API_BASE``.

The runtime puts this directory first on ``PYTHONPATH`` when an environment sets ``stripe_preload``, so every
Python process of the episode imports it at start-up (``site`` imports ``sitecustomize``). Importing ``stripe``
here would slow down every ``python`` the agent runs and fail where the SDK is not installed, so it only adds an
import hook: when the app imports ``stripe``, the module runs as usual and then gets ``stripe.api_base`` and a
``StripeClient`` whose default ``base_addresses["api"]`` is the episode's base. Whatever the app sets itself
(``stripe.api_base = …`` later, ``base_addresses=`` on a client) still wins. With ``STRIPE_API_BASE`` empty (real
Stripe test mode) nothing is installed. Another ``sitecustomize`` later on ``sys.path`` (a distribution's) still
runs: this one would otherwise hide it.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))


def _configure(stripe, base):
    """Point the imported SDK at ``base`` through its public settings."""
    stripe.api_base = base
    original = getattr(stripe, "StripeClient", None)
    if not isinstance(original, type):  # SDKs before v8 have no StripeClient
        return
    # this file runs at the start of every python of the episode: inspect only when there is a StripeClient to wrap
    import inspect

    signature = inspect.signature(original.__init__)
    if "base_addresses" not in signature.parameters:
        return

    class StripeClient(original):
        def __init__(self, *args, **kwargs):
            bound = signature.bind_partial(self, *args, **kwargs)
            given = dict(bound.arguments.get("base_addresses") or {})
            given.setdefault("api", base)
            bound.arguments["base_addresses"] = given
            super().__init__(*bound.args[1:], **bound.kwargs)

    StripeClient.__name__ = original.__name__
    StripeClient.__qualname__ = original.__qualname__
    StripeClient.__module__ = original.__module__
    StripeClient.__doc__ = original.__doc__
    stripe.StripeClient = StripeClient


class _Loader(importlib.abc.Loader):
    """The SDK's own loader, then ``_configure``."""

    def __init__(self, loader, base):
        self._loader = loader
        self._base = base

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        _configure(module, self._base)
        _uninstall()  # configured: later imports need not pass through the finder

    def __getattr__(self, name):  # get_resource_reader, is_package…: the SDK's loader answers
        if name == "_loader":
            raise AttributeError(name)
        return getattr(self._loader, name)


class _Finder(importlib.abc.MetaPathFinder):
    """Finds nothing itself: asks the finders after it for the top-level ``stripe`` package and wraps its loader.

    It stays installed until the SDK has been executed (a ``find_spec`` without an import, as some tools do,
    must not use it up).
    """

    def __init__(self, base):
        self._base = base

    def find_spec(self, name, path=None, target=None):
        if name != "stripe":
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        if spec.loader is None or isinstance(spec.loader, _Loader):
            return spec
        spec.loader = _Loader(spec.loader, self._base)
        return spec


def _install():
    base = os.environ.get("STRIPE_API_BASE", "").strip().rstrip("/")
    if base and "stripe" not in sys.modules:
        sys.meta_path.insert(0, _Finder(base))


def _uninstall():
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _Finder)]


def _chain():
    """Run the ``sitecustomize`` this one shadows, if there is one further along ``sys.path``."""
    rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is not None and spec.loader is not None:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)


_install()
_chain()
