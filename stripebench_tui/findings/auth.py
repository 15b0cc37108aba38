"""*Scope or auth error*: Stripe answered 401/403 or a permission error and the agent never got past it (no later
2xx for the same operation from the same source by the end of the episode).

Without a request log, a tool output with Stripe's own wording ("Invalid API Key provided", "does not have the
required permissions") counts, unless a later run of the same tool succeeds without it.
"""

from __future__ import annotations

from stripebench_tui.core.events import Event, Finding, StripeRequest, ToolResult
from stripebench_tui.findings.base import ERROR, finding, operation

NAME = "scope-or-auth-error"
# Stripe's own wording, in its own case (plain substring tests: every tool output passes through here).
_WORDING = ("Invalid API Key provided", "does not have the required permission", "Expired API Key",
            "secret_key_required", "api_key_expired")
_CODES = frozenset({"secret_key_required", "api_key_expired", "platform_api_key_expired"})


def _worded(text: str) -> bool:
    return any(w in text for w in _WORDING)


class ScopeOrAuthError:
    """See the module docstring."""

    name = NAME
    wants = (StripeRequest.type, ToolResult.type)

    def __init__(self) -> None:
        self.open: dict[tuple[str, str], StripeRequest] = {}
        self.outputs: dict[str, ToolResult] = {}  # tool -> a result with Stripe's auth wording
        self.logged = False
        self.last_turn = 0
        self.last_seq = 0

    def feed(self, event: Event) -> None:
        self.last_turn, self.last_seq = max(self.last_turn, event.turn), event.seq
        if isinstance(event, ToolResult):
            if _worded(event.output or ""):
                self.outputs[event.tool] = event
            elif not event.is_error:
                self.outputs.pop(event.tool, None)
            return None
        assert isinstance(event, StripeRequest)
        if event.source == "grader":
            return None
        self.logged = True
        status = event.status
        if status in (401, 403) or (status >= 400 and (event.error_code in _CODES
                                                       or "permission" in event.response_body)):
            self.open.setdefault((event.source, operation(event.method, event.path)), event)
        elif 200 <= status < 300 and self.open:
            self.open.pop((event.source, operation(event.method, event.path)), None)
        return None

    def finish(self, reason: str) -> list[Finding] | None:
        out = [finding(NAME, f"{req.method} {req.path} got {req.status}"
                             f"{' ' + req.error_code if req.error_code else ''} ({req.source or 'unknown'}) and no "
                             "later request for it succeeded", [{"request_id": req.request_id}, {"seq": req.seq}],
                       turn=req.turn, seq=req.seq, severity=ERROR) for req in self.open.values()]
        if not self.logged:
            out += [finding(NAME, f"{res.tool} showed a Stripe key or permission error that nothing later fixed",
                            [{"call_id": res.call_id}, {"seq": res.seq}], turn=res.turn, seq=res.seq, severity=ERROR)
                    for res in self.outputs.values()]
        return out or None


__all__ = ["NAME", "ScopeOrAuthError"]
