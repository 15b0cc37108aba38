"""Finding text across the episode's messages and outputs, turn by turn, with next/previous."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from stripebench_tui.tui.sources.episode_source import EpisodeSource, turn_from_events
from stripebench_tui.tui.text import clean
from stripebench_tui.tui.widgets.turn_detail import output_document

MESSAGE, OUTPUT = 0, 1
PROGRESS_EVERY = 500  # turns


@dataclass(frozen=True, order=True)
class TextMatch:
    """One match: ordered by turn position, then messages before outputs, then line and column."""

    position: int  # row in the timeline (0-based), not the turn number
    part: int  # MESSAGE or OUTPUT
    line: int  # line in the turn's message text or output document
    col: int
    length: int = field(default=0, compare=False)


def hits_in_turn(source: EpisodeSource, position: int, turn_number: int, query: str) -> list[TextMatch]:
    """Every case-insensitive match of ``query`` in one turn, in display order."""
    needle = query.lower()
    if not needle:
        return []
    turn = turn_from_events(turn_number, source.events_for_turn(turn_number))
    messages = "\n".join(m.text + ("\n" + m.reasoning if m.reasoning else "") for m in turn.messages)
    output, _ = output_document(turn, source.full_output)
    hits: list[TextMatch] = []
    for part, text in ((MESSAGE, messages), (OUTPUT, output)):
        if needle not in text.lower():  # cheap whole-text check before splitting megabytes
            continue
        for number, line in enumerate(text.split("\n")):
            low = clean(line).lower()
            start = low.find(needle)
            while start != -1:
                hits.append(TextMatch(position, part, number, start, len(needle)))
                start = low.find(needle, start + 1)
    return hits


def find(
    source: EpisodeSource,
    turns: list[int],
    query: str,
    after: TextMatch,
    forward: bool = True,
    cancelled: Callable[[], bool] = lambda: False,
    progress: Callable[[int, int], None] = lambda done, total: None,
) -> TextMatch | None:
    """The first hit strictly after (or before) ``after``, wrapping around the episode once.

    ``progress(turns_searched, total)`` is called every ``PROGRESS_EVERY`` turns.
    """
    if not turns or not query:
        return None
    count = len(turns)
    step = 1 if forward else -1
    start = max(0, min(count - 1, after.position))
    # count + 1 visits: the start turn is looked at again last, for hits on the other side of ``after``.
    for i in range(count + 1):
        if cancelled():
            return None
        if i and i % PROGRESS_EVERY == 0:
            progress(i, count)
        position = (start + step * i) % count
        hits = hits_in_turn(source, position, turns[position], query)
        if i == 0 and position == after.position:
            hits = [h for h in hits if (h > after if forward else h < after)]
        if hits:
            return hits[0] if forward else hits[-1]
    return None
