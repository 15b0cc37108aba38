"""Errors a user can cause, and the exit codes the CLI maps them to."""

from __future__ import annotations

EXIT_OK = 0
EXIT_EPISODE_FAILED = 1  # the file was fine; the episode it holds did not pass
EXIT_USAGE = 2  # bad flags or arguments (click's own code)
EXIT_BAD_FILE = 3  # a trace, manifest or other input file that cannot be read
EXIT_RUNTIME = 4  # something the run needs is unavailable: a port, an engine, a browser, a provider


class UserError(Exception):
    """A problem the user can fix; the CLI prints it on one line and exits with ``exit_code``."""

    exit_code = EXIT_USAGE


class BadFileError(UserError):
    """An input file is missing, empty, malformed or of an unknown schema."""

    exit_code = EXIT_BAD_FILE


class RuntimeProblem(UserError):
    """Something the run depends on is unavailable or failed."""

    exit_code = EXIT_RUNTIME


def with_exit_code(code: int, message: str) -> UserError:
    """The error of ours that exits with ``code`` (a library's own user-facing error re-raised as ours, e.g. the
    emulator's ``EmulatorProblem``, whose exit codes are the same numbers)."""
    kind = {EXIT_BAD_FILE: BadFileError, EXIT_RUNTIME: RuntimeProblem}.get(code, UserError)
    return kind(message)
