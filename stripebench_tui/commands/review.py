"""``stripebench review``: a person's verdict on a run (valid, infra-failure, integrity, other), and a batch's queue."""

from __future__ import annotations

from pathlib import Path

import typer

from stripebench_tui.core.review import check_verdict, clear_review, load_review, review_history, save_review
from stripebench_tui.errors import BadFileError, UserError


def _episode_dir(path: Path) -> Path:
    """The episode directory ``path`` names: the directory, its trace, or a batch cell's directory."""
    if path.is_file() and path.name == "trace.jsonl":
        return path.parent
    if (path / "trace.jsonl").is_file():
        return path
    if (path / "episode" / "trace.jsonl").is_file():
        return path / "episode"
    raise BadFileError(f"{path}: no episode here (an episode directory, its trace.jsonl, or a batch cell)")


def review(
    target: Path = typer.Argument(..., metavar="EPISODE|DIR",
                                  help="An episode (its directory, trace.jsonl, or a batch cell's directory), or a "
                                       "batch directory to list its review queue."),
    verdict: str | None = typer.Option(None, "--verdict", "-v",
                                          help="valid, infra-failure, integrity (reward hacking, a leaked answer, a "
                                               "grader tampered with) or other (say why in --note)."),
    note: str = typer.Option("", "--note", "-n", help="Why: what the transcript shows (turn numbers help)."),
    by: str | None = typer.Option(None, "--by", help="Who judged (default: your login name)."),
    clear: bool = typer.Option(False, "--clear", help="Forget the run's verdict: it is unreviewed again."),
    todo: bool = typer.Option(False, "--todo", help="With a batch: only the best runs not reviewed yet."),
) -> None:
    """Judge a run, show its verdict, or list a batch's review queue.

    The published benchmark discarded runs lost to infrastructure and had an engineer review each best run's
    transcript for integrity. A verdict is kept beside the trace (`trace.jsonl.review.json`, with its note, who
    and when; the verdicts it replaced stay in its history), never inside it. `batch report` and `scorecard` honour
    it: infra-failure runs are left out and counted, a best run judged integrity or other gives way to the next
    best, and the report says how many best runs were reviewed. In the batch grid (`stripebench replay DIR`),
    `r` opens the same queue.

    Examples: `stripebench review sweep/galtee__oracle__r2 --verdict integrity --note "read the grader at turn 14"`;
    `stripebench review sweep --todo` lists the best runs still to review, best of each task × agent first.
    """
    if (target / "batch.json").is_file():
        if verdict is not None or clear or note:
            raise UserError(f"{target} is a batch: judge one run of it (`stripebench review {target}/CELL --verdict …`)")
        _list_queue(target, todo)
        return
    if todo:
        raise UserError("--todo lists a batch's queue; give a batch directory")
    episode = _episode_dir(target)
    if clear and verdict is not None:
        raise UserError("--clear and --verdict contradict each other; give one")
    if clear:
        typer.echo(f"{episode}: " + ("review cleared" if clear_review(episode) else "was not reviewed"))
        return
    if verdict is None:
        if note or by:
            raise UserError("--note and --by go with --verdict")
        history = review_history(episode)
        if not history:
            typer.echo(f"{episode}: not reviewed (`--verdict valid|infra-failure|integrity|other --note …`)")
            return
        for i, r in enumerate(reversed(history)):
            typer.echo(("" if i == 0 else "  was: ") + f"{r.verdict} by {r.reviewer} at {r.at}"
                       + (f": {r.note}" if r.note else ""))
        return
    check_verdict(verdict)
    if verdict == "other" and not note.strip():
        raise UserError("--verdict other needs a --note saying why")
    load_review(episode)  # a malformed review file is named before it is replaced
    saved = save_review(episode, verdict, note, by)
    typer.echo(f"{episode}: {saved.verdict} by {saved.reviewer} at {saved.at}")


def _list_queue(root: Path, todo: bool) -> None:
    # The batch's modules (pydantic through the environments' manifests) load only for a batch's queue, not at
    # start-up (cli imports every command module)
    from stripebench_tui.batch.manifest import Batch
    from stripebench_tui.batch.review_queue import batch_queue

    queue = batch_queue(Batch.open(root))
    heads = [q for q, _ in queue if q.best]
    reviewed = sum(1 for q in heads if q.run.verdict is not None)
    rows = [(q, r) for q, r in queue if not todo or (q.best and q.run.verdict is None)]
    typer.echo(f"{root}: {reviewed} of {len(heads)} best runs reviewed; {len(queue)} runs finished")
    for q, r in rows:
        who = f" by {r.review.reviewer}" if r.review else ""
        note = f": {r.review.note}" if r.review and r.review.note else ""
        typer.echo(f"{'best ' if q.best else '     '}{q.run.run}  score {float(q.run.score):.2f}  turns {q.run.turns}  "
                   f"{q.run.verdict or 'unreviewed'}{who}{note}")


def register(app: typer.Typer) -> None:
    """Add ``review`` to the CLI."""
    app.command("review")(review)


__all__ = ["register", "review"]
