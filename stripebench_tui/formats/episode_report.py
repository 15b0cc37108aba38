"""What an episode report shows, read from a trace in one pass: header, turns, objects, verdict chart, notes, findings.

The renderers (``formats.report_html``: HTML and Markdown) only lay this model out.
Every string that came from the episode goes through the redactor once more here
(the trace's writer already redacted it; an imported trace or a note may not
have been) and through ``core.sanitize`` (no control characters or escape
sequences). Long tool outputs keep only their head and tail, and any other text
(a model message, its reasoning, a tool's arguments, a finding) is cut at
``TEXT_CHARS`` with a line saying how much was left out and where the whole of it
is, so a report's size (and the memory to build it) grows with the number of
turns, not with the size of what the agent wrote. Each text is cut before it is
cleaned: a 200 MB message costs one copy in the trace reader, not several here.
Screenshots are read only through ``core.episode_files``: a name that leads out of
the episode directory (``..``, a link) or to something other than a regular file
is shown as refused, never read.
"""

from __future__ import annotations

import base64
import json
import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from stripebench_tui.core.annotations import Note, load_notes
from stripebench_tui.core.episode_files import Refused, open_episode_file
from stripebench_tui.core.events import (
    EpisodeEnd,
    Finding,
    GraderVerdict,
    ModelMessage,
    Operator,
    StripeObject,
    StripeRequest,
    ToolCall,
    ToolResult,
)
from stripebench_tui.core.json_value import JSONValue
from stripebench_tui.core.redact import Redactor
from stripebench_tui.core.sanitize import CUT_MARK, sanitize
from stripebench_tui.core.state import Reducer
from stripebench_tui.core.trace import Trace
from stripebench_tui.errors import UserError
from stripebench_tui.findings.runner import detect
from stripebench_tui.formats.report_chart import Chart, verdict_chart
from stripebench_tui.formats.report_lineage import ReportLineage, report_lineage
from stripebench_tui.formats.text import episode_passed

PREVIEW_LINES = 6  # lines of an output shown before it is expanded
HEAD_LINES, TAIL_LINES = 16, 4  # of a long output, what the report keeps (the whole output is in the trace)
LINE_CHARS = 300  # characters of one line kept
ARGUMENT_CHARS = 4000
TEXT_CHARS = 64 * 1024  # of any one text (message, reasoning, finding…); the rest is named, not shown
MARGIN = 1024  # cleaned past a cut, so a secret straddling it is still seen whole, and redacted
OBJECT_CHARS = 6000
COMPACT_JSON = 120  # JSON this short stays on one line
IMAGE_BYTES = 4 * 1024 * 1024  # a bigger screenshot is named, not embedded
IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".webp": "image/webp", ".gif": "image/gif"}


@dataclass
class Output:
    """A tool output cut for the report: ``preview`` always shown, ``body`` behind a <details>."""

    preview: str
    body: str  # "" when the preview is all of it
    lines: int
    size: int  # bytes of the whole output
    omitted_lines: int = 0

    @property
    def more(self) -> int:
        """Lines of the output not in the preview."""
        return self.lines - (self.preview.count("\n") + 1 if self.preview else 0)


@dataclass
class Image:
    name: str
    data_uri: str = ""
    problem: str = ""  # why it is not embedded


@dataclass
class ReportCall:
    call_id: str
    tool: str
    actor: str
    arguments: str
    status: str = "running"  # ok | failed | running
    exit_code: int | None = None
    duration: float | None = None
    output: Output | None = None
    images: list[Image] = field(default_factory=list)


@dataclass
class ReportTurn:
    index: int
    start: float
    end: float = 0.0
    messages: list[tuple[str, str, str]] = field(default_factory=list)  # (role, text, reasoning)
    calls: list[ReportCall] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)  # one line per Stripe API request
    operator: list[str] = field(default_factory=list)
    verdicts: list[tuple[str, str]] = field(default_factory=list)  # (criterion, status)
    objects: list[str] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    findings: list[ReportFinding] = field(default_factory=list)

    @property
    def label(self) -> str:
        return "setup" if self.index == 0 else f"turn {self.index}"


@dataclass
class ReportFinding:
    detector: str
    severity: str
    message: str
    turn: int
    evidence: list[tuple[str, int | None]]  # (what, turn it points at, if known)


