"""Billing's time: the moment an object's Billing lives at (its customer's test clock, or the account's clock) and
periods moved on by calendar intervals, as Stripe's billing counts them."""

from __future__ import annotations

import calendar
import copy
from datetime import UTC, datetime

from stripebench_emulator.model.context import RequestContext

DAY = 86400
CLOCK_KIND = "test_helpers.test_clock"


def clock_now(ctx: RequestContext, clock_id: str | None) -> int:
    """The frozen time of ``clock_id``, or the emulator's clock when there is none."""
    clock = ctx.store.get(CLOCK_KIND, clock_id) if clock_id else None
    return clock["frozen_time"] if clock else ctx.now()


def at(ctx: RequestContext, moment: int) -> RequestContext:
    """A copy of ``ctx`` whose ``now()`` is ``moment`` (so charges and intents made then carry that time)."""
    moved = copy.copy(ctx)
    moved.now = lambda: moment  # type: ignore[method-assign]
    return moved


def period_end(start: int, interval: str, count: int) -> int:
    """``start`` moved on by ``count`` intervals (calendar months and years, like Stripe's billing)."""
    if interval in ("day", "week"):
        return start + count * (DAY if interval == "day" else 7 * DAY)
    moment = datetime.fromtimestamp(start, UTC)
    months = count * (12 if interval == "year" else 1)
    year, month = divmod(moment.month - 1 + months, 12)
    year, month = moment.year + year, month + 1
    day = min(moment.day, calendar.monthrange(year, month)[1])
    return int(moment.replace(year=year, month=month, day=day).timestamp())
