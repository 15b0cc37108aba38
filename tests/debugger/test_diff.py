"""Episode diff: alignment on hand-made turns, a run against itself, the oracle against the 400 mutant, the CLI."""

from __future__ import annotations

from pathlib import Path

from stripebench_tui.core.episode_diff import CHANGED, ONLY_A, SAME, diff_states, flatten
from stripebench_tui.core.events import GraderVerdict, Header, StripeObject, ToolCall, ToolResult
from stripebench_tui.core.state import reduce
from stripebench_tui.formats.open import open_episode

REPLAYS = Path(__file__).resolve().parents[2] / "replays"
ORACLE, MUTANT = REPLAYS / "checkout-migration-oracle", REPLAYS / "checkout-migration-400"


def _episode(calls, workspace="/tmp/run-a", failed=(), verdict="pass", amount=1000, cs_id="cs_test_a1b2c3d4e5f6"):
    """A hand-made episode: one tool call per turn, a verdict and a Checkout Session at the end."""
    evs = []
    for turn, (tool, arg) in enumerate(calls, 1):
        cid = f"c{turn}"
        evs.append(ToolCall(turn=turn, call_id=cid, tool=tool, arguments={"path": f"{workspace}/{arg}"}))
        evs.append(ToolResult(turn=turn, call_id=cid, tool=tool, is_error=turn in failed))
    last = len(calls)
    evs.append(GraderVerdict(turn=last, criterion="paid", status=verdict))
    evs.append(StripeObject(turn=last, object_id=cs_id, object_type="checkout.session",
                            data={"id": cs_id, "created": 17000 + last, "amount_total": amount, "customer": "cus_9XyZ12345678"}))
    for i, ev in enumerate(evs):
        ev.seq, ev.t = i, float(i)
    header = Header(extra={"variables": {"WORKSPACE": workspace}})
    return reduce([header, *evs])


BASE = [("view_file", "a"), ("shell", "b"), ("create_file", "c"), ("shell", "d")]


def test_an_inserted_turn_shifts_nothing_after_it():
    a = _episode(BASE)
    b = _episode(BASE[:2] + [("view_file", "x")] + BASE[2:], workspace="/tmp/run-b", cs_id="cs_test_zz99yy88xx77")
    d = diff_states(a, b)
    assert [p.kind for p in d.pairs] == [SAME, SAME, "only_b", SAME, SAME]  # paths differ only by workspace
    assert d.first_divergence == 2 and d.pairs[2].b.turn == 3
    assert not d.objects  # ids, timestamps and the (id-shaped) customer reference are left out


def test_same_calls_with_another_outcome_or_object_field_differ():
    d = diff_states(_episode(BASE), _episode(BASE, failed={3}, verdict="fail", amount=900))
    assert [p.kind for p in d.pairs] == [SAME, SAME, CHANGED, SAME]
    assert [(v.a_final, v.b_final) for v in d.verdicts if not v.same] == [("pass", "fail")]
    assert (d.verdicts[0].timeline("a"), d.verdicts[0].timeline("b")) == ("4: pass", "4: fail")
    assert [(f.path, f.a, f.b) for o in d.objects for f in o.fields] == [("amount_total", 1000, 900)]
    assert not d.equivalent


def test_flatten_leaves_out_ids_and_times():
    assert flatten({"id": "x", "created": 1, "expires_at": 2,
                    "a": {"b": [1, "pi_abc123def456"]}}) == {"a.b[0]": 1, "a.b[1]": "<id>"}


def test_a_recorded_run_against_itself_is_empty():
    state = open_episode(ORACLE).state_at(None)
    d = diff_states(state, open_episode(ORACLE).state_at(None))
    assert d.equivalent and d.first_divergence is None and all(p.kind == SAME for p in d.pairs)


def test_oracle_against_the_400_mutant_shows_the_first_divergent_turn():
    d = diff_states(open_episode(ORACLE).state_at(None), open_episode(MUTANT).state_at(None))
    first = d.pairs[d.first_divergence]
    # The mutant skips the oracle's SDK-version check (turn 4) and goes on to edit app.py differently.
    assert (first.kind, first.a.turn, first.a.tools, first.b) == (ONLY_A, 4, ("shell",), None)
    assert all(p.kind == SAME for p in d.pairs[: d.first_divergence])
    assert {o.object_type for o in d.objects} >= {"checkout.session", "payment_intent"}  # only the oracle paid
    assert d.score[0] == 1.0 and d.score[1] < 1.0


def test_cli_exit_codes_and_text(capsys, tmp_path):
    from tests.debugger.test_cli_break import cli

    code, out, _ = cli(capsys, "diff", ORACLE, ORACLE)
    assert code == 0 and "Equivalent." in out
    code, out, _ = cli(capsys, "diff", ORACLE, MUTANT)
    assert code == 1 and "First divergence: A turn 4 / B —" in out
    assert "▶<   4 shell" in out and "Not equivalent." in out
    code, _, err = cli(capsys, "diff", ORACLE, REPLAYS / "no-such-episode")
    assert code == 3 and err.count("\n") == 1 and "Traceback" not in err  # README: 3, a file that cannot be read
    (tmp_path / "garbage.jsonl").write_text("not a trace\n", encoding="utf-8")
    code, _, err = cli(capsys, "diff", tmp_path / "garbage.jsonl", ORACLE)
    assert code == 3 and err.count("\n") == 1 and "not a stripebench trace" in err
    code, _, err = cli(capsys, "diff", ORACLE)  # bad usage stays 2
    assert code == 2


async def test_the_diff_screen_opens_on_the_first_divergence_and_moves_between_differences():
    from textual.widgets import DataTable

    from stripebench_tui.tui.apps.diff_app import create_diff_app

    d = diff_states(open_episode(ORACLE).state_at(None), open_episode(MUTANT).state_at(None))
    app = create_diff_app(d, ("oracle", "400"))
    async with app.run_test(size=(150, 45)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert screen.selected == d.first_divergence == 3
        assert "A · turn 4" in str(screen.query_one("#side-a").render())
        assert "no such turn" in str(screen.query_one("#side-b").render())
        assert "first divergence: A turn 4 / B —" in str(screen.query_one("#diff-summary").render())
        await pilot.press("n")
        assert screen.selected == 5 and d.pairs[5].b.tools == ("replace_in_file",)
        await pilot.press("p", "p")
        assert screen.selected == 3  # nothing differs before the first divergence
        assert screen.query_one(DataTable).row_count == len(d.pairs)
