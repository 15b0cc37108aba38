"""Plain-text renderings of an episode for pipes and CI: the turn-by-turn log and the summary table.

Everything that came from the agent, a tool or a page is untrusted: it is
printed as text (never as Rich markup) through ``core.sanitize.sanitize``, the
sanitiser the TUI uses too.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, TextIO

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from stripebench_tui.core.annotations import load_notes
from stripebench_tui.core.breakpoints import BreakHit, BreakpointSet
from stripebench_tui.core.events import (
    PASS,
    SIGNED,
    EpisodeEnd,
    EpisodeResume,
    Event,
    Finding,
    GraderVerdict,
    ModelMessage,
    Operator,
    Service,
    StripeObject,
    StripeRequest,
    ToolCall,
    ToolResult,
    WebhookDelivery,
)
from stripebench_tui.core.profile import PART_MEANINGS, Profiler, TimeProfile, label
from stripebench_tui.core.sanitize import sanitize
from stripebench_tui.core.state import EpisodeState
from stripebench_tui.core.summary import EpisodeSummary, Summariser
from stripebench_tui.core.trace import Trace
from stripebench_tui.findings.derived import Deriver, interleave_derived

OUTPUT_LINES = 30  # lines of each tool output shown in the headless log
OUTPUT_LINE_CHARS = 240
ARGUMENT_CHARS = 2000

_STATUS_GLYPH = {"pass": "✓", "fail": "✗", "pending": "…", "error": "!"}
_OBJECT_FIELDS = ("status", "payment_status", "mode", "ui_mode", "amount_total", "amount", "currency", "code", "percent_off")


def episode_passed(state: EpisodeState | EpisodeSummary) -> bool:
    """True when the episode finished and passed (its explicit flag, else every criterion passing)."""
    if state.ended is None:
        return False  # an unfinished episode (crash, cut-off trace) is never a pass
    if state.ended.passed is not None:
        return state.ended.passed
    return bool(state.verdicts) and all(c.status == PASS for c in state.verdicts.values())


def _clock(t: float) -> str:
    m, s = divmod(max(0.0, t), 60)
    return f"{int(m):02d}:{s:04.1f}"


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _indent(text: str, prefix: str) -> str:
    return "\n".join(prefix + line for line in text.splitlines()) if text else prefix.rstrip()


def _object_line(ev: StripeObject) -> str:
    data = ev.data or {}
    bits = [f"{k}={data[k]}" for k in _OBJECT_FIELDS if data.get(k) not in (None, "")]
    kind = ev.object_type or str(data.get("object", "object"))
    what = f" via {ev.event_type}" if ev.event_type else ""
    return sanitize(f"◆ {kind} {ev.object_id} {ev.change}{what}" + (f" ({', '.join(bits)})" if bits else ""))


def _output_block(trace: Trace, ev: ToolResult) -> str:
    text = sanitize(trace.full_output(ev) if ev.sidecar else ev.output)
    lines = text.splitlines()
    shown = [_short(line, OUTPUT_LINE_CHARS) for line in lines[:OUTPUT_LINES]]
    more = len(lines) - len(shown)
    block = _indent("\n".join(shown), "    │ ")
    size = ev.output_bytes or len(text.encode("utf-8", "replace"))
    if more > 0:
        block += f"\n    │ … {more} more lines ({size} bytes in all)"
    return block


def format_event(trace: Trace, ev: Event) -> str | None:
    """One event as readable text, or None for events the log leaves out."""
    if isinstance(ev, ModelMessage):
        out = f"{ev.role}: " + sanitize(ev.text).strip()
        if ev.reasoning:
            out += "\n  (reasoning) " + sanitize(ev.reasoning).strip().replace("\n", "\n  ")
        usage = []
        if ev.tokens_in is not None or ev.tokens_out is not None:
            usage.append(f"{ev.tokens_in or 0} in / {ev.tokens_out or 0} out tokens")
        if ev.cost_usd:
            usage.append(f"${ev.cost_usd:.4f}")
        return out + (f"\n  [{', '.join(usage)}]" if usage else "")
    if isinstance(ev, ToolCall):
        args = json.dumps(ev.arguments, ensure_ascii=False, indent=2, sort_keys=False)
        who = "" if ev.actor == "agent" else f" (by {ev.actor})"
        return f"→ {sanitize(ev.tool)}{who} [{sanitize(ev.call_id)}]\n" + _indent(sanitize(_short(args, ARGUMENT_CHARS)), "    ")
    if isinstance(ev, ToolResult):
        failed = ev.is_error or ev.exit_code not in (None, 0)
        status = "error" if failed else "ok"
        code = f" exit {ev.exit_code}" if ev.exit_code is not None else ""
        return f"← {sanitize(ev.tool)} {status}{code} in {ev.duration:.2f}s\n" + _output_block(trace, ev)
    if isinstance(ev, StripeObject):
        return _object_line(ev)
    if isinstance(ev, GraderVerdict):
        glyph = _STATUS_GLYPH.get(ev.status, "?")
        line = f"{glyph} verdict {ev.criterion}: {ev.status}"
        if ev.description:
            line += f" — {ev.description}"
        if ev.evidence:
            line += "  " + _short(json.dumps(ev.evidence, ensure_ascii=False, sort_keys=True), 300)
        return sanitize(line)
    if isinstance(ev, Service):
        if ev.status == "log":
            return sanitize(f"[{ev.service}] {ev.text}".rstrip())
        extra = f" (exit {ev.exit_code})" if ev.exit_code is not None else ""
        return sanitize(f"[{ev.service}] {ev.status}{extra} {ev.text}".rstrip())
    if isinstance(ev, Operator):
        return sanitize(f"operator {ev.action} {ev.text}".rstrip())
    if isinstance(ev, StripeRequest):
        # Graders poll Stripe every turn: their reads would drown the app's; the trace and the TUI keep them.
        return None if ev.source == "grader" else sanitize(request_line(ev))
    if isinstance(ev, WebhookDelivery):
        return sanitize(delivery_line(ev))
    if isinstance(ev, Finding):
        return sanitize(f"⚑ finding {ev.detector}: {ev.message}  {evidence_text(ev.evidence)}".rstrip())
    if isinstance(ev, EpisodeResume):
        moved = f" ({ev.dropped_events} events of the cut-short turn moved to {ev.dropped})" if ev.dropped else ""
        return sanitize(f"⟲ resumed from the checkpoint of turn {ev.from_turn}{moved}")
    if isinstance(ev, EpisodeEnd):
        score = "unscored" if ev.score is None else f"score {ev.score:.2f}"
        verdict = {True: "PASSED", False: "FAILED", None: ""}[ev.passed]
        err = f" — {ev.error}" if ev.error else ""
        return sanitize(f"■ episode ended: {ev.reason or 'unknown'} · {score} {verdict}".rstrip() + err)
    return None


def request_line(ev: StripeRequest) -> str:
    """One request of the Stripe request log, like the Dashboard's: method, path, status, error, who, how long."""
    error = " ".join(x for x in (ev.error_type, ev.error_code) if x)
    took = f" {ev.latency * 1000:.0f}ms" if ev.latency is not None else ""
    key = " idem" if ev.idempotency_key else ""
    return (f"⇄ {ev.method} {ev.path} {ev.status}{' ' + error if error else ''} ({ev.source or '?'}{took}{key}) "
            f"{ev.request_id}").rstrip()


