"""Stripe objects seen so far, grouped by type and newest first; the selected one's JSON below."""

from __future__ import annotations

from pathlib import Path

from rich.syntax import Syntax
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Tree

from stripebench_tui.core.state import EpisodeState, ObjectView
from stripebench_tui.tui.text import clean, pretty_json
from stripebench_tui.tui.widgets.lines_view import LinesView

PER_TYPE = 40  # newest objects listed per type: the tree is rebuilt on every step (100 made a seek ~9 ms slower)


class StripeObjects(Vertical):
    """Tree of object types → objects; objects touched in the selected turn are marked ●."""

    DEFAULT_CSS = Path(__file__).with_suffix(".tcss").read_text()

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.selected: ObjectView | None = None
        self._signature: tuple = ()
        self._objects: dict[str, ObjectView] = {}

    def compose(self) -> ComposeResult:
        tree: Tree[str] = Tree("Stripe objects", id="objects-tree")
        tree.show_root = False
        yield tree
        with VerticalScroll(id="object-json-scroll"):
            yield LinesView(Text("Reading Stripe objects…", style="dim italic"), focusable=False, id="object-json")

    @property
    def tree(self) -> Tree[str]:
        return self.query_one("#objects-tree", Tree)

    def show(self, state: EpisodeState, turn_objects: list[str]) -> None:
        """Draw the objects known in ``state``, marking those in ``turn_objects``."""
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
        tree.clear()
        select_line = None
        keep_obj: ObjectView | None = None
        groups = state.objects_by_type()
        self.border_title = f"Stripe objects ({len(state.objects)})"
        for object_type, objects in groups.items():
            branch = tree.root.add(Text(f"{clean(object_type) or '(untyped)'} ({len(objects)})", style="bold"), expand=True)
            for obj in objects[:PER_TYPE]:
                label = Text("● " if obj.id in marked else "  ", style="bold yellow")
                label.append(clean(obj.id), style="strike dim" if obj.deleted else "")
                status = obj.data.get("status") if isinstance(obj.data, dict) else None
                if status:
                    label.append(f"  {clean(str(status))}", style="dim")
                node = branch.add_leaf(label, data=obj.id)
                if obj.id == keep or (keep is None and select_line is None and obj.id in marked):
                    # Keep the user's choice; else show the first object this turn touched.
                    select_line = node
                    keep_obj = obj
            if len(objects) > PER_TYPE:
                branch.add_leaf(Text(f"  … {len(objects) - PER_TYPE} older", style="dim italic"))
        if not groups:
            self._show_json(None)
        elif select_line is not None:
            # The new nodes get their line numbers at the next layout; move the cursor then.
            tree.call_after_refresh(tree.move_cursor, select_line)
            self._show_json(keep_obj)
        else:
            self._show_json(None)

    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted) -> None:
        event.stop()
        if not self.tree.has_focus:
            return  # a cursor move of our own (rebuild, follow the turn): show() already chose
        object_id = event.node.data
        self._show_json(self._objects.get(object_id) if object_id else None)

    def _show_json(self, obj: ObjectView | None) -> None:
        self.selected = obj
        target = self.query_one("#object-json", LinesView)
        if obj is None:
            hint = "Select an object to see its JSON." if self._objects else "No Stripe objects yet."
            target.update(Text(hint, style="dim italic"))
            return
        text = clean(pretty_json(obj.data))
        head = Text(f"{clean(obj.id)} · turn {obj.first_turn}–{obj.last_turn} · {obj.changes} change(s)\n", style="bold")
        target.update(Text.assemble(head, Syntax(text, "json", theme="ansi_dark", background_color="default").highlight(text)))
