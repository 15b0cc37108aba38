"""The one sanitiser: what every kind of hostile terminal output becomes, the same for the printer and the TUI."""

from __future__ import annotations

import time

import pytest

from stripebench_tui.core.sanitize import CARRIAGE_RETURN, MAX_LINE, cap_line, sanitize

ESC = "\x1b"


@pytest.mark.parametrize("raw, shown", [
    ("plain text\nsecond line", "plain text\nsecond line"),
    (f"{ESC}[31mred{ESC}[0m", "red"),  # colours
    (f"a{ESC}[2J{ESC}[Hb", "ab"),  # clear screen, cursor home
    (f"x{ESC}[999;1Hfake status{ESC}[?25l", "xfake status"),  # cursor moves, hide cursor
    (f"{ESC}[?1049lleft the alternate screen", "left the alternate screen"),
    ("\x9b2Jc1 clear", "c1 clear"),  # C1 CSI
    ("\x9b31", ""),  # a CSI cut before its final byte
    (f"{ESC}]8;;https://evil.example/{ESC}\\click here{ESC}]8;;{ESC}\\", "click here"),  # OSC 8 hyperlink
    (f"{ESC}]52;c;cm0gLXJmIH4=\x07copied?", "copied?"),  # OSC 52 clipboard, BEL-terminated
    (f"{ESC}]0;pwned title\x07x", "x"),  # window title
    ("\x9d0;c1 title\x9cy", "y"),  # C1 OSC with C1 ST
    (f"{ESC}P1$qm{ESC}\\after dcs", "after dcs"),  # DCS with its payload
    ("\x90sixel-ish payload\x9cafter c1 dcs", "after c1 dcs"),
    (f"{ESC}_apc payload{ESC}\\z", "z"),  # APC
    (f"{ESC}]0;unterminated title\nnext line", "\nnext line"),  # a string sequence ends with its line
    (f"{ESC}cafter reset{ESC}(0{ESC}7{ESC}8", "after reset"),  # RIS, charset, save/restore cursor
    ("a\rb", f"a{CARRIAGE_RETURN}b"),  # an overwrite is made visible, not obeyed
    ("progress 10%\rprogress 100%\r\ndone\r", f"progress 10%{CARRIAGE_RETURN}progress 100%\ndone"),
    ("bell\x07\x07 backspace\x08 nul\x00 del\x7f vt\x0b ff\x0c", "bell backspace nul del vt ff"),
    ("c1 \x85\x8d\x99 controls", "c1  controls"),  # (\x9f would open an APC string)
    ("\u202egnp.exe\u202c and \u2066isolate\u2069", "gnp.exe and isolate"),  # bidirectional overrides
    ("a\tb\n\tc", "a   b\n    c"),  # tabs expanded, columns restart on each line
    ("[bold]markup stays text[/bold] ✓ é 漢字", "[bold]markup stays text[/bold] ✓ é 漢字"),
])
def test_hostile_sequences_are_neutralised(raw: str, shown: str) -> None:
    assert sanitize(raw) == shown


def test_no_control_character_survives_any_input() -> None:
    every = "".join(chr(c) for c in range(0x00, 0xA0)) + "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
    out = sanitize(every * 3 + ESC)
    assert [c for c in out if (ord(c) < 0x20 and c not in "\n") or 0x7F <= ord(c) <= 0x9F] == []


def test_cleaning_line_by_line_matches_cleaning_the_whole_text() -> None:
    text = (f"one{ESC}]8;;http://x{ESC}\\two\r\nthree\rfour\n{ESC}P unterminated dcs\nfive\t6\n"
            f"{ESC}[1;31mseven{ESC}[0m\r")
    assert "\n".join(sanitize(line) for line in text.split("\n")) == sanitize(text)


def test_a_one_megabyte_line_is_cut_with_a_marker_quickly() -> None:
    line = "A" * 1_000_000 + f"{ESC}[2J"
    started = time.monotonic()
    out = sanitize(line + "\nnext")
    assert time.monotonic() - started < 2.0
    first, second = out.split("\n")
    assert first.startswith("A" * MAX_LINE) and first.endswith(f"[{1_000_000 - MAX_LINE} more characters on this line]")
    assert second == "next"
    assert sanitize(line, max_line=None) == "A" * 1_000_000
    assert cap_line("short") == "short"


def test_the_printer_the_tui_and_the_report_share_the_function() -> None:
    from stripebench_tui.formats import text as formats_text
    from stripebench_tui.grading import results_table as report
    from stripebench_tui.tui import text as tui_text

    assert formats_text.sanitize is sanitize and report.sanitize is sanitize
    for raw in ("a\rb", "\x9b31mx", f"{ESC}P payload{ESC}\\y", "\x07", "A" * (MAX_LINE + 5)):
        assert tui_text.clean(raw) == formats_text.sanitize(raw) == sanitize(raw)
