"""The context's helpers: Stripe client, the app over HTTP, its database read-only, a browser; timeouts."""

from __future__ import annotations

import asyncio
import sqlite3
import time

import pytest

from stripebench_tui.grading import ERROR, PASS, Criterion, Evaluator, Grader, GradingUnavailable, passed


async def test_a_slow_check_times_out_as_an_error(ctx):
    def slow(ctx, view):
        time.sleep(0.5)
        return passed()

    report = await Evaluator(Grader((Criterion("slow", 1, "Slow.", slow, timeout=0.05),)), ctx).final()
    assert report["slow"].status == ERROR and report["slow"].evidence()["error"] == "timed out after 0.05s"


async def test_the_database_is_read_only_and_closed_after_the_evaluation(ctx):
    with sqlite3.connect(ctx.workspace / "app.db") as db:
        db.execute("create table orders (id integer)")
        db.execute("insert into orders values (1), (2)")
    opened = []

    def count(ctx, view):
        conn = ctx.db("app.db")
        opened.append(conn)
        n = conn.execute("select count(*) from orders").fetchone()[0]
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            conn.execute("insert into orders values (3)")
        return passed(orders=n)

    def missing(ctx, view):
        ctx.db("nope.db")

    grader = Grader((Criterion("count", 1, "Count.", count), Criterion("missing", 1, "Missing.", missing)))
    report = await Evaluator(grader, ctx).final()
    assert report["count"].status == PASS and report["count"].evidence()["orders"] == 2
    with pytest.raises(sqlite3.ProgrammingError):  # closed once the evaluation ended
        opened[0].execute("select 1")
    assert report["missing"].status == ERROR and "GradingUnavailable: no database at" in report["missing"].evidence()["error"]


def test_http_needs_a_known_app_url(ctx, emulator):
    with pytest.raises(GradingUnavailable, match="no app URL 'APP_URL'.*known: none"):
        ctx.http()
    ctx.app_urls["APP_URL"] = emulator.url
    assert ctx.http().get("/v1/customers").status_code == 401  # reached the server; no key sent
    assert ctx.http() is ctx.http()  # one client per name


def test_submission_is_stripped_text_or_none(ctx):
    assert ctx.submission() is None
    ctx.submission_path.write_text("  \n")
    assert ctx.submission() is None
    ctx.submission_path.write_text(" cs_test_1 \n")
    assert ctx.submission() == "cs_test_1"


def test_the_stripe_client_talks_to_the_given_backend(ctx, emulator, stripe_client):
    ctx.stripe_api_base = emulator.url
    created = stripe_client.v1.customers.create(params={"email": "a@example.com"})
    assert ctx.stripe.v1.customers.retrieve(created.id).email == "a@example.com"


@pytest.mark.browser
@pytest.mark.slow
async def test_a_browser_check_gets_a_page_that_is_closed_afterwards(ctx):
    pages = []

    async def title(ctx, view):
        page = await ctx.browser()
        pages.append(page)
        await page.set_content("<title>Harbor Tea</title><h1>Teapots</h1>")
        return passed(title=await page.title(), heading=await page.inner_text("h1"))

    report = await asyncio.wait_for(Evaluator(Grader((Criterion("page", 1, "Page.", title),)), ctx).final(), 60)
    assert report["page"].status == PASS and report["page"].evidence() == {"title": "Harbor Tea", "heading": "Teapots"}
    assert pages[0].is_closed() and ctx._browsers == []
