"""The stripe_docs tool server: index built on first use, ranked results, rebuilt when the cache is gone."""

from __future__ import annotations

from pathlib import Path

import pytest

from stripebench_tui.tools import docs_index
from stripebench_tui.tools.client import ToolServerHandle

pytestmark = pytest.mark.slow  # building the index parses the stripe package (a few seconds)


def docs_server(workspace: Path, cache: Path, errlog) -> ToolServerHandle:
    return ToolServerHandle.builtin("stripe_docs", str(workspace), "--cache-dir", str(cache), errlog=errlog)


async def test_search_ranks_relevant_entries_first_rejects_bad_queries_and_rebuilds_a_missing_cache(workspace, tmp_path: Path):
    cache = tmp_path / "cache"
    log_path = tmp_path / "stderr.txt"
    with log_path.open("w") as log:
        async with docs_server(workspace, cache, log) as docs:
            result = await docs.call("search_stripe_documentation", {"query": "create checkout session", "limit": 3})
            assert not result.is_error
            first = result.data["results"][0]
            assert first["title"].startswith("Checkout Session: create (POST /v1/checkout/sessions)")
            assert first["kind"] == "method"
            assert result.text.startswith("1. Checkout Session: create")
            assert len(result.data["results"]) == 3
            notes = await docs.call("search_stripe_documentation", {"query": "STRIPE_API_BASE environment variable"})
            assert notes.data["results"][0]["source"] == "notes/emulator.md"
            assert "«STRIPE_API_BASE»" in notes.text
            empty = await docs.call("search_stripe_documentation", {"query": "  "})
            assert empty.is_error and "empty query" in empty.text
            too_many = await docs.call("search_stripe_documentation", {"query": "refund", "limit": 500})
            assert too_many.is_error and "between 1 and 20" in too_many.text
            nothing = await docs.call("search_stripe_documentation", {"query": "zzqxv wwkkq"})
            assert not nothing.is_error and nothing.data["results"] == []
        built = log_path.read_text()
        assert "indexing stripe" in built and "built in" in built
        index = docs_index.index_file(cache)
        assert index.exists()

        index.unlink()
        async with docs_server(workspace, cache, log) as docs:
            again = await docs.call("search_stripe_documentation", {"query": "expire a checkout session", "limit": 1})
            assert again.data["results"][0]["title"].startswith("Checkout Session: expire")
        assert index.exists()
        assert log_path.read_text().count("built in") == 2


def test_index_key_changes_with_the_notes(tmp_path: Path, monkeypatch):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# A\n\n## One\nfirst text\n")
    monkeypatch.setattr(docs_index, "NOTES_DIR", notes)
    before = docs_index.index_file(tmp_path)
    (notes / "a.md").write_text("# A\n\n## One\nchanged text\n")
    assert docs_index.index_file(tmp_path) != before
    assert [d.title for d in docs_index.note_docs()] == ["A: One"]


def test_the_docs_never_point_the_agent_at_the_emulator_controls():
    # The /_emulator/ controls are the grader's state (reset, clock, faults, webhook log): the agent's docs keep quiet.
    notes = [p for p in docs_index.NOTES_DIR.rglob("*") if p.is_file()]
    assert notes
    for note in notes:
        assert "_emulator" not in note.read_text(encoding="utf-8"), note
