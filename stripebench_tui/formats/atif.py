"""Harbor's Agent Trajectory Interchange Format (ATIF): export a trace, import a trajectory.

ATIF (Harbor RFC 0001) is one JSON document: ``schema_version``, ``session_id``,
``agent`` and ``steps``; each step has ``step_id`` (from 1), ``source``
(system/user/agent), ``message``, optional ``reasoning_content``, ``tool_calls``
(``tool_call_id``, ``function_name``, ``arguments``), an ``observation`` whose
``results`` point back at calls through ``source_call_id``, and ``metrics``
(tokens, cost). ATIF objects forbid unknown fields, and so does this reader.

Mapping: a model message is a step; the agent's tool calls join the step of the
message before them in the same turn; results join that step's observation.
What ATIF has no place for (Stripe objects, verdicts, services, operator actions,
the episode end) and our exact seq/t/turn go under ``extra.stripebench``, so an
exported trace imports back whole; a foreign trajectory simply lacks them.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from stripebench_tui import __version__
from stripebench_tui.core.annotations import load_notes
from stripebench_tui.core.events import Event, EventError, Header, ModelMessage, ToolCall, ToolResult, event_from_dict
from stripebench_tui.core.state import Reducer
from stripebench_tui.core.profile import Profiler
from stripebench_tui.core.trace import Trace, TraceError
from stripebench_tui.core.trace_check import LineError, check_payload
from stripebench_tui.findings.runner import detect

ATIF_VERSION = "ATIF-v1.4"  # what we write: the widely implemented revision
READABLE_VERSIONS = frozenset(f"ATIF-v1.{i}" for i in range(8))

_ROOT = ({"schema_version", "agent", "steps"}, {"session_id", "trajectory_id", "notes", "final_metrics", "continued_trajectory_ref", "subagent_trajectories", "extra"})
_AGENT = ({"name", "version"}, {"model_name", "tool_definitions", "extra"})
_STEP = ({"step_id", "source", "message"}, {"timestamp", "model_name", "reasoning_effort", "reasoning_content", "tool_calls", "observation", "metrics", "extra", "llm_call_count", "is_copied_context"})
_CALL = ({"tool_call_id", "function_name", "arguments"}, {"extra"})
_OBSERVATION = ({"results"}, {"extra"})
_RESULT = (set(), {"source_call_id", "content", "subagent_trajectory_ref", "extra"})
_METRICS = (set(), {"prompt_tokens", "completion_tokens", "cached_tokens", "cost_usd", "prompt_token_ids", "completion_token_ids", "logprobs", "extra"})
_FINAL = (set(), {"total_prompt_tokens", "total_completion_tokens", "total_cached_tokens", "total_cost_usd", "total_steps", "extra"})
_ROLE_TO_SOURCE = {"assistant": "agent", "user": "user", "system": "system", "operator": "user"}
_SOURCE_TO_ROLE = {"agent": "assistant", "user": "user", "system": "system"}


class AtifError(TraceError):
    """An ATIF document that cannot be imported (one line: path, where, why)."""


def sniff(head: bytes) -> bool:
    """Whether the first bytes of a file look like an ATIF trajectory."""
    return b'"schema_version"' in head and b"ATIF-" in head


def load(path: str | Path) -> tuple[Header, list[Event]]:
    """Read an ATIF file into a header and events; AtifError on anything malformed."""
    p = Path(path)
    try:
        doc = json.loads(p.read_bytes())
    except UnicodeDecodeError:
        raise AtifError(f"{p}: not UTF-8 text") from None
    except ValueError as exc:
        raise AtifError(f"{p}:{getattr(exc, 'lineno', '?')}: not valid JSON ({getattr(exc, 'msg', exc)})") from None
    except OSError as exc:
        raise AtifError(f"{p}: cannot read ({exc.strerror})") from None
    return events_from_atif(doc, str(p))


class _Checker:
    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, where: str, why: str) -> AtifError:
        return AtifError(f"{self.source}: ATIF {where}: {why}")

    def obj(self, value: Any, where: str, spec: tuple[set[str], set[str]]) -> dict[str, Any]:
        required, optional = spec
        if not isinstance(value, dict):
            raise self.fail(where, f"expected an object, found {type(value).__name__}")
        for key in value:
            if key not in required and key not in optional:
                raise self.fail(where, f"unknown field {key!r}")
        for key in sorted(required):
            if key not in value:
                raise self.fail(where, f"missing required field {key!r}")
        return value

    def typed(self, d: dict[str, Any], key: str, types: type | tuple[type, ...], where: str) -> Any:
        value = d.get(key)
        if value is None:
            return None
        if isinstance(value, bool) and bool not in (types if isinstance(types, tuple) else (types,)):
            raise self.fail(where, f"field {key!r} has the wrong type (bool)")
        if not isinstance(value, types):
            raise self.fail(where, f"field {key!r} has the wrong type ({type(value).__name__})")
        return value


def _content_text(value: Any, check: _Checker, where: str) -> str:
    """A message or result content: a string, or (ATIF 1.6+) a list of text/image parts."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = []
        for i, part in enumerate(value):
            if not isinstance(part, dict) or not isinstance(part.get("type"), str):
                raise check.fail(f"{where}[{i}]", "a content part must be an object with a 'type'")
            if part["type"] == "text":
                parts.append(str(part.get("text", "")))
            else:
                parts.append(f"[{part['type']}]")
        return "\n".join(parts)
    raise check.fail(where, f"expected text, found {type(value).__name__}")


