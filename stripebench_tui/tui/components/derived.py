"""Findings for a trace that recorded none (it predates the detectors): run them over it on open.

A non-visual widget the episode screen composes. Once the episode is indexed, a recorded replay without any
``finding`` event gets the detectors that ``replay --summary`` runs (``findings.detect``) run over its events in a
worker; what they find is posted (``Derived``) for the screen to show in the findings screen (!), as ⚐ marks in the
timeline and in the turn detail, all labelled *derived*: computed now, not recorded during the episode. (``finding``
breakpoints and ``>`` reach them through ``findings.with_derived_findings``.)
"""

from __future__ import annotations

from textual import work
from textual.message import Message
from textual.widget import Widget

from stripebench_tui.core.events import Finding
from stripebench_tui.core.state import EpisodeState
from stripebench_tui.findings import detect
from stripebench_tui.tui.sources.episode_source import EpisodeSource


class FindingsDeriver(Widget):
    """``found``: None (not derived), or what the detectors found over the recorded events."""

    DEFAULT_CSS = "FindingsDeriver { display: none; }"

    class Derived(Message):
        """The detectors' findings over a recording that had none."""

        def __init__(self, found: list[Finding]) -> None:
            super().__init__()
            self.found = found

    def __init__(self, source: EpisodeSource) -> None:
        super().__init__()
        self.source = source
        self.found: list[Finding] | None = None
        self.deriving = False  # the detectors are running

    def derive_if_none(self, whole: EpisodeState | None, scanning: bool = False) -> None:
        """Run the detectors over a recorded episode that has no findings of its own (once).

        ``scanning``: a scan for breakpoint marks that runs the detectors is under way; its findings are taken
        (``take``) instead of running the detectors a second time.
        """
        if self.deriving or self.found is not None or whole is None or whole.findings:
            return
        if self.source.live:
            return  # a live episode's runner publishes its findings on the bus
        self.deriving = True
        if not scanning:
            self._derive()

    def take(self, found: list[Finding]) -> None:
        """Findings the breakpoint marks scan derived: these, if there are none yet."""
        if self.found is None:
            self._derived(found)

    @work(thread=True, exclusive=True, group="derive-findings")
    def _derive(self) -> None:
        found = detect(self.source.iter_events(), header=self.source.header)
        self.app.call_from_thread(self._derived, found)

    def _derived(self, found: list[Finding]) -> None:
        self.deriving = False
        self.found = found
        self.post_message(self.Derived(found))

    def for_turn(self, turn: int) -> list[Finding]:
        """The derived findings that mark ``turn`` (for the turn detail)."""
        return [f for f in self.found or () if f.turn == turn]

    def to_show(self, state: EpisodeState | None) -> tuple[list[Finding], bool]:
        """(findings, derived): the recorded ones of ``state``, else the derived ones."""
        recorded = list(state.findings) if state is not None else []
        if recorded or not self.found:
            return recorded, False
        return list(self.found), True


__all__ = ["FindingsDeriver"]
