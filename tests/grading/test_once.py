"""once_per_context: the first asker computes, concurrent askers wait for it, a new context computes again."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

from stripebench_tui.grading.once import once_per_context


def test_concurrent_askers_share_one_computation():
    calls = []

    def compute():
        calls.append(threading.get_ident())
        time.sleep(0.2)  # long enough for every other asker to arrive meanwhile
        return {"done": len(calls)}

    ctx = SimpleNamespace()
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda _: once_per_context(ctx, "scenarios", compute), range(4)))
    assert len(calls) == 1 and all(g is got[0] for g in got)
    assert once_per_context(ctx, "scenarios", compute) is got[0]


def test_keys_and_contexts_are_separate_and_a_failure_is_not_remembered():
    a, b = SimpleNamespace(), SimpleNamespace()
    assert once_per_context(a, "x", lambda: 1) == 1
    assert once_per_context(a, "y", lambda: 2) == 2
    assert once_per_context(b, "x", lambda: 3) == 3
    assert once_per_context(a, "x", lambda: 4) == 1

    def boom():
        raise RuntimeError("setup broke")

    try:
        once_per_context(a, "z", boom)
    except RuntimeError:
        pass
    assert once_per_context(a, "z", lambda: "second try") == "second try"