@dataclass
class ReportObject:
    id: str
    type: str
    status: str
    changes: int
    first_turn: int
    last_turn: int
    deleted: bool
    data: str


@dataclass
class Report:
    title: str
    facts: list[tuple[str, str]]  # header rows: environment, agent, model, score, duration, cost…
    passed: bool
    score: float | None
    turns: list[ReportTurn]
    objects: list[ReportObject]
    chart: Chart
    notes: list[Note]
    findings: list[ReportFinding]
    images: int
    findings_derived: bool  # the trace recorded no findings: these are the detectors' over it, now
    source: str  # the trace's file name
    problems: list[str] = field(default_factory=list)  # files of the episode that could not be used, and why
    lineage: ReportLineage | None = None  # the fork tree (parent, forks, their forks), when there is one


class _Text:
    """Redact then sanitise every string that came from the episode, cut at ``TEXT_CHARS`` (or ``limit``)."""

    def __init__(self, where: str = "the trace") -> None:
        self.redactor = Redactor()
        self.where = where  # where a cut text is whole, unless the caller says more precisely

    def __call__(self, text: object, max_line: int | None = LINE_CHARS, where: str = "", limit: int = TEXT_CHARS) -> str:
        text = str(text or "")
        if len(text) <= limit:
            return sanitize(self.redactor.text(text), max_line=max_line)
        kept = sanitize(self.redactor.text(text[: limit + MARGIN]), max_line=max_line)[:limit]
        more = len(text) - limit
        return kept + f"\n… {more:,} more characters not shown; the whole text is in {where or self.where}"

    def json(self, value: JSONValue, limit: int, where: str = "") -> str:
        try:
            value = self.redactor.value(value)
            text = json.dumps(value, ensure_ascii=False, default=str)
            if COMPACT_JSON < len(text) <= TEXT_CHARS:  # indenting a huge value only to cut it would copy it again
                text = json.dumps(value, ensure_ascii=False, indent=2, default=str)
        except (TypeError, ValueError):
            text = str(value)
        return self(text, where=where, limit=limit)


def _head_spans(text: str, end: int, n: int) -> list[tuple[int, int]]:
    """(start, stop) of the first ``n`` lines of ``text[:end]``."""
    spans: list[tuple[int, int]] = []
    start = 0
    while len(spans) < n and start <= end:
        stop = text.find("\n", start, end)
        stop = end if stop == -1 else stop
        spans.append((start, stop))
        start = stop + 1
    return spans


def _tail_spans(text: str, end: int, n: int) -> list[tuple[int, int]]:
    """(start, stop) of the last ``n`` lines of ``text[:end]``."""
    spans: list[tuple[int, int]] = []
    stop = end
    while len(spans) < n and stop >= 0:
        start = text.rfind("\n", 0, stop) + 1
        spans.append((start, stop))
        stop = start - 1
    return spans[::-1]


def _line(text: str, span: tuple[int, int], clean: _Text) -> str:
    """One line of an output, cleaned; a long one is cut before it is cleaned (a 200 MB line is not copied whole)."""
    start, stop = span
    if stop - start <= LINE_CHARS:
        return clean(text[start:stop])
    kept = clean(text[start : start + LINE_CHARS + MARGIN], None)[:LINE_CHARS]
    return kept + CUT_MARK.format(n=stop - start - LINE_CHARS)


def cut_output(text: str, clean: _Text) -> Output:
    """The head (and tail) of an output; the middle of a long one is left to the trace.

    Cut first, then redact and sanitise what is kept: cleaning a megabyte to show a few lines of it
    would be most of a big report's build time (secrets and escape sequences do not span lines).
    Lines are found by position, not by splitting, so a huge output is never copied.
    """
    size = len(text) if text.isascii() else len(text.encode("utf-8", "replace"))
    end = len(text) - 1 if text.endswith("\n") else len(text)  # a final line break ends the last line
    lines = text.count("\n", 0, end) + 1 if text else 0
    omitted = 0
    if lines > HEAD_LINES + TAIL_LINES:
        omitted = lines - HEAD_LINES - TAIL_LINES
        marker = f"… {omitted} lines not included here (the whole output is in the trace) …"
        kept = ([_line(text, span, clean) for span in _head_spans(text, end, HEAD_LINES)] + [marker]
                + [_line(text, span, clean) for span in _tail_spans(text, end, TAIL_LINES)])
    else:
        kept = [_line(text, span, clean) for span in _head_spans(text, end, lines)]
    preview, rest = kept[:PREVIEW_LINES], kept[PREVIEW_LINES:]
    return Output("\n".join(preview), "\n".join(rest), lines, size, omitted)


