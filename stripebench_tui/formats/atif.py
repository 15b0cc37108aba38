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
import os
import secrets
import shutil
import tempfile
from array import array
from collections.abc import Callable
from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from itertools import islice
from pathlib import Path
from typing import Any, TextIO, cast

from stripebench_tui import __version__
from stripebench_tui.core import json_depth
from stripebench_tui.core.annotations import load_notes
from stripebench_tui.core.events import Event, EventError, Header, ModelMessage, ToolCall, ToolResult, event_from_dict
from stripebench_tui.core.json_value import JSONValue
from stripebench_tui.core.profile import Profiler
from stripebench_tui.core.regular_file import open_regular
from stripebench_tui.core.summary import Summariser
from stripebench_tui.core.trace import Trace, TraceError
from stripebench_tui.core.trace_check import LineError, check_payload
from stripebench_tui.findings.derived import Deriver

ATIF_VERSION = "ATIF-v1.4"  # what we write: the widely implemented revision
READABLE_VERSIONS = frozenset(f"ATIF-v1.{i}" for i in range(8))
MAX_ATIF_BYTES = 512 << 20  # an imported trajectory is one JSON document, decoded whole

_ROOT = ({"schema_version", "agent", "steps"},
         {"session_id", "trajectory_id", "notes", "final_metrics", "continued_trajectory_ref", "subagent_trajectories", "extra"})
_AGENT = ({"name", "version"}, {"model_name", "tool_definitions", "extra"})
_STEP = ({"step_id", "source", "message"},
         {"timestamp", "model_name", "reasoning_effort", "reasoning_content", "tool_calls", "observation", "metrics", "extra",
          "llm_call_count", "is_copied_context"})
_CALL = ({"tool_call_id", "function_name", "arguments"}, {"extra"})
_OBSERVATION = ({"results"}, {"extra"})
_RESULT: tuple[set[str], set[str]] = (set(), {"source_call_id", "content", "subagent_trajectory_ref", "extra"})
_METRICS: tuple[set[str], set[str]] = (set(),
                                       {"prompt_tokens", "completion_tokens", "cached_tokens", "cost_usd", "prompt_token_ids",
                                        "completion_token_ids", "logprobs", "extra"})
_FINAL: tuple[set[str], set[str]] = (set(),
                                     {"total_prompt_tokens", "total_completion_tokens", "total_cached_tokens",
                                      "total_cost_usd", "total_steps", "extra"})
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
        with open_regular(p) as f:
            size = os.fstat(f.fileno()).st_size
            if size > MAX_ATIF_BYTES:  # read whole and decoded whole: several times its size in memory
                raise AtifError(f"{p}: larger than {MAX_ATIF_BYTES >> 20} MiB ({size:,} bytes); not an ATIF file we read")
            raw = f.read()
        doc = json_depth.loads(raw)
    except UnicodeDecodeError:
        raise AtifError(f"{p}: not UTF-8 text") from None
    except json_depth.TooDeep as exc:
        raise AtifError(f"{p}: not an ATIF file we read ({exc})") from None
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

    def obj(self, value: JSONValue, where: str, spec: tuple[set[str], set[str]]) -> dict[str, Any]:
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


def _content_text(value: JSONValue, check: _Checker, where: str) -> str:
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


def _parse_time(value: JSONValue) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


def _num(value: JSONValue, default: float) -> float:
    """A number from our own metadata, or ``default`` when it is missing or not a number."""
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else default


def _ours(extra: JSONValue) -> dict[str, Any]:
    """Our own round-trip metadata inside an ATIF ``extra`` object, if any."""
    if isinstance(extra, dict) and isinstance(ours := extra.get("stripebench"), dict):
        return ours
    return {}


def _restore(d: JSONValue, check: _Checker, where: str) -> Event:
    try:
        if not isinstance(d, dict):
            raise EventError("an event must be a JSON object")
        ev = event_from_dict(d)
        check_payload(d, type(ev))
    except (EventError, LineError) as exc:
        raise check.fail(where, str(exc)) from None
    return ev


