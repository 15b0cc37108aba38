"""Presenter mode: captions in plain words, pacing on an injected clock, masking, the 100×30 layout."""

from __future__ import annotations

from pathlib import Path

import pytest

from stripebench_tui.core.caption import caption, is_notable
from stripebench_tui.core.events import (
    EpisodeEnd,
    Finding,
    GraderVerdict,
    ModelMessage,
    StripeObject,
    StripeRequest,
    ToolCall,
    ToolResult,
)
from stripebench_tui.core.presenting import DWELL, MAX_HOLD, MIN_HOLD, Pacer
from stripebench_tui.tui.apps.replay_app import create_app
from stripebench_tui.tui.screens.presenter import PresenterScreen
from stripebench_tui.tui.sources.episode_source import TraceSource
from tests.tui.conftest import settle
from tests.tui.episode import HEADER, write_trace

SECRET = "sk_test_51AbCdEfGhIjKlMnOpQrStUv"
EMAIL = "alice.cooper@example.com"


def drawn(widget) -> str:
    """The plain text a Static was last given to draw."""
    return str(widget.render())


def demo_events() -> list:
    """Four turns: a long one, a failing Stripe request, a paid session that turns 'paid ×2' green, a finding."""
    ev: list = [GraderVerdict(t=0.0, turn=0, criterion="paid ×2", status="pending")]
    ev += [ModelMessage(t=1.0, turn=1, text=f"Reading the code; the key is {SECRET}, the buyer {EMAIL}."),
           ToolCall(t=1.1, turn=1, call_id="c1", tool="shell", arguments={"command": "cat app.py"}),
           ToolResult(t=1.2, turn=1, call_id="c1", tool="shell", output=f"STRIPE_SECRET_KEY={SECRET}\nowner: {EMAIL}")]
    # Turn 1 took 20 s (capped to MAX_HOLD); turn 2 took 0.5 s (raised to MIN_HOLD).
    ev += [ToolCall(t=21.0, turn=2, call_id="c2", tool="shell", arguments={"command": "python create.py"}),
           StripeRequest(t=21.1, turn=2, method="POST", path="/v1/checkout/sessions", status=400,
                         error_type="invalid_request_error"),
           ToolResult(t=21.2, turn=2, call_id="c2", tool="shell", output="error", exit_code=1)]
    ev += [ToolCall(t=21.5, turn=3, call_id="c3", tool="browser", arguments={"action": "pay"}),
           ToolResult(t=22.0, turn=3, call_id="c3", tool="browser", output="paid"),
           StripeObject(t=22.1, turn=3, object_id="cs_test_a1b2c3d4e5", object_type="checkout.session", change="updated",
                        data={"id": "cs_test_a1b2c3d4e5", "object": "checkout.session", "status": "complete",
                              "payment_status": "paid", "customer_email": EMAIL}),
           GraderVerdict(t=22.2, turn=3, criterion="paid ×2", status="pass")]
    ev += [ModelMessage(t=23.0, turn=4, text="Done."),
           Finding(t=23.1, turn=4, detector="unverified-finish", message="The agent finished without checking the webhook"),
           EpisodeEnd(t=23.2, turn=4, reason="agent_done", score=1.0, passed=True)]
    return ev


def test_captions_say_what_happened_in_plain_words_and_mask_for_an_audience() -> None:
    ev = demo_events()
    by_turn = {n: [e for e in ev if e.turn == n] for n in range(5)}
    paid = caption(by_turn[3], {"paid ×2": "pending"})
    assert paid == "Checkout Session cs_…d4e5 paid — 'paid ×2' now passes"
    assert caption(by_turn[3], {"paid ×2": "pass"}) == "Checkout Session cs_…d4e5 paid"  # no change, no news
    failed = caption(by_turn[2], {})
    assert failed.startswith("Stripe answered 400 (invalid_request_error) to POST /v1/checkout/sessions")
    assert "it failed (exit 1)" in failed
    assert caption(by_turn[1], {}) == "The agent ran shell: cat app.py"
    said = caption(by_turn[1][:1], {})  # the message alone: what the agent says
    assert SECRET not in said and EMAIL not in said and "a•••@example.com" in said and "sk_test_[REDACTED]" in said
    end = caption(by_turn[4], {"paid ×2": "pass"})
    assert end.startswith("Finding: The agent finished without checking the webhook")
    assert end.endswith("The episode ended (agent done): passed, score 1.00")
    assert is_notable(by_turn[3], {"paid ×2": "pending"}) and is_notable(by_turn[4], {})
    assert not is_notable(by_turn[2], {}) and not is_notable(by_turn[3], {"paid ×2": "pass"})


def test_pacer_holds_clamped_recorded_time_dwells_and_scales_with_speed() -> None:
    now = [0.0]
    pacer = Pacer(clock=lambda: now[0])
    assert pacer.shown(20.0, notable=False) == MAX_HOLD and pacer.shown(0.2, notable=False) == MIN_HOLD
    assert pacer.shown(0.2, notable=True) == DWELL
    now[0] = DWELL - 0.01
    assert not pacer.due()
    pacer.toggle()  # paused with 0.01 s left: time passing changes nothing
    now[0] += 100
    assert not pacer.due() and pacer.remaining() == pytest.approx(0.01)
    pacer.toggle()
    pacer.set_speed(2.0)
    assert pacer.remaining() == pytest.approx(0.005)
    now[0] += 0.006
    assert pacer.due()


