"""Stripe objects seen so far, grouped by type and newest first; the selected one's JSON below."""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path

from rich.syntax import Syntax
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical

from stripebench_tui.core.state import EpisodeState, ObjectView
from stripebench_tui.tui.text import clean, pretty_json
from stripebench_tui.tui.widgets.lines_view import LinesView
from stripebench_tui.tui.widgets.object_list import ObjectList, ObjectRow
from stripebench_tui.tui.widgets.titled import TitledPane

ROWS_KEPT = 4  # lists' rows kept, by signature: going back to a turn builds no labels again
PER_TYPE = 40  # newest objects listed per type


class StripeObjects(TitledPane, Vertical):
    """List of object types → objects; objects touched in the selected turn are marked ●."""

    DEFAULT_CSS = Path(__file__).with_suffix(".tcss").read_text()

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.selected: ObjectView | None = None
        self._signature: tuple = ()
        self._objects: dict[str, ObjectView] = {}
        self._json_key: tuple[object, ...] | None = None  # what the JSON pane shows, to skip drawing it again
        self._json_data: object = None
        self._rows_memo: OrderedDict[tuple, tuple] = OrderedDict()  # (signature, kept pick) → what _rows returned

    def compose(self) -> ComposeResult:
        yield ObjectList(id="objects-tree")
        # One scrolling view of fixed height: a new object's JSON repaints it and moves nothing else.
        yield LinesView(Text("Reading Stripe objects…", style="dim italic"), id="object-json")

    @property
    def object_list(self) -> ObjectList:
        return self.query_one("#objects-tree", ObjectList)

    def show(self, state: EpisodeState, turn_objects: list[str]) -> None:
        """Draw the objects known in ``state``, marking those in ``turn_objects``.

        The list repaints only the rows that changed, and lays the screen out only when the number of rows changes.
        """
        marked = set(turn_objects)
        signature = (len(state.objects), state.last_seq, tuple(turn_objects))
        if signature == self._signature:
            return
        self._signature = signature
        self._objects = state.objects
        object_list = self.object_list
        # While the user browses this pane their pick stays; otherwise the pane follows the turn.
        keep = self.selected.id if self.selected and object_list.has_focus else None
        if keep not in state.objects:
            keep = None  # not created yet at this turn
        self.set_title(f"Stripe objects ({len(state.objects)})")  # repaints the title's line only, if it changed
        memo_key = (signature, keep)
        memo = self._rows_memo.get(memo_key)
        if memo is None:
            memo = self._rows(state, marked, keep)
            self._rows_memo[memo_key] = memo
            if len(self._rows_memo) > ROWS_KEPT:
                self._rows_memo.popitem(last=False)
        else:
            self._rows_memo.move_to_end(memo_key)
        rows, select, keep_obj = memo
        object_list.set_rows(rows, select)
        self._show_json(keep_obj if select is not None else None)

    def _rows(self, state: EpisodeState,
              marked: set[str], keep: str | None) -> tuple[list[ObjectRow], int | None, ObjectView | None]:
        """The list's rows (key, label, is a header, object id), the index of the row to select and its object."""
        rows: list[ObjectRow] = []
        select: int | None = None
        keep_obj: ObjectView | None = None
        for object_type, objects in state.objects_by_type().items():
            rows.append(ObjectRow(("type", object_type),
                                  Text(f"{clean(object_type) or '(untyped)'} ({len(objects)})", style="bold"),
                            True, None))
            for obj in objects[:PER_TYPE]:
                label = Text("● " if obj.id in marked else "  ", style="bold yellow")
                label.append(clean(obj.id), style="strike dim" if obj.deleted else "")
                status = obj.data.get("status") if isinstance(obj.data, dict) else None
                if status:
                    label.append(f"  {clean(str(status))}", style="dim")
                if obj.id == keep or (keep is None and select is None and obj.id in marked):
                    # Keep the user's choice; else show the first object this turn touched.
                    select = len(rows)
                    keep_obj = obj
                rows.append(ObjectRow(("object", obj.id), label, False, obj.id))
            if len(objects) > PER_TYPE:
                rows.append(ObjectRow(("older", object_type), Text(f"  … {len(objects) - PER_TYPE} older", style="dim italic"),
                                False, None))
        return rows, select, keep_obj

    def on_object_list_highlighted(self, event: ObjectList.Highlighted) -> None:
        event.stop()
        object_id = event.row.data if event.row is not None else None
        self._show_json(self._objects.get(object_id) if isinstance(object_id, str) else None)

    def _show_json(self, obj: ObjectView | None) -> None:
        self.selected = obj
        key: tuple[object, ...] = (("hint", bool(self._objects)) if obj is None
                                   else (obj.id, obj.first_turn, obj.last_turn, obj.changes, obj.deleted))
        if key == self._json_key and (obj is None or obj.data == self._json_data):
            return  # the same text: no redraw (a new height would lay the screen out)
        self._json_key = key
        self._json_data = None if obj is None else obj.data
        target = self.query_one("#object-json", LinesView)
        if obj is None:
            hint = "Select an object to see its JSON." if self._objects else "No Stripe objects yet."
            if not target.show_kept(("hint", hint)):
                target.update(Text(hint, style="dim italic"), key=("hint", hint))
            return
        text = clean(pretty_json(obj.data))
        head_text = f"{clean(obj.id)} · turn {obj.first_turn}–{obj.last_turn} · {obj.changes} change(s)\n"
        view_key = ("object", head_text, text)  # what is drawn, whole: the view keeps the last few
        if target.show_kept(view_key):
            return
        head = Text(head_text, style="bold")
        target.update(Text.assemble(head, Syntax(text, "json", theme="ansi_dark", background_color="default").highlight(text)),
                      key=view_key)
