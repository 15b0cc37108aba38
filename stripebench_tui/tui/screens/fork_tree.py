"""The fork tree: the episode shown, the forks made from it at each turn, their forks, each with its score and first
finding. Enter asks to open one (``u``: the episode it was forked from), ``m`` marks up to two and ``d`` asks to diff
them (the marked one and the one under the cursor, when only one is marked). The asks are messages (``OpenBranch``,
``DiffBranches``) the app handles (``tui.apps.branch_opener``); this screen only reads."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Static, Tree
from textual.widgets.tree import TreeNode

from stripebench_tui.formats.bisect_record import BisectRecord
from stripebench_tui.formats.lineage import Branch, Lineage
from stripebench_tui.tui.text import clean

FINDING_CHARS = 90  # of a branch's first finding, in its line

FORK_TREE_CSS = """
ForkTreeScreen #fork-tree-head { height: auto; padding: 0 1; color: $text-muted; }
ForkTreeScreen #fork-tree { height: 1fr; border: round $primary-darken-2; }
"""


def branch_label(branch: Branch, marks: dict[Path, str], root: bool = False) -> Text:
    """One line of the tree: where the branch forked, its name, outcome, resumes and first finding (all as text)."""
    out = Text()
    mark = marks.get(branch.path)
    out.append(f"[{mark}] " if mark else "    ", style="bold reverse" if mark else "")
    if not root:
        out.append(f"turn {branch.turn} → " if branch.turn is not None else "whole run → ", style="dim")
    out.append(clean(branch.name), style="bold")
    style = "green" if branch.passed else "red" if branch.ended else "yellow"
    out.append(f"  {branch.outcome}", style=style)
    if branch.mode == "restore":
        out.append("  restored", style="dim")
    elif branch.mode == "" and not root:
        out.append("  re-executed", style="dim")
    if branch.resumed_at:
        out.append(f"  resumed at {', '.join(str(t) for t in branch.resumed_at)}", style="dim")
    if branch.first_finding:
        finding = branch.first_finding
        finding = finding if len(finding) <= FINDING_CHARS else finding[: FINDING_CHARS - 1] + "…"
        out.append(f"  ⚑ {clean(finding)}", style="yellow")
    return out


class ForkTreeScreen(Screen[None]):
    """The lineage of one episode as a tree (``formats.lineage``)."""

    DEFAULT_CSS = FORK_TREE_CSS
    BINDINGS = [
        Binding("enter", "open_branch", "Open"),
        Binding("m", "mark", "Mark for diff"),
        Binding("d", "diff", "Diff marked"),
        Binding("u", "open_parent", "Open parent"),
        Binding("escape,q", "back", "Back"),
    ]

    class OpenBranch(Message):
        """Open the episode whose trace is at ``path`` (a replay, as the screen below was)."""

        def __init__(self, path: Path) -> None:
            super().__init__()
            self.path = path

    class DiffBranches(Message):
        """Diff the episodes at ``a`` and ``b`` (``core.episode_diff``, the diff screen)."""

        def __init__(self, a: Path, b: Path) -> None:
            super().__init__()
            self.a, self.b = a, b

    def __init__(self, lineage: Lineage, bisect: BisectRecord | None = None) -> None:
        super().__init__()
        self.lineage = lineage
        self.bisect = bisect
        self.marked: list[Path] = []  # at most two, oldest first

    def compose(self) -> ComposeResult:
        yield Static(self._head(), id="fork-tree-head")
        tree: Tree[Branch] = Tree(branch_label(self.lineage.root, {}, root=True), data=self.lineage.root,
                                  id="fork-tree")
        tree.auto_expand = False  # Enter opens a branch; it does not fold it
        tree.show_root = True
        yield tree
        yield Footer()

    def _head(self) -> Text:
        lineage = self.lineage
        out = Text(f"{lineage.forks} fork{'s' if lineage.forks != 1 else ''} of this episode")
        if lineage.parent is not None:
            where = f"at turn {lineage.parent_turn}" if lineage.parent_turn is not None else "(a whole re-run)"
            out.append(f" · it was forked {where} from {clean(str(lineage.parent))}")
            if not lineage.parent_exists:
                out.append(" (not found)", style="red")
        if self.bisect is not None:
            found = self.bisect.last_passing
            out.append(f" · bisect ({clean(self.bisect.agent)}): "
                       + (f"last passing turn {found}" if found is not None else "no turn passes"))
        parent = " · u opens the parent" if lineage.parent is not None and lineage.parent_exists else ""
        out.append(f"\nEnter opens · m marks two · d diffs them{parent} · Esc back", style="dim")
        return out

    @property
    def branches(self) -> Tree[Branch]:
        """The tree widget (``DOMNode.tree`` is Textual's own, the DOM's)."""
        return self.query_one("#fork-tree", Tree)

    def on_mount(self) -> None:
        tree = self.branches
        self._grow(tree.root, self.lineage.root)
        tree.root.expand_all()
        tree.focus()
        tree.move_cursor(tree.root)

    def _grow(self, node: TreeNode[Branch], branch: Branch) -> None:
        for child in branch.children:
            grown = node.add(branch_label(child, {}), data=child, expand=True, allow_expand=bool(child.children))
            self._grow(grown, child)

    def _relabel(self) -> None:
        marks = {path: "AB"[i] for i, path in enumerate(self.marked)}
        stack = [self.branches.root]
        while stack:
            node = stack.pop()
            if node.data is not None:
                node.set_label(branch_label(node.data, marks, root=node.is_root))
            stack.extend(node.children)

    @property
    def selected(self) -> Branch | None:
        """The branch under the cursor."""
        node = self.branches.cursor_node
        return node.data if node is not None else None

    @on(Tree.NodeSelected)
    def _selected(self, event: Tree.NodeSelected[Branch]) -> None:
        event.stop()
        if event.node.data is not None:
            self.post_message(self.OpenBranch(event.node.data.path))

    def action_open_branch(self) -> None:
        branch = self.selected
        if branch is not None:
            self.post_message(self.OpenBranch(branch.path))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The parent can be opened only when the episode has one and it is still there."""
        if action == "open_parent":
            return self.lineage.parent is not None and self.lineage.parent_exists
        return True

    def action_open_parent(self) -> None:
        if self.lineage.parent is not None and self.lineage.parent_exists:
            self.post_message(self.OpenBranch(self.lineage.parent))

    def action_mark(self) -> None:
        """Mark (or unmark) the branch under the cursor; a third mark drops the oldest."""
        branch = self.selected
        if branch is None:
            return
        if branch.path in self.marked:
            self.marked.remove(branch.path)
        else:
            self.marked = [*self.marked, branch.path][-2:]
        self._relabel()

    def action_diff(self) -> None:
        pair = list(self.marked)
        if len(pair) == 1 and self.selected is not None and self.selected.path != pair[0]:
            pair.append(self.selected.path)
        if len(pair) != 2:
            self.notify("Mark two branches with m (or one, with the cursor on the other), then d.", title="Diff")
            return
        self.post_message(self.DiffBranches(pair[0], pair[1]))

    def action_back(self) -> None:
        self.dismiss()


__all__ = ["ForkTreeScreen", "branch_label"]
