"""Finding things on a Playwright page the way an agent names them, across iframes.

An agent says "the Pay button" or "the Card number field", not a CSS path, and
Stripe's embedded Checkout lives in an iframe; so every lookup tries the
accessible role/name, the label, the placeholder and the visible text, in the
main frame first and then in each iframe, and a CSS selector when it looks like one.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import cast

from playwright.async_api import Frame, Locator, Page

LocatorFactory = Callable[[Frame], Locator]

_CSS_HINT = re.compile(r"^[#.\[]|^[a-z][a-z0-9-]*([#.\[:]|\s*>)|^\w+=")
_SELECTOR_PREFIXES = ("css=", "xpath=", "text=", "role=", "id=", "data-testid=", "internal:")
CLICKABLE_ROLES = ("button", "link", "checkbox", "radio", "tab", "menuitem", "option", "switch")
FIELD_ROLES = ("textbox", "combobox", "spinbutton", "searchbox")


class NotFound(Exception):
    """No element matched; the message says what was tried."""


def looks_like_selector(target: str) -> bool:
    """Whether ``target`` reads as a CSS/Playwright selector rather than a name or text."""
    return target.startswith(_SELECTOR_PREFIXES) or bool(_CSS_HINT.match(target.strip()))


def click_strategies(target: str, role: str | None) -> list[tuple[str, LocatorFactory]]:
    """Ways to find something to click, best first."""
    if role:
        return [
            (f"{role} named {target!r}", lambda f: f.get_by_role(role, name=target, exact=True)),
            (f"{role} named like {target!r}", lambda f: f.get_by_role(role, name=target)),
        ]
    ways: list[tuple[str, LocatorFactory]] = []
    if looks_like_selector(target):
        ways.append((f"selector {target!r}", lambda f: f.locator(target)))
    for r in CLICKABLE_ROLES:
        ways.append((f"{r} named {target!r}", cast(LocatorFactory, lambda f, r=r: f.get_by_role(r, name=target, exact=True))))
    ways.append((f"field labelled {target!r}", lambda f: f.get_by_label(target, exact=True)))
    ways.append((f"text {target!r}", lambda f: f.get_by_text(target, exact=True)))
    for r in CLICKABLE_ROLES[:2]:
        ways.append((f"{r} named like {target!r}", cast(LocatorFactory, lambda f, r=r: f.get_by_role(r, name=target))))
    ways.append((f"text like {target!r}", lambda f: f.get_by_text(target)))
    return ways


def field_strategies(field: str) -> list[tuple[str, LocatorFactory]]:
    """Ways to find a form field, best first."""
    ways: list[tuple[str, LocatorFactory]] = []
    if looks_like_selector(field):
        ways.append((f"selector {field!r}", lambda f: f.locator(field)))
    ways += [
        (f"field labelled {field!r}", lambda f: f.get_by_label(field, exact=True)),
        (f"field with placeholder {field!r}", lambda f: f.get_by_placeholder(field, exact=True)),
    ]
    for r in FIELD_ROLES:
        ways.append((f"{r} named {field!r}", cast(LocatorFactory, lambda f, r=r: f.get_by_role(r, name=field, exact=True))))
    ways += [
        (f"field labelled like {field!r}", lambda f: f.get_by_label(field)),
        (f"field with placeholder like {field!r}", lambda f: f.get_by_placeholder(field)),
    ]
    return ways


def frames_to_search(page: Page, frame: str | None) -> list[Frame]:
    """The main frame then its iframes, or only the frames whose name or URL contains ``frame``."""
    frames = [page.main_frame] + [f for f in page.frames if f is not page.main_frame and not f.is_detached()]
    if frame is None:
        return frames
    chosen = [f for f in frames[1:] if frame == f.name or frame in f.url]
    if not chosen:
        known = ", ".join(f"{f.name or '(unnamed)'} {f.url}" for f in frames[1:]) or "none"
        raise NotFound(f"no iframe named or at {frame!r} (iframes: {known})")
    return chosen


def frame_label(page: Page, frame: Frame) -> str:
    """How to name a frame in a result: '' for the main frame."""
    if frame is page.main_frame:
        return ""
    return f" in iframe {frame.name or frame.url}"


async def locate(
    page: Page, strategies: list[tuple[str, LocatorFactory]], frame: str | None, what: str
) -> tuple[Locator, str]:
    """The first visible match of the first strategy that matches, with a description of it."""
    frames = frames_to_search(page, frame)
    hidden: tuple[Locator, str] | None = None
    for description, factory in strategies:
        for f in frames:
            try:
                matches = factory(f)
                count = await matches.count()
            except Exception:  # noqa: BLE001 - a malformed selector or a frame navigating away: try the next way
                continue
            for index in range(min(count, 10)):
                candidate = matches.nth(index)
                if await candidate.is_visible():
                    return candidate, description + frame_label(page, f)
                if hidden is None:
                    hidden = (candidate, description + frame_label(page, f) + " (not visible)")
    if hidden is not None:
        return hidden
    raise NotFound(f"no {what}")


async def locate_field(page: Page, field: str, frame: str | None, what: str = "field") -> tuple[Locator, str]:
    """A form field by label, placeholder, accessible name or selector."""
    return await locate(page, field_strategies(field), frame, f"{what} with label {field!r}")


async def page_text(page: Page, max_chars: int) -> str:
    """Visible text of the page and its iframes, each iframe under a heading."""
    parts = []
    for f in frames_to_search(page, None):
        try:
            text = await f.locator("body").inner_text(timeout=2000)
        except Exception:  # noqa: BLE001 - a frame navigating away or detached: search the others
            continue
        text = "\n".join(line.strip() for line in text.splitlines() if line.strip())
        if f is not page.main_frame:
            if not text:
                continue
            text = f"--- iframe {f.name or f.url} ---\n{text}"
        parts.append(text)
    joined = "\n".join(parts)
    if len(joined) > max_chars:
        joined = joined[:max_chars] + f"\n[… {len(joined) - max_chars} characters cut]"
    return joined


async def page_excerpt(page: Page, lines: int = 12) -> str:
    """The first lines of what the page shows, for error messages."""
    try:
        text = await page_text(page, 1200)
    except Exception:  # noqa: BLE001 - this is for an error message already on its way
        return "(the page could not be read)"
    shown = text.splitlines()[:lines]
    more = " …" if len(text.splitlines()) > lines else ""
    return (" | ".join(shown) + more) if shown else "(no visible text)"


FOCUS_SCRIPT = """() => {
  const e = document.activeElement;
  if (!e || e === document.body || e === document.documentElement || e.tagName === 'IFRAME') return null;
  return {tag: e.tagName.toLowerCase(), id: e.id || '', name: e.getAttribute('name') || '',
          type: e.getAttribute('type') || ''};
}"""


async def focused_element(page: Page) -> dict | None:
    """Role, accessible name and tag of the element with keyboard focus, looking inside iframes."""
    frames = frames_to_search(page, None)
    for f in reversed(frames):  # innermost first: a focused iframe hands focus to its content
        try:
            info = await f.evaluate(FOCUS_SCRIPT)
        except Exception:  # noqa: BLE001 - a frame navigating away or detached: ask the next one
            continue
        if not info:
            continue
        try:
            snapshot = await f.locator(":focus").first.aria_snapshot(timeout=2000)
        except Exception:  # noqa: BLE001 - nothing focused there, or the frame went away: no snapshot
            snapshot = ""
        first = snapshot.strip().splitlines()[0].lstrip("- ") if snapshot.strip() else ""
        match = re.match(r'([\w-]+)(?: "(.*?)")?', first)
        info["role"] = match.group(1) if match else ""
        info["accessible_name"] = (match.group(2) or "") if match else ""
        info["frame"] = frame_label(page, f).removeprefix(" in iframe ")
        return info
    return None
