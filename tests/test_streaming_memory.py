"""The headless readers stream a trace: what they hold grows with its turns and calls at most, never by whole events.

Each reader runs over a synthetic trace of SMALL and of 10 × SMALL events (``testing.big_trace``: a dozen events a
turn, a few hundred bytes each) under ``tracemalloc``, and the growth of its peak per added event is held to a
bound. Allocation counts do not depend on machine load, so neither does the verdict. Holding the events, or the
reducer's whole state, costs about 900 bytes per event (a list of all events more); what each reader may keep
per event instead is its per-turn aggregates (the time profile: about 30 bytes per event at this shape) and, for the
diff and the export's first pass, a record per tool call. Speed is measured in benchmarks/trace_streaming.py.
"""

from __future__ import annotations

import io
import os
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest

from stripebench_tui.core.trace import Trace, open_trace
from stripebench_tui.testing import big_trace

SMALL = 1_500
LARGE = 10 * SMALL


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("streaming")
    out = {}
    for name, count, findings in (("warm", 200, True), ("small", SMALL, True), ("large", LARGE, True),
                                  ("small-nf", SMALL, False), ("large-nf", LARGE, False)):
        out[name] = folder / f"{name}.jsonl"
        big_trace.write(out[name], count, findings=findings)
    return out


def growth_per_event(read: Callable[[Trace], object], traces: dict[str, Path], suffix: str = "") -> float:
    """Bytes of peak traced memory per event that ``read`` adds going from SMALL to LARGE events."""
    read(open_trace(traces["warm"]))  # imports, caches, compiled patterns: not the trace's
    peaks = []
    for name in ("small", "large"):
        trace = open_trace(traces[name + suffix])
        tracemalloc.start()
        try:
            read(trace)
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
    return (peaks[1] - peaks[0]) / (LARGE - SMALL)


def summary(trace: Trace) -> None:
    from stripebench_tui.formats.text import summary_pass, write_summary

    gathered = summary_pass(trace, ["verdict fail", "finding"])
    write_summary(gathered.summary, io.StringIO(), gathered.derived, gathered.profile, gathered.hits)


def headless(trace: Trace) -> None:
    from stripebench_tui.formats.text import write_headless

    with open(os.devnull, "w", encoding="utf-8") as sink:
        write_headless(trace, sink)


def export(trace: Trace) -> None:
    from stripebench_tui.formats.atif import AtifExport

    with open(os.devnull, "w", encoding="utf-8") as sink:
        AtifExport(trace).write(sink)


def diff(trace: Trace) -> None:
    from stripebench_tui.commands.diff import load_state

    load_state(trace.path)


def test_replay_summary_keeps_per_turn_aggregates_not_events(traces: dict[str, Path]) -> None:
    assert growth_per_event(summary, traces) < 100  # measured about 30; the reducer's state and index took 2,000


def test_replay_summary_over_a_trace_with_no_findings_keeps_the_detectors_bounded_too(traces: dict[str, Path]) -> None:
    # The detectors run over all of it here (findings derived on open), the breakpoints matched twice.
    assert growth_per_event(summary, traces, "-nf") < 100  # measured about 45


def test_replay_headless_keeps_nothing_per_event(traces: dict[str, Path]) -> None:
    assert growth_per_event(headless, traces) < 50  # measured about 6; its reducer took 900


def test_atif_export_writes_steps_as_they_finish(traces: dict[str, Path]) -> None:
    assert growth_per_event(export, traces) < 150  # measured about 45; the whole document in memory took 4,500


def test_diff_keeps_a_record_per_call_and_the_final_objects_not_the_state(traces: dict[str, Path]) -> None:
    # What the diff compares is per call (tool, arguments, outcome) and every object's final fields: about 290 bytes
    # per event of this trace; the reducer's state took 900.
    assert growth_per_event(diff, traces) < 500
