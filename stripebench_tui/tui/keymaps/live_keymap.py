"""Key bindings of the live screen, as data: the live controls added to the replay's registry.

The live screen takes the replay's navigation keys (minus playback pacing, which
means nothing for a live episode) plus these; its help screen and the command
palette list the same table, so a key is defined once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from textual.binding import Binding

from stripebench_tui.tui.keymaps.keymap import COMMANDS, DEFAULT_KEYMAP, KeyCommand, key_label

LIVE_COMMANDS: tuple[KeyCommand, ...] = (
    KeyCommand("toggle_pause", "Pause/Resume", "Pause the episode before the agent's next turn, or resume it"),
    KeyCommand("step_agent", "Step agent", "Run one agent turn, then pause"),
    KeyCommand("inject", "Inject", "Put a note or one of the environment's hints into the agent's next observations"),
    KeyCommand("approve", "Approve", "Let the tool call waiting for approval run"),
    KeyCommand("edit_call", "Edit", "Edit the waiting tool call's arguments (JSON), then run it"),
    KeyCommand("reject", "Reject", "Do not run the waiting tool call; tell the agent why"),
    KeyCommand("tool_call", "Tool call", "Human agent: pick a tool and type its arguments as this turn"),
    KeyCommand("follow", "Follow", "Select the newest turn and keep following new turns"),
    KeyCommand("show_screenshot", "Screenshot", "Show the latest browser screenshot as large as the terminal allows"),
    KeyCommand("fork", "Fork", "Re-execute the episode up to the selected turn on a fresh environment, then continue live"),
    KeyCommand("stop_episode", "Stop", "End the episode now (processes stopped, trace kept)"),
)

# Replay commands that do not apply live (playback pacing; quit is redefined to stop the episode first; a running
# episode has no forks to show yet and nothing to resume). Presenter mode does: it paces the live stream
# (tui.screens.live_presenter).
_REPLAY_ONLY = {"toggle_play", "faster", "slower", "speed_1", "speed_2", "speed_8", "speed_max", "fork_tree", "resume"}

_QUIET = {"step_forward", "next_verdict", "open_pager", "copy_item", "breakpoints"}

LIVE_KEYMAP: dict[str, tuple[str, ...]] = {
    "toggle_pause": ("space",),
    "step_agent": ("s",),
    "inject": ("i",),
    "approve": ("a",),
    "edit_call": ("e",),
    "reject": ("r",),
    "tool_call": ("t",),
    "follow": ("f",),
    "show_screenshot": ("o",),
    "fork": ("F",),
    "stop_episode": ("X",),
}


def live_commands() -> list[KeyCommand]:
    """Every command of the live screen, live controls first."""
    replay = [c for c in COMMANDS if c.action not in _REPLAY_ONLY and c.action not in LIVE_KEYMAP]
    # Moving the selection is still there, but the footer's room goes to the live controls.
    replay = [replace(c, show=False) if c.action in _QUIET else c for c in replay]
    return [*LIVE_COMMANDS, *replay]


def live_keymap() -> dict[str, tuple[str, ...]]:
    """Action → keys for the live screen."""
    keys = {a: k for a, k in DEFAULT_KEYMAP.items() if a not in _REPLAY_ONLY and a not in LIVE_KEYMAP}
    return {**LIVE_KEYMAP, **keys}


def live_bindings(keymap: Mapping[str, tuple[str, ...]] | None = None) -> list[Binding]:
    """Textual bindings of the live screen (ids are the action names, so App.set_keymap rebinds them)."""
    keymap = keymap or live_keymap()
    out = []
    for cmd in live_commands():
        keys = keymap.get(cmd.action, ())
        if keys:
            out.append(Binding(",".join(keys), cmd.action, cmd.title, show=cmd.show, key_display=key_label(keys[0]),
                               tooltip=cmd.description, id=cmd.action))
    return out


def live_help_rows(keymap: Mapping[str, tuple[str, ...]] | None = None) -> list[tuple[str, str, str]]:
    """(keys, title, description) rows for the live help screen."""
    keymap = keymap or live_keymap()
    return [(" ".join(key_label(k) for k in keymap.get(c.action, ())), c.title, c.description) for c in live_commands()]