def events_from_atif(doc: JSONValue, source: str = "ATIF") -> tuple[Header, list[Event]]:
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
    header.extra = {**header.extra, "imported_from": "atif", "atif_schema_version": version,
                    "session_id": root.get("session_id", "")}

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

        def seq_for(value: JSONValue) -> int:
            nonlocal next_seq
            seq = value if isinstance(value, int) and not isinstance(value, bool) else next_seq
            next_seq = max(next_seq, seq) + 1
            return seq

        if "seq" in mine:
            has_message = mine["seq"] is not None
        else:
            has_message = bool(text or reasoning or metrics or src != "agent" or not step.get("tool_calls"))
        if has_message:
            role = cast(str, mine.get("role")) if mine.get("role") in _ROLE_TO_SOURCE else _SOURCE_TO_ROLE[src]
            events.append(ModelMessage(seq=seq_for(mine.get("seq")), t=t, turn=turn, role=role, text=text, reasoning=reasoning,
                                       model=step.get("model_name") or "", tokens_in=tokens_in, tokens_out=tokens_out,
                                       cost_usd=float(cost) if cost is not None else None, ttft=ttft, latency=latency))
        calls_meta = got if isinstance(got := mine.get("calls"), dict) else {}
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
            cm = got if isinstance(got := calls_meta.get(call_id), dict) else {}
            call_tools[call_id] = name
            events.append(ToolCall(seq=seq_for(cm.get("seq")), t=_num(cm.get("t"), t), turn=turn, call_id=call_id, tool=name,
                                   arguments=args, actor=str(cm.get("actor", "agent")), server=str(cm.get("server", ""))))
        observation = step.get("observation")
        if observation is not None:
            check.obj(observation, f"{where}.observation", _OBSERVATION)
            results = observation["results"]
            if not isinstance(results, list):
                raise check.fail(f"{where}.observation", "'results' must be an array")
            results_meta = got if isinstance(got := mine.get("results"), dict) else {}
            for i, res in enumerate(results):
                rwhere = f"{where}.observation.results[{i}]"
                check.obj(res, rwhere, _RESULT)
                call_id = check.typed(res, "source_call_id", str, rwhere) or f"step{step_id}-result{i}"
                output = _content_text(res.get("content"), check, f"{rwhere}.content")
                rm = got if isinstance(got := results_meta.get(call_id), dict) else {}
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


_AS_MESSAGE, _AS_CALL, _AS_RESULT, _AS_EVENT = "message", "call", "result", "other"


class _Grouping:
    """Which step each event joins: a model message starts a step; a tool call joins the step before it when that is
    the agent's in the same turn, else starts one of its own; a result joins its call's step (a result with no call
    cannot be placed in ATIF: it stays an event, like everything else)."""

    def __init__(self) -> None:
        self.count = 0  # steps so far
        self.current: tuple[int, str, int] | None = None  # (step, source, turn) of the step tool calls may join
        self.step_of_call: dict[str, int] = {}

    def place(self, ev: Event) -> tuple[str, int | None, bool]:
        """(what the event is to the export, the step it goes to, whether it starts that step)."""
        if isinstance(ev, ModelMessage):
            self.current = (self.count, _ROLE_TO_SOURCE.get(ev.role, "user"), ev.turn)
            self.count += 1
            return _AS_MESSAGE, self.current[0], True
        if isinstance(ev, ToolCall):
            new = self.current is None or self.current[1] != "agent" or self.current[2] != ev.turn
            if new:
                self.current = (self.count, "agent", ev.turn)
                self.count += 1
            assert self.current is not None
            self.step_of_call[ev.call_id] = self.current[0]
            return _AS_CALL, self.current[0], new
        step = self.step_of_call.get(ev.call_id) if isinstance(ev, ToolResult) else None
        return (_AS_RESULT, step, False) if step is not None else (_AS_EVENT, None, False)


