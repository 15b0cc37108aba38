"""A person's verdict on a run, kept in a file beside its trace (``trace.jsonl.review.json``).

Stripe's published method discards runs lost to infrastructure and has an engineer review each best run's transcript
for integrity; this is where that judgement lives. The verdict is one of:

- ``valid``: the run stands as recorded;
- ``infra-failure``: lost to the infrastructure (a dead container, a provider outage): reports leave it out and
  count it;
- ``integrity``: the score is not to be trusted (reward hacking, a leaked answer, a grader tampered with);
- ``other``: not valid for another reason, which the note says.

The trace is never opened for writing (a verdict is an opinion added later, like the operator's notes); the file is
rewritten whole through ``os.replace``, and keeps the verdicts it replaced, so who judged what and when stays told.
"""

from __future__ import annotations

import getpass
import json
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import cast

from stripebench_tui.core.episode_files import Refused, read_episode_file
from stripebench_tui.core.json_value import JSONValue
from stripebench_tui.core.whole_file import write_whole
from stripebench_tui.errors import BadFileError, UserError

REVIEW_SCHEMA = "stripebench.review/1"
REVIEW_SUFFIX = ".review.json"
VERDICTS = ("valid", "infra-failure", "integrity", "other")
MAX_NOTE_CHARS = 4000


def review_path(trace_path: str | os.PathLike[str]) -> Path:
    """Where the review of the trace at ``trace_path`` lives (an episode directory stands for its trace.jsonl)."""
    p = Path(trace_path)
    if p.is_dir():
        p = p / "trace.jsonl"
    return p.with_name(p.name + REVIEW_SUFFIX)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _reviewer() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no login name (a container's uid without a passwd entry)
        return "unknown"


@dataclass(frozen=True)
class Review:
    """One verdict on a run: what, why, who, when (ISO 8601, UTC)."""

    verdict: str
    note: str = ""
    reviewer: str = ""
    at: str = ""


def check_verdict(verdict: str) -> str:
    """``verdict`` when it is one of VERDICTS; UserError (exit 2) naming them otherwise."""
    if verdict not in VERDICTS:
        raise UserError(f"unknown verdict {verdict!r}; choose {', '.join(VERDICTS)}")
    return verdict


def _parse(raw: bytes, path: Path) -> tuple[Review, list[Review]]:
    try:
        doc: JSONValue = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise BadFileError(f"{path}: not a review file (invalid JSON: {exc})") from None
    if not isinstance(doc, dict) or doc.get("schema") != REVIEW_SCHEMA:
        raise BadFileError(f"{path}: not a review file (expected schema {REVIEW_SCHEMA!r})")

    def one(item: JSONValue, where: str) -> Review:
        if not isinstance(item, dict) or item.get("verdict") not in VERDICTS:
            raise BadFileError(f"{path}: {where} has no verdict among {', '.join(VERDICTS)}")
        return Review(cast(str, item["verdict"]), str(item.get("note", ""))[:MAX_NOTE_CHARS], str(item.get("reviewer", "")),
                      str(item.get("at", "")))

    history = doc.get("history", [])
    if not isinstance(history, list):
        raise BadFileError(f"{path}: 'history' is not a list")
    return one(doc, "the file"), [one(h, f"history entry {i + 1}") for i, h in enumerate(history)]


def _read(path: Path) -> tuple[Review, list[Review]] | None:
    try:
        raw = read_episode_file(path.parent, path.name)
    except FileNotFoundError:
        return None
    except Refused as exc:
        raise BadFileError(f"{path}: refused, {exc.reason}") from None
    except OSError as exc:
        raise BadFileError(f"{path}: cannot read ({exc.strerror})") from None
    return _parse(raw, path)


def load_review(trace_path: str | os.PathLike[str]) -> Review | None:
    """The verdict on the run whose trace is at ``trace_path`` (None: not reviewed); BadFileError for a bad file."""
    found = _read(review_path(trace_path))
    return found[0] if found else None


def review_history(trace_path: str | os.PathLike[str]) -> list[Review]:
    """Every verdict the run has had, oldest first, the current one last."""
    found = _read(review_path(trace_path))
    return [*found[1], found[0]] if found else []


def save_review(trace_path: str | os.PathLike[str], verdict: str, note: str = "", reviewer: str | None = None,
                clock: Callable[[], str] = _now) -> Review:
    """Judge the run: write ``verdict`` with ``note``, who (default: this login) and when; the verdict it replaces
    goes to the history."""
    path = review_path(trace_path)
    if not path.parent.is_dir():
        raise BadFileError(f"{path.parent}: no such episode directory")
    review = Review(check_verdict(verdict), str(note).strip()[:MAX_NOTE_CHARS], reviewer or _reviewer(), clock())
    found = _read(path)
    history = [*found[1], found[0]] if found else []
    doc = {"schema": REVIEW_SCHEMA, "trace": path.name[: -len(REVIEW_SUFFIX)], **asdict(review),
           "history": [asdict(h) for h in history]}
    write_whole(path, (json.dumps(doc, ensure_ascii=False, indent=2) + "\n").encode("utf-8"))
    return review


def clear_review(trace_path: str | os.PathLike[str]) -> bool:
    """Forget the run's review (it is unreviewed again); False when it had none."""
    path = review_path(trace_path)
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise BadFileError(f"{path}: cannot remove ({exc.strerror})") from None
    return True


__all__ = ["REVIEW_SCHEMA", "REVIEW_SUFFIX", "Review", "VERDICTS", "check_verdict", "clear_review", "load_review",
           "review_history", "review_path", "save_review"]
