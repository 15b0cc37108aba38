"""A trace without its turn index: one streaming pass finds the turns and keeps the index for the next open.

The traces are synthetic (``testing.big_trace``: a few thousand events, just over ``cold_index.MIN_BYTES``) and
have no ``.d`` folder, as a trace copied without it or written by another tool.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tracemalloc
from pathlib import Path

import pytest

from stripebench_tui.core import cold_index, turns_sidecar
from stripebench_tui.core.trace import open_trace
from stripebench_tui.testing import big_trace

EVENTS = 4000


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("STRIPEBENCH_CACHE", str(folder))
    return folder


def cold_trace(folder: Path, events: int = EVENTS, **options) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "trace.jsonl"
    big_trace.write(path, events, **options)
    assert path.stat().st_size >= cold_index.MIN_BYTES  # big enough to be streamed
    assert not (folder / "trace.jsonl.d").exists()
    return path


def scan_all(path: Path) -> list[int]:
    scan = open_trace(path).scan_turns()
    assert scan is not None
    return list(scan)


def beside(path: Path) -> Path:
    return path.with_name(path.name + ".d") / "turns.idx"


def cached_files(cache: Path) -> list[Path]:
    folder = cache / cold_index.CACHE_FOLDER
    return sorted(folder.glob("*.idx")) if folder.is_dir() else []


def full_index(path: Path) -> tuple[list[int], list[int]]:
    index = open_trace(path).index()
    return list(index.turns), list(index.offsets)


def test_a_cold_open_writes_the_index_beside_the_trace_and_the_next_open_reuses_it(tmp_path: Path, cache: Path) -> None:
    path = cold_trace(tmp_path / "episode")
    trace = open_trace(path)
    assert trace.quick_turns() is None  # nothing to go by yet
    found = list(trace.scan_turns())
    turns, offsets = full_index(path)
    assert found == turns
    assert trace.quick_turns() == turns  # the scan serves the turns it found
    stored = turns_sidecar.parse(beside(path).read_bytes())
    assert stored is not None and stored.turns == turns and list(stored.starts) == offsets
    assert cached_files(cache) == []  # the folder took it
    written = beside(path).stat().st_mtime_ns

    again = open_trace(path)
    assert again.scan_turns() is None  # nothing to rebuild
    assert again.quick_turns() == turns
    assert again.events_for_turn(turns[len(turns) // 2]) == [ev for ev in again.iter_events()
                                                              if ev.turn == turns[len(turns) // 2]]
    assert beside(path).stat().st_mtime_ns == written


def test_turns_found_are_readable_while_the_scan_goes_on(tmp_path: Path) -> None:
    path = cold_trace(tmp_path / "episode")
    trace = open_trace(path)
    scan = trace.scan_turns()
    first = [next(scan) for _ in range(3)]
    assert trace.events_for_turn(first[1]) and all(ev.turn == first[1] for ev in trace.events_for_turn(first[1]))
    assert trace._index is None  # served from what the scan found, not from a full index
    rest = list(scan)
    assert first + rest == full_index(path)[0]


def make_read_only(folder: Path, request: pytest.FixtureRequest) -> None:
    """Make ``folder`` refuse new files, even to root (chmod, then the immutable flag if that was not enough)."""
    folder.chmod(0o555)
    request.addfinalizer(lambda: folder.chmod(0o755))
    probe = folder / "probe"
    try:
        probe.touch()
    except PermissionError:
        return
    probe.unlink()
    chattr = shutil.which("chattr")
    done = chattr and subprocess.run([chattr, "+i", str(folder)], capture_output=True).returncode == 0
    if not done:
        pytest.skip("running as root without chattr +i: no folder here is read-only")
    request.addfinalizer(lambda: subprocess.run([chattr, "-i", str(folder)], check=True))


def test_a_read_only_folder_puts_the_index_in_the_cache(tmp_path: Path, cache: Path,
                                                        request: pytest.FixtureRequest) -> None:
    path = cold_trace(tmp_path / "readonly")
    make_read_only(path.parent, request)
    turns, offsets = full_index(path)
    assert scan_all(path) == turns
    assert not beside(path).parent.exists()
    [entry] = cached_files(cache)
    assert entry.name == cold_index.cache_key(path, path.stat().st_size, path.stat().st_mtime_ns) + ".idx"
    stored = turns_sidecar.parse(entry.read_bytes())
    assert stored is not None and stored.turns == turns and list(stored.starts) == offsets
    assert not [p for p in entry.parent.iterdir() if p.name.startswith(".")]  # no staged file left
    written = entry.stat().st_mtime_ns

    again = open_trace(path)
    assert again.scan_turns() is None
    assert again.quick_turns() == turns
    assert entry.stat().st_mtime_ns == written


def test_a_link_where_the_index_folder_should_be_is_not_written_through(tmp_path: Path, cache: Path) -> None:
    path = cold_trace(tmp_path / "episode")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    beside(path).parent.symlink_to(elsewhere)
    scan_all(path)
    assert list(elsewhere.iterdir()) == []
    assert len(cached_files(cache)) == 1
    assert open_trace(path).scan_turns() is None


def append_turn(path: Path) -> None:
    """The episode went on: one more turn at the end (as a resumed recording appends)."""
    lines = path.read_bytes().splitlines()
    last = json.loads(lines[-1])
    event = dict(last, seq=last["seq"] + 1, turn=last["turn"] + 1, t=last["t"] + 1.0)
    with open(path, "ab") as f:
        f.write(json.dumps(event).encode() + b"\n")


def test_a_stale_index_beside_the_trace_is_rebuilt(tmp_path: Path, cache: Path) -> None:
    path = cold_trace(tmp_path / "episode")
    scan_all(path)
    old = beside(path).read_bytes()
    append_turn(path)
    trace = open_trace(path)
    scan = trace.scan_turns()
    assert scan is not None  # the index no longer fits: scanned again
    assert list(scan) == full_index(path)[0]
    assert beside(path).read_bytes() == old  # another's index is left alone (it may be a live writer's)...
    assert len(cached_files(cache)) == 1  # ...the new one goes to the cache
    again = open_trace(path)
    assert again.scan_turns() is None
    assert again.quick_turns() == full_index(path)[0]


def test_an_index_whose_last_turn_starts_elsewhere_is_stale(tmp_path: Path) -> None:
    """Same last turn, other offsets (the trace was rewritten): the last offset no longer starts that turn."""
    path = cold_trace(tmp_path / "episode")
    scan_all(path)
    big_trace.write(path, EVENTS, seed=1)  # another episode of the same size, in place
    trace = open_trace(path)
    assert trace.quick_turns() is None
    assert list(trace.scan_turns()) == full_index(path)[0]


def test_a_changed_trace_misses_its_old_cache_entry(tmp_path: Path, cache: Path) -> None:
    path = cold_trace(tmp_path / "episode")
    beside(path).parent.mkdir()
    beside(path).write_bytes(b"not an index")  # the folder has one that is not ours: the cache is used
    scan_all(path)
    append_turn(path)
    assert open_trace(path).scan_turns() is not None  # the entry was keyed by the old size and time
    scan_all(path)
    assert len(cached_files(cache)) == 2


def test_the_scan_keeps_no_events(tmp_path: Path) -> None:
    """Memory of building the index: two integers per turn, whatever the events (no event is decoded)."""

    def peak(path: Path) -> tuple[int, cold_index.TurnScan]:
        trace = open_trace(path)
        scan = cold_index.TurnScan(path, len(path.read_bytes().split(b"\n", 1)[0]) + 1, trace.size)
        tracemalloc.start()
        try:
            for _ in scan:
                pass
            return tracemalloc.get_traced_memory()[1], scan
        finally:
            tracemalloc.stop()

    small_peak, small = peak(cold_trace(tmp_path / "small", EVENTS))
    large_peak, large = peak(cold_trace(tmp_path / "large", 4 * EVENTS))
    assert small.complete and large.complete
    assert small.parsed == large.parsed == 0  # the writer's prefix gave every turn: no JSON decoded
    assert large.lines == 4 * EVENTS
    # Four times the events cost only the turns' integers (16 bytes each, with list slack) more, and far less than
    # the trace: the events read are dropped as the scan goes.
    more_turns = len(large.found.turns) - len(small.found.turns)
    assert large_peak - small_peak < 64 * more_turns + 64 * 1024
    assert large_peak < large.end // 20


def test_lines_in_another_key_order_are_decoded_one_at_a_time(tmp_path: Path) -> None:
    path = cold_trace(tmp_path / "episode")
    lines = path.read_bytes().splitlines()
    reordered = [lines[0]] + [json.dumps(json.loads(line), sort_keys=True).encode() for line in lines[1:]]
    path.write_bytes(b"\n".join(reordered) + b"\n")  # another tool's writer: "type" and "turn" come last
    trace = open_trace(path)
    scan = cold_index.TurnScan(path, len(lines[0]) + 1, trace.size)
    assert list(scan) == full_index(path)[0]
    assert scan.complete and scan.parsed == EVENTS


def test_turns_out_of_order_leave_no_index(tmp_path: Path) -> None:
    path = cold_trace(tmp_path / "episode")
    with open(path, "ab") as f:  # an event of turn 1 after the later turns
        f.write(json.dumps({"seq": 10**6, "t": 10**6, "turn": 1, "type": "service", "service": "app",
                            "status": "log", "text": "late"}).encode() + b"\n")
    trace = open_trace(path)
    scan = trace.scan_turns()
    list(scan)
    assert trace.quick_turns() is None  # the screen falls back to the full index
    assert not beside(path).exists()


def test_a_damaged_line_leaves_no_index_and_a_cut_last_line_is_ignored(tmp_path: Path) -> None:
    path = cold_trace(tmp_path / "episode")
    turns = full_index(path)[0]
    with open(path, "ab") as f:
        f.write(b'{"seq": 99999, "t": 1.0, "tu')  # a crash mid-write
    assert scan_all(path) == turns
    assert turns_sidecar.parse(beside(path).read_bytes()).turns == turns

    damaged = cold_trace(tmp_path / "damaged")
    lines = damaged.read_bytes().splitlines(keepends=True)
    lines[len(lines) // 2] = b"[" * 100_000 + b"\n"  # not an event (and too deep for the JSON decoder)
    damaged.write_bytes(b"".join(lines))
    trace = open_trace(damaged)
    list(trace.scan_turns())
    assert trace.quick_turns() is None
    assert not beside(damaged).exists()


def test_small_traces_and_traces_with_an_index_are_not_scanned(tmp_path: Path) -> None:
    small = tmp_path / "small.jsonl"
    big_trace.write(small, 200)
    assert open_trace(small).scan_turns() is None
    assert not beside(small).parent.exists()
    assert open_trace(small).scan_turns(min_bytes=0) is not None
    indexed = cold_trace(tmp_path / "indexed")
    scan_all(indexed)
    assert open_trace(indexed).scan_turns(min_bytes=0) is None
