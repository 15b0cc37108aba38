"""Typed records for everything that happens in an episode.

An episode is one ordered log of events (see docs/architecture.md). Every event carries
``seq`` (0-based position in the log), ``t`` (seconds since the episode
started), ``turn`` (0 for setup before the agent's first turn, then 1, 2, …)
and ``type``; the rest is the payload of that type. Records are plain
dataclasses so the core stays free of any UI or I/O library.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar

SCHEMA = "stripebench.trace/1"
SCHEMA_NAME, _, _SCHEMA_MAJOR = SCHEMA.rpartition("/")
SCHEMA_MAJOR = int(_SCHEMA_MAJOR)

# Verdict statuses, in the order a criterion usually moves through them.
PENDING, PASS, FAIL, ERROR = "pending", "pass", "fail", "error"
VERDICT_STATUSES = (PENDING, PASS, FAIL, ERROR)

# Who acted: the agent under test, or the person at the controls.
AGENT, OPERATOR = "agent", "operator"


class EventError(ValueError):
    """An event record that does not fit its type (raised with a short reason)."""


@dataclass
class Event:
    """Fields every event has; subclasses add their payload."""

    type: ClassVar[str] = ""
    seq: int = 0
    t: float = 0.0
    turn: int = 0

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready form written to a trace: common fields first, then the payload."""
        d: dict[str, Any] = {"seq": self.seq, "t": round(self.t, 6), "turn": self.turn, "type": self.type}
        for f in dataclasses.fields(self):
            if f.name in ("seq", "t", "turn"):
                continue
            d[f.name] = getattr(self, f.name)
        return d


@dataclass
class Header(Event):
    """Line 1 of a trace: what ran, with which versions and seeds."""

    type: ClassVar[str] = "header"
    schema: str = SCHEMA
    env: str = ""
    agent: str = ""
    model: str = ""
    title: str = ""
    seeds: dict[str, Any] = field(default_factory=dict)
    versions: dict[str, Any] = field(default_factory=dict)
    started: str = ""  # ISO 8601 wall-clock time of t=0
    backend: str = ""  # "emulator" or "stripe-test-mode"
    sandbox: str = ""  # "local", "docker", or "" for a replayed/hand-made trace
    # What the task asks for in terms the trace can show (the manifest's [expects]), for the findings detectors:
    # e.g. {"restricted_key": True}, {"final_states": [{"object": "invoice", "states": [...], "metadata": "..."}]}
    expects: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d = {"type": "header"}
        for f in dataclasses.fields(self):
            if f.name in ("seq", "t", "turn"):
                continue
            d[f.name] = getattr(self, f.name)
        return d


@dataclass
class ModelMessage(Event):
    """Text from the model (or a message put into its conversation)."""

    type: ClassVar[str] = "model_message"
    role: str = "assistant"  # assistant | user | system | operator
    text: str = ""
    reasoning: str = ""
    model: str = ""
    tokens_in: int | None = None
    tokens_out: int | None = None
    cost_usd: float | None = None
    ttft: float | None = None  # seconds from the request to the first token, when streamed
    latency: float | None = None  # seconds from the request to the end of the response


@dataclass
class ToolCall(Event):
    """A request to run one tool; ``actor`` says whether the agent or the operator asked."""

    type: ClassVar[str] = "tool_call"
    call_id: str = ""
    tool: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)
    actor: str = AGENT
    server: str = ""  # MCP server that provides the tool


@dataclass
class ToolResult(Event):
    """What a tool call returned. ``output`` may be capped; ``sidecar`` then holds it whole."""

    type: ClassVar[str] = "tool_result"
    call_id: str = ""
    tool: str = ""
    output: str = ""
    is_error: bool = False
    exit_code: int | None = None
    duration: float = 0.0
    startup: float = 0.0  # seconds of ``duration`` the tool spent starting (the browser launching Chromium), not acting
    output_bytes: int | None = None  # size of the whole output when it was capped
    sidecar: str | None = None  # path, relative to the trace's directory, of the whole output
    images: list[str] = field(default_factory=list)  # screenshots etc., relative paths


