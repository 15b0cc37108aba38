"""stripebench search: the index finds exactly what a plain reading of the traces finds, and stays in step with them."""

from __future__ import annotations

import fnmatch
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from stripebench_tui.core.events import Finding
from stripebench_tui.core.trace import open_trace
from stripebench_tui.errors import UserError
from stripebench_tui.findings.derived import with_derived_findings
from stripebench_tui.search import INDEX_NAME, search
from stripebench_tui.search.query import parse

REPLAYS = Path(__file__).resolve().parents[2] / "replays"


SAMPLES = ("checkout-migration-400", "checkout-migration-oracle", "bookings-payments-oracle",
           "idempotent-payments-oracle", "webhook-fulfillment-oracle")


def copy_samples(root: Path) -> Path:
    """``root`` holding a copy of five sample episodes, one folder each."""
    for name in SAMPLES:
        shutil.copytree(REPLAYS / name, root / name)
    return root


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return copy_samples(tmp_path / "episodes")


def plain(folder: Path, want) -> set[tuple[str, int]]:  # a predicate over one JSON event
    """(episode, turn) of every event that ``want`` accepts, reading each trace's lines (no code of search's)."""
    found = set()
    for trace in sorted(folder.rglob("trace.jsonl")):
        for line in trace.read_text().splitlines()[1:]:
            event = json.loads(line)
            if want(event):
                found.add((trace.parent.name, event["turn"]))
    return found


def hits(folder: Path, query: str, **kw) -> set[tuple[str, int]]:
    return {(e.label, h.turn) for e in search(folder, query, **kw).episodes for h in e.hits}


def test_requests_tools_verdicts_and_text_match_a_plain_reading(folder: Path) -> None:
    def request(method: str, path: str, status_class: str | None = None):
        return lambda e: (e["type"] == "stripe_request" and e["method"] == method and fnmatch.fnmatchcase(e["path"], path)
                          and (status_class is None or str(e["status"]).startswith(status_class)))

    cases = {
        "request:'POST /v1/checkout/*' status:4xx": request("POST", "/v1/checkout/*", "4"),
        "request:/v1/refunds": lambda e: e["type"] == "stripe_request" and e["path"] == "/v1/refunds",
        "tool:browser_click": lambda e: e["type"] == "tool_call" and e["tool"] == "browser_click",
        "Traceback": lambda e: e["type"] == "tool_result" and "traceback" in (e.get("output") or "").lower(),
    }
    for query, want in cases.items():
        assert hits(folder, query) == plain(folder, want), query
        assert hits(folder, query, use_index=False) == plain(folder, want), query
    assert hits(folder, "request:'POST /v1/checkout/*' status:4xx")  # the 400 sample has some: not a vacuous check


def test_findings_match_the_detectors_over_each_trace(folder: Path) -> None:
    expected = set()
    for trace in folder.rglob("trace.jsonl"):
        for ev in with_derived_findings(open_trace(trace).iter_events()):
            if isinstance(ev, Finding) and ev.detector == "400-as-success":
                expected.add((trace.parent.name, ev.turn))
    assert expected and hits(folder, "finding:400-as-success") == expected
    # Combined: both terms must hit in the same episode.
    both = hits(folder, "finding:400-as-success verdict:fail criterion:paid")
    assert {e for e, _ in both} == {"checkout-migration-400"}
    assert hits(folder, "finding:400-as-success tool:no_such_tool") == set()


def test_the_index_is_built_once_kept_beside_the_trace_and_rebuilt_when_the_trace_changes(folder: Path) -> None:
    before = {p: p.stat().st_mtime_ns for p in folder.rglob("*") if p.is_file()}
    first = search(folder, "finding:400-as-success")
    assert first.indexed == 5 and first.searched == 5
    after = {p for p in folder.rglob("*") if p.is_file()}
    assert after - set(before) == {p.parent / INDEX_NAME for p in folder.rglob("trace.jsonl")}  # nothing else written
    assert all(p.stat().st_mtime_ns == t for p, t in before.items())  # and nothing changed
    assert search(folder, "tool:shell").indexed == 0

    trace = folder / "bookings-payments-oracle" / "trace.jsonl"
    lines = trace.read_text().splitlines()
    marker = json.loads(lines[-1])
    marker.update(type="tool_result", seq=marker["seq"] + 1, call_id="x", tool="shell", output="UNIQUE-NEEDLE-42")
    trace.write_text("\n".join(lines[:-1] + [json.dumps(marker), lines[-1]]) + "\n")
    again = search(folder, "unique-needle-42")
    assert again.indexed == 1 and [e.label for e in again.episodes] == ["bookings-payments-oracle"]

    (folder / "checkout-migration-oracle" / INDEX_NAME).write_bytes(b"not a database")
    assert search(folder, "tool:shell").indexed == 1


def test_broken_and_foreign_episodes_are_skipped_with_their_reason(folder: Path) -> None:
    (folder / "broken").mkdir()
    (folder / "broken" / "trace.jsonl").write_bytes(b"\x00\x01garbage\n")
    (folder / "foreign").mkdir()
    (folder / "foreign" / "trace.jsonl").write_text('{"hello": "world"}\n')
    found = search(folder, "finding:400-as-success")
    assert found.searched == 7 and len(found.skipped) == 2
    assert {s.split(":")[0] for s in found.skipped} == {"broken", "foreign"}
    assert [e.label for e in found.episodes] == ["checkout-migration-400"]


@pytest.mark.parametrize("query, message", [
    ("", "an empty query"), ("request:'POST /v1", "does not parse"), ("status:4xx", "qualifies a request"),
    ("request:/v1/refunds status:teapot", "is not a status"), ("finding:", "needs a value"),
    ("tool:shell criterion:paid", "qualifies a verdict"),
])
def test_a_query_that_does_not_parse_is_one_line(query: str, message: str) -> None:
    with pytest.raises(UserError, match=message):
        parse(query)


def test_the_command_prints_hits_as_lines_or_json_and_exits_by_what_it_found(folder: Path) -> None:
    run = lambda *args: subprocess.run([sys.executable, "-m", "stripebench_tui", "search", str(folder), *args],
                                       capture_output=True, text=True, timeout=120, env={**os.environ})
    found = run("finding:400-as-success", "--json")
    assert found.returncode == 0, found.stderr
    data = json.loads(found.stdout)
    assert data["searched"] == 5 and {h["episode"] for h in data["hits"]} == {"checkout-migration-400"}
    lines = run("request:'POST /v1/checkout/*'", "status:4xx")
    assert lines.returncode == 0 and all(line.startswith("checkout-migration-400  turn ") for line in lines.stdout.splitlines())
    assert run("no-such-words-anywhere").returncode == 1
    bad = run("status:4xx")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr
