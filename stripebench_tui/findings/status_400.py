"""*400-as-success*: the agent saw a 4xx from Stripe and then says it is done (or writes the submission) without a
later 2xx for the same operation.

"Saw" means the request was the agent's own (its shell called Stripe) or a tool result that came back after the
request, in the same turn, shows an error (an HTTP 4xx, a Stripe error object); an app's request that failed
quietly is not this finding. A tool output with a Stripe error and no request in the log (real test mode without
the proxy) counts too, cleared when the same command later runs without one. Graders' requests are left out.

Ending the episode (``agent_done``) is a claim as well: an app's (or page's) request still failing with a 4xx
that nothing later fixed fires then, even when a grader's scenario made it (the app swallowed Stripe's answer).
Declines (402, ``card_error``) and rate limits (429) are answers an app must handle, not this finding.
"""

from __future__ import annotations

import json
import re
from typing import Any

from stripebench_tui.core.events import EpisodeEnd, Event, Finding, ModelMessage, StripeRequest, ToolCall, ToolResult
from stripebench_tui.findings.base import claims_done, finding, operation

NAME = "400-as-success"
# A Stripe error as a tool shows it: Stripe's error types, or an error object next to an HTTP 4xx status.
_STRIPE_ERROR = re.compile(r'"type"\s*:\s*"(?:invalid_request_error|card_error|idempotency_error)"')
_ERROR_OBJECT = re.compile(r'"error"\s*:\s*\{')
_HTTP_4XX = re.compile(r"\bHTTP[ /]?(?:1\.[01] |2 )?4\d\d\b|\b4\d\d (?:Bad Request|Payment Required|Not Found)\b")
_READS_FILES = ("view_file", "create_file", "replace_in_file", "insert_lines", "search_docs", "read_doc")


def shows_error(output: str, strict: bool) -> bool:
    """Whether a tool's output shows an HTTP 4xx / Stripe error (``strict``: a Stripe-shaped error object)."""
    # Substring tests first (they run in C): most outputs show no error and never reach a regex.
    typed = '_error"' in output and _STRIPE_ERROR.search(output) is not None
    if typed:
        return True
    obj = '"error"' in output and _ERROR_OBJECT.search(output) is not None
    if strict and not obj:
        return False
    if not strict and obj:
        return True
    return ("HTTP" in output or " 4" in output) and _HTTP_4XX.search(output) is not None


def _metadata(body: str) -> str:
    """The ``metadata[…]`` parameters of a form body: which order or booking a request was about."""
    if "metadata" not in body:
        return ""
    return "&".join(sorted(p for p in body.split("&") if p.startswith("metadata[")))


def _command(call: ToolCall) -> str:
    return call.tool + " " + json.dumps(call.arguments, sort_keys=True, default=str)


_AUTH = (401, 403)  # the scope-or-auth detector's
_EXPECTED = (402, 429)  # a decline and a rate limit are answers to handle (and retry), not a wrong request