def delivery_line(ev: WebhookDelivery) -> str:
    """One webhook delivery to the app: the event, how it was signed, the app's answer, what it added."""
    answer = str(ev.status) if ev.status else f"no answer ({ev.error})" if ev.error else "no answer"
    signed = "" if ev.signature == SIGNED else f", signature {ev.signature}"
    rows = ", ".join(f"{table} {n:+d}" for table, n in (ev.rows_added or {}).items())
    return (f"↯ webhook {ev.event_type or '?'} {ev.event_id or ''} → {answer} ({ev.sender or '?'}{signed}"
            f"{', attempt ' + str(ev.attempt) if ev.attempt > 1 else ''}){' rows ' + rows if rows else ''}").replace("  ", " ")


def evidence_text(evidence: list[dict[str, Any]]) -> str:
    """A finding's evidence as short links: ``#seq``, ``req_…``, ``call:…``."""
    parts = []
    for item in evidence:
        if "seq" in item:
            parts.append(f"#{item['seq']}")
        elif "request_id" in item:
            parts.append(str(item["request_id"]))
        elif "call_id" in item:
            parts.append(f"call:{item['call_id']}")
    return " ".join(parts)


def write_headless(trace: Trace, out: TextIO, breakpoints: BreakpointSet | None = None) -> EpisodeSummary:
    """Print the episode turn by turn; returns its summary (for the exit code).

    ``breakpoints`` are given every event printed, derived findings included (their hits: ``take_hits()``).
    """
    h = trace.header
    title = h.title or h.env or trace.path.name
    out.write(sanitize(f"Episode {title} · env {h.env or '?'} · agent {h.agent or '?'} · model {h.model or '?'}") + "\n")
    if h.extra.get("hand_made"):
        out.write("(a hand-made sample trace)\n")
    fold = Summariser(h)  # the last line needs the score and the counts, not the events: nothing kept per event
    notes = {n.turn: n for n in load_notes(trace.path)}  # the operator's, from beside the trace
    # A trace from before the detectors: their findings now, marked ⚐ where a live run would have printed them.
    # Both passes stream the trace (the first stops at a recorded finding): a huge one is never held in memory.
    recorded = any(isinstance(ev, Finding) for ev in trace.iter_events())
    current: int | None = None
    for ev in trace.iter_events() if recorded else interleave_derived(trace.iter_events(), h):
        if breakpoints is not None:
            breakpoints.feed(ev)
        if isinstance(ev, Finding) and not recorded:
            out.write(derived_finding_line(ev, current) + "\n")
            continue
        if ev.turn != current:
            current = ev.turn
            label = "setup" if ev.turn == 0 else f"turn {ev.turn}"
            out.write(f"\n── {label} · {_clock(ev.t)} " + "─" * 40 + "\n")
            note = notes.get(ev.turn)
            if note is not None:
                out.write(sanitize(f"✎ note: {note.text or '(bookmark)'}") + "\n")
        text = format_event(trace, ev)
        if text is not None:
            out.write(text + "\n")
        fold.apply(ev)
    state = fold.summary
    if trace.truncated:
        out.write("\n(the trace ends with a cut-off line: the recording stopped mid-write)\n")
    if state.ended is None:
        out.write("\n(the trace has no episode_end: the episode did not finish)\n")
    out.write(_final_line(state) + "\n")
    return state


