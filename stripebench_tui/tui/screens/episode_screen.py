"""The main screen: one episode drawn from an event source, with replay controls.

It draws an ``EpisodeState`` (from ``source.state_at``) plus the selected turn's
own events; where they come from is the source's business, so the live mode can
reuse this screen with a different source. Key bindings come from ``keymap``.
"""

from __future__ import annotations

import bisect
import os
import shlex
import subprocess
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from textual import on, work
from textual.app import ComposeResult, SuspendNotSupported
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer
from textual.worker import get_current_worker

from stripebench_tui.core.annotations import Annotations
from stripebench_tui.core.events import Finding
from stripebench_tui.core.playback import MAX, Playback, speed_label
from stripebench_tui.core.state import EpisodeState, Turn
from stripebench_tui.errors import UserError
from stripebench_tui.tui import heap
from stripebench_tui.tui.components.debugger import FINDING, HIT, VERDICT, Debugger
from stripebench_tui.tui.components.derived import FindingsDeriver
from stripebench_tui.tui.components.lineage import Family, LineageReader
from stripebench_tui.tui.components.notes import TraceNotes
from stripebench_tui.tui.keymaps import keymap
from stripebench_tui.tui.screens.breakpoints import BreakpointScreen
from stripebench_tui.tui.screens.findings_screen import FindingsScreen
from stripebench_tui.tui.screens.fork_tree import ForkTreeScreen
from stripebench_tui.tui.screens.help_screen import HelpScreen
from stripebench_tui.tui.screens.note import REMOVE, NoteScreen, NotesListScreen
from stripebench_tui.tui.screens.presenter import PresenterScreen
from stripebench_tui.tui.screens.request_log_screen import RequestLogScreen
from stripebench_tui.tui.screens.resume import ResumeScreen
from stripebench_tui.tui.screens.time_screen import TimeScreen
from stripebench_tui.tui.search import MESSAGE, TextMatch, find
from stripebench_tui.tui.sources.episode_source import (
    EpisodeSource,
    TurnRow,
    row_for,
    row_from_turn,
    turn_from_events,
    verdict_change_turns,
    verdict_changes,
)
from stripebench_tui.tui.text import clean, pretty_json
from stripebench_tui.tui.widgets.search_bar import SearchBar
from stripebench_tui.tui.widgets.status_bar import StatusBar
from stripebench_tui.tui.widgets.stripe_objects import StripeObjects
from stripebench_tui.tui.widgets.timeline import Timeline
from stripebench_tui.tui.widgets.turn_detail import TurnDetail
from stripebench_tui.tui.widgets.verdicts import Verdicts

FIRST_TURNS = 64  # a cold open paints once its scan has found this many turns (or all of them)
GROW_EVERY = 0.5  # seconds between timeline updates while the scan goes on
STATE_CACHE = 16  # states kept for quick back-and-forth; each shares most of its data with the index
EMPTY = "This trace has no turns: nothing happened in the episode, or it stopped before its first event."


@dataclass(frozen=True)
class PlaybackOptions:
    """How an episode screen opens: playback speed and clock, autoplay, the turn to start at, breakpoints (``replay
    --break``), presenter mode."""

    speed: float = 1.0
    autoplay: bool = False
    clock: Callable[[], float] = time.monotonic
    start_turn: int | None = None
    breakpoints: tuple[str, ...] = ()
    present: bool = False
    read_only: bool = False  # a viewer's screen (``stripebench serve``): nothing written, forked or run


# What a read-only screen refuses: the actions that write beside the trace (notes), start processes on the machine
# that draws the screen (a fork's environment and agent, the pager) — for ``serve``, the server's machine.
WRITING_ACTIONS = frozenset({"fork", "note", "open_pager", "resume"})
READ_ONLY = "read only: this viewer cannot fork, resume, note or run anything here"


