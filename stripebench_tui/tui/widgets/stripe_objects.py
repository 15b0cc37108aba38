"""Stripe objects seen so far, grouped by type and newest first; the selected one's JSON below."""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path

from rich.syntax import Syntax
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from stripebench_tui.core.state import EpisodeState, ObjectView
from stripebench_tui.tui.text import clean, pretty_json
from stripebench_tui.tui.widgets.lines_view import LinesView
from stripebench_tui.tui.widgets.titled import TitledPane

ROWS_KEPT = 4  # trees' rows kept, by signature: going back to a turn builds no labels again
PER_TYPE = 40  # newest objects listed per type: a step that adds or drops a row builds the tree again


class StripeObjects(TitledPane, Vertical):
    """Tree of object types → objects; objects touched in the selected turn are marked ●."""

    DEFAULT_CSS = Path(__file__).with_suffix(".tcss").read_text()

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.selected: ObjectView | None = None
        self._signature: tuple = ()
        self._objects: dict[str, ObjectView] = {}
        self._tree_shape: list[tuple[str, str]] = []  # the rows of the tree (kind, name), in order
        self._tree_nodes: dict[tuple[str, str], TreeNode[str]] = {}
        self._tree_labels: dict[tuple[str, str], Text] = {}
        self._json_key: tuple | None = None  # what the JSON pane shows, to skip drawing it again
        self._json_data: object = None
        self._rows_memo: OrderedDict[tuple, tuple] = OrderedDict()  # (signature, kept pick) → what _rows returned

    def compose(self) -> ComposeResult:
        tree: Tree[str] = Tree("Stripe objects", id="objects-tree")
        tree.show_root = False
        yield tree
        # One scrolling view of fixed height: a new object's JSON repaints it and moves nothing else.
        yield LinesView(Text("Reading Stripe objects…", style="dim italic"), id="object-json")

    @property
    def tree(self) -> Tree[str]:
        return self.query_one("#objects-tree", Tree)

    def show(self, state: EpisodeState, turn_objects: list[str]) -> None:
        """Draw the objects known in ``state``, marking those in ``turn_objects``.

        When the tree keeps its shape (the same types, objects and "older" rows in the same order, e.g. a step that
        only changed statuses or the ● marks) the nodes stay and only changed labels are set: that repaints those
        lines and lays nothing out. Otherwise the tree is built again.
        """
        marked = set(turn_objects)
        signature = (len(state.objects), state.last_seq, tuple(turn_objects))
        if signature == self._signature:
            return
        self._signature = signature
        self._objects = state.objects
        tree = self.tree
        # While the user browses this pane their pick stays; otherwise the pane follows the turn.
        keep = self.selected.id if self.selected and tree.has_focus else None
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
        rows, select_key, keep_obj = memo
        shape = [key for key, *_ in rows]
        self._apply_rows(rows, shape, select_key, keep_obj)

    def _rows(self, state: EpisodeState, marked: set[str], keep: str | None) -> tuple[list, tuple[str, str] | None, ObjectView | None]:
        """The tree's rows (key, label, is a branch, object id), the row to select and its object."""
        rows: list[tuple[tuple[str, str], Text, bool, str | None]] = []
        select_key: tuple[str, str] | None = None
        keep_obj: ObjectView | None = None
        for object_type, objects in state.objects_by_type().items():
            rows.append((("type", object_type), Text(f"{clean(object_type) or '(untyped)'} ({len(objects)})", style="bold"),
                         True, None))
            for obj in objects[:PER_TYPE]:
                label = Text("● " if obj.id in marked else "  ", style="bold yellow")
                label.append(clean(obj.id), style="strike dim" if obj.deleted else "")
                status = obj.data.get("status") if isinstance(obj.data, dict) else None
                if status:
                    label.append(f"  {clean(str(status))}", style="dim")
                rows.append((("object", obj.id), label, False, obj.id))
                if obj.id == keep or (keep is None and select_key is None and obj.id in marked):
                    # Keep the user's choice; else show the first object this turn touched.
                    select_key = ("object", obj.id)
                    keep_obj = obj
            if len(objects) > PER_TYPE:
                rows.append((("older", object_type), Text(f"  … {len(objects) - PER_TYPE} older", style="dim italic"),
                             False, None))
        return rows, select_key, keep_obj

    def _apply_rows(self, rows: list[tuple[tuple[str, str], Text, bool, str | None]], shape: list[tuple[str, str]],
                    select_key: tuple[str, str] | None, keep_obj: ObjectView | None) -> None:
        tree = self.tree
        if shape == self._tree_shape:
            for key, label, _branch, _data in rows:
                node = self._tree_nodes[key]
                if self._tree_labels[key] != label:
                    self._tree_labels[key] = label
                    node.set_label(label)
            target = self._tree_nodes[select_key] if select_key is not None else None
            if target is not None and target.line < 0:
                tree.call_after_refresh(tree.move_cursor, target)  # built but not laid out yet
            else:
                tree.move_cursor(target)
        else:
            self._rebuild(rows)
            if select_key is not None:
                # The new nodes get their line numbers at the next layout; move the cursor then.
                tree.call_after_refresh(tree.move_cursor, self._tree_nodes[select_key])
        self._show_json(keep_obj if select_key is not None else None)

    def _rebuild(self, rows: list[tuple[tuple[str, str], Text, bool, str | None]]) -> None:
        tree = self.tree
        tree.clear()
        self._tree_nodes = {}
        self._tree_labels = {}
        self._tree_shape = [key for key, *_ in rows]
        branch = tree.root
        for key, label, is_branch, data in rows:
            if is_branch:
                branch = node = tree.root.add(label, expand=True)
            else:
                node = branch.add_leaf(label, data=data)
            self._tree_nodes[key] = node
            self._tree_labels[key] = label

    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted) -> None:
        event.stop()
        if not self.tree.has_focus:
            return  # a cursor move of our own (rebuild, follow the turn): show() already chose
        object_id = event.node.data
        self._show_json(self._objects.get(object_id) if object_id else None)

    def _show_json(self, obj: ObjectView | None) -> None:
        self.selected = obj
        key = None if obj is None else (obj.id, obj.first_turn, obj.last_turn, obj.changes, obj.deleted)
        if obj is None:
            key = ("hint", bool(self._objects))
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
