"""What `stripebench bisect` found for an episode, kept beside its trace (``trace.jsonl.d/bisect.json``) so the
TUI can mark the turn on the timeline and the report can name it."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from stripebench_tui.core.trace_writer import sidecar_dir

BISECT_FILE = "bisect.json"


@dataclass
class ProbeRecord:
    """One probed turn: its forks' scores, whether it passed, the forks' directories."""

    turn: int
    passed: bool
    scores: list[float | None] = field(default_factory=list)
    forks: list[str] = field(default_factory=list)


@dataclass
class BisectRecord:
    """The last turn from which ``agent`` still passes (None: not even the first checkpointed turn) and the probes."""

    agent: str
    last_passing: int | None
    probes: list[ProbeRecord] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        return {"agent": self.agent, "last_passing": self.last_passing,
                "probes": [{"turn": p.turn, "passed": p.passed, "scores": p.scores, "forks": p.forks}
                           for p in self.probes]}


def bisect_path(trace_path: str | os.PathLike[str]) -> Path:
    return sidecar_dir(trace_path) / BISECT_FILE


def write_bisect(trace_path: str | os.PathLike[str], record: BisectRecord) -> Path:
    """Keep ``record`` beside the trace (replacing an earlier bisect's); the file written."""
    path = bisect_path(trace_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(record.to_dict(), indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def read_bisect(trace_path: str | os.PathLike[str]) -> BisectRecord | None:
    """The bisect recorded beside the trace; None when there is none or the file is not one of ours."""
    try:
        data = json.loads(bisect_path(trace_path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    probes = []
    for p in data.get("probes") or []:
        turn = _int(p.get("turn")) if isinstance(p, dict) else None
        if turn is None:
            continue
        scores = [s if isinstance(s, (int, float)) and not isinstance(s, bool) else None
                  for s in p.get("scores") or [] if s is None or isinstance(s, (int, float))]
        probes.append(ProbeRecord(turn, p.get("passed") is True, scores,
                                  [f for f in p.get("forks") or [] if isinstance(f, str)]))
    agent = data.get("agent")
    return BisectRecord(agent if isinstance(agent, str) else "", _int(data.get("last_passing")), probes)


__all__ = ["BISECT_FILE", "BisectRecord", "ProbeRecord", "bisect_path", "read_bisect", "write_bisect"]
