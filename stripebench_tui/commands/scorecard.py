"""``stripebench scorecard RESULTS.csv``: the published benchmark's tables, recomputed from a results file by its rule."""

from __future__ import annotations

from pathlib import Path

import typer

from stripebench_tui.errors import BadFileError, UserError


def scorecard(
    results: Path = typer.Argument(..., metavar="RESULTS.CSV",
                                   help="A results file: eval name,model,run ID,score,turn count (one row per run; "
                                        "an optional verdict column holds the run review)."),
    readme: Path | None = typer.Option(None, "--readme", metavar="PATH",
                                          help="The README whose printed tables to check (default: README.md beside "
                                               "the CSV, when there is one)."),
    no_readme: bool = typer.Option(False, "--no-readme", help="Check against no README, even one beside the CSV."),
    fmt: str = typer.Option("table", "--format", "-f", help="table, md, csv (one row per category × model) or json."),
) -> None:
    """Recompute the published scorecard (backend, full-stack, gym) from a results CSV, as Stripe's README says it
    was made, and check every cell the README prints.

    The rule: per task and model the best of k runs (a tie goes to the fewest turns); each language's three
    SDK-upgrade problems averaged into one task first (the turn range still counts each problem's best run); tasks
    averaged by category, printed as a whole percentage rounded half up. Eval names map to tasks and categories
    through the overlays we ship for the published folders (`environments/published/`); an id of one of our environments
    (a `batch report --format csv` of ours) by its manifest's category. Beside each figure: the
    mean of k and pass^k (the share of tasks where every run scored 1.0). With a verdict column (`stripebench
    review`), infra-failure runs are left out and a best run judged integrity or other gives way to the next best.

    A printed cell that differs from the results is named under the tables (never "fixed"); a model the README does
    not print, or one with only part of a category, is said too. Exit 3 when the CSV or README cannot be read (one
    line naming the row).

    Example: `stripebench scorecard benchmarks/benchmarks-results-2026-02-26.csv` (the README beside it is checked).
    """
    # The published tables (pydantic through the environments' manifests) and the view (csv, decimal) load only when
    # this command runs: cli imports every command module at start-up
    from stripebench_tui.batch.published import published_scorecard
    from stripebench_tui.batch.scorecard_view import FORMATS, render_scorecard

    if fmt not in FORMATS:
        raise UserError(f"unknown --format {fmt!r}; choose {', '.join(FORMATS)}")
    if readme is not None and no_readme:
        raise UserError("--readme PATH and --no-readme contradict each other; give one")
    if readme is None and not no_readme and (results.parent / "README.md").is_file():
        readme = results.parent / "README.md"
    card, read = published_scorecard(results, readme)
    if not card.categories:
        raise BadFileError(f"{results}: no run matches a published task (eval names: "
                        + ", ".join(sorted(card.unmatched)[:8]) + ")")
    typer.echo(render_scorecard(card, fmt, results, readme, len(read.runs)), nl=False)


def register(app: typer.Typer) -> None:
    """Add ``scorecard`` to the CLI."""
    app.command("scorecard")(scorecard)


__all__ = ["register", "scorecard"]
