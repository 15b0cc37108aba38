"""A hostile sweep: a batch directory whose every name and output is built to attack the sink it is written to.

Environment ids, agent and model names, grader criteria, finding kinds and tool outputs carry spreadsheet formulas
(``=cmd|…``, ``+``, ``-``, ``@SUM``, a leading tab or carriage return), terminal escapes (clear screen, window title,
OSC 52 clipboard write), Rich/Textual markup (``[@click=app.quit]``, ``[bold red]``) and HTML (``<script>``,
``<img onerror>``). The traces are the sample replays with those texts written in (as ``tests/batch/test_insight``
builds its sweep), so every reader and writer sees a real episode.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from stripebench_tui.batch.manifest import Batch
from stripebench_tui.batch.matrix import Cell

REPLAYS = Path(__file__).resolve().parents[2] / "replays"

FORMULAS = ("=cmd|' /C calc'!A0", "+1+cmd|' /C calc'!A0", "-1+cmd|' /C calc'!A0", "@SUM(1+1)*cmd|' /C calc'!A0",
            "\t=1+2", "\r=1+2", "  =HYPERLINK(\"http://x\")")
CLEAR_SCREEN = "\x1b[2J\x1b[H"
TITLE = "\x1b]0;pwned-title\x07"
CLIPBOARD = "\x1b]52;c;ZWNobyBwd25lZA==\x07"  # OSC 52: "echo pwned" into the clipboard
ESCAPES = CLEAR_SCREEN + TITLE + CLIPBOARD
MARKUP = "[@click=app.quit]quit[/] [bold red]loud[/bold red]"
HTML = "<script>alert(1)</script><img src=x onerror=alert(2)>"
NEEDLE = "zebra-needle"  # a word of the hostile tool output, for search


def hostile(i: int, what: str) -> str:
    """A name that starts with formula ``i`` and carries escapes, markup and HTML after ``what``."""
    return f"{FORMULAS[i % len(FORMULAS)]}{what}{ESCAPES}{MARKUP}{HTML}"


ENVS = [hostile(0, "env-a"), hostile(1, "env-b")]
AGENTS = [hostile(3, "agent-x"), hostile(4, "agent-y")]
MODEL = hostile(2, "model")
SAMPLES = ("checkout-migration-400", "checkout-migration-oracle")  # the first fails criteria and has findings
OUTPUT = f"{NEEDLE} {ESCAPES}{MARKUP} {HTML} {FORMULAS[0]}"


def hostile_trace(sample: str, episode: Path, env: str, agent: str) -> None:
    """``sample``'s trace in ``episode`` with hostile header names, criteria, finding kinds and tool outputs."""
    shutil.copytree(REPLAYS / sample, episode, dirs_exist_ok=True)
    shutil.rmtree(episode / "trace.jsonl.d", ignore_errors=True)  # its turn offsets no longer hold
    trace = episode / "trace.jsonl"
    out = []
    for n, line in enumerate(trace.read_text().splitlines()):
        event = json.loads(line)
        if n == 0:
            event.update(env=env, agent=agent, model=MODEL)
        elif event["type"] == "grader_verdict":
            event["criterion"] = hostile(5, event["criterion"])
        elif event["type"] == "finding":
            event["detector"] = hostile(6, event["detector"])
        elif event["type"] == "tool_result" and isinstance(event.get("output"), str):
            event["output"] = event["output"] + "\n" + OUTPUT + "\n"
        out.append(json.dumps(event))
    trace.write_text("\n".join(out) + "\n")


def make_hostile_sweep(root: Path) -> Batch:
    """Two hostile environments × two hostile agents × one run, every episode finished."""
    cells, samples = [], []
    for e, env in enumerate(ENVS):
        for a, agent in enumerate(AGENTS):
            cells.append(Cell(id=f"e{e}__a{a}__r1", env=env, env_ref=env, category="backend", agent_label=agent,
                              agent="oracle", options={}, run=1, seed=0, memory=1 << 30, argv=["run", "x"]))
            samples.append(SAMPLES[(e + a) % 2])
    batch = Batch.create(root, {"runs": 1}, cells)
    for cell, sample in zip(cells, samples, strict=True):
        hostile_trace(sample, batch.start_attempt(cell, 1, "local"), cell.env, cell.agent_label)
        score = 0.0 if sample.endswith("-400") else 1.0
        batch.finish(cell, {"status": "passed" if score else "failed", "score": score, "attempts": 1})
    return batch


def terminal_controls(text: str) -> list[str]:
    """The characters of ``text`` a terminal would obey rather than show: ESC, BEL, C1 controls, a bare CR."""
    bad = [c for c in text if c in "\x1b\x07\x9b\x9d" or "\x80" <= c <= "\x9f" or (c < " " and c not in "\n\t")]
    return sorted(set(bad))


__all__ = ["AGENTS", "ENVS", "ESCAPES", "FORMULAS", "HTML", "MARKUP", "MODEL", "NEEDLE", "OUTPUT", "hostile",
           "hostile_trace", "make_hostile_sweep", "terminal_controls"]
