"""Turn stored objects into API responses: per-version renderers, internal-field stripping and ``expand[]``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from stripebench_tui.emulator.errors import invalid
from stripebench_tui.emulator.registry import RESOURCES
from stripebench_tui.emulator.store import clone

if TYPE_CHECKING:
    from stripebench_tui.emulator.context import RequestContext

MAX_EXPAND_DEPTH = 4


def render(value: Any, ctx: "RequestContext") -> Any:
    """Render an internal object (or list page) for ``ctx.api_version``; fields starting with ``_`` never leave."""
    if not isinstance(value, dict):
        return value
    if value.get("object") in ("list", "search_result"):
        out = dict(value)
        out["data"] = [render(item, ctx) for item in value.get("data", [])]
        return out
    resource = RESOURCES.get(value.get("object", ""))
    if resource is None or value.get("deleted"):
        return {k: v for k, v in value.items() if not k.startswith("_")}
    obj = clone(value)
    if resource.render_fn is not None:
        obj = resource.render_fn(obj, ctx)
    return {k: v for k, v in obj.items() if not k.startswith("_")}


def expand(rendered: Any, paths: list[str], ctx: "RequestContext") -> Any:
    """Apply each ``expand[]`` path (``customer``, ``data.customer``, ``a.b.c``) in place; bad paths raise 400."""
    for path in paths:
        parts = path.split(".")
        if len(parts) > MAX_EXPAND_DEPTH or not all(parts):
            raise invalid(f"You cannot expand more than {MAX_EXPAND_DEPTH} levels of a property."
                          if all(parts) else f"This property cannot be expanded ({path}).", param="expand")
        _expand(rendered, parts, path, ctx)
    return rendered


def _expand(obj: Any, parts: list[str], full: str, ctx: "RequestContext") -> None:
    if not isinstance(obj, dict) or not parts:
        return
    if obj.get("object") in ("list", "search_result"):
        if parts[0] != "data":
            raise invalid(f"This property cannot be expanded ({full}). You may want to try expanding "
                          f"'data.{full}' instead.", param="expand")
        for item in obj.get("data", []):
            _expand(item, parts[1:], full, ctx)
        return
    resource = RESOURCES.get(obj.get("object", ""))
    expandable = resource.expandable if resource else {}
    if len(parts) == 1 and resource is not None and parts[0] in resource.includable:
        return  # already rendered by the resource's renderer
    for i in range(len(parts), 0, -1):
        key = ".".join(parts[:i])
        if key not in expandable:
            continue
        container: Any = obj
        for part in parts[: i - 1]:
            container = container.get(part) if isinstance(container, dict) else None
        if not isinstance(container, dict):
            return
        leaf = parts[i - 1]
        value = container.get(leaf)
        if isinstance(value, str):
            target = ctx.store.get(expandable[key], value)
            if target is not None:
                container[leaf] = render(target, ctx)
        _expand(container.get(leaf), parts[i:], full, ctx)
        return
    raise invalid(f"This property cannot be expanded ({full}).", param="expand")
