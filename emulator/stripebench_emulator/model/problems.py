"""What a person running the emulator can cause or fix (a bad option, a state file, a busy port), with exit codes.

The emulator's own commands print these on one line and exit with ``exit_code``; a program embedding the emulator
(stripebench-tui) maps them onto its own errors. Stripe API errors (what a client's request gets) are ``errors``.
"""

from __future__ import annotations

EXIT_USAGE = 2  # bad options or arguments
EXIT_BAD_FILE = 3  # a state file that cannot be used
EXIT_RUNTIME = 4  # something serving needs is unavailable (a port)


class EmulatorProblem(Exception):
    """A problem the person running the emulator can fix; reported in one line."""

    exit_code = EXIT_USAGE


class BadOption(EmulatorProblem):
    """An option the emulator cannot use (an API version it does not know, a short control token)."""

    exit_code = EXIT_USAGE


class BadStateFile(EmulatorProblem):
    """The state file cannot be opened or is not the emulator's."""

    exit_code = EXIT_BAD_FILE


class CannotServe(EmulatorProblem):
    """The emulator could not listen or did not start."""

    exit_code = EXIT_RUNTIME
