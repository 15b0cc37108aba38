"""The standalone emulator's collector policy: survivors of a young collection are frozen, a sweep reclaims cycles.

Each check runs in a fresh interpreter: freezing is process-wide and must not reach the test process.
"""

from __future__ import annotations

import json
import subprocess
import sys

_PROBE = r'''
import gc, json, weakref
from stripebench_emulator.model.gc_policy import GcPolicy

policy = GcPolicy(sweep_seconds=0).start()
before = gc.get_freeze_count()
stored = [{"id": i, "metadata": {"k": [i]}} for i in range(5000)]  # long-lived, like the store's objects
gc.collect(0)
frozen_by_young_pass = gc.get_freeze_count() - before

class Node:
    pass

node = Node()
node.me = node  # a reference cycle, alive when the next young pass freezes it
ref = weakref.ref(node)
gc.collect(0)
del node
gc.collect()  # an ordinary full pass does not look at frozen objects
kept_until_sweep = ref() is not None
policy.sweep()
print(json.dumps({"frozen_by_young_pass": frozen_by_young_pass, "kept_until_sweep": kept_until_sweep,
                  "swept": ref() is None, "still_frozen": gc.get_freeze_count() > 0, "sweeps": policy.sweeps}))
policy.close()
print(json.dumps({"after_close": gc.get_freeze_count(), "callbacks": len(gc.callbacks)}))
'''


def test_young_survivors_are_frozen_and_a_sweep_reclaims_cycles() -> None:
    out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True, timeout=60)
    running, closed = (json.loads(line) for line in out.stdout.splitlines())
    assert running["frozen_by_young_pass"] >= 10_000  # the 5000 dicts and their nested values
    assert running["kept_until_sweep"] and running["swept"]
    assert running["still_frozen"] and running["sweeps"] == 1
    assert closed == {"after_close": 0, "callbacks": 0}