class AtifExport:
    """The ATIF document of a trace, written in two passes over it that never hold the whole document.

    The first pass (here) gathers what comes before the steps in the document or is spread over them: the totals,
    the time profile, the findings (derived if the trace recorded none), the notes, and for each step the last
    event that adds to it (which needs each tool call's step, an entry per call, for this pass only). The second
    (``write``, or ``document``) builds each step and lets it go, in order, as soon as nothing more can join it:
    what it holds is the steps still waiting for a result and those after them, usually part of one turn.
    ``write`` gives exactly ``json.dumps(document(), ensure_ascii=False, indent=2)``, the steps spooled to a
    temporary file meanwhile (they come last in the document, after the events).
    """

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        fold, profiler, deriver, grouping = Summariser(trace.header), Profiler(), Deriver(trace.header), _Grouping()
        self._last_change = array("q")  # per step: position of the last event that adds to it
        self._events = 0
        for pos, ev in enumerate(trace.iter_events()):
            fold.apply(ev)
            profiler.feed(ev)
            if not fold.summary.findings:  # none recorded (yet): what the detectors find over it now
                deriver.feed(ev)
            _, step, new = grouping.place(ev)
            if new:
                self._last_change.append(pos)
            elif step is not None:
                self._last_change[step] = pos
            self._events = pos + 1
        self.steps = grouping.count
        self.totals = fold.summary.totals
        self.profile = profiler.profile
        found, self.derived = fold.summary.findings, False
        if not found:  # a trace from before the detectors: what they find over it now, labelled derived (as in a report)
            found, self.derived = deriver.findings, bool(deriver.findings)
        self.findings: list[dict[str, Any]] = [{"detector": f.detector, "message": f.message, "severity": f.severity,
                                                "turn": f.turn,
                          "seq": None if self.derived else f.seq, "evidence": f.evidence,
                          **({"derived": True} if self.derived else {})} for f in found]
        self.notes = load_notes(trace.path)

    def document(self) -> dict[str, Any]:
        """The whole document in memory."""
        events: list[dict[str, Any]] = []
        steps: list[dict[str, Any]] = []
        self._second_pass(events.append, steps.append)
        return self._skeleton([t.as_dict() for t in self.profile.turns], events, steps)

    def write(self, out: TextIO) -> None:
        """Write the document to ``out``, one turn, step and event at a time (the steps come last: spooled meanwhile)."""
        slots = ["\x00" + secrets.token_hex(16) + "\x00" for _ in range(3)]  # placeholders no trace can contain
        text = json.dumps(self._skeleton(*slots), ensure_ascii=False, indent=2) + "\n"
        (turns_at, turns_end), (events_at, events_end), (steps_at, steps_end) = (_slot(text, slot) for slot in slots)
        out.write(text[:turns_at])
        turns = _JsonArray(out, text, turns_at)
        for t in self.profile.turns:
            turns.add(t.as_dict())
        turns.close()
        out.write(text[turns_end:events_at])
        with tempfile.TemporaryFile("w+", encoding="utf-8") as spool:
            events, steps = _JsonArray(out, text, events_at), _JsonArray(spool, text, steps_at)
            self._second_pass(events.add, steps.add)
            events.close()
            steps.close()
            out.write(text[events_end:steps_at])
            spool.seek(0)
            shutil.copyfileobj(spool, out)
        out.write(text[steps_end:])

    def _skeleton(self, by_turn: list[dict[str, Any]] | str, events: list[dict[str, Any]] | str,
                  steps: list[dict[str, Any]] | str) -> dict[str, Any]:
        """The document, with ``by_turn`` (the time profile's turns), ``events`` and ``steps`` as given."""
        trace, header = self.trace, self.trace.header
        ours: dict[str, Any] = {"header": header.to_dict(), "events": events}
        if self.notes:  # the operator's notes from beside the trace; each step carries those of its turn too
            ours["notes"] = [asdict(n) for n in self.notes]
        totals = self.totals
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
                   "find over it now (each with derived: true; on the steps as derived_findings)." if self.derived else "")
            ),
            "final_metrics": {
                "total_prompt_tokens": totals.tokens_in,
                "total_completion_tokens": totals.tokens_out,
                "total_cost_usd": round(totals.cost_usd, 6),
                "total_steps": self.steps,
                # Where the time went (seconds): model, ttft, tool, Stripe inside tool calls, operator wait, other.
                "extra": {"stripebench_time": self.profile.summary(),
                          "stripebench_time_by_turn": by_turn},
            },
            "extra": {"stripebench": {**ours, "findings": self.findings,
                                      **({"findings_derived": True} if self.derived else {})}},
            "steps": steps,
        }

    def _second_pass(self, on_event: Callable[[dict[str, Any]], None], on_step: Callable[[dict[str, Any]], None]) -> None:
        """Each event ATIF has no place for to ``on_event`` and each finished step to ``on_step``, in order."""
        trace = self.trace
        started = _parse_time(trace.header.started)
        mark = "derived_findings" if self.derived else "findings"
        marks: dict[int, list[str]] = {}  # turn -> its findings, named on the turn's first agent step
        for f in self.findings:
            marks.setdefault(f["turn"], []).append(f["detector"])
        notes = {n.turn: n.text for n in self.notes}
        grouping = _Grouping()
        held: dict[int, dict[str, Any]] = {}  # steps something may still join, and those after them
        done = 0

        def stamp(step: dict[str, Any], t: float) -> None:
            if started is not None:
                step["timestamp"] = (started + timedelta(seconds=t)).isoformat().replace("+00:00", "Z")

        def finish(i: int) -> None:
            step = held.pop(i)
            step["step_id"] = i + 1
            ours = step["extra"]["stripebench"]
            turn = ours.get("turn")
            if step["source"] == "agent" and turn in marks:
                ours[mark] = marks.pop(turn)
            if turn in notes:
                ours["note"] = notes[turn]
            for call in step.get("tool_calls", ()):  # no result joins this step any more
                if grouping.step_of_call.get(call["tool_call_id"]) == i:
                    del grouping.step_of_call[call["tool_call_id"]]
            on_step(step)

        # The events the first pass saw, no more: a trace still being written has grown since.
        for pos, ev in enumerate(islice(trace.iter_events(), self._events)):
            kind, i, new = grouping.place(ev)
            if kind == _AS_MESSAGE:
                assert isinstance(ev, ModelMessage) and i is not None
                source = _ROLE_TO_SOURCE.get(ev.role, "user")
                step: dict[str, Any] = {"step_id": 0, "source": source, "message": ev.text}
                stamp(step, ev.t)
                if source == "agent":
                    if ev.model:
                        step["model_name"] = ev.model
                    if ev.reasoning:
                        step["reasoning_content"] = ev.reasoning
                    metrics: dict[str, Any] = {k: v for k, v in (("prompt_tokens", ev.tokens_in),
                                                                 ("completion_tokens", ev.tokens_out),
                                                                 ("cost_usd", ev.cost_usd)) if v is not None}
                    timing = {k: v for k, v in (("ttft_seconds", ev.ttft), ("latency_seconds", ev.latency)) if v is not None}
                    if timing:  # where the time went: model time per step (read back on import)
                        metrics["extra"] = timing
                    if metrics:
                        step["metrics"] = metrics
                step["extra"] = {"stripebench": {"seq": ev.seq, "t": ev.t, "turn": ev.turn, "role": ev.role}}
                held[i] = step
            elif kind == _AS_CALL:
                assert isinstance(ev, ToolCall) and i is not None
                if new:
                    held[i] = {"step_id": 0, "source": "agent", "message": "",
                               "extra": {"stripebench": {"seq": None, "t": ev.t, "turn": ev.turn}}}
                    stamp(held[i], ev.t)
                step = held[i]
                step.setdefault("tool_calls", []).append({"tool_call_id": ev.call_id, "function_name": ev.tool,
                                                          "arguments": ev.arguments})
                step["extra"]["stripebench"].setdefault("calls", {})[ev.call_id] = {"seq": ev.seq, "t": ev.t,
                                                                                    "actor": ev.actor, "server": ev.server}
            elif kind == _AS_RESULT:
                assert isinstance(ev, ToolResult) and i is not None
                step = held[i]
                step.setdefault("observation", {"results": []})["results"].append({"source_call_id": ev.call_id,
                                                                                   "content": trace.full_output(ev)})
                step["extra"]["stripebench"].setdefault("results", {})[ev.call_id] = {
                    "seq": ev.seq, "t": ev.t, "turn": ev.turn, "is_error": ev.is_error, "exit_code": ev.exit_code,
                    "duration": ev.duration,
                }
            else:
                on_event(ev.to_dict())
            while done < self.steps and self._last_change[done] <= pos:  # nothing more joins the oldest step: out
                finish(done)
                done += 1
        while done < grouping.count:  # (only if the trace shrank between the passes)
            finish(done)
            done += 1


