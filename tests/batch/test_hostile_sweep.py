"""The hostile sweep (tests/batch/hostile.py) through every output of the suite: each sink gets its text inert.

CSV cells never start a formula; nothing printed to a terminal carries an escape it would obey; the Markdown report
renders no HTML element; the HTML report and the JSON keep every name as text; Textual tables show markup as text.
"""

from __future__ import annotations

import csv
import html.parser
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from stripebench_tui.batch.sweep_report import CSV_COLUMNS
from tests.batch.hostile import MARKUP, NEEDLE, make_hostile_sweep, terminal_controls

REPO = Path(__file__).resolve().parents[2]
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
TEXT_COLUMNS = ("eval_name", "model", "run_id", "findings", "failed_criteria")


def stripebench(*args: object) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "stripebench_tui", *map(str, args)], capture_output=True, text=True,
                          timeout=180, env=env, stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_hostile_sweep(tmp_path_factory.mktemp("hostile") / "sweep").root


def test_every_csv_cell_is_inert_in_a_spreadsheet(sweep: Path) -> None:
    r = stripebench("batch", "report", sweep, "--format", "csv")
    assert r.returncode == 0, r.stderr[-2000:]
    with open(sweep / "report.csv", encoding="utf-8", newline="") as f:  # a CR inside a quoted cell is data
        rows = list(csv.DictReader(f))
    assert len(rows) == 4 and list(rows[0]) == list(CSV_COLUMNS)
    assert any(row["failed_criteria"] and row["findings"] for row in rows)  # the hostile criteria and kinds are there
    for row in rows:
        for column in TEXT_COLUMNS:
            cell = row[column]
            assert not cell.startswith(FORMULA_START), (column, cell[:40])
            assert not cell.lstrip(" \t\r\n").startswith(FORMULA_START), (column, cell[:40])
    # The names are kept (after the quote), not replaced: the data is still the data.
    assert {row["model"][1:4] for row in rows} == {"@SU", "\t=1"}


def test_the_csv_printed_to_the_terminal_obeys_no_escape(sweep: Path) -> None:
    r = stripebench("batch", "report", sweep, "--format", "csv")
    assert r.returncode == 0, r.stderr[-2000:]
    assert "agent-x" in r.stdout and terminal_controls(r.stdout) == []
    assert terminal_controls(r.stderr) == []


