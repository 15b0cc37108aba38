"""*Unverified finish*: the agent ends while verdicts are failing or pending, or without any end-to-end check
(a browser action, a request to the app, the app or a page calling Stripe) after its last code change.

Only an end the agent chose counts (``agent_done``): running out of turns or being stopped is not a claim.
"""

from __future__ import annotations

import re
from typing import Any, cast

from stripebench_tui.core.events import FAIL, PASS, Event, Finding, GraderVerdict, StripeRequest, ToolCall
from stripebench_tui.findings.base import finding, is_edit, shell_command

NAME = "unverified-finish"
_REACHES_APP = re.compile(r"\b(curl|wget|http|httpie)\b|https?://|APP_URL|requests\.(get|post)|fetch\(")


class UnverifiedFinish:
    """See the module docstring."""

    name = NAME
    wants = (GraderVerdict.type, ToolCall.type, StripeRequest.type)

    def __init__(self) -> None:
        self.verdicts: dict[str, GraderVerdict] = {}
        self.last_edit: ToolCall | None = None
        self.checked_since_edit = False
        self.last_seq = 0
        self.last_turn = 0

    def feed(self, event: Event) -> None:
        self.last_seq, self.last_turn = event.seq, max(self.last_turn, event.turn)
        if isinstance(event, GraderVerdict):
            self.verdicts[event.criterion] = event
        elif isinstance(event, ToolCall):
            if is_edit(event):
                self.last_edit, self.checked_since_edit = event, False
            elif self.checked_since_edit:
                pass  # already checked: no need to read the command
            elif event.tool.startswith("browser_") or _REACHES_APP.search(shell_command(event)):
                self.checked_since_edit = True
        elif not self.checked_since_edit and cast(StripeRequest, event).source in ("app", "browser"):  # see wants
            self.checked_since_edit = True
        return None

    def finish(self, reason: str) -> list[Finding] | None:
        if reason != "agent_done":
            return None
        bad = [v for v in self.verdicts.values() if v.status != PASS]
        if bad:
            names = ", ".join(f"{v.criterion} {'failing' if v.status == FAIL else v.status}" for v in bad[:3])
            more = f" and {len(bad) - 3} more" if len(bad) > 3 else ""
            evidence: list[dict[str, Any]] = [{"seq": v.seq} for v in bad]
            return [finding(NAME, f"agent ended with {len(bad)} of {len(self.verdicts)} criteria not passing: "
                                  f"{names}{more}", evidence, turn=self.last_turn, seq=self.last_seq)]
        if self.last_edit is not None and not self.checked_since_edit:
            edit = self.last_edit
            return [finding(NAME, f"agent ended without an end-to-end check after its last code change "
                                  f"({edit.tool} {edit.arguments.get('path', '')})".replace(" )", ")"),
                            [{"call_id": edit.call_id}, {"seq": edit.seq}], turn=self.last_turn, seq=self.last_seq)]
        return None


__all__ = ["NAME", "UnverifiedFinish"]