def _parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)


def _num(value: Any, default: float) -> float:
    """A number from our own metadata, or ``default`` when it is missing or not a number."""
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else default


def _ours(extra: Any) -> dict[str, Any]:
    """Our own round-trip metadata inside an ATIF ``extra`` object, if any."""
    if isinstance(extra, dict) and isinstance(extra.get("stripebench"), dict):
        return extra["stripebench"]
    return {}


def _restore(d: Any, check: _Checker, where: str) -> Event:
    try:
        if not isinstance(d, dict):
            raise EventError("an event must be a JSON object")
        ev = event_from_dict(d)
        check_payload(d, type(ev))
    except (EventError, LineError) as exc:
        raise check.fail(where, str(exc)) from None
    return ev


def events_from_atif(doc: Any, source: str = "ATIF") -> tuple[Header, list[Event]]:
    """Convert a decoded ATIF document into our header and events (validating it on the way)."""
    check = _Checker(source)
    root = check.obj(doc, "root", _ROOT)
    version = check.typed(root, "schema_version", str, "root")
    if version not in READABLE_VERSIONS:
        raise check.fail("root", f"unsupported schema_version {version!r} (this stripebench reads ATIF-v1.0 to v1.7)")
    agent = check.obj(root["agent"], "agent", _AGENT)
    for key in ("name", "version", "model_name"):
        check.typed(agent, key, str, "agent")
    if root.get("final_metrics") is not None:
        check.obj(root["final_metrics"], "final_metrics", _FINAL)
    steps = root["steps"]
    if not isinstance(steps, list):
        raise check.fail("root", "'steps' must be an array")
    meta = _ours(root.get("extra"))
    if isinstance(meta.get("header"), dict):
        header = _restore(meta["header"], check, "extra.stripebench.header")
        assert isinstance(header, Header)
    else:
        header = Header(
            agent=agent["name"],
            model=agent.get("model_name") or "",
            title=f"ATIF trajectory {root.get('session_id') or ''}".strip(),
            versions={"agent": agent["version"]},
        )
    header.extra = {**header.extra, "imported_from": "atif", "atif_schema_version": version, "session_id": root.get("session_id", "")}

    events: list[Event] = []
    start: datetime | None = None
    agent_turns = 0
    next_seq = 0
    call_tools: dict[str, str] = {}
    for n, step in enumerate(steps):
        where = f"steps[{n}]"
        check.obj(step, where, _STEP)
        step_id = check.typed(step, "step_id", int, where)
        if step_id is None or step_id < 1:
            raise check.fail(where, "'step_id' must be an integer from 1")
        src = step.get("source")
        if src not in _SOURCE_TO_ROLE:
            raise check.fail(where, f"'source' must be system, user or agent, not {src!r}")
        text = _content_text(step.get("message"), check, f"{where}.message")
        reasoning = check.typed(step, "reasoning_content", str, where) or ""
        check.typed(step, "model_name", str, where)
        mine = _ours(step.get("extra"))
        when = _parse_time(step.get("timestamp"))
        if when is not None and start is None:
            start = when
        if isinstance(mine.get("t"), (int, float)):
            t = float(mine["t"])
        elif when is not None and start is not None:
            t = max(0.0, (when - start).total_seconds())
        else:
            t = float(n)
        if src == "agent":
            agent_turns += 1
            turn = agent_turns
        else:
            turn = agent_turns + 1 if agent_turns else 0
        if isinstance(mine.get("turn"), int):
            turn = mine["turn"]
        metrics = step.get("metrics")
        tokens_in = tokens_out = cost = ttft = latency = None
        if metrics is not None:
            check.obj(metrics, f"{where}.metrics", _METRICS)
            tokens_in = check.typed(metrics, "prompt_tokens", int, f"{where}.metrics")
            tokens_out = check.typed(metrics, "completion_tokens", int, f"{where}.metrics")
            cost = check.typed(metrics, "cost_usd", (int, float), f"{where}.metrics")
            timing = metrics.get("extra") if isinstance(metrics.get("extra"), dict) else {}
            ttft, latency = (timing.get(k) if isinstance(timing.get(k), (int, float)) else None
                             for k in ("ttft_seconds", "latency_seconds"))

        def seq_for(value: Any) -> int:
            nonlocal next_seq
            seq = value if isinstance(value, int) and not isinstance(value, bool) else next_seq
            next_seq = max(next_seq, seq) + 1
            return seq

        if "seq" in mine:
            has_message = mine["seq"] is not None
        else:
            has_message = bool(text or reasoning or metrics or src != "agent" or not step.get("tool_calls"))
        if has_message:
            role = mine.get("role") if mine.get("role") in _ROLE_TO_SOURCE else _SOURCE_TO_ROLE[src]
            events.append(ModelMessage(seq=seq_for(mine.get("seq")), t=t, turn=turn, role=role, text=text, reasoning=reasoning,
                                       model=step.get("model_name") or "", tokens_in=tokens_in, tokens_out=tokens_out,
                                       cost_usd=float(cost) if cost is not None else None, ttft=ttft, latency=latency))
        calls_meta = mine.get("calls") if isinstance(mine.get("calls"), dict) else {}
        tool_calls = step.get("tool_calls") or []
        if not isinstance(tool_calls, list):
            raise check.fail(where, "'tool_calls' must be an array")
        for i, call in enumerate(tool_calls):
            cwhere = f"{where}.tool_calls[{i}]"
            check.obj(call, cwhere, _CALL)
            call_id = check.typed(call, "tool_call_id", str, cwhere)
            name = check.typed(call, "function_name", str, cwhere)
            args = call.get("arguments")
            if not isinstance(args, dict):
                raise check.fail(cwhere, "'arguments' must be an object")
            cm = calls_meta.get(call_id) if isinstance(calls_meta.get(call_id), dict) else {}
            call_tools[call_id] = name
            events.append(ToolCall(seq=seq_for(cm.get("seq")), t=_num(cm.get("t"), t), turn=turn, call_id=call_id, tool=name,
                                   arguments=args, actor=str(cm.get("actor", "agent")), server=str(cm.get("server", ""))))
        observation = step.get("observation")
        if observation is not None:
            check.obj(observation, f"{where}.observation", _OBSERVATION)
            results = observation["results"]
            if not isinstance(results, list):
                raise check.fail(f"{where}.observation", "'results' must be an array")
            results_meta = mine.get("results") if isinstance(mine.get("results"), dict) else {}
            for i, res in enumerate(results):
                rwhere = f"{where}.observation.results[{i}]"
                check.obj(res, rwhere, _RESULT)
                call_id = check.typed(res, "source_call_id", str, rwhere) or f"step{step_id}-result{i}"
                output = _content_text(res.get("content"), check, f"{rwhere}.content")
                rm = results_meta.get(call_id) if isinstance(results_meta.get(call_id), dict) else {}
                rturn = rm["turn"] if isinstance(rm.get("turn"), int) else turn  # answered in a later turn
                events.append(ToolResult(seq=seq_for(rm.get("seq")), t=_num(rm.get("t"), t), turn=rturn, call_id=call_id,
                                         tool=call_tools.get(call_id, "observation"), output=output,
                                         is_error=bool(rm.get("is_error", False)),
                                         exit_code=rm.get("exit_code") if isinstance(rm.get("exit_code"), int) else None,
                                         duration=_num(rm.get("duration"), 0.0)))
    for i, d in enumerate(meta.get("events") or []):
        ev = _restore(d, check, f"extra.stripebench.events[{i}]")
        events.append(ev)
    events.sort(key=lambda e: e.seq)
    return header, events