def derived_finding_line(ev: Finding, turn: int | None = None) -> str:
    """A finding the detectors derived over a trace that recorded none: ⚐ (as in the TUI), not ⚑, and said so."""
    where = f" (turn {ev.turn})" if ev.turn != turn else ""
    line = f"⚐ finding {ev.detector}{where}: {ev.message}  {evidence_text(ev.evidence)}".rstrip()
    return sanitize(line + " · derived now, not recorded")


def _final_line(state: EpisodeState | EpisodeSummary) -> str:
    score = state.score()
    passed = "PASSED" if episode_passed(state) else "FAILED"
    counts = state.verdict_counts()
    shown = "unscored" if score is None else f"{score:.2f}"
    return (f"Final score: {shown} · {passed} · criteria {counts['pass']} pass, {counts['fail']} fail, "
            f"{counts['pending']} pending, {counts['error']} error")


TIME_KINDS = ("wall", "model", "ttft", "tool", "stripe", "wait", "other")
SLOWEST_TURNS = 5


def time_table(prof: TimeProfile) -> Table | Group:
    """Where the time went: the episode's totals and its slowest turns, then, when the trace recorded the harness's
    own time, a table of its parts (one column each would not fit the width)."""
    parts = prof.parts()
    kinds = (*TIME_KINDS[:-1], "harness", "other") if parts else TIME_KINDS
    table = Table(title="Where the time went", caption=f"all: the episode's totals; then its {SLOWEST_TURNS} slowest turns")
    for name in ("turn", *kinds):
        table.add_column(name, justify="right")
    s = prof.summary()
    s["harness"] = sum(s[p] for p in parts)
    table.add_row("all", *(f"{s[k]:.2f}s" for k in kinds))
    for tt in sorted(prof.turns, key=lambda x: -x.wall)[:SLOWEST_TURNS]:
        table.add_row(str(tt.turn), *(f"{tt.get(k):.2f}s" for k in kinds))
    if not parts:
        return table  # a trace from before the harness timed itself: its harness time is in "other"
    harness = Table(title="The harness's own time")
    for name in ("part", "time", "of the wall", "most in turn", "what it is"):
        harness.add_column(name, justify="left" if name in ("part", "what it is") else "right")
    for part in parts:
        slow = prof.slowest(part)
        most = f"{slow.turn} ({slow.get(part):.2f}s)" if slow is not None else ""
        harness.add_row(label(part), f"{s[part]:.2f}s", f"{100 * s[part] / (s['wall'] or 1.0):.0f}%", most,
                        PART_MEANINGS.get(part, ""))
    return Group(table, harness)


