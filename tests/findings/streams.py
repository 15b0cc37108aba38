"""Hand-made event streams for the detector tests: a few helpers that stamp seq/turn like the bus would."""

from __future__ import annotations

from stripebench_tui.core.events import (
    SIGNED,
    EpisodeEnd,
    Event,
    GraderVerdict,
    Header,
    ModelMessage,
    StripeObject,
    StripeRequest,
    ToolCall,
    ToolResult,
    WebhookDelivery,
)


class Stream:
    """Builds an ordered list of events; ``turn`` is the current turn, every event gets the next seq."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.turn = 0
        self._calls = 0
        self._reqs = 0

    def add(self, event: Event) -> Event:
        event.seq, event.turn, event.t = len(self.events), self.turn, float(len(self.events))
        self.events.append(event)
        return event

    def next_turn(self) -> Stream:
        self.turn += 1
        return self

    def say(self, text: str) -> Stream:
        self.add(ModelMessage(role="assistant", text=text))
        return self

    def call(self, tool: str, output: str = "", *, is_error: bool = False, requests: tuple[StripeRequest, ...] = (),
             **arguments) -> str:
        """A tool call, the Stripe requests made while it ran, then its result; returns the call id."""
        self._calls += 1
        call_id = f"call_{self._calls}"
        self.add(ToolCall(call_id=call_id, tool=tool, arguments=arguments))
        for req in requests:
            self.add(req)
        self.add(ToolResult(call_id=call_id, tool=tool, output=output, is_error=is_error))
        return call_id

    def request(self, method: str, path: str, status: int = 200, *, source: str = "app", body: str = "",
                key: str = "", error_type: str = "", error_code: str = "", response: str = "{}",
                key_kind: str = "sk_test", object_ids: tuple[str, ...] = ()) -> StripeRequest:
        """A request (not yet added: pass it to ``call`` or ``add``)."""
        self._reqs += 1
        return StripeRequest(request_id=f"req_{self._reqs}", method=method, path=path, status=status, source=source,
                             request_body=body, idempotency_key=key, error_type=error_type, error_code=error_code,
                             response_body=response, latency=0.01, key_kind=key_kind, object_ids=list(object_ids))

    def delivery(self, event_id: str = "evt_1", status: int = 200, *, signature: str = SIGNED, sender: str = "grader",
                 rows_added: dict[str, int] | None = None, url: str = "http://127.0.0.1:5001/webhooks/stripe",
                 event_type: str = "checkout.session.completed") -> WebhookDelivery:
        """A webhook delivery to the app, added."""
        return self.add(WebhookDelivery(event_id=event_id, event_type=event_type, url=url, sender=sender,
                                        signature=signature, status=status, rows_added=rows_added))  # type: ignore[return-value]

    def object(self, object_id: str, object_type: str, **data) -> Stream:
        """A Stripe object the watcher saw, added."""
        self.add(StripeObject(object_id=object_id, object_type=object_type, data={"id": object_id, **data}))
        return self


    def verdict(self, criterion: str, status: str) -> Stream:
        self.add(GraderVerdict(criterion=criterion, status=status, final=True))
        return self

    def end(self, reason: str = "agent_done") -> list[Event]:
        self.add(EpisodeEnd(reason=reason))
        return self.events


def header(**expects) -> Header:
    """A trace header whose task asks for ``expects`` (the manifest's [expects] as the header keeps it)."""
    return Header(env="some-env", agent="oracle", expects=expects)
