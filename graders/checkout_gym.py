"""Grader for checkout-gym: how many of each hidden Checkout Session's settings the agent reproduced.

Each challenge's target is the session the seed created (metadata ``gym_target``, the first
one); the agent's answer is its latest attempt recorded in the app's ``gym.db`` (a session the
app created, metadata ``gym_challenge``). Both are read back through the Stripe API and put in
the same shape per field group (mode, line items, promotion codes, …), plus the trial days the
Checkout page shows. Every challenge is worth the same; its weight is split evenly over the
groups its page shows and one "nothing extra" criterion (no setting the page does not show),
so a challenge scores the fraction of those it got right.
"""

from __future__ import annotations

import importlib.util
import threading
from pathlib import Path
from typing import Any, Callable

import httpx

from stripebench_tui.grading import Criterion, Grader, failed, passed



def _load_seed() -> Any:
    from stripebench_tui.envs.manifest import environments_dir

    path = environments_dir() / "checkout-gym" / "seed.py"
    if not path.is_file():
        path = Path(__file__).resolve().parents[1] / "environments" / "checkout-gym" / "seed.py"
    spec = importlib.util.spec_from_file_location("checkout_gym_seed", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SEED = _load_seed()


def _texts(blocks: dict[str, Any] | None) -> dict[str, str]:
    return {name: block["message"] for name, block in (blocks or {}).items() if block}


def _custom_fields(fields: list[dict[str, Any]] | None) -> list[tuple]:
    out = []
    for f in fields or []:
        options = tuple((o["label"], o["value"]) for o in ((f.get("dropdown") or {}).get("options") or []))
        out.append(((f.get("label") or {}).get("custom"), f.get("type"), bool(f.get("optional")), options))
    return out


# group -> (the create parameter that sets it, its value on a session, items and page state)
GROUPS: dict[str, tuple[str, Callable[[dict, list, dict], Any]]] = {
    "mode": ("mode", lambda s, items, page: s.get("mode")),
    "line items": ("line_items", lambda s, items, page: sorted((i["price"]["id"], i["quantity"]) for i in items)),
    "adjustable quantity": ("line_items.adjustable_quantity", lambda s, items, page: sorted(
        i["price"]["id"] for i in items if (i.get("adjustable_quantity") or {}).get("enabled"))),
    "promotion codes": ("allow_promotion_codes", lambda s, items, page: bool(s.get("allow_promotion_codes"))),
    "discount": ("discounts", lambda s, items, page: sorted(
        d.get("promotion_code") or f"coupon {d.get('coupon')}" for d in s.get("discounts") or [])),
    "shipping countries": ("shipping_address_collection", lambda s, items, page: sorted(
        (s.get("shipping_address_collection") or {}).get("allowed_countries") or [])),
    "billing address": ("billing_address_collection", lambda s, items, page:
                        s.get("billing_address_collection") or "auto"),
    "phone number": ("phone_number_collection", lambda s, items, page:
                     bool((s.get("phone_number_collection") or {}).get("enabled"))),
    "submit button": ("submit_type", lambda s, items, page: s.get("submit_type") or "auto"),
    "custom fields": ("custom_fields", lambda s, items, page: _custom_fields(s.get("custom_fields"))),
    "custom text": ("custom_text", lambda s, items, page: _texts(s.get("custom_text"))),
    "consent": ("consent_collection", lambda s, items, page: {
        k: v for k, v in (s.get("consent_collection") or {}).items() if v}),
    "tax ids": ("tax_id_collection", lambda s, items, page: bool((s.get("tax_id_collection") or {}).get("enabled"))),
    "trial": ("subscription_data", lambda s, items, page: page.get("trial_days")),
    "customer email": ("customer_email", lambda s, items, page: s.get("customer_email")),
    # The page can only show a language: "en" and "auto" (a browser in English) look the same.
    "locale": ("locale", lambda s, items, page: "auto" if s.get("locale") in (None, "auto", "en") else s["locale"]),
    "currency": ("currency", lambda s, items, page: s.get("currency")),
}
ALWAYS = ("mode", "line items")
# Not something a wrong answer adds on its own: every priced session has a currency.
NOT_EXTRA = {"currency"}


def groups_of(params: dict[str, Any]) -> list[str]:
    """The field groups a challenge's create parameters set (mode and line items always)."""
    given = set(params)
    if any("adjustable_quantity" in line for line in params.get("line_items") or []):
        given.add("line_items.adjustable_quantity")
    return [g for g, (param, _read) in GROUPS.items() if g in ALWAYS or param in given]


def _page_client(ctx: Any) -> httpx.Client:
    """One HTTP client per context (making one costs a TLS context, far more than the request)."""
    memo = vars(ctx).setdefault("_checkout_gym_pages", {})
    if "client" not in memo:
        memo["client"] = httpx.Client(timeout=ctx.http_timeout)
    return memo["client"]


def shape(ctx: Any, session_id: str) -> dict[str, Any]:
    """A session's value in every field group."""
    data = ctx.stripe.v1.checkout.sessions.retrieve(session_id).to_dict(recursive=True)
    items = [i.to_dict(recursive=True) for i in
             ctx.stripe.v1.checkout.sessions.line_items.list(session_id, params={"limit": 100}).data]
    page: dict[str, Any] = {}
    if ctx.stripe_api_base:  # what the Checkout page itself shows (the trial is on no API field of the session)
        answer = _page_client(ctx).get(f"{ctx.stripe_api_base}/_checkout/{session_id}/state")
        if answer.status_code == 200:
            page = answer.json().get("state") or {}
    return {group: read(data, items, page) for group, (_param, read) in GROUPS.items()}


def everything(ctx: Any) -> dict[str, Any]:
    """Targets, latest attempts and the shapes of their sessions.

    Attempts are read from the database on every call (a session's event can arrive before the app has recorded
    it); a session's settings never change after creation, so shapes, and the targets once all are found, are
    kept for the context's life.
    """
    memo = vars(ctx).setdefault("_checkout_gym_memo", {"lock": threading.Lock(), "targets": None, "shapes": {}})
    with memo["lock"]:
        targets = memo["targets"]
        if targets is None:
            targets = {n: s.id for n, s in SEED.targets(ctx.stripe).items()}
            if len(targets) == len(SEED.CHALLENGES):
                memo["targets"] = targets
        attempts: dict[int, str] = {}
        try:
            rows = ctx.db("gym.db").execute("SELECT challenge, session_id FROM attempts ORDER BY id").fetchall()
        except Exception:  # noqa: BLE001 - no database or no attempts table: no answers
            rows = []
        for row in rows:
            attempts[int(row["challenge"])] = row["session_id"]
        shapes = dict(memo["shapes"])
        for session_id in set(targets.values()) | set(attempts.values()):
            if session_id in shapes:
                continue
            try:
                shapes[session_id] = memo["shapes"][session_id] = shape(ctx, session_id)
            except Exception as exc:  # noqa: BLE001 - a recorded id that is no session is a wrong answer (not kept)
                shapes[session_id] = exc
        return {"targets": targets, "attempts": attempts, "shapes": shapes}


def _answer(ctx: Any, number: int) -> tuple[dict | None, dict | None, str]:
    """(target shape, attempt shape, why not) for challenge ``number``."""
    seen = everything(ctx)
    target_id, attempt_id = seen["targets"].get(number), seen["attempts"].get(number)
    if target_id is None:
        return None, None, f"challenge {number}'s page session is missing"
    if attempt_id is None:
        return None, None, f"no successful attempt at challenge {number}"
    if attempt_id == target_id:
        return None, None, f"the attempt at challenge {number} is the challenge's own session, not a new one"
    attempt = seen["shapes"].get(attempt_id)
    if not isinstance(attempt, dict):
        return None, None, f"attempt {attempt_id} cannot be read: {attempt}"
    return seen["shapes"][target_id], attempt, ""


def field_check(number: int, group: str) -> Callable[[Any, Any], Any]:
    def check(ctx: Any, view: Any) -> Any:
        target, attempt, problem = _answer(ctx, number)
        if problem:
            return failed(problem, challenge=number)
        expected, actual = target[group], attempt[group]
        if actual == expected:
            return passed(f"{group} matches: {actual!r}", challenge=number, actual=actual)
        return failed(f"{group} is {actual!r}, the page shows {expected!r}", challenge=number,
                      expected=expected, actual=actual)

    return check


def extras_check(number: int, relevant: list[str]) -> Callable[[Any, Any], Any]:
    def check(ctx: Any, view: Any) -> Any:
        target, attempt, problem = _answer(ctx, number)
        if problem:
            return failed(problem, challenge=number)
        extra = sorted(g for g in GROUPS if g not in relevant and g not in NOT_EXTRA and attempt[g] != target[g])
        if extra:
            return failed("settings the page does not show: " + ", ".join(f"{g} {attempt[g]!r}" for g in extra),
                          challenge=number, extra=extra)
        return passed("no setting beyond what the page shows", challenge=number)

    return check


def build() -> Grader:
    criteria = []
    for number, challenge in enumerate(SEED.CHALLENGES, 1):
        relevant = groups_of(challenge["params"])
        weight = 1.0 / (len(relevant) + 1)
        for group in relevant:
            criteria.append(Criterion(f"c{number:02d} {group}", weight,
                                      f"challenge {number} ({challenge['title']}): the attempt's {group} is the "
                                      "page's", field_check(number, group), on=("checkout.session",)))
        criteria.append(Criterion(f"c{number:02d} nothing extra", weight,
                                  f"challenge {number}: no setting the page does not show",
                                  extras_check(number, relevant), on=("checkout.session",)))
    return Grader(tuple(criteria), description="Reproduce each challenge's Checkout Session from its page; every "
                  "challenge counts the same, scored by the fraction of its settings matched.")


GRADER = build()
