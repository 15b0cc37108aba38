"""Base of the live screen's small modal dialogs: a centred box over the dimmed episode."""

from __future__ import annotations

from typing import Generic, TypeVar

from textual.screen import ModalScreen

ResultType = TypeVar("ResultType")


class DialogScreen(ModalScreen[ResultType], Generic[ResultType]):
    """A modal screen whose first ``Vertical`` is drawn as a centred, bordered box."""

    SCOPED_CSS = False  # the rules name DialogScreen itself, which scoping would turn into a descendant selector
    DEFAULT_CSS = """
    DialogScreen { align: center middle; }
    DialogScreen > Vertical { width: 90; max-width: 95%; height: auto; max-height: 90%; border: thick $accent;
                              background: $surface; padding: 1 2; }
    DialogScreen Label.help { color: $text-muted; }
    DialogScreen OptionList { height: auto; max-height: 12; }
    DialogScreen TextArea { height: 14; }
    """
