"""The one sanitiser for untrusted text drawn on a terminal: tool output, model text, page text, service logs.

The headless printer (``formats.text``, ``runtime.printer``), the TUI (``tui.text.clean``) and the
grade report all call ``sanitize``, so they agree on every input. Exports (ATIF, the trace) keep the
text as it was: they are data, not terminal output. Pure text handling: no Rich, no Textual.

What it does, in order:

- **Escape sequences are removed, payload and all**: CSI (``ESC [`` or C1 ``0x9b``, which covers
  colours and cursor moves), the string sequences OSC (``ESC ]`` / ``0x9d``: hyperlinks with
  OSC 8, the clipboard with OSC 52, window titles), DCS (``ESC P`` / ``0x90``), SOS, PM and APC,
  and every other ``ESC`` sequence (``ESC c`` resets the terminal, ``ESC ( 0`` switches charsets).
  A string sequence ends at its terminator (BEL, ``ESC \\`` or ``0x9c``) or at the end of the line,
  so cleaning a text line by line gives the same result as cleaning it whole.
- **A carriage return is made visible**, not obeyed: ``"a\\rb"`` shows as ``"a␍b"``. A terminal
  would draw ``b`` over ``a``; here the operator sees everything the agent was given, including
  text a carriage return would hide. ``"\\r\\n"`` is an ordinary line end, and so is a ``"\\r"``
  ending the text (so a line cut at ``"\\n"`` cleans the same).
- **Every other control character is removed**: C0 (bell, backspace, form feed…), DEL, C1
  (0x80–0x9f) and the bidirectional overrides (U+202A–U+202E, U+2066–U+2069) that reorder what
  is shown. Newlines stay; tabs are expanded.
- **Long lines are capped** at ``max_line`` characters with a marker saying how much was cut, so a
  one-megabyte line neither hangs the layout nor pushes the rest of the screen around.
"""

from __future__ import annotations

import re

MAX_LINE = 4000  # characters of one line shown; the rest is replaced by CUT_MARK
TAB_SIZE = 4
CARRIAGE_RETURN = "\u240d"  # ␍, what a lone "\r" shows as
CUT_MARK = " … [{n} more characters on this line]"

_STRING_BODY = r"[^\x07\x1b\x9c\n]*(?:\x07|\x1b\\|\x9c)?"
_SEQUENCES = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"  # CSI, with or without its final byte
    r"|(?:\x1b[P\]X^_]|[\x90\x98\x9d\x9e\x9f])" + _STRING_BODY +  # DCS, OSC, SOS, PM, APC
    r"|\x1b[ -/]*[0-~]"  # any other escape sequence (nF, Fp, Fe, Fs)
)
_SEQUENCE_START = re.compile(r"[\x1b\x90-\x9f]")
_LINE_END_CR = re.compile(r"\r+(?=\n|\Z)")  # "\r\n" (and a "\r" ending the text) is a line end
_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def sanitize(text: str, max_line: int | None = MAX_LINE, tab_size: int = TAB_SIZE) -> str:
    """``text`` safe to draw on a terminal (see the module's docstring); ``max_line=None`` cuts nothing."""
    if not text:
        return ""
    if _SEQUENCE_START.search(text):  # every sequence starts with ESC or a C1 byte; most text has neither
        text = _SEQUENCES.sub("", text)
    if "\r" in text:
        text = _LINE_END_CR.sub("", text).replace("\r", CARRIAGE_RETURN)
    text = _CONTROLS.sub("", text)
    if "\t" in text:
        text = text.expandtabs(tab_size)  # (columns restart at each newline)
    if max_line is not None and len(text) > max_line:
        text = "\n".join(cap_line(line, max_line) for line in text.split("\n"))
    return text


def cap_line(line: str, max_line: int = MAX_LINE) -> str:
    """``line`` cut to ``max_line`` characters, with a marker saying how many more there were."""
    if len(line) <= max_line:
        return line
    return line[:max_line] + CUT_MARK.format(n=len(line) - max_line)


__all__ = ["CARRIAGE_RETURN", "CUT_MARK", "MAX_LINE", "cap_line", "sanitize"]
