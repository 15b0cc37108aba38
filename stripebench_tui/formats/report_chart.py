"""The verdict timeline as chart geometry: one row per criterion, a band per stretch of one status, over time.

Only numbers and labels here; the template draws them as inline SVG (no script,
no chart library, nothing fetched), each band linking to the turn that set it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from stripebench_tui.core.state import CriterionState

WIDTH = 960
LABEL_WIDTH = 240  # criterion names on the left
ROW_HEIGHT = 22
ROW_GAP = 6
AXIS_HEIGHT = 28  # time labels under the rows
MARK_HEIGHT = 16  # the strip above the rows with note and finding marks
TICKS = 6
MIN_BAND = 6.0  # px: a status held for an instant (a final verdict) is still visible


@dataclass
class Band:
    x: float
    width: float
    status: str
    turn: int
    title: str  # the tooltip


@dataclass
class ChartRow:
    y: float
    label: str
    status: str  # the last status
    bands: list[Band] = field(default_factory=list)


@dataclass
class Mark:
    x: float
    turn: int
    kind: str  # note | finding


@dataclass
class Chart:
    width: int
    height: int
    plot_x: int
    plot_width: int
    rows: list[ChartRow]
    ticks: list[tuple[float, str]]  # (x, label)
    marks: list[Mark]
    axis_y: float

    @property
    def empty(self) -> bool:
        return not self.rows


def _label(seconds: float) -> str:
    if seconds >= 60:
        m, s = divmod(seconds, 60)
        return f"{int(m)}m{int(s):02d}s"
    return f"{seconds:.1f}s" if seconds < 10 else f"{seconds:.0f}s"


def verdict_chart(
    criteria: Iterable[CriterionState],
    duration: float,
    notes: Iterable[tuple[int, float]] = (),
    findings: Iterable[tuple[int, float]] = (),
    clean: Callable[[str], str] = str,
) -> Chart:
    """Geometry of the criteria × time chart; ``notes``/``findings`` are (turn, time) marks along the top."""
    span = max(duration, 1e-6)
    plot_x, plot_width = LABEL_WIDTH, WIDTH - LABEL_WIDTH - 10

    def x_of(t: float) -> float:
        return round(plot_x + plot_width * min(max(t, 0.0), span) / span, 2)

    rows: list[ChartRow] = []
    top = MARK_HEIGHT + 4
    for i, crit in enumerate(criteria):
        row = ChartRow(top + i * (ROW_HEIGHT + ROW_GAP), clean(crit.criterion), crit.status)
        # Merge repeated evaluations with the same status: a band is a stretch of one status.
        stretches: list[list] = []
        for change in crit.history:
            if stretches and stretches[-1][1] == change.status:
                continue
            stretches.append([change.t, change.status, change.turn, change.trigger])
        for j, (start, status, turn, trigger) in enumerate(stretches):
            end = stretches[j + 1][0] if j + 1 < len(stretches) else span
            x0, x1 = x_of(start), x_of(end)
            why = f" ({clean(trigger)})" if trigger else ""
            title = f"{clean(crit.criterion)}: {status} from {_label(start)} (turn {turn}){why}"
            row.bands.append(Band(x0, max(MIN_BAND, round(x1 - x0, 2)), status, turn, title))
        rows.append(row)
    axis_y = top + len(rows) * (ROW_HEIGHT + ROW_GAP)
    ticks = [(x_of(span * k / (TICKS - 1)), _label(span * k / (TICKS - 1))) for k in range(TICKS)]
    marks = [Mark(x_of(t), turn, "note") for turn, t in notes] + [Mark(x_of(t), turn, "finding") for turn, t in findings]
    return Chart(WIDTH, int(axis_y + AXIS_HEIGHT), plot_x, plot_width, rows, ticks, marks, axis_y)


__all__ = ["Band", "Chart", "Mark", "ChartRow", "verdict_chart"]
