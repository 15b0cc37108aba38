"""Presenter mode: the episode played by itself for an audience, large and high-contrast, with a caption.

One screen at 100×30 keeps the timeline, the current turn, the Stripe objects
and the verdicts, under a caption line that says what just happened
(``core.caption``). Pacing is ``core.presenting.Pacer`` on an injectable clock:
a timer only asks it whether the turn is due, so tests move the clock instead of
waiting. Everything drawn is masked (secrets, email addresses). Esc returns to
the replay at the turn the presenter reached.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Static

from stripebench_tui.core.caption import caption, is_notable, mask, object_name, short_id
from stripebench_tui.core.events import ERROR, FAIL, PASS, Event
from stripebench_tui.core.presenting import Pacer
from stripebench_tui.core.redact import Redactor
from stripebench_tui.core.state import FAILED, OK, REJECTED, EpisodeState, Turn
from stripebench_tui.tui.sources.episode_source import EpisodeSource, turn_from_events
from stripebench_tui.tui.text import clean

TICK = 0.1  # seconds between looks at the pacer
MARKS = {PASS: ("✔", "bold #00ff5f"), FAIL: ("✘", "bold #ff5f5f"), ERROR: ("!", "bold #ff87ff")}

PRESENTER_CSS = """
PresenterScreen { background: #000000; color: #ffffff; }
PresenterScreen #caption {
    height: auto; min-height: 3; max-height: 5; padding: 1 2; background: #ffd700; color: #000000; text-style: bold;
}
PresenterScreen #stage { height: 1fr; }
PresenterScreen .pane { border: heavy #ffffff; border-title-color: #ffd700; border-title-style: bold; padding: 0 1; }
PresenterScreen #p-timeline { width: 24; height: 1fr; }
PresenterScreen #p-turn { width: 1fr; height: 1fr; }
PresenterScreen #p-side { width: 36; }
PresenterScreen #p-objects { height: 1fr; }
PresenterScreen #p-verdicts { height: 1fr; }
PresenterScreen #p-status { height: 1; background: #ffffff; color: #000000; text-style: bold; padding: 0 1; }
"""


class PresenterScreen(Screen[int]):
    """Paced, captioned playback of an episode source; dismissed with the timeline position reached."""

    DEFAULT_CSS = PRESENTER_CSS
    TIMELINE_TITLE = "Turns"
    KEY_HINTS = " │ Space pause · +/- speed · ←/→ step · Esc back"  # after the status (none in a recording: no keys)
    BINDINGS = [
        Binding("space", "play_pause", "Pause/Play"),
        Binding("right,l", "next", "Next", show=False),
        Binding("left,h", "previous", "Back", show=False),
        Binding("plus,equals_sign,right_square_bracket", "faster", "Faster", show=False),
        Binding("minus,left_square_bracket", "slower", "Slower", show=False),
        Binding("escape,P", "leave", "Leave"),
        Binding("q", "app.quit", "Quit", show=False),
    ]

    def __init__(self, source: EpisodeSource, turns: list[int], *, start: int = 0, speed: float = 1.0,
                 clock: Callable[[], float] = time.monotonic, at_end: Callable[[], object] | None = None) -> None:
        super().__init__()
        self.at_end = at_end  # called once the last turn's hold is over (a recording ends there); else it pauses
        self.played_out = False
        self.source = source
        self.turns = turns
        self.position = max(0, min(start, len(turns) - 1)) if turns else 0
        self.pacer = Pacer(clock=clock, speed=speed)
        self.redactor = Redactor()
        self.caption_text = ""
        self.notable: set[int] = set()  # positions already known to dwell
        self.whole: EpisodeState | None = None  # the whole episode: each timeline row's tools

    def compose(self) -> ComposeResult:
        yield Static(id="caption")
        with Horizontal(id="stage"):
            yield Static(id="p-timeline", classes="pane")
            yield Static(id="p-turn", classes="pane")
            with Vertical(id="p-side"):
                yield Static(id="p-objects", classes="pane")
                yield Static(id="p-verdicts", classes="pane")
        yield Static(id="p-status")

    def on_mount(self) -> None:
        self.whole = self.source.state_at(None)
        for pane, title in (("p-timeline", self.TIMELINE_TITLE), ("p-turn", "Now"), ("p-objects", "Stripe objects"),
                            ("p-verdicts", "Verdicts")):
            self.query_one(f"#{pane}").border_title = title
        self.show()
        self.set_interval(TICK, self.tick)

    # ----- pacing -------------------------------------------------------------------------
    def tick(self) -> None:
        """Advance when the current turn's hold is over (the timer calls this; tests may too)."""
        if self.played_out:
            return
        if not self.pacer.due():
            self.draw_status()  # the countdown
        else:
            if self.position + 1 < len(self.turns):
                self.position += 1
                self.show()
            elif self.at_end is not None:
                self.played_out = True  # no more drawing: the last frame stays as it was
                self.at_end()
            else:
                self.pacer.toggle()  # the end: stay on the last turn, paused
                self.draw_status()

    def show(self, restart: bool = True) -> None:
        """Draw the turn at ``position`` and (unless ``restart`` is False: a redraw) start its hold."""
        if not self.turns:
            self.query_one("#caption", Static).update("This episode has no turns.")
            return
        number = self.turns[self.position]
        events = self.source.events_for_turn(number)
        state = self.source.state_at(number)
        before = self._statuses_before()
        notable = is_notable(events, before)
        if notable:
            self.notable.add(self.position)
        self.caption_text = caption(events, before, self.redactor)
        turn = turn_from_events(number, events)
        if restart:
            self.pacer.shown(self._recorded(turn), notable)
        self.query_one("#caption", Static).update(Text(self.caption_text))  # text, never markup
        self.query_one("#p-timeline", Static).update(self.timeline_text())
        self.query_one("#p-turn", Static).update(self.turn_text(turn, events))
        self.query_one("#p-objects", Static).update(self.objects_text(state, set(turn.object_ids)))
        self.query_one("#p-verdicts", Static).update(self.verdicts_text(state))
        self.draw_status()

    def _statuses_before(self) -> dict[str, str]:
        if self.position == 0:
            return {}
        state = self.source.state_at(self.turns[self.position - 1])
        return {name: c.status for name, c in state.verdicts.items()}

    def _recorded(self, turn: Turn) -> float:
        """Recorded seconds until the next turn started (the turn's own duration for the last one)."""
        if self.position + 1 < len(self.turns):
            nxt = self.source.events_for_turn(self.turns[self.position + 1])
            if nxt:
                return max(0.0, nxt[0].t - turn.start)
        return turn.duration

    # ----- panes --------------------------------------------------------------------------
    def _mask(self, text: str) -> str:
        return mask(clean(text), self.redactor)

    def timeline_text(self) -> Text:
        rows = max(1, (self.size.height or 30) - 6)
        first = max(0, min(self.position - rows // 2, len(self.turns) - rows))
        out = Text(no_wrap=True, overflow="ellipsis")
        for pos in range(first, min(len(self.turns), first + rows)):
            mark = "◆" if pos in self.notable else " "
            turn = self.whole.turn(self.turns[pos]) if self.whole is not None else None
            what = ", ".join(turn.tool_names) if turn is not None and turn.calls else (turn.actor if turn else "")
            status = {OK: " ✔", FAILED: " ✘", REJECTED: " ✘"}.get(turn.status, "") if turn is not None and turn.calls else ""
            line = f"{mark}{self.turns[pos]:>3} {self._mask(what)[:13]}{status}"
            out.append(f"{line:<20}\n", style="bold #000000 on #ffd700" if pos == self.position else "#ffffff")
        return out

    def turn_text(self, turn: Turn, events: list[Event]) -> Text:
        out = Text()
        out.append(f"Turn {turn.index} · {turn.actor}\n", style="bold #ffd700")
        for message in turn.messages[-1:]:
            lines = self._mask(message.text).strip().splitlines()[:4]
            out.append("\n".join(lines) + "\n\n", style="bold #ffffff")
        for view in turn.calls[-3:]:
            args = view.call.arguments
            what = args.get("command") or args.get("path") or args.get("action") or ""
            out.append(f"▸ {self._mask(view.call.tool)} ", style="bold #5fd7ff")
            out.append(self._mask(str(what)).splitlines()[0][:60] if what else "", style="#ffffff")
            out.append("\n")
            result = view.result
            if result is not None:
                failed = result.is_error or result.exit_code not in (None, 0)
                out.append("  ✘ failed" if failed else "  ✔ ok", style=MARKS[FAIL if failed else PASS][1])
                width = max(10, self.query_one("#p-turn").content_size.width - 3)
                first = self._mask(result.output).strip().splitlines()[:3]
                out.append(("\n  " + "\n  ".join(line[:width] for line in first)) if first else "", style="#d0d0d0")
                out.append("\n")
        if not turn.messages and not turn.calls:
            out.append("(no agent activity in this turn)", style="italic #d0d0d0")
        return out

    def objects_text(self, state: EpisodeState, in_turn: set[str]) -> Text:
        out = Text(no_wrap=True, overflow="ellipsis")
        objects = sorted(state.objects.values(), key=lambda o: o.last_seq, reverse=True)
        for obj in objects[:12]:
            status = obj.data.get("payment_status") if obj.data.get("payment_status") == "paid" else obj.data.get("status")
            style = "bold #000000 on #5fd7ff" if obj.id in in_turn else "#ffffff"
            out.append(f"{object_name(obj.object_type)[:16]:<16} {self._mask(short_id(obj.id))[:10]:<10} "
                       f"{self._mask(str(status or ''))[:8]}\n", style=style)
        if not objects:
            out.append("none yet", style="italic #d0d0d0")
        elif len(objects) > 12:
            out.append(f"… and {len(objects) - 12} more", style="#d0d0d0")
        return out

    def verdicts_text(self, state: EpisodeState) -> Text:
        out = Text(no_wrap=True, overflow="ellipsis")
        for name, crit in state.verdicts.items():
            mark, style = MARKS.get(crit.status, ("…", "bold #ffd700"))
            out.append(f"{mark} ", style=style)
            out.append(f"{self._mask(name)[:30]}\n", style="bold #ffffff")
        score = state.score()
        out.append(f"score {'–' if score is None else f'{score:.2f}'}", style="bold #ffd700")
        return out

    def draw_status(self) -> None:
        playing = "▶ playing" if self.pacer.playing else "‖ paused"
        last = self.turns[-1] if self.turns else 0
        number = self.turns[self.position] if self.turns else 0
        at_end = bool(self.turns) and self.position + 1 >= len(self.turns)
        when = " · end" if at_end and not self.pacer.playing else f" · next in {self.pacer.remaining():.1f}s"
        self.query_one("#p-status", Static).update(
            f"{playing} ×{self.pacer.speed:g} · turn {number}/{last}{when}{self.KEY_HINTS}")

    # ----- keys ---------------------------------------------------------------------------
    def action_play_pause(self) -> None:
        if not self.pacer.playing and self.position + 1 >= len(self.turns):
            self.position = 0  # from the top when already at the end
            self.pacer.toggle()
            self.show()
            return
        self.pacer.toggle()
        self.draw_status()

    def _step(self, delta: int) -> None:
        if self.turns:
            self.position = max(0, min(len(self.turns) - 1, self.position + delta))
            self.show()

    def action_next(self) -> None:
        self._step(1)

    def action_previous(self) -> None:
        self._step(-1)

    def action_faster(self) -> None:
        self.pacer.faster()
        self.draw_status()

    def action_slower(self) -> None:
        self.pacer.slower()
        self.draw_status()

    def action_leave(self) -> None:
        self.dismiss(self.position)


__all__ = ["PresenterScreen"]
