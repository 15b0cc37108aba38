"""Plain-words captions of what a turn did, for an audience: "Checkout Session cs_…a1b2 paid — 'paid ×2' now passes".

UI-free: a caption is made from one turn's events and the criteria's statuses
before it, so the presenter (or a report) can caption any turn it jumps to.
What matters to someone watching comes first (Stripe objects, verdicts,
findings, the end); what the agent did fills in when nothing else happened.
Every caption is masked for an audience: secrets (``core.redact``) and the
local part of email addresses.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from stripebench_tui.core.events import (
    ERROR,
    FAIL,
    PASS,
    EpisodeEnd,
    Event,
    Finding,
    GraderVerdict,
    ModelMessage,
    Operator,
    StripeObject,
    StripeRequest,
    ToolCall,
    ToolResult,
)
from stripebench_tui.core.redact import Redactor, mask_emails

MAX_CAPTION = 160
SEPARATOR = " — "

# Stripe's own names for the objects people know; anything else is its type in words ("tax_rate" → "Tax rate").
OBJECT_NAMES = {
    "checkout.session": "Checkout Session", "payment_intent": "PaymentIntent", "setup_intent": "SetupIntent",
    "payment_method": "PaymentMethod", "customer": "Customer", "invoice": "Invoice", "subscription": "Subscription",
    "price": "Price", "product": "Product", "coupon": "Coupon", "promotion_code": "Promotion code",
    "refund": "Refund", "charge": "Charge", "payment_link": "Payment Link", "webhook_endpoint": "Webhook endpoint",
}
VERDICT_WORDS = {PASS: ("now passes", "now pass"), FAIL: ("now fails", "now fail"), ERROR: ("errors", "error")}
OPERATOR_WORDS = {"pause": "paused the episode", "resume": "resumed the episode", "step": "let the agent take one turn",
                  "inject": "gave the agent a hint", "approve": "approved a tool call", "reject": "rejected a tool call",
                  "edit": "edited a tool call", "stop": "stopped the episode"}


def mask(text: str, redactor: Redactor | None = None) -> str:
    """``text`` fit for an audience: secrets redacted and email addresses masked."""
    return mask_emails((redactor or Redactor()).text(text))


def short_id(object_id: str) -> str:
    """``cs_test_a1b2c3d4`` → ``cs_…c3d4`` (ids are noise to an audience; the prefix says the kind)."""
    prefix, sep, rest = object_id.partition("_")
    if not sep or len(object_id) <= 10:
        return object_id
    return f"{prefix}_…{rest[-4:]}"


def object_name(object_type: str) -> str:
    return OBJECT_NAMES.get(object_type) or object_type.replace(".", " ").replace("_", " ").capitalize() or "Stripe object"


def object_state(ev: StripeObject) -> str:
    """What happened to an object, in one word or two: "paid", "created", "succeeded", "deleted"."""
    if ev.change == "deleted":
        return "deleted"
    data = ev.data if isinstance(ev.data, dict) else {}
    if data.get("payment_status") == "paid" or data.get("paid") is True and ev.object_type == "invoice":
        return "paid"
    status = data.get("status")
    if ev.change == "created" and status in (None, "open", "draft", "active", "requires_payment_method"):
        return "created"
    # Masked before "_" becomes " ": "sk_test_…" spelt "sk test …" is no longer a key the redactor knows.
    return mask(str(status)).replace("_", " ") if status else ev.change


def _objects_part(events: list[StripeObject]) -> str:
    latest: dict[str, StripeObject] = {}
    for ev in events:
        latest[ev.object_id] = ev  # the last change of each object in the turn is what it is now
    items = list(latest.values())
    if len(items) > 2:
        changed = {object_state(e) for e in items}
        verb = changed.pop() if len(changed) == 1 else "changed"
        return f"{len(items)} Stripe objects {verb}"
    return ", ".join(f"{object_name(e.object_type)} {short_id(e.object_id)} {object_state(e)}" for e in items)


def _verdicts_part(events: list[GraderVerdict], before: Mapping[str, str]) -> str:
    now: dict[str, str] = {}
    for ev in events:
        now[ev.criterion] = ev.status
    by_status: dict[str, list[str]] = {}
    for criterion, status in now.items():
        if status != before.get(criterion) and status in VERDICT_WORDS:
            by_status.setdefault(status, []).append(criterion)
    parts = []
    for status in (PASS, FAIL, ERROR):
        names = by_status.get(status, [])
        one, many = VERDICT_WORDS[status]
        if len(names) == 1:
            parts.append(f"'{names[0]}' {one}")
        elif len(names) == 2:
            parts.append(f"'{names[0]}' and '{names[1]}' {many}")
        elif names:
            parts.append(f"{len(names)} criteria {many}")
    return ", ".join(parts)


def _end_part(ev: EpisodeEnd) -> str:
    outcome = "passed" if ev.passed else ("failed" if ev.passed is False else "not scored")
    score = f", score {ev.score:.2f}" if ev.score is not None else ""
    return f"The episode ended ({ev.reason.replace('_', ' ')}): {outcome}{score}"


def _call_part(calls: list[ToolCall], results: dict[str, ToolResult]) -> str:
    call = calls[-1]
    what = call.arguments.get("command") or call.arguments.get("path") or call.arguments.get("action") or ""
    what = mask(str(what)).splitlines()[0] if str(what).strip() else ""  # masked before it is cut, so no half address slips by
    text = f"The agent ran {call.tool}" + (f": {what[:60]}" if what else "")
    result = results.get(call.call_id)
    if result is not None and (result.is_error or (result.exit_code not in (None, 0))):
        text += " — it failed" + (f" (exit {result.exit_code})" if result.exit_code not in (None, 0) else "")
    if len(calls) > 1:
        text += f" (and {len(calls) - 1} more call{'s' if len(calls) > 2 else ''})"
    return text


def caption(events: Iterable[Event], before: Mapping[str, str] | None = None, redactor: Redactor | None = None) -> str:
    """One line saying what these events (a turn's) did; ``before`` maps each criterion to its status before them."""
    before = before or {}
    objects: list[StripeObject] = []
    verdicts: list[GraderVerdict] = []
    findings: list[Finding] = []
    failed_requests: list[StripeRequest] = []
    calls: list[ToolCall] = []
    results: dict[str, ToolResult] = {}
    messages: list[ModelMessage] = []
    operators: list[Operator] = []
    end: EpisodeEnd | None = None
    for ev in events:
        if isinstance(ev, StripeObject):
            objects.append(ev)
        elif isinstance(ev, GraderVerdict):
            verdicts.append(ev)
        elif isinstance(ev, Finding):
            findings.append(ev)
        elif isinstance(ev, StripeRequest) and ev.status >= 400:
            failed_requests.append(ev)
        elif isinstance(ev, ToolCall):
            calls.append(ev)
        elif isinstance(ev, ToolResult):
            results[ev.call_id] = ev
        elif isinstance(ev, ModelMessage) and ev.role == "assistant" and ev.text.strip():
            messages.append(ev)
        elif isinstance(ev, Operator) and ev.action in OPERATOR_WORDS:
            operators.append(ev)
        elif isinstance(ev, EpisodeEnd):
            end = ev
    parts = [p for p in (_objects_part(objects) if objects else "", _verdicts_part(verdicts, before)) if p]
    parts += [f"Finding: {f.message}" for f in findings[:1]]
    if not parts:  # nothing an audience waits for: say what the agent (or the operator) did
        if failed_requests:
            r = failed_requests[-1]
            parts.append(f"Stripe answered {r.status}" + (f" ({r.error_type})" if r.error_type else "") +
                         f" to {r.method} {r.path}")
        if calls:
            parts.append(_call_part(calls, results))
        elif messages:
            first = mask(messages[-1].text.strip().splitlines()[0], redactor)
            parts.append(f'The agent says: "{first[:90]}{"…" if len(first) > 90 else ""}"')
        if operators:
            parts.append(f"The operator {OPERATOR_WORDS[operators[-1].action]}")
        watched = {v.criterion for v in verdicts if v.criterion not in before}
        if not parts and watched:
            parts.append(f"The graders start watching {len(watched)} criteri{'on' if len(watched) == 1 else 'a'}")
    if end is not None:
        parts.append(_end_part(end))
    text = SEPARATOR.join(parts) or "Nothing visible happened in this turn"
    # Masked again whole (object fields, messages of findings), then cut: cutting first could split a secret.
    text = mask(" ".join(text.split()), redactor)
    return text if len(text) <= MAX_CAPTION else text[: MAX_CAPTION - 1] + "…"


def is_notable(events: Iterable[Event], before: Mapping[str, str] | None = None) -> bool:
    """Whether a turn deserves a dwell: some criterion's status changed, or a finding was raised."""
    before = dict(before or {})
    for ev in events:
        if isinstance(ev, Finding):
            return True
        if isinstance(ev, GraderVerdict):
            if before.get(ev.criterion) != ev.status and ev.status in VERDICT_WORDS:
                return True
            before[ev.criterion] = ev.status
    return False


__all__ = ["caption", "is_notable", "mask", "object_name", "object_state", "short_id"]
