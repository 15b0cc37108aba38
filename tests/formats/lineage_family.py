"""A family of recorded episodes for the lineage tests: an original run, its forks found in each place a fork can
be (beside it, under its forks/ folder, named only in its forks.jsonl), a fork of a fork, and strangers."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from stripebench_tui.core.events import EpisodeEnd, Event, Finding, Header, ModelMessage, ToolCall, ToolResult
from stripebench_tui.formats.lineage import record_child
from tests.tui.episode import HEADER
from tests.tui.episode import write_trace as _write_trace


def write_trace(path: Path, events: list[Event] | None = None, header: Header = HEADER):
    """``tests.tui.episode.write_trace`` into a directory made first."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return _write_trace(path, events, header)


def _events(turns: int, *, finding_at: int | None = None, finding: str = "", end: tuple[float, bool] | None) -> list[Event]:
    out: list[Event] = []
    for turn in range(1, turns + 1):
        t = float(turn)
        out.append(ModelMessage(t=t, turn=turn, text=f"turn {turn} of the episode"))
        out.append(ToolCall(t=t + 0.1, turn=turn, call_id=f"c{turn}", tool="shell", arguments={"command": f"step {turn}"}))
        out.append(ToolResult(t=t + 0.2, turn=turn, call_id=f"c{turn}", tool="shell", output=f"did step {turn}"))
        if finding_at == turn:
            out.append(Finding(t=t + 0.3, turn=turn, detector="400-as-success", message=finding))
    if end is not None:
        out.append(EpisodeEnd(t=turns + 1.0, turn=turns, reason="agent_done", score=end[0], passed=end[1]))
    return out


def _forked(parent: Path, turn: int | str, mode: str = "restore") -> Header:
    return Header(env=HEADER.env, agent="oracle", title=HEADER.title, backend="emulator",
                  extra={"forked_from": {"trace": str(parent.resolve()), "turn": turn, "mode": mode}})


@dataclass
class Family:
    original: Path
    beside: Path  # a sibling episode directory forked at turn 2 (restored)
    under: Path  # EPISODE/forks/…, forked at turn 3 (re-executed)
    grandchild: Path  # a fork of ``beside``, at turn 3
    registered: Path  # somewhere else, found through the original's forks.jsonl; never ended
    stranger: Path  # beside the original, forked from another trace


def write_family(root: Path) -> Family:
    eps = root / "episodes"
    original = write_trace(eps / "original" / "trace.jsonl",
                           _events(4, finding_at=2, finding="a 400 called a success", end=(0.5, False))).path
    beside = write_trace(eps / "original-fork-2" / "trace.jsonl", _events(5, end=(1.0, True)), _forked(original, 2)).path
    under = write_trace(eps / "original" / "forks" / "at-3" / "trace.jsonl",
                        _events(4, finding_at=4, finding="the key was logged", end=(0.25, False)),
                        _forked(original, 3, "")).path
    grandchild = write_trace(eps / "original-fork-2" / "forks" / "again" / "trace.jsonl", _events(6, end=(1.0, True)),
                             _forked(beside, 3)).path
    registered = write_trace(root / "elsewhere" / "late" / "trace.jsonl", _events(2, end=None), _forked(original, 1)).path
    record_child(original, registered, 1, "restore")
    unrelated = write_trace(root / "unrelated.jsonl", _events(1, end=(1.0, True))).path
    stranger = write_trace(eps / "stranger" / "trace.jsonl", _events(2, end=(1.0, True)), _forked(unrelated, 1)).path
    write_trace(eps / "plain" / "trace.jsonl", _events(3, end=(1.0, True)))
    return Family(original, beside, under, grandchild, registered, stranger)


__all__ = ["Family", "write_family", "write_trace"]