def atif_from_trace(trace: Trace) -> dict[str, Any]:
    """The ATIF document for a trace (full tool outputs, including sidecars)."""
    header = trace.header
    started = _parse_time(header.started)
    steps: list[dict[str, Any]] = []
    others: list[dict[str, Any]] = []
    step_of_call: dict[str, dict[str, Any]] = {}
    current: dict[str, Any] | None = None
    reducer = Reducer(clock=lambda: 0.0, keep_output=False)

    def stamp(step: dict[str, Any], t: float) -> None:
        if started is not None:
            step["timestamp"] = (started + timedelta(seconds=t)).isoformat().replace("+00:00", "Z")

    profiler = Profiler()
    for ev in trace.iter_events():
        reducer.apply(ev)
        profiler.feed(ev)
        if isinstance(ev, ModelMessage):
            source = _ROLE_TO_SOURCE.get(ev.role, "user")
            current = {"step_id": 0, "source": source, "message": ev.text}
            stamp(current, ev.t)
            if source == "agent":
                if ev.model:
                    current["model_name"] = ev.model
                if ev.reasoning:
                    current["reasoning_content"] = ev.reasoning
                metrics = {k: v for k, v in (("prompt_tokens", ev.tokens_in), ("completion_tokens", ev.tokens_out), ("cost_usd", ev.cost_usd)) if v is not None}
                timing = {k: v for k, v in (("ttft_seconds", ev.ttft), ("latency_seconds", ev.latency)) if v is not None}
                if timing:  # where the time went: model time per step (read back on import)
                    metrics["extra"] = timing
                if metrics:
                    current["metrics"] = metrics
            current["extra"] = {"stripebench": {"seq": ev.seq, "t": ev.t, "turn": ev.turn, "role": ev.role}}
            steps.append(current)
        elif isinstance(ev, ToolCall):
            if current is None or current["source"] != "agent" or current["extra"]["stripebench"]["turn"] != ev.turn:
                current = {"step_id": 0, "source": "agent", "message": "", "extra": {"stripebench": {"seq": None, "t": ev.t, "turn": ev.turn}}}
                stamp(current, ev.t)
                steps.append(current)
            current.setdefault("tool_calls", []).append({"tool_call_id": ev.call_id, "function_name": ev.tool, "arguments": ev.arguments})
            current["extra"]["stripebench"].setdefault("calls", {})[ev.call_id] = {"seq": ev.seq, "t": ev.t, "actor": ev.actor, "server": ev.server}
            step_of_call[ev.call_id] = current
        elif isinstance(ev, ToolResult):
            step = step_of_call.get(ev.call_id)
            if step is None:
                others.append(ev.to_dict())  # a result without its call cannot be placed in ATIF
                continue
            step.setdefault("observation", {"results": []})["results"].append({"source_call_id": ev.call_id, "content": trace.full_output(ev)})
            step["extra"]["stripebench"].setdefault("results", {})[ev.call_id] = {
                "seq": ev.seq, "t": ev.t, "turn": ev.turn, "is_error": ev.is_error, "exit_code": ev.exit_code, "duration": ev.duration,
            }
        else:
            others.append(ev.to_dict())
    for i, step in enumerate(steps, start=1):
        step["step_id"] = i
    found, derived = reducer.state.findings, False
    if not found:  # a trace from before the detectors: what they find over it now, labelled derived (as in a report)
        found = detect(trace.iter_events())
        derived = bool(found)
    findings = [{"detector": f.detector, "message": f.message, "severity": f.severity, "turn": f.turn,
                 "seq": None if derived else f.seq, "evidence": f.evidence, **({"derived": True} if derived else {})}
                for f in found]
    _mark_steps(steps, findings, "derived_findings" if derived else "findings")
    totals = reducer.state.totals
    header_dict = header.to_dict()
    ours: dict[str, Any] = {"header": header_dict, "events": others}
    notes = load_notes(trace.path)
    if notes:  # the operator's notes from beside the trace; each step carries those of its turn too
        ours["notes"] = [asdict(n) for n in notes]
        by_turn = {n.turn: n.text for n in notes}
        for step in steps:
            turn = step["extra"]["stripebench"].get("turn")
            if turn in by_turn:
                step["extra"]["stripebench"]["note"] = by_turn[turn]
    return {
        "schema_version": ATIF_VERSION,
        "session_id": str(header.extra.get("session_id") or f"stripebench-{trace.path.stem}"),
        "agent": {"name": header.agent or "stripebench", "version": str(header.versions.get("agent", __version__)),
                  **({"model_name": header.model} if header.model else {})},
        "notes": (
            f"Exported by stripebench {__version__} from {trace.path.name}. Stripe objects, Stripe API requests, grader "
            "verdicts, findings, services, operator actions and the episode end are in extra.stripebench.events; the "
            "findings also in extra.stripebench.findings and named on the steps of their turns."
            + (" The trace recorded no findings: those in extra.stripebench.findings are derived, what the detectors "
               "find over it now (each with derived: true; on the steps as derived_findings)." if derived else "")
        ),
        "final_metrics": {
            "total_prompt_tokens": totals.tokens_in,
            "total_completion_tokens": totals.tokens_out,
            "total_cost_usd": round(totals.cost_usd, 6),
            "total_steps": len(steps),
            # Where the time went (seconds): model, ttft, tool, Stripe inside tool calls, operator wait, other.
            "extra": {"stripebench_time": profiler.profile.summary(),
                      "stripebench_time_by_turn": [t.as_dict() for t in profiler.profile.turns]},
        },
        "extra": {"stripebench": {**ours, "findings": findings, **({"findings_derived": True} if derived else {})}},
        "steps": steps,
    }


def _mark_steps(steps: list[dict[str, Any]], findings: list[dict[str, Any]], key: str = "findings") -> None:
    """Name each finding under ``key`` on the first agent step of the turn it marks (the findings stay whole in the root)."""
    first_of_turn: dict[int, dict[str, Any]] = {}
    for step in steps:
        turn = step["extra"]["stripebench"].get("turn")
        if step["source"] == "agent" and turn is not None:
            first_of_turn.setdefault(turn, step)
    for f in findings:
        step = first_of_turn.get(f["turn"])
        if step is not None:
            step["extra"]["stripebench"].setdefault(key, []).append(f["detector"])


__all__ = ["ATIF_VERSION", "AtifError", "atif_from_trace", "events_from_atif", "load", "sniff"]