def _image(trace_dir: Path, rel: str, clean: _Text, embed: bool) -> Image:
    """A screenshot the episode names: embedded (HTML), or only checked (Markdown names it), or why not."""
    name = clean(rel)
    try:
        with open_episode_file(trace_dir, rel) as f:  # refuses what leads out of the episode or is no regular file
            kind = IMAGE_TYPES.get(Path(rel).suffix.lower())
            if kind is None:
                return Image(name, problem="not an image type a browser shows")
            if not embed:
                return Image(name)
            size = os.fstat(f.fileno()).st_size
            if size > IMAGE_BYTES:
                return Image(name, problem=f"{size:,} bytes, too big to embed")
            data = f.read()
    except Refused as exc:
        return Image(name, problem=clean(f"refused, {exc.reason}"))
    except OSError as exc:
        return Image(name, problem=f"missing ({exc.strerror})")
    return Image(name, data_uri=f"data:{kind};base64," + base64.b64encode(data).decode("ascii"))


def _clock(seconds: float) -> str:
    m, s = divmod(max(0.0, seconds), 60)
    return f"{int(m)}:{s:04.1f}" if m < 60 else f"{int(m // 60)}:{int(m % 60):02d}:{s:04.1f}"


def build_report(trace: Trace, *, embed_images: bool = True) -> Report:
    """The report of one trace (read once, start to end), with its notes from beside it.

    ``embed_images=False`` (the Markdown report) checks each screenshot but reads none.
    """
    source = Path(trace.path).name
    clean = _Text(source)
    trace_dir = Path(trace.path).parent
    problems: list[str] = []
    try:
        notes = [Note(n.turn, clean(n.text, None), n.created, n.updated) for n in load_notes(trace.path)]
    except UserError as exc:  # a notes file that is malformed or refused: the episode is still worth a report
        notes = []
        problems.append(clean(f"notes not shown: {exc}"))
    notes_by_turn: dict[int, list[Note]] = {}
    for n in notes:
        notes_by_turn.setdefault(n.turn, []).append(n)
    reducer = Reducer(clock=lambda: 0.0, keep_output=False)
    reducer.apply(trace.header)
    turns: dict[int, ReportTurn] = {}
    calls: dict[str, ReportCall] = {}
    turn_of: dict[tuple[str, str], int] = {}  # ("seq"|"call_id"|"request_id", value) → turn, for findings' evidence
    raw_findings: list[Finding] = []
    images = 0
    for ev in trace.iter_events():
        where = source if trace.in_memory else f"{source}, event seq {ev.seq}"
        # The reducer is kept for objects, verdicts and totals; this report keeps its own cut copies of the
        # texts, so the reducer's state does not hold on to each whole message and argument.
        if isinstance(ev, ModelMessage):
            reducer.apply(replace(ev, text="", reasoning=""))
        elif isinstance(ev, ToolCall):
            reducer.apply(replace(ev, arguments={}))
        else:
            reducer.apply(ev)
        turn = turns.get(ev.turn)
        if turn is None:
            turn = turns[ev.turn] = ReportTurn(ev.turn, ev.t, notes=notes_by_turn.get(ev.turn, []))
        turn.end = max(turn.end, ev.t)
        turn_of[("seq", str(ev.seq))] = ev.turn
        if isinstance(ev, ModelMessage):
            turn.messages.append((clean(ev.role), clean(ev.text, None, where).strip(),
                                  clean(ev.reasoning, None, where).strip()))
        elif isinstance(ev, ToolCall):
            call = ReportCall(clean(ev.call_id), clean(ev.tool), clean(ev.actor),
                        clean.json(ev.arguments, ARGUMENT_CHARS, where))
            calls[ev.call_id] = call
            turn.calls.append(call)
            turn_of[("call_id", ev.call_id)] = ev.turn
        elif isinstance(ev, ToolResult):
            found = calls.get(ev.call_id)
            if found is None:  # a result whose call is not in the trace: shown on its own
                found = ReportCall(clean(ev.call_id), clean(ev.tool), "", "")
                turn.calls.append(found)
            call = found
            failed = ev.is_error or ev.exit_code not in (None, 0)
            call.status, call.exit_code, call.duration = ("failed" if failed else "ok"), ev.exit_code, ev.duration
            call.output = cut_output(trace.full_output(ev) if ev.sidecar else ev.output, clean)
            call.images = [_image(trace_dir, rel, clean, embed_images) for rel in ev.images]
            images += len(ev.images)
        elif isinstance(ev, StripeRequest):
            err = " ".join(x for x in (ev.error_type, ev.error_code) if x)
            turn.requests.append(clean(f"{ev.method} {ev.path} → {ev.status}" + (f" {err}" if err else "")
                                       + (f" ({ev.source})" if ev.source else "")))
            if ev.request_id:
                turn_of[("request_id", ev.request_id)] = ev.turn
        elif isinstance(ev, Operator):
            turn.operator.append(clean(f"{ev.action} {ev.text}".strip(), where=where))
        elif isinstance(ev, GraderVerdict):
            turn.verdicts.append((clean(ev.criterion), clean(ev.status)))
        elif isinstance(ev, StripeObject):
            if ev.object_id not in turn.objects:
                turn.objects.append(clean(ev.object_id))
        elif isinstance(ev, Finding):
            raw_findings.append(ev)
        elif isinstance(ev, EpisodeEnd) and ev.error:
            turn.operator.append(clean(f"episode ended: {ev.reason} — {ev.error}"))
    state = reducer.state
    findings_derived = False
    if not raw_findings:  # a trace from before the detectors: what they find over it now, labelled so
        raw_findings = detect(trace.iter_events(), header=trace.header)
        findings_derived = bool(raw_findings)
    findings: list[ReportFinding] = []
    for f in raw_findings:
        evidence = []
        for item in f.evidence:
            for key, value in (item.items() if isinstance(item, dict) else ()):
                evidence.append((clean(f"{key} {value}"), turn_of.get((key, str(value)))))
        finding = ReportFinding(clean(f.detector), clean(f.severity), clean(f.message, None), f.turn, evidence)
        findings.append(finding)
        if f.turn in turns:
            turns[f.turn].findings.append(finding)
    objects = [
        ReportObject(clean(o.id), clean(o.object_type), clean(o.data.get("status", "") if isinstance(o.data, dict) else ""),
                     o.changes, o.first_turn, o.last_turn, o.deleted, clean.json(o.data, OBJECT_CHARS))
        for o in state.objects.values()
    ]
    h = trace.header
    score = state.score()
    duration = state.last_t
    t = state.totals
    agent_turns = len([n for n in turns if n > 0])
    facts = [
        ("environment", clean(h.env) or "?"),
        ("agent", clean(h.agent) or "?"),
        ("model", clean(h.model) or "—"),
        ("score", "unscored" if score is None else f"{score:.2f}"),
        ("result", "passed" if episode_passed(state) else ("failed" if state.ended else "did not finish")),
        ("duration", _clock(duration)),
        ("cost", f"${t.cost_usd:.4f}"),
        ("tokens", f"{t.tokens_in:,} in / {t.tokens_out:,} out"),
        ("turns", f"{agent_turns} ({t.tool_calls} tool calls)"),
        ("ended", clean(state.ended.reason) if state.ended else "no episode_end in the trace"),
        ("started", clean(h.started) or "—"),
        ("backend", clean(h.backend) or "—"),
    ]
    ordered = [turns[k] for k in sorted(turns)]
    chart = verdict_chart(state.verdicts.values(), duration,
                          [(n.turn, turns[n.turn].start if n.turn in turns else 0.0) for n in notes],
                          [(f.turn, turns[f.turn].start if f.turn in turns else 0.0) for f in raw_findings], clean)
    return Report(
        title=clean(h.title or h.env or Path(trace.path).name),
        facts=facts,
        passed=episode_passed(state),
        score=score,
        turns=ordered,
        objects=objects,
        chart=chart,
        notes=notes,
        findings=findings,
        images=images,
        findings_derived=findings_derived,
        source=clean(source),
        problems=problems,
        lineage=None if trace.in_memory else report_lineage(Path(trace.path), lambda text: clean(text, None)),
    )


__all__ = ["MARGIN", "Report", "ReportTurn", "TEXT_CHARS", "build_report", "cut_output"]
