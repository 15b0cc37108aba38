"""The keys the README and docs/findings.md name are the keys the keymap binds to those actions."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from stripebench_tui.tui.keymaps.keymap import DEFAULT_KEYMAP, key_label
from stripebench_tui.tui.keymaps.live_keymap import live_keymap

ROOT = Path(__file__).resolve().parents[2]
K = r"`([^`\s]{1,2})`"  # one key in backticks

# (file, a pattern whose groups are keys, the action each group names, in order)
MENTIONS = [
    ("README.md", rf"In the TUI, {K}\s+quits", ["quit"]),
    ("README.md", rf"Keys in the TUI are listed with {K}", ["help"]),
    ("README.md", rf"{K} notes the selected turn", ["note"]),
    ("README.md", rf"{K} goes to the next note, {K} lists them", ["next_note", "list_notes"]),
    ("README.md", rf"{K} in the TUI lists them like the Dashboard", ["request_log"]),
    ("README.md", rf"findings \({K} in the TUI", ["findings"]),
    ("README.md", rf"or {K} in the TUI\) are data", ["breakpoints"]),
    ("README.md", r"presenter mode \((P) in the TUI\)", ["present"]),
    ("README.md", rf"{K} {K} {K} {K} set the speed", ["speed_1", "speed_2", "speed_8", "speed_max"]),
    ("README.md", rf"{K}/{K}, {K}/{K} and {K}/{K} jump to\s+the next/previous verdict change, finding and breakpoint hit",
     ["next_verdict", "previous_verdict", "next_finding", "previous_finding", "next_hit", "previous_hit"]),
    ("README.md", rf"and {K} shows where the time went", ["where_time_went"]),
    ("README.md", rf"In the TUI, {K} shows the fork tree", ["fork_tree"]),
    ("README.md", rf"offered a resume when opened \({K}\)", ["resume"]),
    ("docs/findings.md", rf"In the TUI, {K} lists them", ["findings"]),
    ("docs/findings.md", rf"labelled in {K}\); `finding` breakpoints, {K} and", ["findings", "next_finding"]),
]


@pytest.mark.parametrize(("doc", "pattern", "actions"), MENTIONS)
def test_a_documented_key_is_bound_to_what_the_text_says(doc, pattern, actions):
    text = (ROOT / doc).read_text(encoding="utf-8")
    found = re.search(pattern, text)
    assert found, f"{doc} no longer says {pattern!r}"
    for key, action in zip(found.groups(), actions, strict=True):
        bound = [key_label(k) for k in DEFAULT_KEYMAP[action]]
        assert key in bound, f"{doc} says {key} for {action}, the keymap binds {bound}"


def test_the_readme_space_resumes_a_live_episode():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "resume with Space" in text and live_keymap()["toggle_pause"] == ("space",)