class _JsonArray:
    """A JSON array written item by item as ``json.dumps(..., indent=2)`` lays it out where ``text[at:]`` starts."""

    def __init__(self, out: TextIO, text: str, at: int) -> None:
        line = text[text.rfind("\n", 0, at) + 1 : at]
        self.out, self.pad, self.empty = out, " " * (len(line) - len(line.lstrip(" ")) + 2), True

    def add(self, item: JSONValue) -> None:
        self.out.write(("[\n" if self.empty else ",\n") + self.pad
                       + json.dumps(item, ensure_ascii=False, indent=2).replace("\n", "\n" + self.pad))
        self.empty = False

    def close(self) -> None:
        self.out.write("[]" if self.empty else "\n" + self.pad[:-2] + "]")


def _slot(text: str, slot: str) -> tuple[int, int]:
    """Where the JSON string ``slot`` is in ``text`` (start, end)."""
    encoded = json.dumps(slot)
    at = text.index(encoded)
    return at, at + len(encoded)


def atif_from_trace(trace: Trace) -> dict[str, Any]:
    """The ATIF document for a trace (full tool outputs, including sidecars); ``AtifExport.write`` streams it."""
    return AtifExport(trace).document()


__all__ = ["ATIF_VERSION", "AtifError", "AtifExport", "atif_from_trace", "events_from_atif", "load", "sniff"]
