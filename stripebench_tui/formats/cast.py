"""Terminal recordings: the TUI's presenter mode filmed under a pseudo-terminal, written as asciicast v2.

The episode is played by the real app (``tui.apps.recording_app``, presenter
mode: paced, captioned, masked) in a child process whose terminal is a pty of
the chosen size; the bytes it draws are read with their times and written as
asciicast v2 ``[t, "o", data]`` events, with a ``[t, "m", "turn N"]`` marker
where each turn first shows, so ``asciinema play`` and asciinema's web player
read the file unchanged (and the report's player seeks to a turn by its marker).

Why not asciinema's recorder: it is made for a person at a terminal: it copies
the child's output to ``/dev/tty``, puts stdin in raw mode and installs signal
handlers, none of which an unattended export wants; and its writer cannot label
a marker. asciinema's reader checks these files in the tests.

What is written on top of what the app drew:

- **It starts at the first whole frame** (text on half the rows or more): the
  interpreter's start-up, the terminal set-up and partial paints before it
  take no time; they go out with that frame.
- **Reads are frames**: reads closer than ``BURST_QUIET`` are one event, so a
  frame Textual wrote at once is never shown half-drawn.
- **Idle stretches are compressed**: no gap between two events is longer than
  ``idle_limit`` seconds.
- **Input-only sequences are dropped** (keyboard protocol, mode queries).
- **The app's exit is cut**: leaving the alternate screen would end the
  recording on a blank terminal; it ends on the last frame instead.
- **Secrets are redacted again**, in every run of text between escape
  sequences, with the trace's own redaction (``core.redact``): the presenter
  masks what it draws; this is the second lock.
"""

from __future__ import annotations

import codecs
import fcntl
import json
import os
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from stripebench_tui.core.caption import mask
from stripebench_tui.core.presenting import DWELL
from stripebench_tui.core.redact import Redactor
from stripebench_tui.core.trace import Header
from stripebench_tui.errors import RuntimeProblem, UserError

