"""The breakpoints dialog: list, add (typed, checked as you submit) and remove breakpoints."""

from __future__ import annotations

from collections.abc import Callable

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from stripebench_tui.core.breakpoints import SYNTAX, BreakpointError, parse
from stripebench_tui.findings.runner import DETECTORS
from stripebench_tui.tui.screens.dialog import DialogScreen
from stripebench_tui.tui.text import clean

REFRESH = 0.2  # seconds between re-reads of the list (live, a change shows once the driver recorded it)


class BreakpointScreen(DialogScreen[None]):
    """``listing()`` gives (number, expression) rows; ``add(expr)`` and ``remove(number)`` change them."""

    BINDINGS = [Binding("escape", "close", "Close"), Binding("delete,d", "remove", "Remove", show=False)]
    DEFAULT_CSS = "BreakpointScreen Static.help { color: $text-muted; } BreakpointScreen #bp-error { color: $error; }"

    def __init__(self, listing: Callable[[], list[tuple[int, str]]], add: Callable[[str], None],
                 remove: Callable[[int], None], *, live: bool) -> None:
        super().__init__()
        self.listing, self.add_breakpoint, self.remove_breakpoint = listing, add, remove
        self.live = live
        self._shown: list[tuple[int, str]] | None = None

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = "Breakpoints"
            yield Static("Live: a hit pauses the episode before the next model call." if self.live else
                        "Replay: playback stops at a turn a breakpoint hits; } and { jump between hits.", classes="help")
            yield OptionList(id="bp-list")
            yield Input(placeholder="add one, e.g. tool shell · request 4xx · verdict fail · tokens>=5000",
                        id="bp-input")
            yield Static("", id="bp-error", markup=False)
            yield Static(clean(SYNTAX), classes="help", markup=False)
            yield Static("Enter adds · Tab to the list, then d or Delete removes · Esc closes", classes="help")

    def on_mount(self) -> None:
        self.refresh_list()
        self.set_interval(REFRESH, self.refresh_list)
        self.query_one(Input).focus()

    def refresh_list(self) -> None:
        rows = self.listing()
        if rows == self._shown:
            return
        self._shown = rows
        options = self.query_one(OptionList)
        options.clear_options()
        if rows:
            options.add_options([Option(f"#{n}  {clean(expr)}", id=str(n)) for n, expr in rows])
        else:
            options.add_option(Option("(no breakpoints)", id="none", disabled=True))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        expr = event.value.strip()
        if not expr:
            return
        try:
            parse(expr, detectors=DETECTORS)
        except BreakpointError as exc:
            self.query_one("#bp-error", Static).update(clean(str(exc)))
            return
        self.query_one("#bp-error", Static).update("")
        event.input.value = ""
        self.add_breakpoint(expr)
        self.refresh_list()

    def action_remove(self) -> None:
        options = self.query_one(OptionList)
        if options.highlighted is None:
            return
        option = options.get_option_at_index(options.highlighted)
        if option.id and option.id.isdigit():
            self.remove_breakpoint(int(option.id))
            self.refresh_list()

    def action_close(self) -> None:
        self.dismiss(None)