@dataclass
class StripeObject(Event):
    """A Stripe object seen new or changed (from /v1/events or a grader's read)."""

    type: ClassVar[str] = "stripe_object"
    object_id: str = ""
    object_type: str = ""  # Stripe's "object" field: checkout.session, payment_intent, …
    change: str = "created"  # created | updated | deleted
    data: dict[str, Any] = field(default_factory=dict)
    event_id: str = ""  # the Stripe event (evt_…) that revealed it
    event_type: str = ""  # e.g. checkout.session.completed
    request_id: str = ""  # the API request (req_…) that caused it


@dataclass
class GraderVerdict(Event):
    """A grader criterion's status changed (or was first evaluated)."""

    type: ClassVar[str] = "grader_verdict"
    criterion: str = ""
    status: str = PENDING
    weight: float = 1.0
    description: str = ""
    evidence: dict[str, Any] = field(default_factory=dict)
    trigger: str = ""  # what caused the evaluation: "turn_end", "evt_…", "final", …
    request_id: str = ""
    final: bool = False


@dataclass
class Service(Event):
    """A service of the environment started, logged a line, failed a health check or exited."""

    type: ClassVar[str] = "service"
    service: str = ""
    status: str = "log"  # starting | healthy | unhealthy | log | exited | stopped
    text: str = ""
    stream: str = ""  # stdout | stderr
    pid: int | None = None
    exit_code: int | None = None


@dataclass
class Operator(Event):
    """Something the person at the controls did: pause, resume, step, inject, approve, reject, edit, fork, stop."""

    type: ClassVar[str] = "operator"
    action: str = ""
    text: str = ""
    call_id: str = ""
    details: dict[str, Any] = field(default_factory=dict)


# The header our own Stripe clients (the watcher, graders) send, so the request log can tell who asked.
SOURCE_HEADER = "X-Stripebench-Source"


@dataclass
class StripeRequest(Event):
    """One Stripe API request made during the episode (by the agent's shell, the app, stripe.js or a grader)."""

    type: ClassVar[str] = "stripe_request"
    request_id: str = ""  # Stripe's Request-Id (req_…)
    method: str = ""
    path: str = ""
    status: int = 0
    error_type: str = ""  # Stripe's error.type on a 4xx/5xx, e.g. invalid_request_error
    error_code: str = ""  # Stripe's error.code, e.g. resource_missing
    idempotency_key: str = ""
    api_version: str = ""
    latency: float | None = None  # seconds the backend took to answer
    object_ids: list[str] = field(default_factory=list)  # ids it created, read or changed
    source: str = ""  # who asked: agent | app | browser | grader | "" when unknown
    key_kind: str = ""  # the API key's kind, never the key: sk_test | rk_test | pk_test | … | none | "" unknown
    request_body: str = ""  # redacted, possibly capped
    response_body: str = ""  # redacted, possibly capped


# How a webhook delivery was signed, as its sender knows it.
SIGNED, BADLY_SIGNED, UNSIGNED = "valid", "invalid", "none"


@dataclass
class WebhookDelivery(Event):
    """One webhook delivery to the app, by Stripe (the emulator) or a grader's test, and the app's HTTP answer.

    ``signature`` is what the sender knows: ``valid`` (the endpoint's secret over the exact body), ``invalid`` (another
    secret, or a body the signature does not cover) or ``none``. ``rows_added`` is what the delivery changed in the
    app's database as the sender measured it, rows added per table (changed tables only); None when not measured.
    """

    type: ClassVar[str] = "webhook_delivery"
    event_id: str = ""  # the Stripe event (evt_…) delivered; "" when the body names none
    event_type: str = ""  # e.g. checkout.session.completed
    url: str = ""  # where it was POSTed
    sender: str = ""  # stripe | grader
    signature: str = SIGNED  # SIGNED | BADLY_SIGNED | UNSIGNED
    attempt: int = 1  # the sender's attempt at this delivery (Stripe retries a non-2xx)
    status: int = 0  # the app's HTTP status; 0 when no answer came (connection refused, timeout)
    error: str = ""  # why no answer came
    latency: float | None = None  # seconds the app took to answer
    response_body: str = ""  # redacted, capped
    rows_added: dict[str, int] | None = None


