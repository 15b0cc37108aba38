"""`stripebench grade` on a finished episode directory: table, score, exit codes, and what it needs."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import stripe

from stripebench_emulator import EmulatorServer
from stripebench_tui.core.events import Header, StripeObject
from stripebench_tui.core.recorder import Recorder
from stripebench_tui.errors import EXIT_EPISODE_FAILED, EXIT_OK, EXIT_RUNTIME, EXIT_USAGE
from stripebench_tui.runtime.grade import EMULATOR_STATE

from .conftest import write_env

GRADER = '''
from stripebench_tui.grading import Candidates, Criterion, Grader, expect, first_id, passed, failed

def email(ctx, view):
    customer = ctx.stripe.v1.customers.retrieve(view.candidate)
    return expect("email", "jenny@example.com", customer.email, customer=customer.id)

def name(ctx, view):
    customer = ctx.stripe.v1.customers.retrieve(view.candidate)
    return expect("name", "Jenny Rosen", customer.name)

def order_saved(ctx, view):
    rows = ctx.db("app.db").execute("select customer from orders").fetchall()
    return passed(orders=len(rows)) if rows else failed("no order saved", orders=0)

def app_knows_stripe(ctx, view):
    told = ctx.http().get("/stripe_base.txt").text.strip()
    return expect("the app's STRIPE_API_BASE", ctx.stripe_api_base, told)

GRADER = Grader(
    (
        Criterion("email", 2, "The customer has Jenny's email.", email, on=("customer",)),
        Criterion("name", 1, "The customer is called Jenny Rosen.", name, on=("customer",)),
        Criterion("order saved", 1, "The app saved an order.", order_saved, per_candidate=False),
        Criterion("app up", 1, "The app answers, pointed at the Stripe backend.", app_knows_stripe, per_candidate=False),
    ),
    candidates=Candidates("customer", from_submission=first_id("cus_")),
)
'''


# The app: a static server that first writes down which Stripe API base it was given.
SERVICE = """
[[services]]
name = "app"
command = "echo \\"$STRIPE_API_BASE\\" > stripe_base.txt && exec python -m http.server ${APP_PORT} --bind 127.0.0.1"
ports = ["APP_PORT"]
health = { http = "http://127.0.0.1:${APP_PORT}/", timeout = 20 }
"""


@pytest.fixture
def setup(tmp_path):
    """(env id, episode dir, process env): an environment, its grader and an episode that ran on a saved emulator."""
    envs, graders, episode = tmp_path / "envs", tmp_path / "graders", tmp_path / "episode"
    env = write_env(envs, "jenny-shop", extra=SERVICE)
    graders.mkdir()
    (graders / "jenny_shop.py").write_text(GRADER)
    workspace = episode / "workspace"
    workspace.mkdir(parents=True)
    with EmulatorServer(state=episode / EMULATOR_STATE) as emu:
        client = stripe.StripeClient("sk_test_x", base_addresses={"api": emu.url}, max_network_retries=0)
        good = client.v1.customers.create(params={"email": "jenny@example.com", "name": "Jenny Rosen"})
        bad = client.v1.customers.create(params={"email": "jenny@example.org", "name": "Jenny Rosen"})
    recorder = Recorder.create(episode / "trace.jsonl", Header(env=env.id, agent="oracle", backend="emulator"))
    for i, c in enumerate((good, bad)):
        recorder.record(StripeObject(seq=i, object_id=c.id, object_type="customer", data=c.to_dict(), event_id=f"evt_{i}"))
    recorder.close()
    with sqlite3.connect(workspace / "app.db") as db:
        db.execute("create table orders (customer text)")
        db.execute("insert into orders values (?)", (good.id,))
    (workspace / "submission.txt").write_text(f"Customer: {good.id}\n")
    proc_env = {**os.environ, "STRIPEBENCH_ENVIRONMENTS": str(envs), "STRIPEBENCH_GRADERS": str(graders)}
    return env.id, episode, proc_env, good.id, bad.id


def grade(proc_env, *args) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "stripebench_tui", "grade", *map(str, args)], capture_output=True,
                          text=True, env=proc_env, timeout=60)


@pytest.mark.slow
def test_grade_restarts_the_episode_emulator_and_prints_the_table(setup):
    env_id, episode, proc_env, good, bad = setup
    r = grade(proc_env, env_id, "--episode", episode)
    assert r.returncode == EXIT_OK, r.stderr
    assert "emulator restarted from" in r.stdout and "score 1.00 (4/4 criteria pass) — PASSED" in r.stdout
    for line in ("✓ pass", "email", "order saved", "app up", f'candidate="{good}"'):
        assert line in r.stdout, line
    assert not (episode / "workspace" / "stripe_base.txt").exists()  # the app ran on a copy of the workspace

    (episode / "workspace" / "submission.txt").write_text(bad)
    r = grade(proc_env, env_id, "--episode", episode)
    assert r.returncode == EXIT_EPISODE_FAILED
    assert "✗ fail" in r.stdout and "expected 'jenny@example.com'" in r.stdout
    assert "score 0.60 (3/4 criteria pass) — FAILED" in r.stdout

    r = grade(proc_env, env_id, "--episode", episode, "--no-services")
    assert r.returncode == EXIT_EPISODE_FAILED
    assert "! error" in r.stdout and "no app URL 'APP_URL'" in r.stdout


@pytest.mark.slow
def test_grade_explains_what_it_needs_and_refuses_a_wrong_env(setup, tmp_path):
    env_id, episode, proc_env, _, _ = setup
    (episode / EMULATOR_STATE).rename(tmp_path / "elsewhere.sqlite")
    r = grade(proc_env, env_id, "--episode", episode)
    assert r.returncode == EXIT_RUNTIME
    assert "kept no state file" in r.stderr and "--emulator-state" in r.stderr and len(r.stderr.strip().splitlines()) == 1

    r = grade(proc_env, env_id, "--episode", episode, "--emulator-state", tmp_path / "elsewhere.sqlite")
    assert r.returncode == EXIT_OK, r.stderr

    write_env(Path(proc_env["STRIPEBENCH_ENVIRONMENTS"]), "other-shop")
    r = grade(proc_env, "other-shop", "--episode", episode)
    assert r.returncode == EXIT_USAGE and "is an episode of 'jenny-shop', not 'other-shop'" in r.stderr


@pytest.mark.slow
def test_a_docker_episode_is_regraded_in_a_container_or_not_at_all(setup, tmp_path):
    # Its app copies must not run on this machine: without an engine, grading stops with the engine's reason.
    import json

    env_id, episode, proc_env, _, _ = setup
    trace = episode / "trace.jsonl"
    lines = trace.read_text().splitlines()
    header = json.loads(lines[0])
    header["sandbox"] = "docker"
    trace.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    r = grade({**proc_env, "DOCKER_HOST": f"unix://{tmp_path}/no-engine.sock"}, env_id, "--episode", episode)
    assert r.returncode == EXIT_RUNTIME, r.stdout
    assert r.stderr.strip().splitlines()[-1].startswith("stripebench: cannot start the app to grade it: "
                                                        "no Docker engine reachable"), r.stderr
    assert "Traceback" not in r.stderr and "no-engine.sock" in r.stderr
