"""Readers given hostile input through the real CLI: a one-line error with exit 3, never a hang or a traceback.

Issue 40, item 5: a FIFO or a device where a file is meant, a trace line of deeply nested JSON, a results CSV that is
endless, has a 200,000-character field or a negative turn count, and search terms that took minutes or crashed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from stripebench_tui.errors import EXIT_BAD_FILE, EXIT_USAGE

REPLAYS = Path(__file__).resolve().parent.parent / "replays"
SAMPLE = REPLAYS / "checkout-migration-oracle"
HANG = 20  # seconds: a reader that blocks or grows is stopped here, and the test fails


REPO = Path(__file__).resolve().parent.parent


def stripebench(*args: object, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The CLI of this checkout (its own package first on the path, wherever it runs)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "stripebench_tui", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=HANG, stdin=subprocess.DEVNULL, env=env)


def one_line_error(r: subprocess.CompletedProcess[str], code: int = EXIT_BAD_FILE) -> str:
    assert "Traceback" not in r.stderr, r.stderr[-2000:]
    assert r.returncode == code, (r.returncode, r.stderr[-2000:])
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("stripebench: "), r.stderr[-2000:]
    return r.stderr


def deep_trace(tmp_path: Path, depth: int = 100_000) -> Path:
    """The sample episode with one event line of ``depth`` nested arrays, as line 4 of its trace."""
    episode = tmp_path / "deep"
    shutil.copytree(SAMPLE, episode)
    shutil.rmtree(episode / "trace.jsonl.d")  # the turn offsets no longer hold
    trace = episode / "trace.jsonl"
    lines = trace.read_text().splitlines()
    lines.insert(3, '{"seq":2,"t":0.1,"turn":0,"type":"service","service":"x","status":"healthy","text":"",'
                    '"extra":' + "[" * depth + "]" * depth + "}")
    trace.write_text("\n".join(lines) + "\n")
    return trace


@pytest.mark.parametrize("command", [("replay", "--headless"), ("replay", "--summary"), ("diff", SAMPLE),
                                     ("export", "-o", "-"), ("report", "-o", "out.html")])
def test_a_deeply_nested_trace_line_is_one_line_naming_it(tmp_path: Path, command: tuple[object, ...]) -> None:
    trace = deep_trace(tmp_path)
    name, *rest = command
    message = one_line_error(stripebench(name, trace, *rest, cwd=tmp_path))
    assert f"{trace}:4:" in message and "nested" in message


def test_nesting_at_the_depth_limit_is_refused_before_it_reaches_python_recursion(tmp_path: Path) -> None:
    from stripebench_tui.core.json_depth import MAX_DEPTH
    from stripebench_tui.core.trace import open_trace
    from stripebench_tui.core.trace_writer import TraceError

    trace = deep_trace(tmp_path, depth=MAX_DEPTH + 1)
    with pytest.raises(TraceError, match=r":4: .*nested"):
        list(open_trace(trace).iter_events())
    shutil.rmtree(tmp_path / "deep")
    fine = deep_trace(tmp_path, depth=MAX_DEPTH - 5)  # the event's own object adds a level
    assert len(list(open_trace(fine).iter_events())) > 100


def test_a_nested_atif_file_is_one_line(tmp_path: Path) -> None:
    atif = tmp_path / "deep.json"
    atif.write_text('{"schema_version": "ATIF-v1.4", "steps": ' + "[" * 100_000 + "]" * 100_000 + "}")
    message = one_line_error(stripebench("replay", atif, "--summary"))
    assert "nested" in message


@pytest.mark.parametrize("command", [("replay", "--headless"), ("diff", SAMPLE), ("export", "-o", "-"),
                                     ("report", "-o", "out.html")])
def test_a_fifo_or_a_device_as_a_trace_is_refused_at_once(tmp_path: Path, command: tuple[object, ...]) -> None:
    fifo = tmp_path / "trace.jsonl"
    os.mkfifo(fifo)  # nobody ever writes into it: an open() for reading would wait for ever
    name, *rest = command
    started = time.monotonic()
    message = one_line_error(stripebench(name, fifo, *rest, cwd=tmp_path))
    assert "not a regular file (a FIFO)" in message and time.monotonic() - started < HANG
    message = one_line_error(stripebench(name, "/dev/zero", *rest, cwd=tmp_path))
    assert "not a regular file (a device)" in message


def _sweep(tmp_path: Path) -> Path:
    from tests.batch.test_insight import make_sweep

    return make_sweep(tmp_path / "sweep").root


@pytest.mark.parametrize("source, kind", [("/dev/zero", "a device"), ("fifo", "a FIFO")])
def test_compare_with_a_device_or_a_fifo_is_one_line_not_a_hang(tmp_path: Path, source: str, kind: str) -> None:
    if source == "fifo":
        os.mkfifo(tmp_path / "fifo")
        source = str(tmp_path / "fifo")
    message = one_line_error(stripebench("batch", "report", _sweep(tmp_path), "--compare", source))
    assert f"not a regular file ({kind})" in message


@pytest.mark.parametrize("which", ["results", "readme"])
@pytest.mark.parametrize("source, kind", [("/dev/zero", "a device"), ("fifo", "a FIFO")])
def test_scorecard_given_a_device_or_a_fifo_is_one_line_not_a_hang(tmp_path: Path, source: str, kind: str,
                                                                   which: str) -> None:
    if source == "fifo":
        os.mkfifo(tmp_path / "fifo")
        source = str(tmp_path / "fifo")
    results = tmp_path / "results.csv"
    results.write_text("eval name,model,run ID,score,turn count\nbookings-payments,m,1,1.0,3\n")
    args = [source] if which == "results" else [results, "--readme", source]
    message = one_line_error(stripebench("scorecard", *args))
    assert f"not a regular file ({kind})" in message


def test_an_oversized_results_file_is_refused_before_it_is_read(tmp_path: Path) -> None:
    from stripebench_tui.batch.published import MAX_RESULTS_BYTES, read_results
    from stripebench_tui.errors import BadFileError

    big = tmp_path / "results.csv"
    with open(big, "wb") as f:
        f.write(b"eval name,model,run ID,score,turn count\n")
        f.truncate(MAX_RESULTS_BYTES + 1)  # sparse: no disk used
    with pytest.raises(BadFileError, match="larger than"):
        read_results(big)


def test_a_huge_csv_field_and_a_negative_turn_count_are_skipped_rows(tmp_path: Path) -> None:
    from stripebench_tui.batch.published import read_results

    results = tmp_path / "results.csv"
    results.write_text("eval name,model,run ID,score,turn count\n"
                       f"checkout-migration,{'m' * 200_000},r1,1,3\n"
                       "checkout-migration,model-x,r2,1,-4\n"
                       "checkout-migration,model-x,r3,0.5,7\n")
    read = read_results(results)
    assert [(r.model, r.turns) for r in read.runs] == [("model-x", 7)]
    assert len(read.skipped) == 2
    assert read.skipped[0].startswith("line 2: ") and "field" in read.skipped[0]
    assert read.skipped[1].startswith("line 3: ") and "turn count -4" in read.skipped[1]
    r = stripebench("batch", "report", _sweep(tmp_path), "--compare", results)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-2000:]
    assert "2 rows of the results file left out" in r.stdout


@pytest.fixture
def indexed(tmp_path: Path) -> Path:
    """A folder of five episodes, each with its search index built."""
    from stripebench_tui.search import search
    from tests.search.test_search import copy_samples

    root = copy_samples(tmp_path / "episodes")
    assert search(root, "tool:shell").indexed == 5
    return root


@pytest.mark.parametrize("query, message", [
    ("x" * 2000, "longer than"), ("*" * 60_000, "longer than"), ("tool:" + "*?" * 40, "wildcards"),
    ("request:'POST /v1/" + "*" * 40 + "'", "wildcards"),
], ids=["2000-characters", "60000-wildcards", "80-tool-wildcards", "40-request-wildcards"])
def test_a_search_term_too_long_or_too_wild_is_one_line_at_once(indexed: Path, query: str, message: str) -> None:
    started = time.monotonic()
    error = one_line_error(stripebench("search", indexed, query), code=EXIT_USAGE)
    assert message in error and time.monotonic() - started < HANG


def test_a_search_term_at_the_limits_still_searches(indexed: Path) -> None:
    from stripebench_tui.search import search
    from stripebench_tui.search.query import MAX_TERM_CHARS

    found = search(indexed, "q" * MAX_TERM_CHARS)
    assert found.searched == 5 and not found.skipped and not found.episodes
    assert search(indexed, "tool:browser_*").episodes


def test_a_broken_index_is_a_skipped_episode_with_its_reason_not_a_traceback(indexed: Path) -> None:
    import sqlite3
    from contextlib import closing

    from stripebench_tui.search import INDEX_NAME, search

    with closing(sqlite3.connect(indexed / "checkout-migration-oracle" / INDEX_NAME)) as db, db:
        db.execute("DROP TABLE outputs")  # its meta still says it is current
    found = search(indexed, "traceback")
    assert found.searched == 5 and len(found.skipped) == 1
    assert found.skipped[0].startswith("checkout-migration-oracle: ") and "index" in found.skipped[0]
    r = stripebench("search", indexed, "traceback")
    assert "Traceback (most recent call last)" not in r.stderr and r.returncode in (0, 1), r.stderr[-2000:]
    assert "1 skipped: checkout-migration-oracle" in r.stderr


@pytest.mark.parametrize("command", [("replay", "--summary"), ("export", "-o", "-"), ("report", "-o", "out.html")])
def test_a_negative_turn_in_a_trace_is_one_line_naming_its_line(tmp_path: Path, command: tuple[object, ...]) -> None:
    import json

    episode = tmp_path / "negative"
    shutil.copytree(SAMPLE, episode)
    shutil.rmtree(episode / "trace.jsonl.d")
    trace = episode / "trace.jsonl"
    lines = trace.read_text().splitlines()
    event = json.loads(lines[5])
    event["turn"] = -3
    lines[5] = json.dumps(event)
    trace.write_text("\n".join(lines) + "\n")
    name, *rest = command
    message = one_line_error(stripebench(name, trace, *rest, cwd=tmp_path))
    assert f"{trace}:6:" in message and "negative turn" in message


def test_an_atif_file_over_the_size_cap_is_refused_before_it_is_read(tmp_path: Path) -> None:
    from stripebench_tui.core.trace_writer import TraceError
    from stripebench_tui.formats.atif import MAX_ATIF_BYTES
    from stripebench_tui.formats.open import open_episode

    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.write(b'{"schema_version": "ATIF-v1.4", "steps": [')
        f.truncate(MAX_ATIF_BYTES + 1)  # sparse: no disk used, and not read
    started = time.monotonic()
    with pytest.raises(TraceError, match="larger than 512 MiB"):
        open_episode(big)
    assert time.monotonic() - started < 5


def test_a_long_text_term_finds_through_the_index_what_the_scan_finds(indexed: Path) -> None:
    """The index narrows by the term's first characters only (each trigram of a long term was one more lookup:
    81 s for 2,000 characters on a sweep); the rows it returns are matched on the whole term."""
    import json

    from stripebench_tui.search import search
    from stripebench_tui.search.index import PROBE_CHARS
    from stripebench_tui.search.query import MAX_TERM_CHARS

    outputs = [json.loads(line).get("output") or "" for trace in sorted(indexed.rglob("trace.jsonl"))
               for line in trace.read_text().splitlines()[1:] if '"tool_result"' in line]
    line = max((ln for out in outputs for ln in out.splitlines()), key=len)  # the longest line of any output
    assert len(line) > PROBE_CHARS + 20
    term = " ".join(line.split())[:MAX_TERM_CHARS].strip()
    found = {(e.label, h.turn) for e in search(indexed, f"text:{term!r}" if " " in term else term).episodes
             for h in e.hits}
    scanned = {(e.label, h.turn) for e in search(indexed, f"text:{term!r}" if " " in term else term,
                                                use_index=False).episodes for h in e.hits}
    assert found == scanned and found
    near_miss = term[:PROBE_CHARS] + "\u2603" + term[PROBE_CHARS + 1:]  # the same start, then not in any output
    assert search(indexed, f"text:{near_miss!r}" if " " in near_miss else near_miss).episodes == []


def plant(path: Path, damage: str, nested: str) -> None:
    """Replace the file ``path`` by a FIFO nobody writes, a link to /dev/zero, or the JSON text ``nested``."""
    path.unlink()
    if damage == "fifo":
        os.mkfifo(path)
    elif damage == "device":
        path.symlink_to("/dev/zero")
    else:
        path.write_text(nested)


@pytest.mark.parametrize("damage", ["fifo", "device", "nested"])
def test_a_batch_directory_with_a_hostile_manifest_is_one_line(tmp_path: Path, damage: str) -> None:
    sweep = _sweep(tmp_path)
    manifest = sweep / "batch.json"
    plant(manifest, damage, '{"kind": "stripebench-batch", "x": ' + "[" * 100_000 + "]" * 100_000 + "}")
    message = one_line_error(stripebench("batch", "report", sweep))
    assert "is not a batch directory" in message


@pytest.mark.parametrize("damage", ["fifo", "device", "nested"])
def test_a_hostile_result_file_leaves_that_run_out_not_the_report(tmp_path: Path, damage: str) -> None:
    sweep = _sweep(tmp_path)
    result = sorted(sweep.glob("*/result.json"))[0]
    plant(result, damage, "[" * 100_000 + "]" * 100_000)
    r = stripebench("batch", "report", sweep)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-2000:]
    assert "5 of 6 episodes finished" in r.stdout
