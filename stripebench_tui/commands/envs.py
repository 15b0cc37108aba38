"""``stripebench envs``: list the environments an episode can run; ``stripebench envs new``: make one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from stripebench_tui.core.sanitize import sanitize
from stripebench_tui.envs.size import workspace_size
from stripebench_tui.errors import UserError


def envs(ctx: typer.Context,
         as_json: bool = typer.Option(False, "--json", help="Print a JSON list instead of a table."),
         path: Path | None = typer.Option(None, "--path", help="List the benchmark folders under PATH (a folder in "
                                          "the published layout, or a directory of them, e.g. ~/ai/benchmarks) "
                                          "with how to run each and what it needs.")) -> None:
    """List the environments (id, category, stack, workspace size, title) that `stripebench run ENV` accepts.

    They come from the repository's environments/ directory, or $STRIPEBENCH_ENVIRONMENTS. With --path, the
    benchmark folders there instead (environment/, grader/, solution/ as Stripe published them): each is run
    with `stripebench run PATH/<name>` (a problem of a multi-problem folder: PATH/<name>/environment/<problem>).

    Examples: `stripebench envs --json`, `stripebench envs --path ~/ai/benchmarks`; a new environment:
    `stripebench envs new demo-task` (see `stripebench envs new --help`).
    """
    if ctx.invoked_subcommand is not None:
        return
    # The catalog and the manifests (pydantic, tomllib) load only when this command runs: cli imports every command
    # module at start-up
    from stripebench_tui.envs.catalog import list_environments
    from stripebench_tui.envs.manifest import environments_dir

    if path is not None:
        _bench_envs(path, as_json)
        return
    found = list_environments()
    sizes = {e.id: workspace_size(e.workspace) for e in found}
    if as_json:
        rows = [{"id": e.id, "category": e.manifest.category, "stack": e.manifest.stack,
                 "files": sizes[e.id].files, "lines": sizes[e.id].lines, "title": e.manifest.title,
                 "summary": e.manifest.summary, "path": str(e.root)} for e in found]
        typer.echo(json.dumps(rows, indent=2))
        return
    if not found:
        typer.echo(f"no environments in {environments_dir()}")
        return
    columns = [[e.id, e.manifest.category, e.manifest.stack or "-", str(sizes[e.id]), e.manifest.title] for e in found]
    widths = [max(len(row[i]) for row in columns) for i in range(4)]
    for row in columns:
        _say("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=False)) + "  " + row[4])


def _bench_envs(path: Path, as_json: bool) -> None:
    # The published folders' loader (pydantic) and the runtime's toolchains load only for --path, not at start-up
    from stripebench_tui.envs.benchfolder import bench_folders_under, load_bench_folder
    from stripebench_tui.runtime.toolchains import grader_checks, manifest_checks

    folders = bench_folders_under(path)
    if not folders:
        raise UserError(f"{path}: no benchmark folders there (each holds environment/ and grader/)")
    rows: list[dict[str, Any]] = []
    for folder in folders:
        try:
            found = load_bench_folder(folder)
        except UserError as exc:  # one broken folder is listed with its problem, not the end of the listing
            rows.append({"id": folder.name, "category": "-", "title": str(exc), "run": "", "overlay": "",
                         "needs": [], "offline": False, "path": str(folder)})
            continue
        for e in found:
            target = e.folder / "environment" / e.problem if e.problem else e.folder
            rows.append({"id": e.id, "category": e.manifest.category, "title": e.manifest.title,
                         "run": f"stripebench run {target}", "overlay": str(e.overlay_path or ""),
                         "needs": e.needs, "offline": e.overlay.offline, "stripe_preload": e.overlay.stripe_preload,
                         "path": str(e.root), "hidden": list(e.manifest.hidden), "visible": list(e.manifest.visible),
                         "here": [{"present": ok, "text": text} for ok, text in
                                  manifest_checks(e.manifest) + grader_checks(e.folder, e.external_grader)]})
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    width = max(len(r["id"]) for r in rows)
    for r in rows:
        _say(f"{r['id']:<{width}}  {r['category']:<10}  {r['title']}")
        if r["run"]:
            _say(f"{'':<{width}}  run: {r['run']}" + ("" if r["overlay"] else "  (no overlay: defaults)"))
        if r.get("hidden"):  # what the agent's workspace lacks (the services and the grader still see it)
            shown = f" but {', '.join(r['visible'])}" if r["visible"] else ""
            _say(f"{'':<{width}}  hidden from the agent: {', '.join(r['hidden'])}{shown}")
        for need in r["needs"]:
            _say(f"{'':<{width}}  needs: {need}")
        for check in r.get("here", []):
            _say(f"{'':<{width}}  {'here' if check['present'] else 'MISSING'}: {check['text']}")


def _say(line: str) -> None:
    """Print a line of the listing: folder names and titles are anyone's, so a terminal gets no escape of theirs."""
    typer.echo(sanitize(line))


