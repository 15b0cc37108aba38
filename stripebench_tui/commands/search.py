"""``stripebench search``: find what happened across episodes (findings, Stripe requests, tools, verdicts, output)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from stripebench_tui.core.sanitize import sanitize


def search(
    directory: Path = typer.Argument(..., metavar="DIR", help="A batch directory or any folder of episodes."),
    query: list[str] = typer.Argument(..., metavar="QUERY", help="Terms (see below); several are all required."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object: the hits and what was searched."),
    no_index: bool = typer.Option(False, "--no-index", help="Read every trace instead of the indexes (writes nothing)."),
) -> None:
    """Find the episodes and turns where something happened; each hit is episode, turn and one line of context.

    Terms: finding:KIND (finding:400-as-success), request:'METHOD PATH' or request:PATH with * wildcards, then
    optionally status:4xx or status:402 (request:'POST /v1/refunds' status:4xx), tool:NAME (tool:browser_type),
    verdict:STATUS then optionally criterion:NAME (verdict:fail criterion:paid); any other word is text in a tool's
    output (case-insensitive). An episode is listed when every term has a hit in it. A term longer than 256
    characters, or a pattern with more than 16 wildcards, is refused (search a shorter part of it). Hits are printed
    sanitised: a tool output's terminal escapes are not obeyed.

    The first search of an episode builds its index (search-index.sqlite3, beside its trace.jsonl: the only file
    search writes), which makes the next ones quick; a trace that changed gets a new one. Exit 0 with hits, 1
    without, 2 on a query that does not parse.

    Examples: `stripebench search sweep finding:400-as-success`,
    `stripebench search episodes "request:'POST /v1/checkout/*' status:4xx" --json`
    """
    # sqlite3 and the index's modules load only when a search runs, not at every command's start-up
    from stripebench_tui.search import search as run_search

    found = run_search(directory, " ".join(query), use_index=not no_index)
    hits = sum(len(e.hits) for e in found.episodes)
    if as_json:
        typer.echo(json.dumps({
            "query": " ".join(query), "searched": found.searched, "indexed": found.indexed, "skipped": found.skipped,
            "hits": [{"episode": e.label, "path": str(e.episode), "turn": h.turn, "kind": h.kind, "context": h.context}
                     for e in found.episodes for h in e.hits]}, indent=2))
    else:
        for e in found.episodes:  # folder names and tool output: a terminal must show their escapes, not obey them
            for h in e.hits:
                typer.echo(sanitize(f"{e.label}  turn {h.turn:<4} {h.kind:<8} {h.context}"))
    note = f"{hits} hits in {len(found.episodes)} of {found.searched} episodes"
    if found.indexed:
        note += f" ({found.indexed} indexes built)"
    if found.skipped:
        note += f"; {len(found.skipped)} skipped: " + "; ".join(found.skipped[:3]) + ("…" if len(found.skipped) > 3 else "")
    typer.echo(sanitize(note), err=True)
    sys.exit(0 if hits else 1)


def register(app: typer.Typer) -> None:
    """Add ``search`` to the CLI."""
    app.command("search")(search)


__all__ = ["register", "search"]