@dataclass
class Finding(Event):
    """A detector's mark on a turn: a likely failure mode, apart from the verdicts (e.g. 400-as-success)."""

    type: ClassVar[str] = "finding"
    detector: str = ""  # e.g. "400-as-success", "unverified-finish", "lost-focus"
    message: str = ""  # one line for the operator
    severity: str = "warning"  # info | warning | error
    evidence: list[dict[str, Any]] = field(default_factory=list)  # {"seq": n} / {"request_id": …} / {"call_id": …}


@dataclass
class HarnessTime(Event):
    """Seconds the harness spent on its own work in the stretch that ends at ``t``, by part.

    ``stretch`` says which (``setup`` before turn 1, ``turn_end``, ``final``); ``parts`` maps ``setup``,
    ``tool_start``, ``grading``, ``publish`` to seconds (``core.profile`` names them). Only time the episode waited on
    is counted, never work done beside a model or tool call, so the parts add to the turns' own time without overlap.
    """

    type: ClassVar[str] = "harness_time"
    stretch: str = ""
    parts: dict[str, float] = field(default_factory=dict)


@dataclass
class EpisodeEnd(Event):
    """The last event of an episode: why it ended and how it scored."""

    type: ClassVar[str] = "episode_end"
    reason: str = ""  # agent_done | max_turns | wall_time | budget | stopped | error
    score: float | None = None
    passed: bool | None = None
    error: str = ""


@dataclass
class EpisodeResume(Event):
    """The episode's process died and ``stripebench resume`` continued it from the checkpoint of ``from_turn``:
    what follows in the trace comes from the new process (the events recorded after that checkpoint, of the turn
    that was cut short, were moved to ``dropped``, a file beside the trace, and that turn is played again)."""

    type: ClassVar[str] = "resume"
    from_turn: int = 0
    dropped: str = ""  # the cut-short turn's events, beside the trace ("" when there were none)
    dropped_events: int = 0


EVENT_TYPES: dict[str, type[Event]] = {
    cls.type: cls
    for cls in (ModelMessage, ToolCall, ToolResult, StripeObject, GraderVerdict, Service, Operator, StripeRequest,
                WebhookDelivery, Finding, HarnessTime, EpisodeEnd, EpisodeResume)
}

_COMMON = ("seq", "t", "turn", "type")


def event_from_dict(d: dict[str, Any]) -> Event:
    """Build the typed record for one decoded trace line.

    Unknown payload keys are ignored (a newer writer of the same schema major may add fields);
    a missing or unknown ``type`` or a wrongly typed common field raises ``EventError``.
    """
    if not isinstance(d, dict):
        raise EventError("an event must be a JSON object")
    kind = d.get("type")
    if kind == "header":
        cls: type[Event] = Header
    else:
        found = EVENT_TYPES.get(kind) if isinstance(kind, str) else None
        if found is None:
            raise EventError(f"unknown event type {kind!r}")
        cls = found
        for key, want in (("seq", int), ("t", (int, float)), ("turn", int)):
            if key not in d:
                raise EventError(f"{kind} event lacks {key!r}")
            value = d[key]
            if isinstance(value, bool) or not isinstance(value, want):
                raise EventError(f"{kind} event has a non-numeric {key!r}")
    names = {f.name for f in dataclasses.fields(cls)}
    kwargs = {k: v for k, v in d.items() if k in names and k != "type"}
    try:
        return cls(**kwargs)
    except TypeError as exc:  # pragma: no cover - dataclass signature mismatch is a bug
        raise EventError(str(exc)) from exc
