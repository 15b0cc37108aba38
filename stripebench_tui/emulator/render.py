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
    if isinstance(obj, list):  # an array of hashes (a session's ``discounts``): expand inside each entry
        for entry in obj:
            _expand(entry, parts, full, ctx)
        return
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
    if resource is not None and parts[0] in resource.includable:
        # rendered by the resource's renderer (``line_items``); a longer path goes on inside it
        _expand(obj.get(parts[0]), parts[1:], full, ctx)
        return
    for i in range(len(parts), 0, -1):
        key = ".".join(parts[:i])
        if key in expandable:
            if not _exists(obj, parts[:i]):
                # not a field of this API version (an invoice's payment_intent from 2025-03-31 on, its parent before)
                raise invalid(f"This property cannot be expanded ({full}).", param="expand")
            for container, leaf in _slots(obj, parts[:i]):
                value = container.get(leaf)
                if isinstance(value, str):
                    target = ctx.store.get(expandable[key], value)
                    if target is not None:
                        container[leaf] = render(target, ctx)
                _expand(container.get(leaf), parts[i:], full, ctx)
            return
        if i == len(parts) and any(name.startswith(key + ".") for name in expandable) \
                and all(isinstance(container.get(leaf), list) for container, leaf in _slots(obj, parts)):
            return  # an array of hashes holding expandable fields, such as a session's ``discounts``
    raise invalid(f"This property cannot be expanded ({full}).", param="expand")


def _exists(obj: Any, parts: list[str]) -> bool:
    """Whether the rendered object has the field ``parts`` (null along the way counts: the field is there)."""
    if isinstance(obj, list):
        return not obj or any(_exists(entry, parts) for entry in obj)
    if not isinstance(obj, dict):
        return True
    if parts[0] not in obj:
        return False
    return len(parts) == 1 or _exists(obj[parts[0]], parts[1:])


def _slots(obj: Any, parts: list[str]) -> list[tuple[dict[str, Any], str]]:
    """Every (hash, key) that ``parts`` reaches from ``obj``, walking through arrays along the way."""
    if isinstance(obj, list):
        return [slot for entry in obj for slot in _slots(entry, parts)]
    if not isinstance(obj, dict):
        return []
    if len(parts) == 1:
        return [(obj, parts[0])]
    return _slots(obj.get(parts[0]), parts[1:])
