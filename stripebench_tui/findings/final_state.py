"""*Wrong final state*: an object ended (deleted, voided, cancelled…) in a state the task does not ask for.

Which ends a task asks for is the environment's to say: its manifest's ``[[expects.final_states]]`` (an object
type, the states its objects may end in, and optionally a ``metadata`` key so that only objects made or updated with
that key are judged), carried by the trace header; without one this never fires. The rule is deliberately narrow, so
that it is right whenever it fires: it watches the requests that end an object by themselves (``ENDS``: an invoice
deleted, voided, marked uncollectible or paid; a subscription or a PaymentIntent cancelled) answered 2xx, by anyone
but a grader, and fires when the state they put the object in is not among the asked-for ones. Deleting a draft
invoice where cancelled bookings must be voided is the typical case: Stripe then keeps no record of the bill.
The ``metadata`` key tells the task's objects from incidental ones (a migration's invoices carry the legacy booking's
id; a purchase's draft thrown away after a failure does not), read from the create or update request's form body or
from a watched ``stripe_object``. One finding per object type and wrong state per turn (a migration run ends many
objects in one turn).
"""

from __future__ import annotations

from typing import Any

from stripebench_tui.core.events import Event, Finding, Header, StripeObject, StripeRequest
from stripebench_tui.core.json_value import JSONValue
from stripebench_tui.findings.base import finding, operation, path_parts

NAME = "wrong-final-state"
# A request that ends an object by itself: its operation -> (the object's type, the state it leaves it in).
ENDS: dict[str, tuple[str, str]] = {
    "DELETE /v1/invoices/{id}": ("invoice", "deleted"),
    "POST /v1/invoices/{id}/void": ("invoice", "void"),
    "POST /v1/invoices/{id}/mark_uncollectible": ("invoice", "uncollectible"),
    "POST /v1/invoices/{id}/pay": ("invoice", "paid"),
    "DELETE /v1/subscriptions/{id}": ("subscription", "canceled"),
    "POST /v1/payment_intents/{id}/cancel": ("payment_intent", "canceled"),
}
COLLECTIONS = {"invoices": "invoice", "subscriptions": "subscription", "payment_intents": "payment_intent"}


class Rule:
    """One ``final_states`` entry of the header: the states objects of ``object`` may end in."""

    def __init__(self, entry: dict[str, Any]) -> None:
        self.object = str(entry.get("object", ""))
        self.states = frozenset(str(s) for s in entry.get("states", ()))
        self.metadata = str(entry.get("metadata") or "")


class WrongFinalState:
    """See the module docstring."""

    name = NAME
    wants = (Header.type, StripeObject.type, StripeRequest.type)

    def __init__(self) -> None:
        self.rules: dict[str, list[Rule]] = {}  # object type -> its rules
        self.keys: set[str] = set()  # the metadata keys rules select by
        self.marked: dict[str, set[str]] = {}  # metadata key -> ids of objects made or updated with it
        self.fired: set[tuple[str, str, int]] = set()

    def feed(self, event: Event) -> list[Finding] | None:
        if isinstance(event, Header):
            self._read(event.expects.get("final_states"))
            return None
        if not self.rules:
            return None
        if isinstance(event, StripeObject):
            metadata = event.data.get("metadata") if isinstance(event.data, dict) else None
            if self.keys and isinstance(metadata, dict):
                for key in self.keys & metadata.keys():
                    self.marked.setdefault(key, set()).add(event.object_id)
            return None
        assert isinstance(event, StripeRequest)
        if event.source == "grader" or not 200 <= event.status < 300:
            return None
        if event.method == "POST" and self.keys and "metadata[" in event.request_body:
            self._mark(event)
        end = ENDS.get(operation(event.method, event.path))
        if end is None or end[0] not in self.rules:
            return None
        kind, state = end
        object_id = _path_id(event.path)
        judged = [r for r in self.rules[kind] if not r.metadata or object_id in self.marked.get(r.metadata, ())]
        if not judged or any(state in r.states for r in judged) or (kind, state, event.turn) in self.fired:
            return None
        self.fired.add((kind, state, event.turn))
        asked = sorted({s for r in judged for s in r.states})
        which = f" (made with metadata[{judged[0].metadata}])" if judged[0].metadata else ""
        return [finding(NAME, f"{event.method} {event.path} left {kind} {object_id}{which} {state}; the task asks for "
                              f"{', '.join(asked)} ({event.source or 'unknown'})",
                        [{"request_id": event.request_id}, {"seq": event.seq}], turn=event.turn, seq=event.seq)]

    def _read(self, entries: JSONValue) -> None:
        self.rules, self.keys = {}, set()
        for entry in entries if isinstance(entries, list) else ():
            if isinstance(entry, dict):
                rule = Rule(entry)
                self.rules.setdefault(rule.object, []).append(rule)
                if rule.metadata:
                    self.keys.add(rule.metadata)

    def _mark(self, req: StripeRequest) -> None:
        """Note the object a create or an update of a judged type made with a selecting metadata key."""
        parts = path_parts(req.path) or []
        if not parts or COLLECTIONS.get(parts[0][0]) not in self.rules or len(parts) > 2:
            return None  # not a judged type's create (``/v1/invoices``) or update (``/v1/invoices/in_1``)
        object_id = parts[1][0] if len(parts) == 2 else (req.object_ids[0] if req.object_ids else "")
        for key in self.keys:
            if f"metadata[{key}]=" in req.request_body and object_id:
                self.marked.setdefault(key, set()).add(object_id)
        return None

    def finish(self, reason: str) -> None:
        return None


def _path_id(path: str) -> str:
    """The first object id in a ``/v1`` path (the object a request acts on)."""
    return next((seg for seg, is_id in path_parts(path) or () if is_id), "")


__all__ = ["COLLECTIONS", "ENDS", "NAME", "WrongFinalState"]
