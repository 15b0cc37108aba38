"""What the person at the controls can ask of a live episode, and the driver's status.

Commands are small records put on the driver's queue (``Driver.send`` or its
shortcut methods). Every command the driver receives is recorded as an
``operator`` event whose ``action`` is the command's ``action``; a command that
does not apply (approve with nothing pending) is recorded with
``details["ignored"]`` saying why.

The driver's status is published as ``operator`` events with ``action="status"``
and ``text`` one of ``STATUSES``, so a TUI (or a replay) derives its status bar
from the event stream alone: ``status_from_state(state)``.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from stripebench_tui.core.events import Event, Operator
from stripebench_tui.core.state import EpisodeState

# Driver status, as shown in the status bar.
RUNNING, PAUSED, WAITING_FOR_APPROVAL, ENDED = "running", "paused", "waiting_for_approval", "ended"
STATUSES = (RUNNING, PAUSED, WAITING_FOR_APPROVAL, ENDED)
STATUS_ACTION = "status"  # Operator.action of status events (published by the driver, not a person)

# Episode-end reasons the driver uses (EpisodeEnd.reason).
AGENT_DONE, MAX_TURNS, WALL_TIME, BUDGET, STOPPED, ERROR = (
    "agent_done",
    "max_turns",
    "wall_time",
    "budget",
    "stopped",
    "error",
)


@dataclass
class Command:
    """Base of operator commands; ``action`` is what the recorded operator event says."""

    action = ""


@dataclass
class Pause(Command):
    """Stop before the agent's next turn (a turn in progress finishes first)."""

    action = "pause"


@dataclass
class Resume(Command):
    action = "resume"


@dataclass
class Step(Command):
    """Run one agent turn, then pause again."""

    action = "step"


@dataclass
class Inject(Command):
    """Put a note (or one of the environment's hints, ``kind="hint"``) into the agent's next observations."""

    text: str = ""
    kind: str = "note"
    action = "inject"


@dataclass
class RunTool(Command):
    """Run one tool call as the operator (recorded with ``actor="operator"``)."""

    tool: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)
    action = "tool_call"


@dataclass
class Approve(Command):
    """Let the pending call run; ``call_id`` "" means whichever call is pending."""

    call_id: str = ""
    action = "approve"


@dataclass
class Edit(Command):
    """Run the pending call with changed arguments (an edit is also the approval)."""

    arguments: dict[str, Any] = field(default_factory=dict)
    call_id: str = ""
    action = "edit"


@dataclass
class Reject(Command):
    """Do not run the pending call; the agent sees a rejection with ``reason``."""

    reason: str = ""
    call_id: str = ""
    action = "reject"


def rejection_text(reason: str) -> str:
    """What the agent is told about a call the operator rejected."""
    return "The operator rejected this tool call" + (f": {reason}" if reason else ".")


@dataclass
class Stop(Command):
    """End the episode now (a running agent turn or tool call is cancelled)."""

    reason: str = ""
    action = "stop"


@dataclass
class BreakAdd(Command):
    """Add a breakpoint (``core.breakpoints`` syntax); the episode pauses before the next model call after a hit."""

    expr: str = ""
    action = "break_add"


@dataclass
class BreakRemove(Command):
    """Remove breakpoint number ``id``."""

    id: int = 0
    action = "break_remove"


class Controls:
    """Shortcut methods for each command; a subclass provides ``send``."""

    def send(self, command: Command) -> None:
        raise NotImplementedError

    def pause(self) -> None:
        self.send(Pause())

    def resume(self) -> None:
        self.send(Resume())

    def step(self) -> None:
        self.send(Step())

    def inject(self, text: str, kind: str = "note") -> None:
        self.send(Inject(text=text, kind=kind))

    def run_tool(self, tool: str, arguments: dict[str, Any]) -> None:
        self.send(RunTool(tool=tool, arguments=dict(arguments)))

    def approve(self, call_id: str = "") -> None:
        self.send(Approve(call_id=call_id))

    def edit(self, arguments: dict[str, Any], call_id: str = "") -> None:
        self.send(Edit(arguments=dict(arguments), call_id=call_id))

    def reject(self, reason: str = "", call_id: str = "") -> None:
        self.send(Reject(reason=reason, call_id=call_id))

    def stop(self, reason: str = "") -> None:
        self.send(Stop(reason=reason))

    def add_breakpoint(self, expr: str) -> None:
        self.send(BreakAdd(expr=expr))

    def remove_breakpoint(self, bp_id: int) -> None:
        self.send(BreakRemove(id=bp_id))


def is_status(event: Event) -> bool:
    """Whether ``event`` is a driver status change rather than a person's action."""
    return isinstance(event, Operator) and event.action == STATUS_ACTION


def status_from_events(events: Iterable[Event]) -> str:
    """The driver status after ``events``: the last status event, or ``ended`` after episode_end."""
    status = ""
    for ev in events:
        if ev.type == "episode_end":
            status = ENDED
        elif is_status(ev):
            status = ev.text  # type: ignore[attr-defined]
    return status


def status_from_state(state: EpisodeState) -> str:
    """The driver status from a reducer ``EpisodeState`` ("" for a trace without status events)."""
    if getattr(state, "ended", None) is not None:
        return ENDED
    return state.status


@dataclass(frozen=True)
class ApprovalPolicy:
    """Which agent tool calls wait for the operator: none, all, or those whose tool name matches a glob."""

    patterns: tuple[str, ...] = ()

    @classmethod
    def parse(cls, spec: str) -> ApprovalPolicy:
        """``never``, ``always`` or comma-separated tool-name globs such as ``shell,browser_*``."""
        spec = spec.strip()
        if spec in ("", "never"):
            return cls(())
        if spec == "always":
            return cls(("*",))
        return cls(tuple(p.strip() for p in spec.split(",") if p.strip()))

    def needs_approval(self, tool: str) -> bool:
        return any(fnmatch.fnmatchcase(tool, p) for p in self.patterns)

    def __str__(self) -> str:
        if not self.patterns:
            return "never"
        if self.patterns == ("*",):
            return "always"
        return ",".join(self.patterns)


NEVER = ApprovalPolicy(())
ALWAYS = ApprovalPolicy(("*",))

__all__ = [
    "AGENT_DONE",
    "ALWAYS",
    "Approve",
    "ApprovalPolicy",
    "BreakAdd",
    "BreakRemove",
    "BUDGET",
    "Command",
    "Controls",
    "ENDED",
    "ERROR",
    "Edit",
    "Inject",
    "MAX_TURNS",
    "NEVER",
    "PAUSED",
    "Pause",
    "Reject",
    "Resume",
    "RUNNING",
    "RunTool",
    "STATUSES",
    "STOPPED",
    "Step",
    "Stop",
    "WAITING_FOR_APPROVAL",
    "WALL_TIME",
    "is_status",
    "rejection_text",
    "status_from_events",
    "status_from_state",
]
