"""Findings for a trace that recorded none (it predates the detectors): run them over it on open.

The episode screen mixes this in. Once the episode is indexed, a recorded replay
without any ``finding`` event gets the detectors that ``replay --summary`` runs
(``findings.detect``) run over its events in a worker; what they find is shown in
the findings screen (!), as ⚐ marks in the timeline and in the turn detail, all
labelled *derived*: computed now, not recorded during the episode. (``finding``
breakpoints and ``>`` reach them through ``findings.with_derived_findings``.)
"""

from __future__ import annotations

from textual import work

from stripebench_tui.core.events import Finding
from stripebench_tui.findings import detect


class DerivedFindings:
    """``derived_findings``: None (not derived), or what the detectors found over the recorded events."""

    derived_findings: list[Finding] | None = None
    deriving = False  # the detectors are running

    def derive_findings_if_none(self, scanning: bool = False) -> None:
        """Run the detectors over a recorded episode that has no findings of its own (once).

        ``scanning``: a scan for breakpoint marks that runs the detectors is under way; its findings are taken
        (``take_derived``) instead of running the detectors a second time.
        """
        whole = self.whole  # type: ignore[attr-defined]
        if self.deriving or self.derived_findings is not None or whole is None or whole.findings:
            return
        if getattr(self.source, "live", False):  # type: ignore[attr-defined]
            return  # a live episode's runner publishes its findings on the bus
        self.deriving = True
        if not scanning:
            self._derive()

    def take_derived(self, found: list[Finding]) -> None:
        """Findings the breakpoint marks scan derived: this screen's derived findings, if it has none yet."""
        if self.derived_findings is None:
            self._derived(found)

    @work(thread=True, exclusive=True, group="derive-findings")
    def _derive(self) -> None:
        found = detect(self.source.iter_events(), header=self.source.header)  # type: ignore[attr-defined]
        self.app.call_from_thread(self._derived, found)  # type: ignore[attr-defined]

    def _derived(self, found: list[Finding]) -> None:
        self.deriving = False
        self.derived_findings = found
        self.timeline.set_derived({f.turn for f in found})  # type: ignore[attr-defined]
        turn = self.turn  # type: ignore[attr-defined]
        if turn is not None:
            self.detail.set_derived(self.derived_for(turn.index))  # type: ignore[attr-defined]

    def derived_for(self, turn: int) -> list[Finding]:
        """The derived findings that mark ``turn`` (for the turn detail)."""
        return [f for f in self.derived_findings or () if f.turn == turn]

    def findings_to_show(self) -> tuple[list[Finding], bool]:
        """(findings, derived): the recorded ones, else the derived ones."""
        state = self._episode_so_far()  # type: ignore[attr-defined]
        recorded = list(state.findings) if state is not None else []
        if recorded or not self.derived_findings:
            return recorded, False
        return list(self.derived_findings), True


__all__ = ["DerivedFindings"]
