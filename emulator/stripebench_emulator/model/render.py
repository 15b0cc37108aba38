"""Turn stored objects into API responses: per-version renderers, internal-field stripping and ``expand[]``."""

from __future__ import annotations

from typing import Any, Protocol, cast

from stripebench_emulator.model.errors import invalid
from stripebench_emulator.model.registry import RESOURCES, Resource
from stripebench_emulator.model.store import Store, clone
from stripebench_emulator.model.versions import at_least

MAX_EXPAND_DEPTH = 4


class RenderContext(Protocol):
    """What rendering reads of a request's context (``context.RequestContext`` is the one there is); renderers
    registered by the API modules receive it as it is and may read more of it."""

    api_version: str
    expand_paths: list[str]
    store: Store


# Which keys of an object are internal, by the object's key set: objects of one kind share a few key sets, so
# finding them costs a frozenset and a lookup instead of a startswith per key (a tenth of a request's CPU).
_INTERNAL_KEYS: dict[frozenset[str], tuple[str, ...]] = {}
_INTERNAL_CACHE_MAX = 4096
# The last key set seen per object kind: comparing a dict's keys with it needs no new frozenset (nor its hash).
_LAST_KEYS: dict[Any, tuple[frozenset[str], tuple[str, ...]]] = {}


def _public(obj: dict[str, Any], private: bool) -> dict[str, Any]:
    """``obj`` without its ``_`` fields: in place when ``private``, else a shallow copy, or ``obj`` itself when it
    has none (then shared like a stored object: read it, never change it)."""
    last = _LAST_KEYS.get(obj.get("object"))
    internal: tuple[str, ...] | None
    if last is not None and obj.keys() == last[0]:  # the usual case: the key set this kind had last time
        internal = last[1]
    else:
        keys = frozenset(obj)
        internal = _INTERNAL_KEYS.get(keys)
        if internal is None:
            internal = tuple(k for k in keys if k.startswith("_"))
            if len(_INTERNAL_KEYS) < _INTERNAL_CACHE_MAX:
                _INTERNAL_KEYS[keys] = internal
        if len(_LAST_KEYS) < _INTERNAL_CACHE_MAX:
            _LAST_KEYS[obj.get("object")] = (keys, internal)
    if not internal:
        return obj
    out = obj if private else dict(obj)
    for key in internal:
        del out[key]
    return out


# Public views of stored objects whose kind has no renderer (the same at every API version): stored objects never
# change in place, so a list page of them is rendered once per object version rather than on every request.
_PUBLIC_VIEWS: dict[int, tuple[dict[str, Any], dict[str, Any]]] = {}
_PUBLIC_VIEWS_MAX = 4096


def _public_of_shared(value: dict[str, Any], kind: str, ctx: RenderContext) -> dict[str, Any]:
    hit = _PUBLIC_VIEWS.get(id(value))
    if hit is not None and hit[0] is value:  # the entry holds ``value``, so its id cannot have been reused
        return hit[1]
    view = _public(value, False)
    if ctx.store.peek(kind, value.get("id", "")) is value:  # only the stored object itself is known not to change
        if len(_PUBLIC_VIEWS) >= _PUBLIC_VIEWS_MAX:
            _PUBLIC_VIEWS.clear()
        _PUBLIC_VIEWS[id(value)] = (value, view)
    return view


def render(value: object, ctx: RenderContext, private: bool = False) -> Any:
    """Render an internal object (or list page) for ``ctx.api_version``; fields starting with ``_`` never leave.

    ``private``: ``value`` is a copy nobody else holds, so renderers may change it in place. Otherwise an object
    with a renderer that may change nested values, or any object while ``expand[]`` is asked for (expansion
    writes into nested hashes), is deep-copied first; the rest are copied shallowly, sharing nested values with
    ``value`` (which callers only serialise or store, never change).
    """
    if not isinstance(value, dict):
        return value
    kind = value.get("object")
    if kind in ("list", "search_result"):
        out = dict(value)
        # never in place: a list page holds the stored objects themselves (see ``RequestContext.list_page``)
        out["data"] = _render_items(value.get("data", []), ctx)
        return out
    resource = RESOURCES.get(kind or "")
    if resource is None or value.get("deleted"):
        return _public(value, private)
    if _needs_no_renderer(resource, ctx) and not _marked(resource, value):
        return _public(value, True) if private else _public_of_shared(value, cast(str, kind), ctx)
    render_fn = resource.render_fn
    if private:
        obj = value
    elif resource.shallow_render and not ctx.expand_paths:
        obj = dict(value)  # the renderer changes only top-level keys (see ``Resource.shallow_render``)
    else:
        obj = clone(value)
    if render_fn is not None:
        obj = render_fn(obj, ctx)
    return _public(obj, True)


def _needs_no_renderer(resource: Resource, ctx: RenderContext) -> bool:
    """True when this kind's objects render as they are stored for ``ctx``: the kind has no renderer, or one that
    changes nothing at this version (see ``Resource.render_before``), and no ``expand[]`` is asked for. An object
    marked with ``Resource.render_if`` still goes through the renderer (``_marked``)."""
    return not ctx.expand_paths and (resource.render_fn is None or (
        resource.render_before is not None and at_least(ctx.api_version, resource.render_before)))


