"""``stripebench envs``: list the environments an episode can run."""

from __future__ import annotations

import json
from pathlib import Path

import typer


def envs(as_json: bool = typer.Option(False, "--json", help="Print a JSON list instead of a table."),
         path: Path | None = typer.Option(None, "--path", help="List the benchmark folders under PATH (a folder in "
                                          "the published layout, or a directory of them, e.g. ~/ai/benchmarks) "
                                          "with how to run each and what it needs.")) -> None:
    """List the environments (id, category, stack, workspace size, title) that `stripebench run ENV` accepts.

    They come from the repository's environments/ directory, or $STRIPEBENCH_ENVIRONMENTS. With --path, the
    benchmark folders there instead (environment/, grader/, solution/ as Stripe published them): each is run
    with `stripebench run PATH/<name>` (a problem of a multi-problem folder: PATH/<name>/environment/<problem>).

    Examples: `stripebench envs --json`, `stripebench envs --path ~/ai/benchmarks`
    """
    from stripebench_tui.envs.manifest import environments_dir
    from stripebench_tui.envs.catalog import list_environments
    from stripebench_tui.envs.size import workspace_size

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
        typer.echo("  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[4])


def _bench_envs(path: Path, as_json: bool) -> None:
    from stripebench_tui.envs.benchfolder import bench_folders_under, load_bench_folder
    from stripebench_tui.errors import UserError
    from stripebench_tui.runtime.toolchains import grader_checks, manifest_checks

    folders = bench_folders_under(path)
    if not folders:
        raise UserError(f"{path}: no benchmark folders there (each holds environment/ and grader/)")
    rows = []
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
                         "path": str(e.root),
                         "here": [{"present": ok, "text": text} for ok, text in
                                  manifest_checks(e.manifest) + grader_checks(e.folder, e.external_grader)]})
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    width = max(len(r["id"]) for r in rows)
    for r in rows:
        typer.echo(f"{r['id']:<{width}}  {r['category']:<10}  {r['title']}")
        if r["run"]:
            typer.echo(f"{'':<{width}}  run: {r['run']}" + ("" if r["overlay"] else "  (no overlay: defaults)"))
        for need in r["needs"]:
            typer.echo(f"{'':<{width}}  needs: {need}")
        for check in r.get("here", []):
            typer.echo(f"{'':<{width}}  {'here' if check['present'] else 'MISSING'}: {check['text']}")


def register(app: typer.Typer) -> None:
    """Add ``envs`` to the CLI."""
    app.command("envs")(envs)


__all__ = ["envs", "register"]
