"""Grading a finished episode directory (``stripebench grade``): its workspace, trace and Stripe backend.

It lives in the runtime, not in ``grading``, because it starts the app's services again in a
sandbox; ``grading`` itself never imports the runtime.

The Stripe objects the trace saw seed the candidates; every check then reads the
backend the episode used. An emulator lives in memory and dies with the episode,
so it can only be graded afterwards if its state was kept in the episode directory
(``EMULATOR_STATE``, which the emulator opens with ``state=``) or another backend
holding the same objects is named with ``stripe_api_base``. The environment's
services are started again on a copy of the episode's workspace (so grading never
changes the episode), pointed at that backend, and stopped when grading ends.

An episode that ran in the docker sandbox is graded in a fresh container of its
environment's image (a copy of its workspace mounted, as in the episode): its services
and any copy of the app a grader starts run there, never on this machine. Without a
Docker engine that grading stops with the engine's one-line reason (exit code 4).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stripebench_tui.core.bus import EventBus
from stripebench_tui.core.episode_files import Refused, episode_file
from stripebench_tui.core.events import StripeObject
from stripebench_tui.envs.manifest import Environment
from stripebench_tui.errors import BadFileError, RuntimeProblem, UserError, with_exit_code
from stripebench_tui.formats.open import open_episode
from stripebench_tui.grading.context import GradingContext
from stripebench_tui.grading.evaluate import Reported
from stripebench_tui.grading.external import evaluator_for
from stripebench_tui.grading.loader import grader_path, load_grader
from stripebench_tui.runtime.fixed_ports import hold_ports
from stripebench_tui.runtime.local import LocalSandbox
from stripebench_tui.runtime.services import ServiceFailed
from stripebench_tui.stripe_account.backend import REAL_JS_URL, StripeBackend, check_test_key

TRACE = "trace.jsonl"
EMULATOR_STATE = "stripe-emulator.sqlite"  # where an episode keeps its emulator's objects for later grading
EMULATOR_KEY = "sk_test_stripebench_grade"  # the emulator takes any test key


@dataclass
class GradeResult:
    """What ``grade_episode`` found: one result per criterion, the score and the backend it read."""

    results: dict[str, Reported]
    score: float
    backend: str

    @property
    def passed(self) -> bool:
        return self.score == 1.0


def _stripe_backend(stack: AsyncExitStack, episode_dir: Path, backend_label: str, api_base: str | None, key: str | None,
                    state: Path | None) -> tuple[str | None, str, str]:
    """(api base, key, description) of the backend to grade against; starts an emulator from saved state."""
    if api_base:
        return api_base, key or os.environ.get("STRIPE_SECRET_KEY") or EMULATOR_KEY, api_base
    if backend_label == "stripe-test-mode":
        key = key or os.environ.get("STRIPE_SECRET_KEY", "")
        if not key:
            raise UserError("this episode used Stripe test mode: set STRIPE_SECRET_KEY or pass --stripe-key")
        return None, check_test_key(key), "Stripe test mode"
    if state is None:
        # The episode's own file, not where a link in a crafted folder points: the emulator writes to it.
        try:
            state = episode_file(episode_dir, EMULATOR_STATE)
        except FileNotFoundError:
            state = episode_dir / EMULATOR_STATE
        except Refused as exc:
            raise BadFileError(f"{episode_dir / EMULATOR_STATE}: refused, {exc.reason}") from None
    if not state.is_file():
        raise RuntimeProblem(
            f"{episode_dir} ran on the in-memory Stripe emulator and kept no state file ({state.name}), so its Stripe "
            "objects are gone; pass --emulator-state FILE or --stripe-api-base URL of a backend that still has them"
        )
    # the emulator takes a second to import: only an episode graded from its saved emulator state needs it
    from stripebench_emulator import EmulatorProblem, EmulatorServer

    try:
        server = stack.enter_context(EmulatorServer(state=state))
    except EmulatorProblem as exc:  # e.g. a file that is not the emulator's state: one line, not a traceback
        raise with_exit_code(exc.exit_code, str(exc)) from None
    return server.url, EMULATOR_KEY, f"emulator restarted from {state}"


def _stripe_vars(api_base: str | None, key: str) -> dict[str, str]:
    """What the app's services are told about Stripe (as in the episode, but for this backend)."""
    publishable = os.environ.get("STRIPE_PUBLISHABLE_KEY", "") if api_base is None else "pk_test_stripebench_grade"
    js_url = REAL_JS_URL if api_base is None else f"{api_base}/v3"
    return StripeBackend(kind="emulator" if api_base else "stripe", api_base=api_base, secret_key=key,
                         publishable_key=publishable, js_url=js_url).env_vars()