class Detector400:
    """See the module docstring."""

    name = NAME
    wants = (StripeRequest.type, ToolCall.type, ToolResult.type, ModelMessage.type, EpisodeEnd.type)

    def __init__(self) -> None:
        self.open: dict[str, StripeRequest] = {}  # operation -> its latest unanswered 4xx
        self.seen: dict[str, int] = {}  # operation -> seq of the tool result that showed it to the agent
        self.shown_by: dict[str, str] = {}  # operation -> that result's call_id
        self.output_errors: dict[str, ToolResult] = {}  # command -> a result showing a Stripe error
        self.calls: dict[str, ToolCall] = {}  # call_id -> the call (its command is the fallback's key)
        self.fired: set[str] = set()
        self.logged = False  # whether any request reached the log (else tool outputs are all there is)
        self.app_open: dict[tuple[str, str], StripeRequest] = {}  # (operation, metadata) -> the app's failed one

    def feed(self, event: Event) -> list[Finding] | None:
        if isinstance(event, StripeRequest):
            self._request(event)
            return None
        if isinstance(event, ToolCall):
            self.calls[event.call_id] = event
            if event.tool == "create_file" and "submission" in str(event.arguments.get("path", "")):
                return self._claim(event, "writes the submission")
            return None
        if isinstance(event, ToolResult):
            self._result(event)
            return None
        if isinstance(event, ModelMessage) and event.role == "assistant" and claims_done(event.text):
            return self._claim(event, "says the work is done")
        return None

    def _request(self, ev: StripeRequest) -> None:
        if ev.source == "grader":
            return
        self.logged = True
        status = ev.status
        if 200 <= status < 300:
            if not self.open and not self.app_open:  # the common case: nothing failed, nothing to clear
                return
            op = operation(ev.method, ev.path)
            self.open.pop(op, None)
            self.seen.pop(op, None)
            mine = (op, _metadata(ev.request_body))
            self.app_open.pop(mine, None)
            if not mine[1]:
                for key in [k for k in self.app_open if k[0] == op]:
                    del self.app_open[key]
        elif 400 <= status < 500 and status not in _AUTH and not (ev.method == "GET" and status == 404):
            op = operation(ev.method, ev.path)
            self.app_open[(op, _metadata(ev.request_body))] = ev
            self.open[op] = ev
            self.seen.pop(op, None)
            if ev.source == "agent":  # its own shell got the answer
                self.seen[op] = ev.seq

    def _result(self, ev: ToolResult) -> None:
        call = self.calls.pop(ev.call_id, None)
        if ev.tool in _READS_FILES:  # code and docs mention errors; only what ran can show one
            return
        output = ev.output or ""
        if not self.logged:  # no request log (yet): the outputs are the evidence
            key = _command(call) if call is not None else ev.tool
            if shows_error(output, strict=True):
                self.output_errors[key] = ev
            else:
                self.output_errors.pop(key, None)
        unseen = [op for op, req in self.open.items() if op not in self.seen and req.turn == ev.turn and req.seq < ev.seq]
        if not unseen or not shows_error(output, strict=False):
            return
        for op in unseen:
            self.seen[op], self.shown_by[op] = ev.seq, ev.call_id

    def _claim(self, ev: Event, how: str) -> list[Finding] | None:
        out: list[Finding] = []
        for op, req in self.open.items():
            if op in self.seen and op not in self.fired:
                self.fired.add(op)
                evidence: list[dict[str, Any]] = [{"request_id": req.request_id}, {"seq": ev.seq}]
                if op in self.shown_by:
                    evidence.insert(1, {"call_id": self.shown_by[op]})
                out.append(finding(NAME, f"agent {how} after {op} answered {req.status}"
                                         f"{' ' + req.error_code if req.error_code else ''} with no later success",
                                   evidence, turn=ev.turn, seq=ev.seq))
        if not self.logged:  # no request log: fall back to what the tool outputs showed
            for key, res in self.output_errors.items():
                if key not in self.fired:
                    self.fired.add(key)
                    out.append(finding(NAME, f"agent {how} after {res.tool} showed a Stripe 4xx error that no later "
                                             "run of the same command cleared",
                                       [{"call_id": res.call_id}, {"seq": ev.seq}], turn=ev.turn, seq=ev.seq))
        return out or None

    def finish(self, reason: str) -> list[Finding] | None:
        """Ending the episode is a claim too: the app the agent built still gets a 4xx nothing later fixed."""
        if reason != "agent_done":
            return None
        out = []
        for (op, _), req in self.app_open.items():
            if op in self.fired or req.source not in ("app", "browser") or req.status in _EXPECTED:
                continue
            if req.error_type == "card_error":  # a declined test card is an answer the app must handle, not a bug
                continue
            self.fired.add(op)
            out.append(finding(NAME, f"agent ended while the app's {op} answered {req.status}"
                                     f"{' ' + req.error_code if req.error_code else ''} with no later success",
                               [{"request_id": req.request_id}, {"seq": req.seq}], turn=req.turn, seq=req.seq))
        return out or None


__all__ = ["Detector400", "NAME", "shows_error"]