def hits_table(hits: list[Any]) -> Table:
    """Breakpoint hits (``core.breakpoints.Hit``) over the episode."""
    table = Table(title="Breakpoint hits")
    table.add_column("turn", justify="right")
    table.add_column("breakpoint")
    for hit in hits:
        table.add_row(str(hit.turn), Text(sanitize(hit.reason)))
    if not hits:
        table.add_row("—", "no breakpoint matched")
    return table


def summary_tables(state: EpisodeSummary | EpisodeState, findings: list[Finding] | None = None,
                   profile: TimeProfile | None = None,
                   hits: list[Any] | None = None) -> list[Any]:
    """Rich renderables for ``--summary``: totals, tools, verdict timeline, Stripe requests, findings, time, hits.

    ``findings`` replaces the recorded ones (a trace from before the detectors, checked now).
    """
    s = state if isinstance(state, EpisodeSummary) else EpisodeSummary.of_state(state)
    t = s.totals
    h = s.header
    overview = Table(title="Episode", show_header=False)
    overview.add_column("what")
    overview.add_column("value")
    rows = [
        ("environment", h.env if h else ""),
        ("agent / model", f"{h.agent if h else ''} / {h.model if h else ''}"),
        ("turns", str(s.turns)),
        ("elapsed", _clock(s.last_t)),
        ("tokens", f"{t.tokens_in} in / {t.tokens_out} out"),
        ("cost", f"${t.cost_usd:.4f}"),
        ("tool calls", f"{t.tool_calls} ({t.tool_time:.1f}s)"),
        ("ended", (s.ended.reason if s.ended else "did not finish")),
    ]
    for k, v in rows:
        overview.add_row(k, Text(sanitize(str(v))))
    tools = Table(title="Tools used")
    tools.add_column("tool")
    tools.add_column("calls", justify="right")
    tools.add_column("failed", justify="right")
    for name, n, failed in s.tools_used():
        tools.add_row(Text(sanitize(name)), str(n), str(failed))
    verdicts = Table(title="Verdict timeline")
    verdicts.add_column("criterion")
    verdicts.add_column("weight", justify="right")
    verdicts.add_column("timeline (turn: status)")
    verdicts.add_column("final")
    for crit in s.verdicts.values():
        steps = " → ".join(f"{turn}: {status}" for turn, status in crit.steps)
        verdicts.add_row(Text(sanitize(crit.criterion)), f"{crit.weight:g}", Text(steps), Text(crit.status))
    extra: list[Any] = []
    if s.requests:
        extra.append(Text(sanitize(f"Stripe requests: {s.requests} ("
                                   + ", ".join(f"{n} {c}" for c, n in sorted(s.request_classes.items())) + "; "
                                   + ", ".join(f"{n} {src}" for src, n in s.request_sources.most_common()) + ")")))
    found = s.findings if findings is None else findings
    if found:
        derived = findings is not None and not s.findings
        table = Table(title="Findings ⚐ derived now: the trace recorded none" if derived else "Findings")
        for name in ("turn", "finding", "message", "evidence"):
            table.add_column(name, justify="right" if name == "turn" else "left")
        for f in found:
            table.add_row(str(f.turn), Text(sanitize(f.detector)), Text(sanitize(f.message)),
                          Text(sanitize(evidence_text(f.evidence))))
        extra.append(table)
    else:
        extra.append(Text("Findings: none"))
    score = s.score()
    extra += ([time_table(profile)] if profile is not None else []) + ([hits_table(hits)] if hits is not None else [])
    return [overview, tools, verdicts, *extra,
            Text(_final_line(s)) if score is not None or s.verdicts else Text("Final score: unscored")]