async def _start_sandbox(stack: AsyncExitStack, env: Environment, workspace: Path, stripe_vars: dict[str, str],
                         kind: str, services: bool) -> tuple[Path, dict[str, str], Any]:
    """A ``kind`` sandbox ("local" or "docker") on a copy of ``workspace``, its services started if ``services``.

    Returns (the copy, the episode variables: ports, URLs, …, the sandbox: where graders' app copies run).
    """
    scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="stripebench-grade-"))) / "episode"
    scratch.mkdir()
    if kind == "docker":
        # the Docker sandbox brings the MCP tool client (about a second); only a Docker episode is graded in one
        from stripebench_tui.runtime.docker_sandbox import DockerSandbox

        sandbox: Any = DockerSandbox(env, scratch, stripe_vars)
    else:
        sandbox = LocalSandbox(env, scratch, stripe_vars)
    sandbox.prepare()
    shutil.rmtree(sandbox.workspace)  # the starter workspace; grading judges the agent's
    shutil.copytree(workspace, sandbox.workspace, symlinks=True)
    stack.push_async_callback(sandbox.stop)
    bus = EventBus()
    await sandbox.install_dependencies(bus)  # UserError (one line) when they cannot be installed
    try:
        if kind == "docker":
            await sandbox.start(bus)
        if services:
            await sandbox.start_services(bus)
    except ServiceFailed as exc:
        raise RuntimeProblem(f"cannot start the app to grade it: {exc}") from None
    return sandbox.workspace, sandbox.variables(), sandbox


def app_urls_of(variables: dict[str, Any]) -> dict[str, str]:
    """The app URLs among an episode's variables (APP_URL, …; not Stripe's)."""
    return {k: v for k, v in variables.items()
            if k.endswith("_URL") and isinstance(v, str) and v.startswith("http") and not k.startswith("STRIPE_")}


def read_objects(trace_path: Path) -> tuple[str, str, list[StripeObject]]:
    """(env id, backend label, stripe_object events) of a trace."""
    header, objects = _read(trace_path)
    return header.env, header.backend, objects


def _read(trace_path: Path) -> tuple[Any, list[StripeObject]]:
    trace = open_episode(trace_path)
    return trace.header, [e for e in trace.iter_events() if isinstance(e, StripeObject)]


async def grade_episode(env: Environment, episode_dir: Path, *, stripe_api_base: str | None = None,
                        stripe_key: str | None = None, emulator_state: Path | None = None,
                        app_urls: dict[str, str] | None = None, graders_root: Path | None = None,
                        services: bool = True, progress: Callable[[str], None] = lambda _line: None) -> GradeResult:
    """Grade the finished episode in ``episode_dir`` with ``env``'s grader (final verdicts).

    ``services`` starts the environment's services again (unless ``app_urls`` names running ones).
    """
    episode_dir = Path(episode_dir)
    if not episode_dir.is_dir():
        raise UserError(f"no episode directory {episode_dir}")
    trace_path = episode_dir / TRACE
    if not trace_path.is_file():
        raise BadFileError(f"{episode_dir}: no {TRACE} (is this an episode directory?)")
    header, objects = _read(trace_path)
    trace_env, backend_label = header.env, header.backend
    if trace_env and trace_env != env.id:
        raise UserError(f"{episode_dir} is an episode of {trace_env!r}, not {env.id!r}")
    grader = load_grader(env, graders_root)
    if grader is None:
        raise UserError(f"environment {env.id!r} has no grader ({grader_path(env, graders_root)} does not exist)")
    workspace = episode_dir / "workspace"
    if not workspace.is_dir():
        raise BadFileError(f"{episode_dir}: no workspace/ directory")
    async with AsyncExitStack() as stack:
        # The ports the app or grader cannot move: not while an episode (or another grade) of them runs.
        await stack.enter_async_context(hold_ports(env.manifest.fixed_ports, f"grading {episode_dir.name}", progress))
        base, key, described = _stripe_backend(stack, episode_dir, backend_label, stripe_api_base, stripe_key, emulator_state)
        progress(f"Stripe: {described}")
        variables: dict[str, str] = dict(app_urls or {})
        start = bool(services and not app_urls and env.manifest.services)
        processes = None  # where graders' app copies run: the sandbox started below, else this machine
        if header.sandbox == "docker":
            # The agent's code ran in a container: it runs in a fresh one again, services and graders' app copies.
            progress("starting a container" + (": " + ", ".join(s.name for s in env.manifest.services) if start else ""))
            workspace, started, processes = await _start_sandbox(stack, env, workspace, _stripe_vars(base, key),
                                                                 "docker", start)
            if start:
                variables = {**started, **variables}
        elif start:
            progress("starting the app: " + ", ".join(s.name for s in env.manifest.services))
            workspace, started, processes = await _start_sandbox(stack, env, workspace, _stripe_vars(base, key),
                                                                 "local", True)
            variables = {**started, **variables}
        ctx = GradingContext(env=env, episode_dir=episode_dir, workspace=workspace, stripe_api_base=base,
                             stripe_api_key=key, app_urls=app_urls_of(variables), env_vars=variables,
                             processes=processes)
        stack.callback(ctx.close)
        evaluator = evaluator_for(grader, ctx)  # criteria, or one run of an external grader
        for obj in objects:
            evaluator.see(obj)
        progress(f"checking {len(grader.criteria)} criteria …" if grader.criteria else f"running {grader.description} …")
        results = await evaluator.final()
        return GradeResult(results, evaluator.score(results), described)


__all__ = ["EMULATOR_STATE", "GradeResult", "app_urls_of", "grade_episode", "read_objects"]
