"""The note keys, shared by the replay and live screens: write a note on a turn, jump to the next one, list them.

The screen supplies ``trace_path()`` (None while a live episode has no trace yet),
``turns``, ``turn``, ``_positions()`` and ``_go(position)``; the notes themselves
live in ``core.annotations``, beside the trace.
"""

from __future__ import annotations

import bisect
from typing import Any

from stripebench_tui.core.annotations import Annotations, notes_path
from stripebench_tui.errors import UserError


class NotesActions:
    """Mixin for an ``EpisodeScreen``: ``action_note``, ``action_next_note``, ``action_list_notes``."""

    _annotations: Annotations | None = None

    # Any: self is the EpisodeScreen this mix-in is part of (which imports this module)
    def notes(self: Any) -> Annotations | None:
        """The trace's notes (read once per trace); None when there is no trace yet or its notes file is unreadable."""
        path = self.trace_path()
        if path is None:
            return None
        if self._annotations is None or self._annotations.path != notes_path(path):
            try:
                self._annotations = Annotations(path)
            except UserError as exc:
                self.notify(str(exc), title="Notes", severity="error")
                return None
            self.show_note_marks()
        return self._annotations

    # Any: self is the EpisodeScreen this mix-in is part of
    def show_note_marks(self: Any) -> None:
        """Mark the noted turns in the timeline."""
        notes = self._annotations
        self.timeline.set_marked(notes.turns if notes is not None else set())

    # Any: self is the EpisodeScreen this mix-in is part of
    def action_note(self: Any) -> None:
        from stripebench_tui.tui.screens.note import REMOVE, NoteScreen

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
                    notes.add(number, result)
                    message = f"Noted turn {number} (in {notes.path.name})."
            except UserError as exc:
                self.notify(str(exc), title="Notes", severity="error")
                return
            self.show_note_marks()
            self.notify(message, title="Notes")

        self.app.push_screen(NoteScreen(number, notes.get(number)), done)

    # Any: self is the EpisodeScreen this mix-in is part of
    def action_next_note(self: Any) -> None:
        notes = self.notes()
        if not notes or not self.turns or self.turn is None:
            self.notify("No notes yet: n notes the selected turn.", title="Notes")
            return
        noted = sorted(t for t in notes.turns if t in self._positions())
        if not noted:
            self.notify("No noted turn is in this episode's timeline.", title="Notes")
            return
        later = bisect.bisect_right(noted, self.turn.index)
        target = noted[later] if later < len(noted) else noted[0]  # wraps around, like search
        self._go(self._positions()[target])

    # Any: self is the EpisodeScreen this mix-in is part of
    def action_list_notes(self: Any) -> None:
        from stripebench_tui.tui.screens.note import NotesListScreen

        notes = self.notes()
        if not notes:
            self.notify("No notes yet: n notes the selected turn.", title="Notes")
            return

        def done(turn: int | None) -> None:
            if turn is not None and turn in self._positions():
                self._go(self._positions()[turn])

        self.app.push_screen(NotesListScreen(notes.notes), done)