def _marked(resource: Resource, value: dict[str, Any]) -> bool:
    """True when ``value`` carries the key that makes its kind's renderer run at every version."""
    return resource.render_fn is not None and bool(resource.render_if) and bool(value.get(cast(str, resource.render_if)))


def _render_items(items: list[Any], ctx: RenderContext) -> list[Any]:
    """``[render(item, ctx) for item in items]``, deciding once per kind (not once per item) that a kind's objects
    need no renderer at this version (the usual list page: one kind, shared public views)."""
    plain: dict[Any, Resource] = {}  # kinds whose objects render as ``_public_of_shared`` here
    out = []
    for item in items:
        kind = item.get("object") if type(item) is dict else None
        resource = plain.get(kind)
        if resource is not None:
            hit = _PUBLIC_VIEWS.get(id(item))
            if hit is not None and hit[0] is item:  # rendered as a shared view before: neither deleted nor marked
                out.append(hit[1])
                continue
        else:
            resource = RESOURCES.get(kind) if isinstance(kind, str) else None
            if resource is None or not _needs_no_renderer(resource, ctx):
                out.append(render(item, ctx))
                continue
            plain[kind] = resource
        if item.get("deleted") or _marked(resource, item):
            out.append(render(item, ctx))
        else:
            out.append(_public_of_shared(item, cast(str, kind), ctx))
    return out


def expand(rendered: object, paths: list[str], ctx: RenderContext) -> Any:
    """Apply each ``expand[]`` path (``customer``, ``data.customer``, ``a.b.c``) in place; bad paths raise 400."""
    for path in paths:
        parts = path.split(".")
        if not all(parts):
            raise invalid(f"This property cannot be expanded ({path}).", param="expand")
        if len(parts) > MAX_EXPAND_DEPTH and _levels(rendered, parts) > MAX_EXPAND_DEPTH:
            raise invalid(f"You cannot expand more than {MAX_EXPAND_DEPTH} levels of a property.", param="expand")
        _expand(rendered, parts, path, ctx)
    return rendered


def _levels(rendered: object, parts: list[str]) -> int:
    """How many levels ``parts`` goes down: a list's ``data``, an object, an id to expand each count; a plain hash
    on the way (an invoice line's ``pricing.price_details``) is no level of its own, so Stripe takes
    ``lines.data.pricing.price_details.price`` (and refuses ``data.invoice.lines.data.pricing.price_details.price``)."""
    count, node = 0, rendered
    for part in parts:
        if isinstance(node, dict) and node.get("object") in ("list", "search_result"):
            data = node.get("data") if part == "data" else None
            node = data[0] if isinstance(data, list) and data else None
            count += 1
            continue
        value = node.get(part) if isinstance(node, dict) else None
        if isinstance(value, dict) and "object" not in value:
            node = value  # a hash inside the object
            continue
        count += 1
        node = value if isinstance(value, dict) else None
    return count


def _expand(obj: object, parts: list[str], full: str, ctx: RenderContext) -> None:
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
    if resource is not None and parts[0] in resource.includable and not any(
            ".".join(parts[:i]) in expandable for i in range(2, len(parts) + 1)):
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
                    target = ctx.store.get(expandable[key], value)  # a copy: rendered in place
                    if target is not None:
                        container[leaf] = render(target, ctx, private=True)
                elif isinstance(value, list) and any(isinstance(v, str) for v in value):  # ids (``discounts``)
                    container[leaf] = [_expanded(ctx, expandable[key], v) for v in value]
                _expand(container.get(leaf), parts[i:], full, ctx)
            return
        if i == len(parts) and any(name.startswith(key + ".") for name in expandable) \
                and all(isinstance(container.get(leaf), list) for container, leaf in _slots(obj, parts)):
            return  # an array of hashes holding expandable fields, such as a session's ``discounts``
    nested = obj.get(parts[0])
    if len(parts) > 1 and isinstance(nested, (dict, list)):
        # through an object embedded whole (a subscription's items and their prices): its own fields expand
        _expand(nested, parts[1:], full, ctx)
        return
    raise invalid(f"This property cannot be expanded ({full}).", param="expand")


def _expanded(ctx: RenderContext, kind: str, value: object) -> Any:
    """The object ``value`` names, rendered (a copy), or ``value`` itself when it is no id of a stored one."""
    target = ctx.store.get(kind, value) if isinstance(value, str) else None
    return render(target, ctx, private=True) if target is not None else value


def _exists(obj: object, parts: list[str]) -> bool:
    """Whether the rendered object has the field ``parts`` (null along the way counts: the field is there)."""
    if isinstance(obj, list):
        return not obj or any(_exists(entry, parts) for entry in obj)
    if not isinstance(obj, dict):
        return True
    if parts[0] not in obj:
        return False
    return len(parts) == 1 or _exists(obj[parts[0]], parts[1:])


def _slots(obj: object, parts: list[str]) -> list[tuple[dict[str, Any], str]]:
    """Every (hash, key) that ``parts`` reaches from ``obj``, walking through arrays along the way."""
    if isinstance(obj, list):
        return [slot for entry in obj for slot in _slots(entry, parts)]
    if not isinstance(obj, dict):
        return []
    if len(parts) == 1:
        return [(obj, parts[0])]
    return _slots(obj.get(parts[0]), parts[1:])