def write_summary(state: EpisodeSummary | EpisodeState, out: TextIO, findings: list[Finding] | None = None,
                  profile: TimeProfile | None = None, hits: list[Any] | None = None) -> None:
    """Print the summary tables (plain when ``out`` is not a terminal)."""
    console = Console(file=out, markup=False, highlight=False, emoji=False, width=None if out.isatty() else 110)
    for renderable in summary_tables(state, findings, profile, hits):
        console.print(renderable)


@dataclass
class SummaryPass:
    """What ``replay --summary`` prints (``write_summary``'s arguments), gathered by ``summary_pass``."""

    summary: EpisodeSummary
    derived: list[Finding] | None  # the detectors' findings over a trace that recorded none; None if it recorded some
    profile: TimeProfile
    hits: list[BreakHit] | None  # None without breakpoints


def summary_pass(trace: Trace, breaks: Iterable[str] = ()) -> SummaryPass:
    """Everything the summary tables show, in one pass over the trace holding one event at a time.

    Whether the trace recorded findings is known only at its end, so until one comes the detectors run along
    (``findings.derived``) and the breakpoints are matched twice: over the events as recorded and over the
    stream with derived findings, which is what a ``finding`` breakpoint stops at in a trace that has none.
    """
    fold, profiler, deriver = Summariser(trace.header), Profiler(), Deriver(trace.header)
    exprs = list(breaks)
    as_recorded = BreakpointSet.from_exprs(exprs) if exprs else None
    with_derived = BreakpointSet.from_exprs(exprs) if exprs else None
    for ev in trace.iter_events():
        fold.apply(ev)
        profiler.feed(ev)
        if as_recorded is not None:
            as_recorded.feed(ev)
        if not fold.summary.findings:
            for out in deriver.feed(ev):
                if with_derived is not None:
                    with_derived.feed(out)
    recorded = bool(fold.summary.findings)
    matched = as_recorded if recorded else with_derived
    return SummaryPass(fold.summary, None if recorded else deriver.findings, profiler.profile,
                       matched.take_hits() if matched is not None else None)


__all__ = ["SummaryPass", "delivery_line", "derived_finding_line", "episode_passed", "evidence_text", "format_event",
           "request_line", "sanitize", "summary_pass", "summary_tables", "write_headless", "write_summary"]