CHILD_MODULE = "stripebench_tui.tui.apps.recording_app"
TURN_FD = "STRIPEBENCH_TURN_FD"  # (the recording app's name for the pipe it writes turn numbers to)
DEFAULT_SIZE = (160, 45)
DEFAULT_IDLE_LIMIT = 2.0
READ_BYTES = 1 << 16
BURST_QUIET = 0.008  # seconds: reads closer together than this are one frame Textual wrote in pieces
MAX_BURST = 1 << 21
LEAVE_ALT_SCREEN = "\x1b[?1049l"  # what Textual writes first when it exits
# Escape sequences (CSI, OSC/DCS/APC strings, two-byte ESC) between which the drawn text lies.
_SEQUENCE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[P\]X^_][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[ -/]*[0-~]")
# What only a live terminal answers or acts on (keyboard-protocol pushes and pops, mode queries, the pointer's
# shape): dropped, so a player or terminal emulator that does not know them shows no stray characters.
_INPUT_ONLY = re.compile(r"\x1b\[[<>=][0-9;]*u|\x1b\[\?[0-9;]*\$p|\x1b\]22;[^\x07\x1b]*(?:\x07|\x1b\\)")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_ROW_MOVE = re.compile(r"\x1b\[(\d+);\d+H((?:(?!\x1b\[\d+;\d+H)[\s\S])*)")  # a cursor move and what follows it
_SIZE = re.compile(r"^\s*(\d{2,4})\s*[xX×]\s*(\d{1,4})\s*$")


@dataclass(frozen=True)
class CastOptions:
    """How to film an episode: terminal size, pacing, which turns, idle compression."""

    cols: int = DEFAULT_SIZE[0]
    rows: int = DEFAULT_SIZE[1]
    speed: float = 1.0
    from_turn: int | None = None
    to_turn: int | None = None
    idle_limit: float = DEFAULT_IDLE_LIMIT
    timeout: float | None = None  # wall seconds before a child that never ends is stopped (default: from the turns)


@dataclass
class CastStats:
    """What a recording came to."""

    events: int = 0
    duration: float = 0.0  # seconds of the recording, after idle compression
    wall: float = 0.0  # seconds the filming took
    redacted: int = 0  # runs of drawn text the second lock changed (0 when the presenter masked everything)
    markers: list[tuple[int, float]] = field(default_factory=list)  # (turn, seconds into the recording)
    header: dict[str, object] = field(default_factory=dict)


def parse_size(text: str) -> tuple[int, int]:
    """``"160x45"`` → (160, 45); a one-line ``UserError`` for anything else or a terminal too small to read."""
    m = _SIZE.match(text or "")
    if not m:
        raise UserError(f"--size {text!r}: write COLSxROWS, e.g. 160x45")
    cols, rows = int(m.group(1)), int(m.group(2))
    if not (60 <= cols <= 500 and 20 <= rows <= 200):
        raise UserError(f"--size {text!r}: columns must be 60..500 and rows 20..200 (presenter mode needs 100x30 to "
                        "show every pane)")
    return cols, rows


def cast_title(name: str, header: Header | None, redactor: Redactor | None = None) -> str:
    """``"EPISODE · ENV · AGENT"``: what a player shows above the recording (secrets and emails masked)."""
    parts = [name]
    if header is not None:
        parts += [p for p in (header.env, header.agent, header.model) if p]
    return mask(" · ".join(parts), redactor)


def cast_env(name: str, header: Header | None) -> dict[str, str]:
    """The variables the child runs with that name the episode (they go into the asciicast header's ``env``)."""
    env = {"TERM": "xterm-256color", "SHELL": os.environ.get("SHELL", "/bin/sh"), "STRIPEBENCH_EPISODE": name}
    if header is not None:
        env["STRIPEBENCH_ENV"] = header.env or ""
        env["STRIPEBENCH_AGENT"] = header.agent or ""
    redactor = Redactor()
    return {k: mask(v, redactor) for k, v in env.items()}


def child_command(trace_path: Path, options: CastOptions) -> list[str]:
    """The recorded program: this interpreter running the recording app on the trace."""
    argv = [sys.executable, "-m", CHILD_MODULE, str(trace_path), "--speed", repr(options.speed)]
    if options.from_turn is not None:
        argv += ["--from-turn", str(options.from_turn)]
    if options.to_turn is not None:
        argv += ["--to-turn", str(options.to_turn)]
    return argv


def default_timeout(turns: int, speed: float) -> float:
    """Generous wall seconds for ``turns`` turns: each held at most ``DWELL`` (over the speed), plus start-up."""
    return 60.0 + turns * (DWELL / speed + 0.5) * 1.5


def _rows_drawn(data: str) -> set[int]:
    """The screen rows ``data`` writes text on (Textual moves the cursor to each row it paints)."""
    return {int(m.group(1)) for m in _ROW_MOVE.finditer(data) if _CONTROL.sub("", _SEQUENCE.sub("", m.group(2)))}


def redact_drawn(data: str, redactor: Redactor) -> tuple[str, int]:
    """``data`` with secrets redacted in each run of text between escape sequences; (text, runs changed)."""
    out: list[str] = []
    changed = 0
    last = 0
    for m in _SEQUENCE.finditer(data):
        if m.start() > last:
            run = data[last:m.start()]
            clean = redactor.text(run)
            changed += clean != run
            out.append(clean)
        out.append(m.group(0))
        last = m.end()
    if last < len(data):
        run = data[last:]
        clean = redactor.text(run)
        changed += clean != run
        out.append(clean)
    return "".join(out), changed


def _read_burst(master: int, quiet: float = BURST_QUIET) -> tuple[bytes, bool]:
    """What is readable now and whatever follows within ``quiet`` seconds (one frame, not the pty's 4 KiB pieces),
    and whether the child's side has closed."""
    parts: list[bytes] = []
    closed = False
    while True:
        try:
            data = os.read(master, READ_BYTES)
        except OSError:  # EIO: every holder of the pty's other end has closed it
            data = b""
        if not data:
            closed = True
            break
        parts.append(data)
        if sum(map(len, parts)) >= MAX_BURST or not select.select([master], [], [], quiet)[0]:
            break
    return b"".join(parts), closed


def film(argv: list[str], *, cols: int, rows: int, env: dict[str, str], timeout: float,
         on_chunk: Callable[[float, bytes], None], on_turn: Callable[[float, int], None] = lambda t, n: None
         ) -> tuple[float, int]:
    """Run ``argv`` under a ``cols``×``rows`` pty and pass each read (seconds since start, bytes) to ``on_chunk``.

    The child may write turn numbers, a line each, to the pipe named by ``TURN_FD`` in its environment; each goes
    to ``on_turn`` with its time. Returns (wall seconds, exit code). Textual draws on stderr, so stdin, stdout and
    stderr are all the pty. A child still running after ``timeout`` seconds is stopped (its process group).
    """
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    turns_r, turns_w = os.pipe()
    try:
        proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env={**env, TURN_FD: str(turns_w)},
                                close_fds=True, pass_fds=(turns_w,), start_new_session=True)
    finally:
        os.close(slave)
        os.close(turns_w)
    start = time.monotonic()
    timed_out = False
    pending = b""
    watched = [master, turns_r]
    try:
        while True:
            if time.monotonic() - start > timeout:
                timed_out = True
                break
            ready, _, _ = select.select(watched, [], [], 0.5)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            at = time.monotonic() - start
            if turns_r in ready:
                got = os.read(turns_r, 4096)
                if not got:
                    watched.remove(turns_r)
                pending += got
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    if line.strip().isdigit():
                        on_turn(at, int(line))
            if master in ready:
                data, closed = _read_burst(master)
                if data:
                    on_chunk(at, data)
                if closed:
                    break
    finally:
        os.close(master)
        os.close(turns_r)
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        try:
            code = proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            code = proc.wait()
    if timed_out:
        raise RuntimeProblem(f"the recording had not ended after {timeout:.0f} s; stopped it")
    return time.monotonic() - start, code