@pytest.fixture
def demo_trace(tmp_path: Path):
    return write_trace(tmp_path / "demo.jsonl", demo_events(), HEADER)


async def test_presenter_advances_on_the_injected_clock_and_dwells_on_verdict_changes(demo_trace) -> None:
    now = [0.0]
    app = create_app(TraceSource(demo_trace), clock=lambda: now[0], present=True)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, PresenterScreen)
        turn = lambda: screen.turns[screen.position]

        async def at(t: float) -> int:
            now[0] = t
            screen.tick()
            await pilot.pause()
            return turn()

        # Turn 0 (graders start watching) waited 1 s before turn 1: held for MIN_HOLD.
        assert turn() == 0 and await at(MIN_HOLD - 0.01) == 0 and await at(MIN_HOLD) == 1
        start = now[0]  # turn 1 took 20 s live: capped to MAX_HOLD
        assert await at(start + MAX_HOLD - 0.01) == 1 and await at(start + MAX_HOLD) == 2
        start = now[0]  # turn 2: 0.5 s live, raised to MIN_HOLD
        assert await at(start + MIN_HOLD) == 3
        assert "'paid ×2' now passes" in drawn(screen.query_one("#caption"))
        start = now[0]  # the verdict changed: the presenter dwells
        assert await at(start + MAX_HOLD) == 3 and await at(start + DWELL - 0.01) == 3
        await pilot.press("plus")  # speed ×2 halves what is left
        assert screen.pacer.speed == 2.0 and await at(now[0] + 0.01) == 4
        await pilot.press("space")  # pause: the clock no longer moves it
        assert "paused ×2" in drawn(screen.query_one("#p-status"))
        # Esc goes back to the replay at the turn the presenter reached.
        await pilot.press("left", "escape")
        await pilot.pause()
        assert type(app.screen).__name__ == "EpisodeScreen" and app.screen.turn.index == 3


async def test_presenter_masks_secrets_and_emails_everywhere_it_draws(demo_trace) -> None:
    app = create_app(TraceSource(demo_trace), clock=lambda: 0.0, start_turn=1)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("P")  # the key opens presenter mode at the selected turn
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, PresenterScreen) and screen.turns[screen.position] == 1
        shown = "\n".join(drawn(w) for w in screen.query("Static"))
        assert "cat app.py" in shown and "a•••@example.com" in shown
        assert SECRET not in shown and EMAIL not in shown and "alice" not in shown
        screen.position = 3
        screen.show()
        await pilot.pause()
        objects = drawn(screen.query_one("#p-objects"))
        assert "Checkout Session" in objects and "cs_…d4e5" in objects and "paid" in objects


def test_presenter_layout_at_100x30(snap_compare, tmp_path: Path) -> None:
    def app():  # a fixed clock: the countdown and the pacing do not depend on wall time
        return create_app(TraceSource(write_trace(tmp_path / "snap.jsonl", demo_events(), HEADER)),
                          clock=lambda: 0.0, present=True, start_turn=3)

    assert snap_compare(app(), terminal_size=(100, 30), run_before=settle)


def test_an_object_status_holding_a_key_is_masked_before_it_is_spelt_out() -> None:
    # object_state turns "requires_capture" into "requires capture"; a key so spelt ("sk test …") would slip the redactor.
    ev = [StripeObject(t=1.0, turn=1, object_id="cus_1", object_type="customer", change="updated",
                       data={"id": "cus_1", "object": "customer", "status": SECRET})]
    said = caption(ev, {})
    assert SECRET.removeprefix("sk_test_") not in said and "[REDACTED]" in said


async def test_a_caption_with_rich_markup_is_drawn_as_typed(tmp_path: Path) -> None:
    markup = "[bold red]LOUD[/bold red] [link=http://evil.test]click[/link]"
    events = [GraderVerdict(t=0.0, turn=0, criterion="paid", status="pending"),
              GraderVerdict(t=1.0, turn=1, criterion=f"paid {markup}", status="fail")]
    trace = write_trace(tmp_path / "markup.jsonl", events, HEADER)
    app = create_app(TraceSource(trace), clock=lambda: 0.0, present=True, start_turn=1)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, PresenterScreen)
        screen.position = 1
        screen.show()  # raised MarkupError before captions were drawn as Text
        await pilot.pause()
        assert markup in drawn(screen.query_one("#caption"))


async def test_at_end_is_called_once_after_the_last_hold_and_nothing_is_redrawn(demo_trace) -> None:
    now = [0.0]
    ended: list[int] = []
    screen = PresenterScreen(TraceSource(demo_trace), [3, 4], clock=lambda: now[0], at_end=lambda: ended.append(1))
    app = create_app(TraceSource(demo_trace), clock=lambda: now[0])
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await app.push_screen(screen)
        await pilot.pause()
        now[0] = DWELL  # turn 3 (a verdict changed) is held DWELL, then turn 4
        screen.tick()
        assert screen.turns[screen.position] == 4 and not ended
        status = drawn(screen.query_one("#p-status"))
        now[0] += DWELL
        screen.tick()
        screen.tick()
        await pilot.pause()
        assert ended == [1] and screen.played_out and screen.pacer.playing
        assert drawn(screen.query_one("#p-status")) != "" and "paused" not in drawn(screen.query_one("#p-status"))
        assert status.startswith("▶ playing")
