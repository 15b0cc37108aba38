"""The account's own clock, as ``/_emulator/clock`` moves it: time passes for the objects on no test clock too.

On Stripe, a subscription whose customer has no test clock renews when its period ends in real time. Here the
account's time is the emulator's clock, which an operator may move forward by hand (``advance``, or ``set`` to a
later time). Moving it runs what falls due on the way for the objects on no test clock — trial ends, renewals and
their invoices' finalisation and payment an hour later, cancellations at period end, expiries of incomplete
subscriptions, schedule phases — each at its own time and in time order (the clock steps through those times, so
objects and events carry them), as a test clock's advance runs them for its own objects. Moving it back, or
freezing it, runs nothing.
"""

from __future__ import annotations

from stripebench_emulator.api.test_clocks import run_until
from stripebench_emulator.model.context import RequestContext
from stripebench_emulator.model.engine import Emulator


def move_to(emulator: Emulator, target: int, freeze: bool) -> None:
    """Set the account's time to ``target`` (frozen there when ``freeze``), first running what falls due before it
    for the objects on no test clock; all in one transaction."""
    def move(moment: int) -> None:
        emulator.clock.set(moment, freeze=freeze)

    with emulator.transaction():
        if target > emulator.clock.now():
            run_until(RequestContext(emulator, emulator.api_version), None, target, move)
        move(target)