class CastWriter:
    """asciicast v2, one JSON array a line: ``[t, "o", text]`` output and ``[t, "m", label]`` markers.

    (asciinema 2.4's own writer cannot label a marker; its reader is what the tests check these files with.)
    """

    def __init__(self, f: IO[str], header: dict[str, object]) -> None:
        self.f = f
        self.f.write(json.dumps({"version": 2, **header}, ensure_ascii=False) + "\n")

    def output(self, t: float, text: str) -> None:
        self.f.write(json.dumps([round(t, 6), "o", text], ensure_ascii=False) + "\n")

    def marker(self, t: float, label: str) -> None:
        self.f.write(json.dumps([round(t, 6), "m", label], ensure_ascii=False) + "\n")


def record_cast(trace_path: Path, out: Path, name: str, header: Header | None, turns: int,
                options: CastOptions = CastOptions()) -> CastStats:
    """Film ``trace_path``'s presenter playback into the asciicast v2 file ``out`` (``turns``: how many it plays).

    Each turn gets a marker labelled ``turn N`` at the first frame that shows it (players list and seek to them).
    """
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TEXTUAL", "COLUMNS", "LINES")}
    env.update(cast_env(name, header))
    env["COLORTERM"] = "truecolor"  # the theme's own colours, not the nearest of 256
    # The child imports the package this process runs (a checkout beside an installed copy films its own code).
    package_root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join([package_root, *[p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]])
    stats = CastStats()
    stats.header = {"width": options.cols, "height": options.rows, "timestamp": int(time.time()),
                    "title": cast_title(name, header),
                    "env": {k: env[k] for k in ("SHELL", "TERM", "STRIPEBENCH_EPISODE", "STRIPEBENCH_ENV",
                                                 "STRIPEBENCH_AGENT") if k in env}}
    redactor = Redactor()
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    held: list[tuple[float, str]] = []  # the latest read, written once the next arrives (the exit is cut from the last)
    clock = {"last_in": 0.0, "out": 0.0, "drawing": 0.0}
    setup: list[str] = []
    rows_drawn: set[int] = set()
    turns_due: list[int] = []  # drawn by the app, waiting for the frame that shows them

    with open(out, "w", encoding="utf-8") as f:
        writer = CastWriter(f, stats.header)

        def emit(t: float, text: str) -> None:
            gap = t - clock["last_in"]
            clock["last_in"] = t
            clock["out"] += min(max(0.0, gap), options.idle_limit)
            clean, changed = redact_drawn(_INPUT_ONLY.sub("", text), redactor)
            stats.redacted += changed
            for turn in turns_due:
                writer.marker(clock["out"], f"turn {turn}")
                stats.markers.append((turn, clock["out"]))
            turns_due.clear()
            writer.output(clock["out"], clean)
            stats.events += 1

        def on_chunk(t: float, data: bytes) -> None:
            text = decoder.decode(data)
            if not text:
                return
            if not clock["drawing"]:  # set-up and partial paints wait for the first whole frame: the start
                setup.append(text)
                rows_drawn.update(_rows_drawn(text))
                if len(rows_drawn) < options.rows // 2:
                    return
                text, clock["drawing"], clock["last_in"] = "".join(setup), 1.0, t
            if held:
                emit(*held.pop())
            held.append((t, text))

        def on_turn(t: float, turn: int) -> None:
            if held:  # what was read before the turn was drawn belongs to the turn before
                emit(*held.pop())
            turns_due.append(turn)

        stats.wall, code = film(child_command(trace_path, options), cols=options.cols, rows=options.rows, env=env,
                                timeout=options.timeout or default_timeout(turns, options.speed), on_chunk=on_chunk,
                                on_turn=on_turn)
        last = "".join(text for _, text in held) + decoder.decode(b"", final=True)
        drawn, _, after = last.partition(LEAVE_ALT_SCREEN)
        if code != 0:  # what it printed after leaving the screen says why (a traceback's last line)
            lines = [ln for ln in _SEQUENCE.sub("", after).splitlines() if ln.strip()]
            raise RuntimeProblem(f"the recorded app failed (exit {code}): {lines[-1] if lines else 'no message'}")
        if held or drawn:
            emit(held[0][0] if held else clock["last_in"], drawn)
    stats.duration = clock["out"]
    return stats


__all__ = ["CastOptions", "CastStats", "CastWriter", "DEFAULT_IDLE_LIMIT", "DEFAULT_SIZE", "cast_env", "cast_title",
           "child_command", "film", "parse_size", "record_cast", "redact_drawn"]
