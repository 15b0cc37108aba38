"""Key bindings as data: a registry of actions and a keymap from action to keys.

The screen's ``BINDINGS``, the ``?`` help screen and the command palette are all
built from these two tables, so a binding is defined once and listed everywhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from textual.binding import Binding


@dataclass(frozen=True)
class KeyCommand:
    """One thing the user can do; ``action`` is the Textual action name on the app."""

    action: str
    title: str
    description: str
    show: bool = True  # shown in the footer


COMMANDS: tuple[KeyCommand, ...] = (
    KeyCommand("toggle_play", "Play/Pause", "Play the replay at recorded speed, or pause it"),
    KeyCommand("step_forward", "Step", "Go to the next turn"),
    KeyCommand("step_back", "Back", "Go to the previous turn", show=False),
    KeyCommand("first_turn", "First", "Go to the first turn", show=False),
    KeyCommand("last_turn", "Last", "Go to the last turn", show=False),
    KeyCommand("faster", "Faster", "Double the playback speed", show=False),
    KeyCommand("slower", "Slower", "Halve the playback speed", show=False),
    KeyCommand("next_verdict", "Verdict", "Jump to the next turn where a grader verdict changed"),
    KeyCommand("previous_verdict", "Prev verdict", "Jump to the previous turn where a grader verdict changed", show=False),
    KeyCommand("next_finding", "Next finding", "Jump to the next turn with a finding (a likely failure mode)", show=False),
    KeyCommand("previous_finding", "Prev finding", "Jump to the previous turn with a finding", show=False),
    KeyCommand("breakpoints", "Breakpoints", "List, add and remove breakpoints (tool, request, verdict, finding, budget)",
            show=False),
    KeyCommand("next_hit", "Next hit", "Jump to the next turn a breakpoint hit", show=False),
    KeyCommand("previous_hit", "Prev hit", "Jump to the previous turn a breakpoint hit", show=False),
    KeyCommand("where_time_went", "Time", "Where the time went: model, tools, Stripe, operator wait, the harness per turn",
            show=False),
    KeyCommand("speed_1", "1×", "Play at recorded speed", show=False),
    KeyCommand("speed_2", "2×", "Play at twice the recorded speed", show=False),
    KeyCommand("speed_8", "8×", "Play at eight times the recorded speed", show=False),
    KeyCommand("speed_max", "Max", "Play as fast as the screen can draw (recorded gaps ignored)", show=False),
    KeyCommand("search", "Search", "Search model messages and tool outputs"),
    KeyCommand("next_match", "Next match", "Go to the next search match", show=False),
    KeyCommand("previous_match", "Prev match", "Go to the previous search match", show=False),
    KeyCommand("note", "Note", "Bookmark the selected turn with a note (kept beside the trace, which is never changed)",
               show=False),
    KeyCommand("next_note", "Next note", "Go to the next turn with a note", show=False),
    KeyCommand("list_notes", "Notes", "List the notes of this episode; Enter goes to the turn", show=False),
    KeyCommand("open_pager", "Pager", "Open the current tool output in $PAGER"),
    KeyCommand("copy_item", "Copy", "Copy the current item (output, object or verdict) to the clipboard"),
    KeyCommand("present", "Present", "Presenter mode: paced, captioned playback for an audience", show=False),
    KeyCommand("fork", "Fork", "Re-execute the episode up to the selected turn on a fresh environment, then continue live"),
    KeyCommand("fork_tree", "Forks", "The fork tree: this episode, its forks at each turn and theirs, with scores and "
               "first findings; Enter opens one, m marks two, d diffs them", show=False),
    KeyCommand("resume", "Resume", "An episode that ended without an end event: go on from its last checkpoint "
               "(stripebench resume)", show=False),
    KeyCommand("request_log", "Requests", "The Stripe request log: filter by status, path, source; Enter shows the bodies",
            show=False),
    KeyCommand("findings", "Findings", "What the failure-mode detectors found; Enter jumps to the turn", show=False),
    KeyCommand("help", "Help", "Show every key binding"),
    KeyCommand("quit", "Quit", "Leave the replay"),
)

COMMANDS_BY_ACTION: dict[str, KeyCommand] = {c.action: c for c in COMMANDS}

DEFAULT_KEYMAP: dict[str, tuple[str, ...]] = {
    "toggle_play": ("space",),
    "step_forward": ("right", "l"),
    "step_back": ("left", "h"),
    "first_turn": ("home", "g"),
    "last_turn": ("end", "G"),
    "faster": ("plus", "equals_sign", "right_square_bracket"),
    "slower": ("minus", "left_square_bracket"),
    "next_verdict": ("v",),
    "previous_verdict": ("V",),
    "next_finding": ("greater_than_sign",),
    "previous_finding": ("less_than_sign",),
    "breakpoints": ("b",),
    "next_hit": ("right_curly_bracket",),
    "previous_hit": ("left_curly_bracket",),
    "where_time_went": ("w",),
    "speed_1": ("1",),
    "speed_2": ("2",),
    "speed_8": ("8",),
    "speed_max": ("m",),
    "search": ("slash",),
    "next_match": ("ctrl+n", "f3"),  # n is the note key
    "previous_match": ("N", "shift+f3"),
    "note": ("n",),
    "next_note": ("apostrophe",),  # ' as in vi's jump to a mark (b is breakpoints)
    "list_notes": ("quotation_mark",),
    "open_pager": ("p",),
    "copy_item": ("y", "c"),
    "present": ("P",),
    "fork": ("F",),
    "fork_tree": ("t",),
    "resume": ("r",),
    "request_log": ("R",),
    "findings": ("exclamation_mark",),
    "help": ("question_mark",),
    "quit": ("q",),
}

# How keys are spelled for people (Textual names → what is printed on the key).
_KEY_LABELS = {
    "space": "Space",
    "right": "→",
    "left": "←",
    "home": "Home",
    "end": "End",
    "plus": "+",
    "equals_sign": "=",
    "minus": "-",
    "right_square_bracket": "]",
    "left_square_bracket": "[",
    "greater_than_sign": ">",
    "less_than_sign": "<",
    "right_curly_bracket": "}",
    "left_curly_bracket": "{",
    "slash": "/",
    "question_mark": "?",
    "exclamation_mark": "!",
    "apostrophe": "'",
    "quotation_mark": '"',
    "ctrl+n": "Ctrl+N",
    "f3": "F3",
    "shift+f3": "Shift+F3",
}


def key_label(key: str) -> str:
    return _KEY_LABELS.get(key, key)


def keys_for(action: str, keymap: Mapping[str, tuple[str, ...]] = DEFAULT_KEYMAP) -> tuple[str, ...]:
    return tuple(keymap.get(action, ()))


def bindings(keymap: Mapping[str, tuple[str, ...]] = DEFAULT_KEYMAP) -> list[Binding]:
    """Textual ``Binding``s for every command that has keys in ``keymap``."""
    out: list[Binding] = []
    for cmd in COMMANDS:
        keys = keys_for(cmd.action, keymap)
        if not keys:
            continue
        out.append(
            Binding(
                ",".join(keys),
                cmd.action,
                cmd.title,
                show=cmd.show,
                key_display=key_label(keys[0]),
                tooltip=cmd.description,
                id=cmd.action,  # so App.set_keymap({"step_forward": "n"}) can rebind it
            )
        )
    return out


def help_rows(keymap: Mapping[str, tuple[str, ...]] = DEFAULT_KEYMAP) -> list[tuple[str, str, str]]:
    """(keys, title, description) for the help screen, in registry order."""
    return [
        (" ".join(key_label(k) for k in keys_for(c.action, keymap)), c.title, c.description) for c in COMMANDS
    ]
