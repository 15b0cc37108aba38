"""The live screen: the replay screen's panes fed from a running episode's bus, plus the operator's controls.

The screen runs the episode itself (an async worker on the app's event loop, so
the UI never blocks), which lets any app open one: ``stripebench run`` and a fork
started from a replay alike. Its state is the reducer over the events seen so
far (``LiveSource``); a timer redraws when new events came, so a burst of events
costs one redraw. Leaving the screen (quit) stops the episode and waits until
the runtime has reaped every process and closed the trace.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from textual import work
from textual.binding import BindingType
from textual.containers import Vertical
from textual.screen import Screen

from stripebench_tui.core.breakpoints import recorded_breakpoints
from stripebench_tui.core.operator import ENDED, PAUSED, WAITING_FOR_APPROVAL, status_from_state
from stripebench_tui.core.state import EpisodeState
from stripebench_tui.errors import UserError
from stripebench_tui.runtime.sandbox import TRACE_NAME
from stripebench_tui.tui.keymaps.live_keymap import live_bindings, live_help_rows
from stripebench_tui.tui.screens.approve import EditCallScreen, RejectScreen
from stripebench_tui.tui.screens.breakpoints import BreakpointScreen
from stripebench_tui.tui.screens.episode_screen import EpisodeScreen, PlaybackOptions
from stripebench_tui.tui.screens.findings_screen import update_open_screens
from stripebench_tui.tui.screens.help_screen import HelpScreen
from stripebench_tui.tui.screens.inject import InjectScreen
from stripebench_tui.tui.screens.live_presenter import LivePresenterScreen
from stripebench_tui.tui.screens.screenshot_view import ScreenshotScreen
from stripebench_tui.tui.screens.tool_call import DONE, ToolCallScreen
from stripebench_tui.tui.sources.episode_source import verdict_change_turns
from stripebench_tui.tui.sources.live_source import LiveSource
from stripebench_tui.tui.text import clean
from stripebench_tui.tui.widgets.live_status import LiveStatusBar
from stripebench_tui.tui.widgets.screenshot import Screenshot
from stripebench_tui.tui.widgets.service_log import ServiceLog
from stripebench_tui.tui.widgets.status_bar import StatusBar
from stripebench_tui.tui.widgets.stripe_objects import StripeObjects
from stripebench_tui.tui.widgets.verdicts import Verdicts

REDRAW_INTERVAL = 0.1  # seconds between redraws while events arrive

LIVE_CSS = """
#live-extra { height: 2fr; }
#service-log { height: 1fr; min-height: 4; border: round $primary-darken-2; }
#screenshot { border: round $primary-darken-2; display: none; }
#screenshot.shown { display: block; }
"""

EpisodeFactory = Callable[[LiveSource], Any]  # LiveSource -> Episode (not started)


class LiveEpisodeScreen(EpisodeScreen, inherit_bindings=False):
    """Timeline, turn detail, objects, verdicts, service log and screenshot of a running episode."""

    # Not the replay's bindings (its Space plays the recording): the live keymap, plus Screen's focus keys.
    BINDINGS: ClassVar[list[BindingType]] = [*Screen.BINDINGS, *live_bindings()]
    DEFAULT_CSS = LIVE_CSS

    def __init__(self, make_episode: EpisodeFactory, *, exit_app_on_quit: bool = True, present: bool = False,
                 clock: Callable[[], float] | None = None, present_speed: float = 1.0) -> None:
        self.live_source = LiveSource()
        super().__init__(self.live_source, PlaybackOptions(clock=clock) if clock is not None else PlaybackOptions())
        self.present_at_start = present  # open presenter mode as soon as the screen is up
        self.present_speed = present_speed  # the presenter's pacing speed (`serve ENV --present --speed`)
        self.episode = make_episode(self.live_source)
        self.exit_app_on_quit = exit_app_on_quit
        self.following = True
        self.result: Any = None
        self.error = ""
        self._drawn_version = -1
        self._quitting = False
        self._divergences_seen = 0
        self._drawn_turn: tuple = ()

    # ----- layout ------------------------------------------------------------------------
    def on_mount(self) -> None:
        super().on_mount()
        self.query_one(StatusBar).display = False
        status = LiveStatusBar(id="live-status")
        self.mount(status, before=self.query_one(StatusBar))
        extra = Vertical(id="live-extra")
        self.query_one("#side").mount(extra)
        log = ServiceLog(id="service-log")
        log.border_title = "Services"
        shot = Screenshot(id="screenshot")
        shot.border_title = "Screenshot"
        extra.mount(log, shot)
        self.set_interval(REDRAW_INTERVAL, self.live_redraw)
        self._episode_worker = self.run_episode()
        if self.present_at_start:
            self.call_after_refresh(self.action_present)

    @work(exclusive=True, group="episode", exit_on_error=False)
    async def run_episode(self) -> None:
        """Play the episode on the app's loop; its result (or the problem) ends up in the status line."""

        try:
            self.result = await self.episode.run()
        except UserError as exc:
            self.error = str(exc)
        finally:
            self.live_redraw(force=True)
        if self.result is not None and self.result.setup_failed:
            self.error = self.result.error
        if self.error:
            self.notify(clean(self.error), title="Episode", severity="error", timeout=30, markup=False)
        self.live_redraw(force=True)

    # ----- redrawing from the live state -----------------------------------------------
    @property
    def live_state(self) -> EpisodeState:
        return self.live_source.state

    def live_redraw(self, force: bool = False) -> None:
        src = self.live_source
        if src.header is None and self.episode.sandbox is not None and self.episode.recorder is not None:

            src.read_header(Path(self.episode.sandbox.episode_dir) / TRACE_NAME)
        if src.version == self._drawn_version and not force:
            if not self.episode.ready.is_set() and self.result is None:
                self.refresh_status()  # setup progress (tool servers) moves without events
            return
        self._drawn_version = src.version
        state = src.state
        self.indexed = True
        self.whole = state
        self._verdict_turns = verdict_change_turns(state)
        self._states.clear()
        turns = src.turn_numbers()
        if turns:
            self._states[turns[-1]] = state
        if turns != self.turns:
            self.turns = turns
            self._position_of = None
            self.timeline.border_title = f"Turns ({len(turns)})"
        # Rows are cached by the timeline; the newest ones change as results arrive, and rebuilding the
        # visible rows from the live state is cheap.
        self.timeline.set_rows(len(turns), self._row)
        if turns:
            target = len(turns) - 1 if self.following or self.position is None else self.position
            key = self._turn_key(turns[target])
            if force or key != self._drawn_turn:
                self._drawn_turn = key
                self.select(target)
            else:
                # Only log lines or other turns changed: the detail pane stays; the side panes follow the newest turn.
                if target == len(turns) - 1:
                    self.query_one(StripeObjects).show(state, self.turn.object_ids if self.turn else [])
                    self.query_one(Verdicts).show(state, turns[target])
                self.timeline.move_to(target)
                self.refresh_status()
        else:
            self.refresh_status()
        self.query_one(ServiceLog).show(state.service_log)
        update_open_screens(self.app, state.requests, state.findings)  # an open R or ! screen follows the episode
        self._show_screenshot()
        self._announce_divergence()

    def _turn_key(self, number: int) -> tuple:
        """What the detail pane shows of a turn; redrawing it is skipped while this is unchanged."""
        t = self.live_state.turn(number)
        if t is None:
            return (number,)
        return (number, len(t.messages), len(t.calls), sum(1 for c in t.calls if c.result is not None),
                tuple(c.status for c in t.calls), len(t.operator_actions), len(t.object_ids), len(t.verdict_changes))

    def _show_screenshot(self) -> None:
        shot = self.live_source.screenshot()
        if shot is None:
            return
        pane = self.query_one(Screenshot)
        pane.add_class("shown")
        pane.show(shot)

    def _announce_divergence(self) -> None:
        found = [op for op in self.live_state.operator_actions if op.action == "divergence"]
        for op in found[self._divergences_seen:]:
            diverged = bool(op.details.get("diverged"))
            self.notify(clean(op.text), title="Divergence" if diverged else "Re-executed", markup=False,
                        severity="warning" if diverged else "information", timeout=20 if diverged else 6)
        self._divergences_seen = len(found)

    def refresh_status(self) -> None:
        state = self.live_state
        selected = self.turn.index if self.turn is not None else None
        last = self.turns[-1] if self.turns else None
        setup = self.setup_progress() if not self.episode.ready.is_set() else ""
        note = self.note or (f"problem: {self.error}" if self.error else "")
        if self.result is not None and self.result.trace_path is not None and not note:
            note = f"trace: {self.result.trace_path}"
        try:
            bar = self.query_one(LiveStatusBar)
        except Exception:  # noqa: BLE001 - before on_mount mounted it
            return
        bar.show(self.source.header, state, selected, last, self.reducer_elapsed(), self.following, setup, note)

    def setup_progress(self) -> str:
        """What the episode is preparing: each service's latest status, then the tool servers'."""
        parts = []
        for name, status in self.live_state.services.items():
            if name == "deps" and status in ("starting", "running"):  # pip at work: say what it is doing
                latest = next((e.text for e in reversed(self.live_state.service_log)
                               if e.service == "deps" and e.status == "log"), "")
                parts.append(f"installing dependencies: {latest}" if latest else "installing dependencies")
            else:
                parts.append(f"{name} {status}")
        executor = getattr(self.episode, "executor", None)
        if executor is not None:
            names = ", ".join(getattr(executor, "server_names", []) or [])
            specs = getattr(executor, "specs", None)
            parts.append(f"tools {names}: {len(specs)} ready" if specs else f"tool servers {names} starting")
        return " · ".join(parts) or "starting the environment"

    def reducer_elapsed(self) -> float:
        return self.live_source.reducer.elapsed()

    # ----- following the newest turn ----------------------------------------------------
    def _go(self, position: int) -> None:
        if self.turns:
            self.following = position >= len(self.turns) - 1
        super()._go(position)

    def row_chosen(self, position: int) -> None:
        if self.turns:
            self.following = position >= len(self.turns) - 1
        super().row_chosen(position)

    def action_follow(self) -> None:
        self.following = True
        if self.turns:
            self.select(len(self.turns) - 1)

    # ----- operator controls --------------------------------------------------------------
    @property
    def driver(self) -> Any:
        return self.episode.driver if self.episode.ready.is_set() else None

    def _need_driver(self) -> Any:
        driver = self.driver
        if driver is None:
            self.notify("The episode is still being set up." if self.result is None else "The episode has ended.",
                        title="Controls")
        elif status_from_state(self.live_state) == ENDED:
            self.notify("The episode has ended.", title="Controls")
            return None
        return driver

    def action_toggle_pause(self) -> None:
        driver = self._need_driver()
        if driver is not None:
            if status_from_state(self.live_state) == PAUSED:
                driver.resume()
            else:
                driver.pause()

    def action_toggle_play(self) -> None:  # the replay's play key, if a keymap still binds it
        self.action_toggle_pause()

    def action_step_agent(self) -> None:
        driver = self._need_driver()
        if driver is not None:
            driver.step()

    def action_inject(self) -> None:

        driver = self._need_driver()
        if driver is None:
            return
        hints = list(self.episode.env.manifest.hints) if self.episode.env is not None else []

        def done(choice: tuple[str, str] | None) -> None:
            if choice is not None:
                driver.inject(choice[0], kind=choice[1])

        self.app.push_screen(InjectScreen(hints), done)

    def _waiting_call(self) -> Any:
        driver = self._need_driver()
        if driver is None:
            return None
        call = driver.pending_call
        if call is None or status_from_state(self.live_state) != WAITING_FOR_APPROVAL:
            self.notify("No tool call is waiting for approval (run with --approve always or a tool glob).",
                        title="Approval")
            return None
        return call

    def action_approve(self) -> None:
        call = self._waiting_call()
        if call is not None:
            self.driver.approve(call.call_id)

    def action_edit_call(self) -> None:

        call = self._waiting_call()
        if call is None:
            return
        driver = self.driver

        def done(arguments: dict[str, Any] | None) -> None:
            if arguments is not None:
                driver.edit(arguments, call_id=call.call_id)

        self.app.push_screen(EditCallScreen(call.tool, dict(call.arguments)), done)

    def action_reject(self) -> None:

        call = self._waiting_call()
        if call is None:
            return
        driver = self.driver

        def done(reason: str | None) -> None:
            if reason is not None:
                driver.reject(reason, call_id=call.call_id)

        self.app.push_screen(RejectScreen(call.tool), done)

    def action_tool_call(self) -> None:

        driver = self._need_driver()
        if driver is None:
            return
        agent = self.episode.agent
        if getattr(agent, "name", "") != "human" or not hasattr(agent, "submit"):
            self.notify("Only the human agent takes typed tool calls (--agent human).", title="Tool call")
            return

        def done(choice: tuple[str, dict[str, Any]] | None) -> None:
            if choice is None:
                return
            tool, arguments = choice
            if tool == DONE:
                agent.finish("Done.")
            else:
                agent.submit(tool, arguments)

        self.app.push_screen(ToolCallScreen(list(driver.task.tools)), done)

    def action_breakpoints(self) -> None:
        """The breakpoints dialog on the driver: changes go to it as commands, the list is what it recorded."""

        driver = self._need_driver()
        if driver is None:
            return
        self.app.push_screen(BreakpointScreen(lambda: recorded_breakpoints(self.live_state.operator_actions),
                                              driver.add_breakpoint, driver.remove_breakpoint, live=True))

    def action_present(self) -> None:
        """Presenter mode over the live stream (the replay's layout and captions); back here at the turn it reached."""

        def back(position: int | None) -> None:
            if position is not None and self.turns and position < len(self.turns):
                self.following = position == len(self.turns) - 1
                self._go(position)

        self.app.push_screen(LivePresenterScreen(self.live_source, speed=self.present_speed, clock=self.playback.clock),
                             back)

    def action_show_screenshot(self) -> None:

        shot = self.live_source.screenshot()
        if shot is None or not shot.data:
            self.notify(clean(shot.caption) if shot is not None else "No screenshot yet.", title="Screenshot",
                        markup=False)
            return
        self.app.push_screen(ScreenshotScreen(shot))

    def trace_path(self) -> Path | None:

        sandbox = self.episode.sandbox
        return Path(sandbox.episode_dir) / TRACE_NAME if sandbox is not None else None

    def action_stop_episode(self) -> None:
        if self.result is None:
            self.note = "stopping the episode…"
            self.episode.stop("stopped by the operator")
            self.refresh_status()

    # ----- help and quit ------------------------------------------------------------------
    def action_help(self) -> None:

        self.app.push_screen(HelpScreen(rows=live_help_rows()))

    async def action_quit(self) -> None:
        """Stop the episode (if still running), wait for every process to be reaped, then leave."""
        if self._quitting:
            return
        self._quitting = True
        await self.stop_and_wait()
        if self.exit_app_on_quit:
            self.app.exit(self.result)
        else:
            self.dismiss(None)

    async def stop_and_wait(self) -> None:
        """Stop the episode and wait for its worker (the runtime's cleanup) to finish."""
        worker = getattr(self, "_episode_worker", None)
        if self.result is None:
            self.note = "stopping the episode and its processes…"
            self.refresh_status()
            self.episode.stop("stopped by the operator (quit)")
        if worker is not None:
            try:
                await worker.wait()
            except Exception:  # noqa: BLE001 - WorkerFailed/WorkerCancelled: the runtime's finally ran regardless
                pass


__all__ = ["LiveEpisodeScreen"]