def new(
    name: str = typer.Argument(..., metavar="NAME", help="The new environment's id: lower-case letters, digits and "
                               "dashes, starting with a letter (e.g. demo-task)."),
    source: str | None = typer.Option(None, "--from", metavar="ENV", help="Copy this environment (an id or a "
                                      "path) under the new name instead of writing the skeleton."),
    directory: Path | None = typer.Option(None, "--dir", help="Write DIR/environments/NAME and DIR/graders/ "
                                          "instead of where stripebench looks (the checkout's, or "
                                          "$STRIPEBENCH_ENVIRONMENTS and $STRIPEBENCH_GRADERS)."),
) -> None:
    """Lay out a new environment that `stripebench validate NAME` passes as generated.

    Writes environments/NAME/ (environment.toml, PROBLEM.md, workspace/ with the app, seed.py, solution/plan.toml
    with the files the oracle writes, mutants/ with one mutant) and graders/NAME_WITH_UNDERSCORES.py (the grader's
    criteria). The skeleton is a small Flask members API: the oracle creates a Stripe customer through the official
    SDK and the grader reads it back; the mutant forgets its metadata. Its app runs under the shared dev server
    (`shared = ["devserver.py"]`), which restarts it on edits. Then edit the task into yours: docs/new-environment.md
    walks through each file.

    With --from ENV it copies that environment and its grader instead, with the id (and grader name) rewritten.
    Refuses a NAME that is not a valid id or that exists already; nothing is overwritten.

    Examples: `stripebench envs new demo-task`, `stripebench envs new my-checkout --from checkout-migration`,
    `stripebench envs new demo-task --dir /tmp/bench`
    """
    # The catalog (pydantic) and the graders' loader (the grading package) load only when `envs new` runs
    from stripebench_tui.envs.catalog import find_environment
    from stripebench_tui.envs.scaffold import new_environment, targets_for
    from stripebench_tui.grading.loader import grader_path, graders_dir

    targets = targets_for(directory.expanduser().resolve() if directory else None, graders_dir())
    copied = find_environment(source) if source else None
    made = new_environment(name, targets, copied, grader_path(copied) if copied else None)
    typer.echo(f"made {made.env_id}" + (f" (a copy of {source})" if source else "") + ":")
    for path in made.files:
        typer.echo(f"  {path}")
    if made.grader is not None:
        typer.echo(f"  {made.grader}")
    else:
        typer.echo("  (no grader: the source has none)")
    typer.echo(f"next: {made.next_command()}")


def register(app: typer.Typer) -> None:
    """Add ``envs`` (and ``envs new``) to the CLI."""
    group = typer.Typer(help=envs.__doc__, no_args_is_help=False)
    group.callback(invoke_without_command=True)(envs)
    group.command("new")(new)
    app.add_typer(group, name="envs")


__all__ = ["envs", "new", "register"]
