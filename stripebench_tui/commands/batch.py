"""``stripebench batch``: run environments × agents × runs as separate episodes, then ``batch report`` the table."""

from __future__ import annotations

import datetime as dt
import signal
import socket
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

if TYPE_CHECKING:
    from typer._click.core import Context as TyperContext  # typer vendors click: its groups take this Context

    from stripebench_tui.batch.manifest import Batch
from typer.core import TyperGroup

from stripebench_tui.batch import create_runner
from stripebench_tui.core.sanitize import sanitize
from stripebench_tui.errors import RuntimeProblem, UserError


class _RunByDefault(TyperGroup):
    """``stripebench batch ENV…`` is ``stripebench batch run ENV…``; ``batch report DIR`` is the other command."""

    def parse_args(self, ctx: TyperContext, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["run", *args]
        return super().parse_args(ctx, args)


batch_app = typer.Typer(cls=_RunByDefault, no_args_is_help=True, rich_markup_mode="markdown",
                        help="Run a sweep of episodes (environments × agents × runs) and report it like the published "
                             "benchmark.\n\n"
                             "`stripebench batch ENV… --agents oracle,mutant:NAME --runs 3 --out DIR`, then "
                             "`stripebench batch report DIR`; `stripebench replay DIR` opens the grid.")


@batch_app.command("run")
def batch_run(
    envs: list[str] = typer.Argument(None, metavar="ENV...", help="Environment ids, paths to environments or benchmark "
                                     "folders (a folder of several problems runs each)."),
    agents: str = typer.Option("oracle", "--agents", help="Comma-separated: oracle, noop, mutant:NAME (the oracle playing a "
                               "mutant plan), or AGENT:MODEL for anthropic, openai, claude-code, codex, mini-swe-agent."),
    runs: int = typer.Option(1, "--runs", "-k", min=1, help="Runs per environment and agent (the report takes the best of k)."),
    workers: int = typer.Option(None, "--workers", "-j", min=1,
                                help="Episodes at once (default: one per CPU; with --ray, the cluster's CPUs)."),
    out: Path = typer.Option(None, "--out", "-o", help="The new batch directory (default ./batches/batch-TIME/)."),
    resume: Path = typer.Option(None, "--resume",
                                help="Continue this batch directory: run only the episodes that did not finish."),
    all_envs: bool = typer.Option(False, "--all", help="Every environment (`stripebench envs`)."),
    category: str = typer.Option(None, "--category", help="Every environment of this category: backend, full-stack, gym."),
    seed: int = typer.Option(0, "--seed",
                             help="Emulator seed of run 1; run r uses SEED+r-1 (the same seed in every cell of a run)."),
    backend: str = typer.Option("emulator", "--backend", help="emulator (offline) or stripe (your test mode)."),
    sandbox: str = typer.Option(None, "--sandbox", help="local or docker (default: $STRIPEBENCH_SANDBOX, else local)."),
    max_turns: int = typer.Option(None, "--max-turns", min=1, help="Turn limit of every episode (default: each environment's)."),
    ray: str = typer.Option(None, "--ray", help="Run each episode as a Ray task: `auto` (the cluster `ray` finds, else a local "
                            "one) or a cluster ADDRESS (host:port). Every node needs stripebench and the environments."),
) -> None:
    """Run every episode of the matrix, each as its own `stripebench run --headless` process.

    Each episode gets DIR/CELL/episode/; DIR/batch.json records what was asked, the versions and every
    cell's command and seed (re-run one cell exactly from it). Unknown environments or agents are refused
    before anything starts. Exit 0 when every episode ended (passed or not), 4 when the batch was stopped
    (a full disk, Ctrl+C): `--resume DIR` runs what is left.

    Example: `stripebench batch --category backend --agents oracle,mutant:no-metadata --runs 2 -j 2 --out sweep`
    """
    # The batch modules (pydantic through the environments' manifests, rich for the progress) load only when a
    # batch runs: cli imports every command module at start-up
    from stripebench_tui.batch.manifest import Batch
    from stripebench_tui.batch.progress import BatchProgress
    from stripebench_tui.batch.runner import run_batch

    envs = list(envs or [])
    if resume is not None:
        if envs or all_envs or category or out is not None:
            raise UserError("--resume DIR continues that batch as it was asked; it takes no environments or --out")
        batch = Batch.open(resume)
        ray = ray if ray is not None else batch.request.get("ray")
        runner = _runner(ray, workers or batch.request.get("workers"))
    else:
        out, request, cells = _plan(envs, agents, runs, out, all_envs, category, seed, backend, sandbox, max_turns,
                                    workers, ray)
        runner = _runner(ray, workers)  # a Ray address that does not answer: refused before anything is written
        batch = Batch.create(out, request, cells)
    runner.start()  # joins (or starts) a Ray cluster: its CPUs are the default number of slots
    pending = batch.pending()
    typer.echo(f"batch {batch.root}: {len(pending)} of {len(batch.cells)} episodes to run, {runner.slots} at once on "
               f"{runner.label}")
    stop = threading.Event()
    previous = signal.signal(signal.SIGINT, lambda *_: stop.set())
    try:
        with BatchProgress(len(pending)) as progress:
            run_batch(batch, runner, progress, stop)
    finally:
        signal.signal(signal.SIGINT, previous)
    left = batch.pending()
    if left:
        raise RuntimeProblem(f"stopped with {len(left)} episodes left; `stripebench batch --resume {batch.root}` runs them")
    typer.echo(f"done: `stripebench batch report {batch.root}` for the table, `stripebench replay {batch.root}` for the grid")


def _plan(envs: list[str], agents: str, runs: int, out: Path | None, all_envs: bool, category: str | None, seed: int,
          backend: str, sandbox: str | None, max_turns: int | None,
          workers: int | None, ray: str | None) -> tuple[Path, dict[str, Any], list[Any]]:
    """The batch directory, the request and the cells; UserError for anything unknown (nothing is written)."""
    # the matrix resolves environments (pydantic): loaded when a batch is planned, not at start-up
    from stripebench_tui.batch.matrix import build_cells, check_agents_fit, parse_agents, resolve_environments

    specs = parse_agents(agents)
    resolved = resolve_environments(envs, all_envs=all_envs, category=category)
    check_agents_fit(resolved, specs)
    if sandbox is not None and sandbox not in ("local", "docker"):
        raise UserError(f"unknown sandbox {sandbox!r}; choose local or docker")
    cells = build_cells(resolved, specs, runs, seed, backend=backend, sandbox=sandbox, max_turns=max_turns)
    if out is None:
        out = Path("batches") / dt.datetime.now(dt.UTC).strftime("batch-%Y%m%dT%H%M%SZ")
    request = {"envs": [ref for ref, _ in resolved], "agents": [s.label for s in specs], "runs": runs, "seed": seed,
               "backend": backend, "sandbox": sandbox, "max_turns": max_turns, "workers": workers, "ray": ray}
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UserError(f"{out} already exists and is not empty; not overwriting it (--resume DIR continues a batch)")
    return out, request, cells


def _runner(ray: str | None, workers: int | None) -> Any:
    if ray is None:
        return create_runner("local", workers=workers)
    if ray != "auto":
        check_address(ray)
    return create_runner("ray", address=ray, workers=workers)


def check_address(address: str, timeout: float = 3.0) -> None:
    """A Ray cluster ADDRESS (host:port) that accepts a connection; RuntimeProblem in one line otherwise."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise UserError(f"--ray takes `auto` or a cluster address host:port (the head's GCS port), not {address!r}")
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as exc:
        raise RuntimeProblem(f"no Ray cluster answers at {address} ({exc.strerror or exc}); start one with "
                             f"`ray start --head` or use --ray auto") from None


@batch_app.command("report")
def batch_report(
    directory: Path = typer.Argument(..., metavar="DIR", help="A batch directory (`stripebench batch … --out DIR`)."),
    fmt: str = typer.Option("md", "--format", "-f", help="md (tables), csv (one row per run: eval_name, model, run_id, "
                            "score, turn_count, then ours), json (everything) or html (one offline file, with each "
                            "run's episode report beside it)."),
    output: Path | None = typer.Option(None, "--output", "-o", help="Where to write (default: DIR/report.FORMAT)."),
    force: bool = typer.Option(False, "--force", help="Overwrite --output (and its episode reports) if they exist."),
    compare_with: Path | None = typer.Option(
        None, "--compare", metavar="RESULTS.CSV",
        help="Put the models of a results file in the published benchmark's format (eval name,model,run ID,score,"
             "turn count) beside this sweep's agents, matched by the published eval names."),
) -> None:
    """Print the results table of a batch and write it as DIR/report.FORMAT.

    Per task: the best of k runs, the mean, the turn range of the best runs, tokens and cost; per
    category the average of best-of-k; the criteria that fail most across runs; the failure modes the
    findings show by agent and task, the findings beside failed runs, and turns, time, tokens and cost
    per agent (median / p90). Computed from the episodes' traces; episodes that did not finish are left
    out (and counted). Schemas: docs/batch.md.

    The HTML file (`--format html -o sweep.html`) opens offline: the score by category × agent, a heat map of
    failure modes × agents, the criteria that fail most, and with --compare the published models beside this
    sweep's agents; every number links to the runs behind it, and each run to its episode report, written beside
    it in sweep-episodes/.

    Example: `stripebench batch report sweep --compare benchmarks-results.csv`.
    """
    # The report's modules (pydantic through the manifests) load only when a report is asked for, not at start-up
    from stripebench_tui.batch.manifest import Batch
    from stripebench_tui.batch.sweep_report import FORMATS, write_report

    if fmt not in (*FORMATS, "html"):
        raise UserError(f"unknown --format {fmt!r}; choose {', '.join(FORMATS)} or html")
    batch = Batch.open(directory)
    if fmt == "html":
        _write_html(batch, output or batch.root / "report.html", force, compare_with)
        return
    text, path = write_report(batch, fmt, compare_with, output=output)
    typer.echo(sanitize(text, max_line=None), nl=False)  # the file keeps the data; a terminal obeys no escape in it
    typer.echo(sanitize(f"written: {path}"), err=True)


def _write_html(batch: Batch, out: Path, force: bool, compare_with: Path | None = None) -> None:
    # jinja2 and the episode reports' builders load only for --format html
    from stripebench_tui.batch.html import write_sweep
    from stripebench_tui.batch.sweep_report import with_comparison

    episodes = out.with_name(out.stem + "-episodes")
    if not force and (out.exists() or episodes.exists()):
        raise UserError(f"{out if out.exists() else episodes}: already exists (use --force to overwrite)")
    report = with_comparison(batch, compare_with)  # the published results' tables go into the page too

    def progress(n: int, total: int) -> None:
        if n == total or n % 20 == 0:
            typer.echo(f"episode reports: {n}/{total}", err=True)

    try:
        path, pages = write_sweep(batch, report, out, progress)
    except OSError as exc:
        raise UserError(f"{out}: cannot write ({exc.strerror or exc})") from None
    typer.echo(f"wrote {path} ({path.stat().st_size:,} bytes) and {len(pages)} episode reports in {episodes}", err=True)


def register(app: typer.Typer) -> None:
    """Add ``batch`` (and ``batch report``) to the CLI."""
    app.add_typer(batch_app, name="batch")


__all__ = ["batch_app", "check_address", "register"]
