"""Where the time went: the episode's totals and one sparkline per kind of time, a bar per turn."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Sparkline, Static

from stripebench_tui.core.profile import TimeProfile, label
from stripebench_tui.tui.screens.dialog import DialogScreen

KINDS = (("model", "model (total)"), ("ttft", "time to first token"), ("tool", "tools"),
         ("stripe", "Stripe API in tools"), ("wait", "operator wait"), ("other", "other"))


def kinds(profile: TimeProfile) -> list[tuple[str, str]]:
    """The kinds of time shown: the agent's side, then each part of the harness's own time it recorded, then other."""
    return [*KINDS[:-1], *((part, f"harness: {label(part)}") for part in profile.parts()), KINDS[-1]]


def summary_line(profile: TimeProfile) -> str:
    s = profile.summary()
    wall = s["wall"] or 1.0
    parts = [f"{name} {s[kind]:.1f}s ({100 * s[kind] / wall:.0f}%)" for kind, name in kinds(profile) if kind != "ttft"]
    return f"{len(profile.turns)} turns in {s['wall']:.1f}s: " + " · ".join(parts)


class TimeScreen(DialogScreen[None]):
    """A bar per turn for each kind of time; the slowest turns by name."""

    BINDINGS = [Binding("escape,w,q", "close", "Close"), Binding("down,j", "scroll(1)", show=False),
                Binding("up,k", "scroll(-1)", show=False)]
    DEFAULT_CSS = """
    TimeScreen Sparkline { height: 2; margin-bottom: 1; }
    TimeScreen Static.kind, TimeScreen Static.help { color: $text-muted; }
    TimeScreen > Vertical { overflow-y: auto; }
    """

    def __init__(self, profile: TimeProfile) -> None:
        super().__init__()
        self.profile = profile

    def compose(self) -> ComposeResult:
        p = self.profile
        with Vertical() as box:
            box.border_title = "Where the time went"
            yield Static(summary_line(p), id="time-summary", markup=False)
            for kind, name in kinds(p):
                series = p.series(kind)
                top = max(series, default=0.0)
                yield Static(f"{name}: max {top:.2f}s per turn", classes="kind", markup=False)
                yield Sparkline(series or [0.0], summary_function=max, id=f"spark-{kind}")
            slow = sorted(p.turns, key=lambda t: -t.wall)[:3]
            lines = [f"turn {t.turn}: {t.wall:.1f}s (model {t.model:.1f}, tools {t.tool:.1f}, Stripe {t.stripe:.1f}, "
                     f"wait {t.wait:.1f}" + "".join(f", {label(k)} {t.get(k):.1f}" for k in p.parts() if k in t.parts) + ")"
                     for t in slow]
            yield Static("slowest: " + ("; ".join(lines) or "no turns"), id="time-slowest", markup=False)
            yield Static("Esc closes", classes="help")

    def action_scroll(self, steps: int) -> None:
        # The harness's parts add a sparkline each: on a short terminal the box scrolls (its scrollbar shows it),
        # one kind of time (label, bar, margin: 4 rows) at a time.
        self.query_one(Vertical).scroll_relative(y=4 * steps, animate=False)

    def action_close(self) -> None:
        self.dismiss(None)