class _Elements(html.parser.HTMLParser):
    """Every element and attribute name a browser would build from an HTML text."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attributes: list[str] = []
        self.sources: list[str] = []  # each img's src

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attributes += [name for name, _ in attrs]
        self.sources += [value or "" for name, value in attrs if tag == "img" and name == "src"]


def elements(text: str) -> _Elements:
    parser = _Elements()
    parser.feed(text)
    return parser


def test_the_markdown_report_renders_no_html_and_prints_no_escape(sweep: Path) -> None:
    from markdown_it import MarkdownIt

    r = stripebench("batch", "report", sweep, "--format", "md")
    assert r.returncode == 0, r.stderr[-2000:]
    assert terminal_controls(r.stdout) == [] and "agent-x" in r.stdout
    md = (sweep / "report.md").read_text(encoding="utf-8")
    rendered = MarkdownIt("commonmark", {"html": True}).enable("table").render(md)
    found = elements(rendered)
    assert "table" in found.tags  # the tables are tables…
    assert {"script", "img"} & set(found.tags) == set() and "onerror" not in found.attributes  # …and names are text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in rendered
    assert terminal_controls(md) == []


def test_the_html_report_keeps_every_name_as_text(sweep: Path, tmp_path: Path) -> None:
    out = tmp_path / "sweep.html"
    r = stripebench("batch", "report", sweep, "--format", "html", "-o", out)
    assert r.returncode == 0, r.stderr[-2000:]
    pages = [out, *sorted((tmp_path / "sweep-episodes").glob("*.html"))]
    assert len(pages) == 5
    for page in pages:
        found = elements(page.read_text(encoding="utf-8"))
        assert "onerror" not in found.attributes, page.name
        assert all(src.startswith("data:image/png;base64,") for src in found.sources), page.name  # screenshots only
        text = page.read_text(encoding="utf-8")
        assert "<script>alert(1)" not in text and "&lt;script&gt;alert(1)" in text, page.name
    assert terminal_controls(r.stderr) == []


def test_the_json_report_keeps_the_names_exactly_and_prints_no_escape(sweep: Path) -> None:
    from tests.batch.hostile import AGENTS

    r = stripebench("batch", "report", sweep, "--format", "json")
    assert r.returncode == 0, r.stderr[-2000:]
    assert terminal_controls(r.stdout) == []
    report = json.loads(r.stdout)
    assert {run["model"] for run in report["runs"]} == set(AGENTS)  # JSON is data: exact, escaped by JSON itself


def test_search_prints_hits_without_their_escapes(sweep: Path) -> None:
    r = stripebench("search", sweep, NEEDLE)
    assert r.returncode == 0, r.stderr[-2000:]
    lines = r.stdout.splitlines()
    assert len(lines) >= 4 and all(NEEDLE in line for line in lines)
    assert terminal_controls(r.stdout) == [] and terminal_controls(r.stderr) == []
    assert MARKUP in r.stdout  # shown as the text it is
    as_json = stripebench("search", sweep, NEEDLE, "--json")
    assert terminal_controls(as_json.stdout) == [] and json.loads(as_json.stdout)["hits"]


def _rendered_plain(table: Any, row: int, column: int) -> str:
    """What a DataTable cell shows (markup applied, as Textual draws it)."""
    from textual.widgets._data_table import default_cell_formatter

    return default_cell_formatter(table.get_cell_at((row, column))).plain  # type: ignore[union-attr]


def _no_actions(text: Any) -> None:
    """A rendered label or cell carries no ``@click`` (or other) action in its styles."""
    from rich.text import Text
    from textual.widgets._data_table import default_cell_formatter

    rendered = text if isinstance(text, Text) else default_cell_formatter(text)
    for span in rendered.spans:
        style = span.style
        meta = getattr(style, "meta", None) if not isinstance(style, str) else None
        assert not meta, (rendered.plain[:80], meta)
        assert not isinstance(style, str) or "@click" not in style


async def click_on_quit(pilot: Any, app: Any, selector: Any, y: int, x0: int, shown: str) -> None:
    """Click each character around the word "quit" of ``shown`` (drawn from column ``x0`` of line ``y``); the app
    must still run after every click. Before the fix that word was a ``[@click=app.quit]`` link."""
    from rich.cells import cell_len

    at = x0 + cell_len(shown[: shown.index("quit")])
    for x in range(max(0, at - 2), at + 7):
        await pilot.click(selector, offset=(x, y))
        await pilot.pause()
        assert app.is_running and app.return_code is None, f"a click at ({x}, {y}) ran an action"


async def test_the_batch_grid_shows_markup_in_names_as_text_and_a_click_runs_nothing(sweep: Path) -> None:
    from stripebench_tui.tui.apps.batch_app import BatchApp
    from stripebench_tui.tui.screens.batch_grid import BatchGridScreen

    app = BatchApp(sweep)
    async with app.run_test(size=(200, 30)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, BatchGridScreen)
        grid = screen.grid
        labels = [column.label for column in grid.columns.values()]
        assert any(MARKUP in label.plain and "agent-x" in label.plain for label in labels)
        rows = [row.label for row in grid.rows.values()]
        assert any(MARKUP in label.plain and "env-a" in label.plain for label in rows if label is not None)
        for label in [*labels, *rows]:
            _no_actions(label)
            assert terminal_controls(label.plain) == []
        for y, label in enumerate(rows, start=1):  # the row labels, drawn after one column of padding
            await click_on_quit(pilot, app, "#grid", y, 1, label.plain)


async def test_the_episode_picker_shows_markup_in_names_as_text_and_a_click_runs_nothing(sweep: Path,
                                                                                         tmp_path: Path) -> None:
    import shutil

    from textual.app import App
    from textual.widgets import DataTable

    from stripebench_tui.tui.screens.picker import PickerScreen

    opened: list[Any] = []
    folder = tmp_path / "served"  # what `stripebench serve FOLDER` lists: one hostile episode
    shutil.copytree(sweep / "e0__a0__r1" / "episode", folder / "e0")

    class Picker(App[None]):
        def on_mount(self) -> None:
            self.push_screen(PickerScreen(folder, opened.append))

    app = Picker()
    async with app.run_test(size=(200, 30)) as pilot:
        await pilot.pause()
        table = app.screen.query_one(DataTable)
        assert table.row_count == 1
        env, agent = _rendered_plain(table, 0, 1), _rendered_plain(table, 0, 2)
        assert MARKUP in env and "env-a" in env and MARKUP in agent and "agent-x" in agent
        for column in range(4):
            _no_actions(table.get_cell_at((0, column)))
            assert terminal_controls(_rendered_plain(table, 0, column)) == []
        x0 = sum(column.get_render_width(table) for column in list(table.columns.values())[:2])  # the agent column
        await click_on_quit(pilot, app, DataTable, 1, x0 + 1, agent)