class EpisodeScreen(Screen[None]):
    """Timeline, turn detail, Stripe objects, verdicts and a status bar for one episode; its debugger, derived findings
    and notes are components it owns (``tui/components``)."""

    CSS_PATH = Path(__file__).with_suffix(".tcss")
    BINDINGS: ClassVar[list[BindingType]] = [*keymap.bindings()]

    def __init__(self, source: EpisodeSource, options: PlaybackOptions = PlaybackOptions()) -> None:
        super().__init__()
        self.debugger = Debugger(source, self, list(options.breakpoints))
        self.deriver = FindingsDeriver(source)
        self.lineage = LineageReader()  # the forks, the bisect and how the episode ended, read after the first paint
        self.trace_notes = TraceNotes()
        self.read_only = options.read_only
        self.present = options.present  # open presenter mode once the episode is indexed
        self.source = source
        self.playback = Playback(clock=options.clock, speed=options.speed)
        self.autoplay = options.autoplay
        self.start_turn = options.start_turn
        self.turns: list[int] | None = None  # turn numbers, once known
        self.indexed = False  # source.state_at is usable (the index is built)
        self.whole: EpisodeState | None = None  # the whole episode, once indexed: timeline rows without I/O
        self._verdict_turns: list[int] | None = None  # turns where a verdict changed, from ``whole``
        self._position_of: dict[int, int] | None = None
        self._states: OrderedDict[int, EpisodeState] = OrderedDict()  # recently drawn states, by turn
        self.position: int | None = None  # selected row of the timeline
        self.state: EpisodeState | None = None
        self.turn: Turn | None = None
        self.search_query = ""
        self.hit: TextMatch | None = None
        self.note = ""
        self._timer: Timer | None = None
        self._collections = heap.CollectionsDeferred()  # held off while a selected turn's frame is drawn

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Textual asks before every key binding and ``run_action`` (the command palette too): a read-only screen
        refuses the actions that write or start processes, and its footer does not offer them."""
        if self.read_only and action in WRITING_ACTIONS:
            return False
        return True

    # ----- layout and loading -------------------------------------------------------------
    def compose(self) -> ComposeResult:
        with Horizontal(id="panes"):
            yield Timeline(id="timeline")
            yield TurnDetail(id="detail")
            with Vertical(id="side"):
                yield StripeObjects(id="objects")
                yield Verdicts(id="verdicts")
        yield SearchBar(id="search")
        yield StatusBar(id="status")
        yield Footer()
        yield self.debugger
        yield self.deriver
        yield self.lineage

    @property
    def timeline(self) -> Timeline:
        return self.query_one(Timeline)

    @property
    def detail(self) -> TurnDetail:
        return self.query_one(TurnDetail)

    def on_mount(self) -> None:
        self.timeline.border_title = "Turns"
        self.timeline.focus()
        self.refresh_status()
        self.load_turns()

    @work(thread=True, exclusive=True, group="index")
    def load_turns(self) -> None:
        """Show turns known cheaply (the writer's sidecar) at once; else stream them in; else build the index first.

        The index (seconds on a huge trace) is built only after the first turn is on
        screen: built concurrently, it would hold the GIL and delay the first paint.
        The panes that need it (objects, verdicts, totals) fill in when it is ready.
        A trace without its turn index streams: the first turns are painted as soon as
        a scan has found them, the timeline grows while it goes on, and the scan leaves
        the index for the next open (``core/cold_index.py``).
        """
        quick = self.source.quick_turns()
        if not quick:
            scan = self.source.scan_turns()
            if scan is not None and self._stream_turns(scan):
                return
            quick = self.source.quick_turns()
        if quick:
            self.app.call_from_thread(self.turns_loaded, quick)
            self.app.call_from_thread(self.call_after_refresh, self.build_index)
        else:
            self.app.call_from_thread(self.index_ready, self.source.turn_numbers())

    def _stream_turns(self, scan: Iterator[int]) -> bool:
        """Paint the first turns a scan finds, grow the timeline as it goes (worker thread); True if it was cut off
        (the screen is closing)."""
        worker = get_current_worker()
        found: list[int] = []
        painted = threading.Event()
        shown_at: float | None = None
        for turn in scan:
            found.append(turn)
            if shown_at is None:
                if len(found) < FIRST_TURNS or (self.start_turn is not None and turn < self.start_turn):
                    continue  # (replay --turn N paints once turn N is found)
                self.app.call_from_thread(self.turns_loaded, list(found))
                # Let the first frame out before the scan takes the interpreter back.
                self.app.call_from_thread(self.call_after_refresh, painted.set)
                while not painted.wait(0.1):
                    if worker.is_cancelled:
                        return True
                shown_at = time.monotonic()
            elif time.monotonic() - shown_at >= GROW_EVERY:
                if worker.is_cancelled:
                    return True
                self.app.call_from_thread(self.turns_grown, list(found))
                shown_at = time.monotonic()
        return worker.is_cancelled

    def turns_grown(self, turns: list[int]) -> None:
        """More turns found by a cold open's scan: the timeline lists them (the selection stays)."""
        self.turns = turns
        self._position_of = None
        self.timeline.border_title = f"Turns ({len(turns)}…)"
        self.timeline.set_rows(len(turns), self._row)
        self.refresh_status()

    @work(thread=True, exclusive=True, group="build-index")
    def build_index(self) -> None:
        self.app.call_from_thread(self.index_ready, self.source.turn_numbers())

    def index_ready(self, turns: list[int]) -> None:
        first_index = not self.indexed
        self.indexed = True
        self.whole = self.source.state_at(None)
        heap.freeze()  # the index lives as long as the screen: full collections need not walk it (tui/heap.py)
        self._verdict_turns = verdict_change_turns(self.whole)
        self._states.clear()
        if turns:
            # The state after the last turn is the whole episode: End costs no lookup.
            self._states[turns[-1]] = self.whole
        if turns != self.turns:
            self.turns_loaded(turns)
        elif self.position is not None:
            self.select(self.position)
        self.debugger.index_ready()
        trace_path = self.trace_path()
        if first_index and trace_path is not None and not self.source.live:
            self.lineage.read(trace_path)
        # with breakpoints, the marks scan runs the detectors (hits on findings need them): once is enough
        self.deriver.derive_if_none(self.whole, scanning=bool(self.debugger.exprs))
        if first_index and self.present:
            self.action_present()

    @property
    def verdict_turns(self) -> list[int]:
        """Turns where a verdict changed (known once indexed)."""
        return list(self._verdict_turns or [])

    @on(Debugger.MarksReady)
    def _marks_ready(self, message: Debugger.MarksReady) -> None:
        if message.marks.derived is not None:
            self.deriver.take(message.marks.derived)  # the marks scan's detector run serves the findings pane too

    @on(LineageReader.Ready)
    def _family_known(self, message: LineageReader.Ready) -> None:
        family = message.family
        if family.bisect is not None and family.bisect.last_passing is not None:
            self.timeline.set_bisect(family.bisect.last_passing)
        if family.forks:
            self.notify(f"This episode has {family.forks} fork{'s' if family.forks != 1 else ''}: t shows the tree.",
                        title="Forks")
        if not family.ended and not self.read_only:
            self.notify("This episode ended without an end event (its process died, or it still runs elsewhere): "
                        "r offers to resume it from its last checkpoint.", title="Resume", timeout=10)

    @on(Debugger.GoTo)
    def _jumped(self, message: Debugger.GoTo) -> None:
        self._go(message.position)

    @on(FindingsDeriver.Derived)
    def _derived(self, message: FindingsDeriver.Derived) -> None:
        self.show_derived(message.found)

    def show_derived(self, found: list[Finding]) -> None:
        """The derived findings as ⚐ marks in the timeline and in the selected turn's detail."""
        self.timeline.set_derived({f.turn for f in found})
        if self.turn is not None:
            self.detail.set_derived(self.deriver.for_turn(self.turn.index))

    def on_unmount(self) -> None:
        self._collections.release()
        heap.thaw()

    def turns_loaded(self, turns: list[int]) -> None:
        first_time = self.turns is None
        self.turns = turns
        self._position_of = None
        self.timeline.border_title = f"Turns ({len(turns)})"
        if not turns:
            self.timeline.placeholder = "No turns."
            self.timeline.refresh()
            self.detail.show_message(EMPTY)
            if self.indexed:
                self.state = self.source.state_at(None)
                self.query_one(Verdicts).show(self.state, None)
            self.refresh_status()
            return
        self.timeline.set_rows(len(turns), self._row)
        self.notes()  # the noted turns are marked in the timeline
        start = self.position or 0
        if first_time and self.start_turn is not None and self.start_turn in turns:
            start = turns.index(self.start_turn)
        self.select(start)
        if first_time and self.autoplay:
            self.action_toggle_play()

    def _positions(self) -> dict[int, int]:
        """Turn number → timeline row."""
        if self._position_of is None or len(self._position_of) != len(self.turns or ()):
            self._position_of = {number: i for i, number in enumerate(self.turns or ())}
        return self._position_of

    def _row(self, position: int) -> TurnRow:
        assert self.turns is not None
        number = self.turns[position]
        known = self.whole.turn(number) if self.whole is not None else None
        if known is not None:
            return row_from_turn(known)
        return row_for(number, self.source.events_for_turn(number))

    # ----- drawing the selected turn ------------------------------------------------------
    def select(self, position: int) -> None:
        """Show the episode as it was at the end of the turn in timeline row ``position``."""
        if not self.turns:
            return
        position = max(0, min(len(self.turns) - 1, position))
        # No collection while this turn's frame is built and drawn: they run once it is on screen (or at once if the
        # screen is closing and no frame will follow).
        if self._collections.hold() and not self.call_after_refresh(self._collections.release):
            self._collections.release()
        number = self.turns[position]
        self.position = position
        self.timeline.move_to(position)
        self.state = self._state_at(number) if self.indexed else None
        self.turn = turn_from_events(number, self.source.events_for_turn(number))
        self.detail.show(self.turn, self.source.full_output, self.deriver.for_turn(number))
        if self.state is not None:
            self.query_one(StripeObjects).show(self.state, self.turn.object_ids)
            self.query_one(Verdicts).show(self.state, number)
        if self.playing:
            self.playback.seek(self.turn.start)
            self._schedule_next()
        self.refresh_status()

    def _state_at(self, number: int) -> EpisodeState:
        """The state after turn ``number``, remembered for the last few turns drawn (stepping back and forth)."""
        state = self._states.get(number)
        if state is None:
            state = self.source.state_at(number)
            self._states[number] = state
            if len(self._states) > STATE_CACHE:
                self._states.popitem(last=False)
        else:
            self._states.move_to_end(number)
        return state

    def refresh_status(self) -> None:
        total = len(self.turns) if self.turns is not None else self.source.turn_count_hint()
        self.query_one(StatusBar).show(
            self.source.header,
            self.state,
            self.position,
            total,
            self.playing,
            self.playback.speed,
            self.note,
            elapsed=self.turn.end if self.turn is not None else None,
            turn_number=self.turn.index if self.turn is not None else None,
            last_turn=self.turns[-1] if self.turns else None,
        )

    @on(Timeline.Selected)
    def _row_selected(self, message: Timeline.Selected) -> None:
        self.row_chosen(message.position)

    def row_chosen(self, position: int) -> None:
        """The user picked timeline row ``position`` (a click, Enter)."""
        self.select(position)

    # ----- playback -----------------------------------------------------------------------
    @property
    def playing(self) -> bool:
        return self.playback.playing

    def _schedule_next(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        if not self.playing or self.turns is None or self.position is None:
            return
        if self.position + 1 >= len(self.turns):
            self.playback.pause()
            self.note = "end of episode"
            self.refresh_status()
            return
        nxt = self.timeline.row(self.position + 1)
        delay = self.playback.delay_until(nxt.start if nxt else 0.0)
        self._timer = self.set_timer(max(delay, 0.001), self._play_tick)

    def _play_tick(self) -> None:
        self._timer = None
        if self.playing and self.position is not None:
            self.select(self.position + 1)
            if self.stop_at_breakpoint():
                self._schedule_next()  # paused: drops the timer select() set

    def stop_at_breakpoint(self) -> bool:
        """After playback moved to a turn: pause there if one of this screen's breakpoints hit it; whether it did."""
        hit = self.debugger.hit_at(self.turn.index) if self.turn is not None else None
        if hit is None:
            return False
        self.playback.pause()
        self.note = f"stopped: {hit.reason}"
        self.refresh_status()
        return True

    def action_toggle_play(self) -> None:
        if not self.turns or self.position is None:
            return
        self.note = ""
        if not self.playing and self.debugger.exprs and self.debugger.marks is None:
            self.debugger.with_marks(self.action_toggle_play)  # play only once the hits are known, or it could run past one
            return
        if not self.playing and self.position + 1 >= len(self.turns):
            self.select(0)  # play from the top when already at the end
        self.playback.toggle(self.turn.start if self.turn else 0.0)
        self._schedule_next()
        self.refresh_status()

    def action_faster(self) -> None:
        self.playback.faster()
        self._schedule_next()
        self.refresh_status()

    def action_slower(self) -> None:
        self.playback.slower()
        self._schedule_next()
        self.refresh_status()

    def set_speed(self, speed: float) -> None:
        self.playback.set_speed(speed)
        self._schedule_next()
        self.notify(f"Playback speed {speed_label(speed)}.", title="Speed", timeout=2)
        self.refresh_status()

    def action_speed_1(self) -> None:
        self.set_speed(1.0)

    def action_speed_2(self) -> None:
        self.set_speed(2.0)

    def action_speed_8(self) -> None:
        self.set_speed(8.0)

    def action_speed_max(self) -> None:
        self.set_speed(MAX)

    # ----- moving around ------------------------------------------------------------------
    def _go(self, position: int) -> None:
        self.note = ""
        self.select(position)

    def action_step_forward(self) -> None:
        if self.position is not None:
            self._go(self.position + 1)

    def action_step_back(self) -> None:
        if self.position is not None:
            self._go(self.position - 1)

    def action_first_turn(self) -> None:
        self._go(0)

    def action_last_turn(self) -> None:
        if self.turns:
            self._go(len(self.turns) - 1)

    def action_next_verdict(self) -> None:
        if self.turns and self.position is not None and self._verdict_turns is not None:
            # The indexed episode knows every verdict's history: no need to read the trace.
            later = bisect.bisect_right(self._verdict_turns, self.turns[self.position])
            for number in self._verdict_turns[later:]:
                if number in self._positions():
                    self._go(self._positions()[number])
                    return
            self.notify("No later turn changes a verdict.", title="Verdicts")
        elif self.turns and self.position is not None and self.state is not None:
            statuses = {name: c.status for name, c in self.state.verdicts.items()}
            self.find_verdict_change(self.position, statuses)

    def action_previous_verdict(self) -> None:
        self.debugger.jump(VERDICT, False)

    def action_next_finding(self) -> None:
        self.debugger.jump(FINDING, True)

    def action_previous_finding(self) -> None:
        self.debugger.jump(FINDING, False)

    def action_next_hit(self) -> None:
        self.debugger.jump(HIT, True)

    def action_previous_hit(self) -> None:
        self.debugger.jump(HIT, False)

    @work(thread=True, exclusive=True, group="verdict")
    def find_verdict_change(self, position: int, statuses: dict[str, str]) -> None:
        assert self.turns is not None
        for p in range(position + 1, len(self.turns)):
            if verdict_changes(self.source.events_for_turn(self.turns[p]), statuses):
                self.app.call_from_thread(self._go, p)
                return
        self.app.call_from_thread(self.notify, "No later turn changes a verdict.", title="Verdicts")

    # ----- search -------------------------------------------------------------------------
    def action_search(self) -> None:
        self.query_one(SearchBar).open()

    @on(SearchBar.Submitted)
    def _search_submitted(self, message: SearchBar.Submitted) -> None:
        message.stop()
        query = message.value.strip()
        bar = self.query_one(SearchBar)
        bar.display = False
        self.timeline.focus()
        if not query or self.position is None:
            return
        self.search_query = query
        self.detail.set_query(query)
        # Start just before the selected turn so its own matches come first.
        self.run_search(TextMatch(self.position, -1, -1, -1), True)

    def on_search_bar_closed(self, message: SearchBar.Closed) -> None:
        self.timeline.focus()

    def action_next_match(self) -> None:
        self._step_match(True)

    def action_previous_match(self) -> None:
        self._step_match(False)

    def _step_match(self, forward: bool) -> None:
        if not self.search_query or self.position is None:
            self.notify("Search first with /.", title="Search")
            return
        after = self.hit if self.hit is not None else TextMatch(self.position, -1 if forward else 2, -1, -1)
        self.run_search(after, forward)

    @work(thread=True, exclusive=True, group="search")
    def run_search(self, after: TextMatch, forward: bool) -> None:
        """Look for the next match off the UI thread (a huge trace means reading every output)."""
        assert self.turns is not None
        query = self.search_query
        worker = get_current_worker()

        def progress(done: int, total: int) -> None:
            self.app.call_from_thread(self._set_note, f"searching… {100 * done // total}% of turns")

        hit = find(self.source, self.turns, query, after, forward, cancelled=lambda: worker.is_cancelled, progress=progress)
        if not worker.is_cancelled:
            self.app.call_from_thread(self._show_hit, query, hit)

    def _set_note(self, note: str) -> None:
        self.note = note
        self.refresh_status()

    def _show_hit(self, query: str, hit: TextMatch | None) -> None:
        self.note = ""
        if hit is None:
            self.refresh_status()
            self.hit = None
            self.notify(f"No match for {clean(query)!r}.", title="Search", severity="warning")
            return
        self.hit = hit
        if hit.position != self.position:
            self.select(hit.position)
        if hit.part == MESSAGE:
            self.detail.output.current_line = None
            self.detail.output.refresh()
            self.note = f"match in the message of turn {self.turn.index if self.turn is not None else '?'}"
        else:
            self.detail.output.show_line(hit.line, hit.col, hit.length)
            self.note = f"match in the output, line {hit.line + 1}"
        self.refresh_status()

    # ----- pager and clipboard ------------------------------------------------------------
    def action_open_pager(self) -> None:
        text = clean(self.detail.output_text)
        if not text:
            self.notify("This turn has no output to page.", title="Pager")
            return
        command = shlex.split(os.environ.get("PAGER") or "less -R") or ["less"]
        try:
            with self.app.suspend():
                self._run_pager(command, text)
        except SuspendNotSupported:
            # Headless runs (tests, pipes) cannot give the terminal away; run the pager anyway.
            self._run_pager(command, text)

    def _run_pager(self, command: list[str], text: str) -> None:
        try:
            subprocess.run(command, input=text.encode("utf-8", "replace"), check=False)
        except OSError as exc:
            self.notify(f"Cannot run pager {command[0]!r}: {exc.strerror}", title="Pager", severity="error")

    def current_item(self) -> tuple[str, str]:
        """(what, text) of the item the user is looking at, chosen by focus."""
        focused = self.focused
        objects = self.query_one(StripeObjects)
        if focused is not None and objects in focused.ancestors_with_self and objects.selected is not None:
            return f"object {objects.selected.id}", pretty_json(objects.selected.data)
        verdicts = self.query_one(Verdicts)
        if focused is not None and verdicts in focused.ancestors_with_self:
            return "verdicts", verdicts.summary
        if self.detail.output_text:
            number = self.turn.index if self.turn else "?"
            return f"output of turn {number}", clean(self.detail.output_text)
        number = self.turn.index if self.turn else "?"
        return f"turn {number}", self.detail.message_text

    def action_copy_item(self) -> None:
        what, text = self.current_item()
        if not text:
            self.notify("Nothing to copy here.", title="Copy")
            return
        self.app.copy_to_clipboard(text)
        self.notify(f"Copied {what} ({len(text):,} characters) to the clipboard.", title="Copy")

    # ----- request log and findings (tui/screens/findings_screen.py) ------------------------------
    def _episode_so_far(self) -> EpisodeState | None:
        return self.whole if self.whole is not None else self.state

    def action_request_log(self) -> None:

        state = self._episode_so_far()
        self.app.push_screen(RequestLogScreen(list(state.requests) if state else []))

    def action_findings(self) -> None:

        state = self._episode_so_far()
        findings, derived = self.deriver.to_show(state)

        def go_to(turn: int | None) -> None:
            if turn is not None and turn in self._positions():
                self._go(self._positions()[turn])

        self.app.push_screen(FindingsScreen(findings, list(state.requests) if state else [], derived=derived), go_to)

    # ----- breakpoints and the time profile ----------------------------------------------------
    def action_breakpoints(self) -> None:

        self.app.push_screen(BreakpointScreen(self.debugger.listing, self.debugger.add, self.debugger.remove_breakpoint,
                                              live=False))

    def action_where_time_went(self) -> None:

        def show() -> None:
            self.app.push_screen(TimeScreen(self.debugger.profile))

        self.debugger.with_marks(show, fresh=self.source.live)

    # ----- notes (kept beside the trace: core.annotations) --------------------------------------
    def notes(self) -> Annotations | None:
        """The trace's notes (read once per trace); None when there is no trace yet or its notes file is unreadable."""
        known = self.trace_notes.annotations
        try:
            notes = self.trace_notes.for_trace(self.trace_path())
        except UserError as exc:
            self.notify(str(exc), title="Notes", severity="error")
            return None
        if notes is not None and notes is not known:
            self.show_note_marks()
        return notes

    def show_note_marks(self) -> None:
        """Mark the noted turns in the timeline."""
        self.timeline.set_marked(self.trace_notes.turns)

    def action_note(self) -> None:

        notes = self.notes()
        if notes is None or self.turn is None:
            self.notify("No turn of a recorded trace to note yet.", title="Notes")
            return
        number = self.turn.index

        def done(result: str | object | None) -> None:
            if result is None:
                return
            try:
                if result is REMOVE:
                    notes.remove(number)
                    message = f"Removed the note on turn {number}."
                else:
                    notes.add(number, str(result))
                    message = f"Noted turn {number} (in {notes.path.name})."
            except UserError as exc:
                self.notify(str(exc), title="Notes", severity="error")
                return
            self.show_note_marks()
            self.notify(message, title="Notes")

        self.app.push_screen(NoteScreen(number, notes.get(number)), done)

    def action_next_note(self) -> None:
        notes = self.notes()
        if not notes or not self.turns or self.turn is None:
            self.notify("No notes yet: n notes the selected turn.", title="Notes")
            return
        target = self.trace_notes.next_noted(self._positions(), self.turn.index)
        if target is None:
            self.notify("No noted turn is in this episode's timeline.", title="Notes")
            return
        self._go(self._positions()[target])

    def action_list_notes(self) -> None:

        notes = self.notes()
        if not notes:
            self.notify("No notes yet: n notes the selected turn.", title="Notes")
            return

        def done(turn: int | None) -> None:
            if turn is not None and turn in self._positions():
                self._go(self._positions()[turn])

        self.app.push_screen(NotesListScreen(notes.notes), done)

    # ----- help and quit ------------------------------------------------------------------
    def action_help(self) -> None:

        # The keys in force (a user keymap may have rebound some), not the defaults.
        in_force: dict[str, tuple[str, ...]] = {}
        for key, active in self.active_bindings.items():
            if active.node is self:
                in_force[active.binding.action] = in_force.get(active.binding.action, ()) + (key,)
        self.app.push_screen(HelpScreen(in_force or keymap.DEFAULT_KEYMAP))

    def action_present(self) -> None:
        """Presenter mode from the selected turn; back here at the turn it reached."""

        if not self.indexed or not self.turns:
            self.notify("Still reading the episode; try again in a moment." if not self.indexed else "No turns to present.",
                        title="Presenter")
            return
        if self.playing:
            self.action_toggle_play()

        def back(position: int | None) -> None:
            if position is not None:
                self._go(position)

        self.app.push_screen(PresenterScreen(self.source, list(self.turns), start=self.position or 0,
                                             speed=self.playback.speed, clock=self.playback.clock), back)

    class ForkRequested(Message):
        """The operator asked to fork the episode shown, at ``turn`` of the trace at ``trace_path`` (either None when
        there is nothing to fork); the app opens the fork (``tui/apps/fork_opener.open_fork``)."""

        def __init__(self, trace_path: Path | None, turn: int | None) -> None:
            super().__init__()
            self.trace_path = trace_path
            self.turn = turn

    class ResumeRequested(Message):
        """The operator chose to resume the episode at ``trace_path`` (``stripebench resume``); the app runs it
        (``tui/apps/resume_opener.open_resume``)."""

        def __init__(self, trace_path: Path) -> None:
            super().__init__()
            self.trace_path = trace_path

    def _known_family(self) -> Family | None:
        family = self.lineage.family
        if family is None:
            self.notify("Still reading the episode and its forks; try again in a moment.", title="Forks")
        return family

    def action_fork_tree(self) -> None:

        family = self._known_family()
        if family is None:
            return
        if family.lineage is None:
            self.notify("This trace is not one of ours (an import): it has no forks.", title="Forks")
            return
        self.app.push_screen(ForkTreeScreen(family.lineage, family.bisect))

    def action_resume(self) -> None:

        family = self._known_family()
        if family is None:
            return
        if family.ended:
            self.notify("This episode ended: nothing to resume. F forks it from the selected turn instead.",
                        title="Resume")
            return
        path = family.trace_path

        def chosen(resume: bool | None) -> None:
            if resume:
                self.post_message(self.ResumeRequested(path))

        self.app.push_screen(ResumeScreen(path), chosen)

    def action_fork(self) -> None:
        self.post_message(self.ForkRequested(self.trace_path(), self.turn.index if self.turn is not None else None))

    def trace_path(self) -> Path | None:
        """The trace file shown (notes and forks start from it); None for a source without one."""
        path = getattr(getattr(self.source, "trace", None), "path", None)
        return Path(path) if path is not None else None

    async def action_quit(self) -> None:  # async as its overrides are (they wait for processes)
        self.app.exit()
