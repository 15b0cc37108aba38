"""One live episode, assembled: backend, sandbox, recorder, watcher, tools, grading, agent and driver.

The CLI (``stripebench run``), the live TUI and ``validate`` all use this::

    episode = Episode(EpisodeConfig(env="checkout-migration", agent="oracle"))
    result = await episode.run()          # EpisodeResult(trace_path, score, passed, reason, …)

While it runs, ``episode.bus`` carries every event (subscribe before ``run`` with
``subscribers=`` to see the first ones) and ``episode.driver`` takes the operator's
commands once ``episode.ready`` is set. Problems the user can fix before anything
starts (unknown env or agent, missing key, bad plan, busy directory) raise
``UserError``; a problem once the trace exists (a failed seed, a service failing its
health check, a tool server or browser that will not start) ends the episode with a
recorded reason, stops every process, keeps the trace, and comes back in the result.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import datetime as dt
import os
import platform
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stripebench_tui import __version__
from stripebench_tui.agents import create_agent
from stripebench_tui.child_env import hide_from_proc_environ, runner_secrets
from stripebench_tui.core.agent import Task
from stripebench_tui.core.breakpoints import BreakpointSet
from stripebench_tui.core.bus import EventBus, Handler
from stripebench_tui.core.driver import Driver
from stripebench_tui.core.events import EpisodeEnd, HarnessTime, Header, Service
from stripebench_tui.core.limits import Limits
from stripebench_tui.core.operator import ERROR, STOPPED, ApprovalPolicy
from stripebench_tui.core.profile import SETUP, TOOL_START, Stopwatch
from stripebench_tui.core.recorder import Recorder
from stripebench_tui.envs.catalog import find_environment
from stripebench_tui.envs.manifest import Environment
from stripebench_tui.envs.workspace import FULL_WORKSPACE_VAR
from stripebench_tui.errors import EXIT_EPISODE_FAILED, EXIT_OK, EXIT_RUNTIME, UserError
from stripebench_tui.findings import FindingsRunner
from stripebench_tui.grading import GradingContext, load_grader
from stripebench_tui.grading.external import live_grading_for
from stripebench_tui.runtime.checkpoints import (
    DEFAULT_CAP_MB,
    Checkpointer,
    CheckpointInfo,
    Policy,
    human_bytes,
    unavailable_reason,
)
from stripebench_tui.runtime.docker_sandbox import DockerSandbox
from stripebench_tui.runtime.fixed_ports import hold_ports
from stripebench_tui.runtime.grade import EMULATOR_STATE
from stripebench_tui.runtime.local import LocalSandbox
from stripebench_tui.runtime.pg_checkpoint import database_savers
from stripebench_tui.runtime.request_proxy import start_request_proxy
from stripebench_tui.runtime.sandbox import TRACE_NAME, new_episode_dir
from stripebench_tui.runtime.services import ServiceFailed
from stripebench_tui.runtime.tools import McpToolExecutor
from stripebench_tui.stripe_account.backend import EMULATOR, StripeBackend, start_backend
from stripebench_tui.stripe_account.request_log import RequestLog
from stripebench_tui.stripe_account.watcher import EMULATOR_INTERVAL, REAL_INTERVAL, StripeWatcher

SANDBOXES = ("local", "docker")
_NAME = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass
class EpisodeConfig:
    """Everything that picks what an episode runs and how."""

    env: str | Environment
    agent: str = "oracle"
    agent_options: dict[str, Any] = field(default_factory=dict)
    backend: str = EMULATOR
    stripe_key: str | None = None
    seed: int = 0
    episode_dir: Path | None = None  # default: ./episodes/<env>-<UTC time>/
    episodes_root: Path | None = None  # where default episode directories go (default ./episodes)
    max_turns: int | None = None  # None: the manifest's limit
    wall_time: float | None = None
    max_tokens: int | None = None
    max_cost_usd: float | None = None
    approval: str | ApprovalPolicy = "never"
    start_paused: bool = False
    headless: bool = True
    watch_interval: float | None = None  # seconds between /v1/events polls (default: 0.05 emulator, 1.0 real)
    graders_dir: Path | None = None  # default: $STRIPEBENCH_GRADERS or the repository's graders/
    grading: bool = True
    # where the episode runs: "local" or "docker" (default: $STRIPEBENCH_SANDBOX, else local)
    sandbox: str = field(default_factory=lambda: os.environ.get("STRIPEBENCH_SANDBOX") or "local")
    breakpoints: list[str] = field(default_factory=list)  # core.breakpoints expressions (--break)
    # the world's state at turn ends, beside the trace (runtime.checkpoints): every, every:K or off; capped on disk
    checkpoint: str = "every"
    checkpoint_cap_mb: int = DEFAULT_CAP_MB
    pause_at_breakpoints: bool = True  # False: hits are recorded and the episode runs on (nobody left to resume)


@dataclass
class EpisodeResult:
    """How an episode ended."""

    trace_path: Path | None
    episode_dir: Path | None
    reason: str
    score: float | None = None
    passed: bool | None = None
    error: str = ""
    setup_failed: bool = False  # ended before the agent started (seed, service, tools)
    graded: bool = False
    setup_exit_code: int = EXIT_RUNTIME  # the CLI's exit code when setup failed (3 for a bad file)

    @property
    def exit_code(self) -> int:
        """0 passed, 1 failed or not scored, 4 when the environment could not be set up."""
        if self.setup_failed:
            return self.setup_exit_code
        return EXIT_OK if self.passed else EXIT_EPISODE_FAILED


def fill_placeholders(text: str, values: dict[str, str]) -> str:
    """``${NAME}`` replaced where ``values`` has NAME; other text (and unknown names) left as written."""
    return _NAME.sub(lambda m: values.get(m.group(1), m.group(0)), text)


class Episode:
    """A live episode (see the module docstring)."""

    def __init__(self, config: EpisodeConfig, subscribers: list[Handler] | None = None) -> None:
        self.config = config
        self.subscribers = list(subscribers or [])
        self.env: Environment | None = None
        self.agent: Any = None
        self.backend: StripeBackend | None = None
        self.sandbox: Any = None  # LocalSandbox or runtime.docker_sandbox.DockerSandbox
        self.bus: EventBus | None = None
        self.recorder: Recorder | None = None
        self.driver: Driver | None = None
        self.watcher: StripeWatcher | None = None
        self.request_log: RequestLog | None = None  # the emulator's requests as stripe_request events
        self.proxy: Any = None  # real test mode: the local StripeProxy every process calls, for the request log
        self.findings: Any = None  # findings.FindingsRunner: detectors over the live events
        self.executor: McpToolExecutor | None = None
        self.live_grading: Any = None
        self.ready = asyncio.Event()  # set once the driver takes commands
        self.result: EpisodeResult | None = None
        self._stop_requested = ""
        self._setup_task: asyncio.Future[Any] | None = None
        self._setup_watch: Stopwatch | None = None  # the setup's parts, from the trace's t=0 to the driver's start
        self.checkpointer: Checkpointer | None = None  # None when checkpoints are off or cannot be taken
        self._held = contextlib.AsyncExitStack()  # what the episode holds until it ends (its fixed ports)

    # ---- control ----

    def stop(self, reason: str = "stopped by the operator") -> None:
        """End the episode: through the driver once it runs, otherwise as soon as setup reaches a checkpoint."""
        self._stop_requested = reason or "stopped"
        if self.driver is not None:
            self.driver.stop(reason)
        elif self._setup_task is not None:
            self._setup_task.cancel()

    # ---- the episode ----

    def prepare(self) -> None:
        """Resolve the environment and build the agent; UserError before anything is started."""
        cfg = self.config
        self.env = cfg.env if isinstance(cfg.env, Environment) else find_environment(cfg.env)
        self.agent = create_agent(cfg.agent, **cfg.agent_options)
        check = getattr(self.agent, "check_environment", None)
        if check is not None:
            check(self.env)
        if isinstance(cfg.approval, str):
            cfg.approval = ApprovalPolicy.parse(cfg.approval)
        if cfg.sandbox not in SANDBOXES:
            raise UserError(f"unknown sandbox {cfg.sandbox!r}; choose one of {', '.join(SANDBOXES)}")
        if cfg.sandbox != "local" and getattr(self.agent, "local_only", False):
            raise UserError(f"the {cfg.agent} agent runs its harness on this machine: use --sandbox local")
        self.policy = Policy.parse(cfg.checkpoint)

    async def run(self) -> EpisodeResult:
        """Play the episode to its end; always stops every process and closes the trace."""
        if self.env is None:
            self.prepare()
        assert self.env is not None
        cfg, env = self.config, self.env
        # The agent's commands may run as this user: /proc/<our pid>/environ must not show them a key either.
        hide_from_proc_environ([*getattr(self.agent, "secrets", ()), *runner_secrets()])
        episode_dir = self._episode_dir()
        self.backend = self._start_backend(episode_dir)
        try:
            if self.backend.kind != EMULATOR:  # before the sandbox: its STRIPE_API_BASE becomes the proxy's URL
                self.proxy = start_request_proxy(self.backend)
            variables = {**self.backend.env_vars(), **self._preset_variables()}
            if cfg.sandbox == "docker":
                self.sandbox = DockerSandbox(env, episode_dir, variables)
            else:
                self.sandbox = LocalSandbox(env, episode_dir, variables)
            self.sandbox.prepare()
            self._prepared()
            use_sandbox = getattr(self.agent, "use_sandbox", None)
            if use_sandbox is not None:  # an agent whose process runs where the episode's code runs
                use_sandbox(self.sandbox)
            atexit.register(self._atexit)
            self._open_trace(episode_dir)
            return await self._play()
        finally:
            await self._shutdown()

    def _episode_dir(self) -> Path:
        """A fresh episode directory (a resumed episode goes on in its own)."""
        assert self.env is not None
        return new_episode_dir(self.env.id, self.config.episode_dir, self.config.episodes_root)

    def _recorder(self, path: Path, header: Header, secrets: list[str]) -> Recorder:
        """The recorder of a new trace (a resumed episode's appends to its trace)."""
        return Recorder.create(path, header, secrets=secrets)

    def _start_backend(self, episode_dir: Path) -> StripeBackend:
        """The Stripe backend; the emulator keeps its objects beside the trace so `stripebench grade` can re-read
        them later."""
        cfg, env = self.config, self.env
        assert env is not None
        return start_backend(cfg.backend, seed=cfg.seed, api_version=env.manifest.stripe.api_version,
                             stripe_key=cfg.stripe_key, state=episode_dir / EMULATOR_STATE)

    def _preset_variables(self) -> dict[str, str]:
        """Variables the sandbox keeps instead of choosing (a restored episode's ports); none here."""
        return {}

    def _prepared(self) -> None:
        """The sandbox laid out its directories (a restored episode puts its checkpoint's workspace in)."""

    async def _make_world(self, bus: EventBus) -> None:
        """What makes the episode's starting world: the manifest's setup commands, then its Stripe seed."""
        assert self.sandbox is not None
        await self.sandbox.run_setup(bus)
        await self.sandbox.run_seed(bus)

    async def _before_agent(self, bus: EventBus) -> None:
        """Last step before the agent's first turn (a restored episode publishes the turns it starts after)."""

    def _checkpoints(self, bus: EventBus) -> Checkpointer | None:
        """The episode's checkpointer, or None (policy off, or the episode cannot be rewound: said once, here)."""
        cfg, env, sandbox, backend = self.config, self.env, self.sandbox, self.backend
        assert env is not None and sandbox is not None and backend is not None and self.recorder is not None
        policy = getattr(self, "policy", None) or Policy.parse(cfg.checkpoint)
        if not policy.enabled:
            return None
        why = unavailable_reason(backend.kind, sandbox.name, env.manifest.postgres is not None)
        if why:
            bus.publish_nowait(Service(service="checkpoint", status="log",
                                       text=f"no checkpoints: {why}; a fork of this episode re-executes its turns"))
            return None
        ports = {k: v for k, v in sandbox.variables().items()
                 if k.endswith("_PORT") or k in ("STRIPE_API_BASE", "WORKSPACE", "EPISODE_DIR")}

        def taken(info: CheckpointInfo, pruned: list[int]) -> None:
            gone = f"; pruned turn{'s' if len(pruned) > 1 else ''} {', '.join(map(str, pruned))} (over "\
                   f"{cfg.checkpoint_cap_mb} MB)" if pruned else ""
            bus.publish_nowait(Service(service="checkpoint", status="log",
                                       text=f"turn {info.turn}: {human_bytes(info.disk_bytes)} on disk "
                                            f"({human_bytes(info.bytes_new)} of new files, {info.files} files) "
                                            f"in {info.seconds * 1000:.0f} ms{gone}"))

        return Checkpointer(self.recorder.path, sandbox.workspace, backend.server.emulator, policy=policy,
                            cap_bytes=cfg.checkpoint_cap_mb * 1_000_000, variables=ports,
                            services=[s.name for s in env.manifest.services], on_taken=taken,
                            databases=database_savers(env.manifest.postgres, sandbox.variables()))

    def _open_trace(self, episode_dir: Path) -> None:
        # the SDK (half a second to import) for its version in the header; importing this module (fork, the
        # live TUI) does not load it
        import stripe

        cfg, env, backend = self.config, self.env, self.backend
        assert env is not None and backend is not None and self.sandbox is not None
        header = Header(
            env=env.id, agent=cfg.agent, model=str(cfg.agent_options.get("model") or getattr(self.agent, "model", "") or ""),
            title=env.manifest.title,
            seeds={"emulator": cfg.seed} if backend.kind == EMULATOR else {},
            versions={"stripebench": __version__, "stripe_sdk": stripe.VERSION, "python": platform.python_version(),
                      "stripe_api": env.manifest.stripe.api_version or ""},
            started=dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds"),
            backend=backend.label, sandbox=self.sandbox.name, expects=env.manifest.expects.header_form(),
            extra={"agent_options": {k: str(v) for k, v in cfg.agent_options.items() if k not in ("api_key", "on_retry")},
                   "episode_dir": str(episode_dir), "process_tag": self.sandbox.tag,
                   "checkpoint": cfg.checkpoint, "checkpoint_cap_mb": cfg.checkpoint_cap_mb,
                   # ports, URLs and paths (no keys), so a replay can map this episode's values onto its own
                   "variables": {k: v for k, v in self.sandbox.variables().items() if "KEY" not in k}},
        )
        if hasattr(env, "folder"):  # a benchmark folder: replay --fork-at finds it again by this path
            header.extra["bench_folder"] = str(env.root)
        if hasattr(self.sandbox, "header_extra"):  # e.g. the docker sandbox's container
            header.extra.update(self.sandbox.header_extra())
        self.bus = self._new_bus()
        self._setup_watch = Stopwatch(self.bus.clock, since=self.bus.started_at)
        secrets = self.secrets()
        self.sandbox.add_secrets(secrets)
        if hasattr(self.agent, "add_secrets"):  # e.g. an external harness's model recording
            self.agent.add_secrets(secrets)
        self.recorder = self._recorder(episode_dir / TRACE_NAME, header, secrets)
        self.recorder.attach(self.bus)
        for handler in self.subscribers:
            if hasattr(handler, "add_secrets"):  # e.g. the headless printer redacts what it shows
                handler.add_secrets(secrets)
            self.bus.subscribe(handler, name=getattr(handler, "__qualname__", "subscriber"))

    def _new_bus(self) -> EventBus:
        """The episode's bus (a resumed episode's numbers its events after those of its trace)."""
        return EventBus()

    def secrets(self) -> list[str]:
        """Every value the trace, the logs and what is shown must never contain: the Stripe keys and the
        emulator's control token, the agent's provider key, and this machine's credential-looking variables."""
        assert self.backend is not None
        return [*self.backend.secrets, *getattr(self.agent, "secrets", ()), *runner_secrets()]

    async def _play(self) -> EpisodeResult:
        cfg, env, bus, sandbox, backend = self.config, self.env, self.bus, self.sandbox, self.backend
        assert env is not None and bus is not None and sandbox is not None and backend is not None
        trace_path = sandbox.episode_dir / TRACE_NAME
        setup = asyncio.ensure_future(self._setup())
        self._setup_task = setup
        try:
            grading_hooks = await setup
        except (ServiceFailed, UserError, _StopDuringSetup) as exc:
            return await self._end_setup(trace_path, exc)
        except asyncio.CancelledError:
            me = asyncio.current_task()
            if self._stop_requested and not (me is not None and me.cancelling()):
                # stop() cancelled the setup (say, a long health-check wait); this task goes on to record it
                return await self._end_setup(trace_path, _StopDuringSetup(self._stop_requested))
            await self._end_setup(trace_path, _StopDuringSetup("cancelled"))
            raise
        finally:
            self._setup_task = None
        executor, watcher = self.executor, self.watcher
        if executor is None or watcher is None:
            raise RuntimeError("the episode's tools and Stripe watcher were not set up")
        variables = sandbox.variables()
        task = Task(env_id=env.id, problem=fill_placeholders(env.problem_text(), variables), tools=await executor.tools(),
                    workspace=str(sandbox.workspace), hints=list(env.manifest.hints),
                    context={**variables, "ENV_DIR": str(env.root), "ENV_ID": env.id,
                             # the oracle's way to the hidden paths (not an agent's: not in the processes' variables)
                             FULL_WORKSPACE_VAR: str(sandbox.full_workspace)})
        manifest_limits = env.manifest.limits
        limits = Limits(max_turns=cfg.max_turns or manifest_limits.max_turns,
                        wall_time=cfg.wall_time or manifest_limits.wall_time,
                        max_tokens=cfg.max_tokens or manifest_limits.max_tokens,
                        max_cost_usd=cfg.max_cost_usd or manifest_limits.max_cost_usd)
        turn_hooks, final_hooks = grading_hooks
        # The request log and the findings come last: they see the graders' requests and the final verdicts.
        logs = [self.request_log] if self.request_log is not None else []
        turn_hooks = [*turn_hooks, *(x.turn_end_hook for x in logs)]
        final_hooks = [*final_hooks, *(x.final_hook for x in logs), self.findings.final_hook]
        self.checkpointer = self._checkpoints(bus)
        if self.checkpointer is not None:  # last: the turn's verdicts and requests are in the trace it points at
            turn_hooks = [*turn_hooks, self.checkpointer.turn_end_hook]
        self.driver = Driver(agent=self.agent, executor=executor, task=task, bus=bus, recorder=self.recorder,
                             approval=cfg.approval, limits=limits,  # type: ignore[arg-type]
                             turn_end_hooks=[watcher.turn_end_hook, *turn_hooks],
                             final_hooks=[watcher.final_hook, *final_hooks], start_paused=cfg.start_paused,
                             breakpoints=BreakpointSet.from_exprs(cfg.breakpoints),
                             pause_at_hits=cfg.pause_at_breakpoints)
        if self._stop_requested:
            self.driver.stop(self._stop_requested)
        await bus.publish(self._setup_time())
        await self._before_agent(bus)
        self.ready.set()
        end = await self.driver.run()
        self.result = EpisodeResult(trace_path, sandbox.episode_dir, end.reason, end.score, end.passed, end.error,
                                    graded=self.live_grading is not None)
        return self.result

    async def _setup(self) -> tuple[list[Any], list[Any]]:
        """Watcher, the environment's dependencies, setup, seed, services, tools and grading; returns the grading hooks."""
        cfg, env, bus, sandbox, backend = self.config, self.env, self.bus, self.sandbox, self.backend
        assert env is not None and bus is not None and sandbox is not None and backend is not None
        if self._stop_requested:
            raise _StopDuringSetup(self._stop_requested)
        await self._hold_fixed_ports(bus, env, sandbox.episode_dir)
        self.watcher = StripeWatcher(backend.client(), bus, cfg.watch_interval or
                                     (EMULATOR_INTERVAL if backend.kind == EMULATOR else REAL_INTERVAL))
        await self.watcher.start()
        if backend.server is not None:
            backend.server.emulator.on_event(self._nudge_watcher)
            self.request_log = RequestLog(bus, self.secrets())
            self.request_log.attach(backend.server.emulator)
        elif self.proxy is not None:
            self.request_log = RequestLog(bus, self.secrets())
            self.request_log.attach_proxy(self.proxy)
        header = self.recorder.header if self.recorder is not None else None
        self.findings = FindingsRunner.live(bus, header=header)  # the header: what the task asks
        if hasattr(sandbox, "start"):  # the docker sandbox's engine, image and container
            await sandbox.start(bus)
        # The app's gems first where it has a Gemfile: their variables (GEM_HOME, its bin/ on PATH) are known once
        # installed, and the agent's shell needs them (`bundle exec ruby …` in the app's directory).
        gems_first = env.manifest.ruby is not None
        if gems_first:
            await sandbox.install_dependencies(bus)
        # Tool servers need nothing from the seed or the services (ports are already chosen): start them meanwhile.
        if hasattr(sandbox, "tool_executor"):
            self.executor = sandbox.tool_executor(env.manifest.tools)
        else:
            self.executor = McpToolExecutor(env.manifest.tools, workspace=sandbox.workspace,
                                            episode_dir=sandbox.episode_dir, env=sandbox.tool_env(),
                                            redactor=sandbox.redactor)
        tools = asyncio.ensure_future(self.executor.start())
        try:
            if not gems_first:
                await sandbox.install_dependencies(bus)
            await self._make_world(bus)
            await sandbox.start_services(bus)
        except BaseException:
            tools.cancel()
            await asyncio.gather(tools, return_exceptions=True)
            raise
        watch = self._setup_watch
        assert watch is not None
        watch.lap(SETUP)
        await tools  # what is left of the tool servers' start once the services are up
        watch.lap(TOOL_START)
        return self._grading(bus)

    async def _hold_fixed_ports(self, bus: EventBus, env: Environment, episode_dir: Path) -> None:
        """The ports the environment cannot move, held until the episode ends (a second episode waits here)."""
        ports = env.manifest.fixed_ports
        if not ports:
            return

        def say(text: str) -> None:
            bus.publish_nowait(Service(service="ports", status="log", text=text))

        await self._held.enter_async_context(hold_ports(ports, f"{env.id}, episode {episode_dir.name}", say))
        say(f"holding port{'s' if len(ports) > 1 else ''} {', '.join(map(str, ports))} for this episode "
            "(its app listens there whatever the episode)")

    def _setup_time(self) -> HarnessTime:
        """The ``harness_time`` event of the setup: everything since t=0 that was not waiting for the tool servers."""
        assert self._setup_watch is not None
        self._setup_watch.lap(SETUP)
        return self._setup_watch.record("setup")

    def _grading(self, bus: EventBus) -> tuple[list[Any], list[Any]]:
        """Wire the environment's grader (if any) to the bus; returns (turn-end hooks, final hooks)."""
        if not self.config.grading:
            return [], []
        env, sandbox, backend = self.env, self.sandbox, self.backend
        assert env is not None and sandbox is not None and backend is not None
        grader = load_grader(env, self.config.graders_dir)
        if grader is None:
            bus.publish_nowait(Service(service="grading", status="log",
                                       text=f"no grader for {env.id}: the episode is not scored"))
            return [], []
        variables = sandbox.variables()
        ctx = GradingContext(env=env, episode_dir=sandbox.episode_dir, workspace=sandbox.workspace,
                             stripe_api_base=backend.api_base, stripe_api_key=backend.secret_key,
                             app_urls={k: v for k, v in variables.items() if k.endswith("_URL") and v.startswith("http")
                                       and not k.startswith("STRIPE_")},
                             env_vars=variables, processes=sandbox,  # app copies run in the sandbox
                             on_delivery=self.request_log.record_delivery if self.request_log is not None else None)
        self.live_grading = live_grading_for(grader, ctx)  # criteria, or a command's report (external)
        self.live_grading.attach(bus)
        return [self.live_grading.turn_end_hook], [self.live_grading.final_hook]

    def _nudge_watcher(self, event: dict[str, Any]) -> None:
        if self.watcher is not None:
            self.watcher.nudge()

    async def _end_setup(self, trace_path: Path, exc: BaseException) -> EpisodeResult:
        """Record why the episode ended before the agent started, and say so in the result."""
        assert self.bus is not None and self.sandbox is not None
        stopped = isinstance(exc, _StopDuringSetup)
        reason, error = (STOPPED, "") if stopped else (ERROR, str(exc))
        if self.request_log is not None:  # the seed's requests, up to the failure
            self.request_log.flush()
            self.request_log.detach()
        self.bus.publish_nowait(self._setup_time())  # how long it took to fail
        self.bus.publish_nowait(EpisodeEnd(reason=reason, error=error))
        await self.bus.drain(timeout=5)
        if self.recorder is not None:
            self.recorder.close()  # what stopping the other services prints comes after the end: not recorded
        code = exc.exit_code if isinstance(exc, UserError) else EXIT_RUNTIME
        self.result = EpisodeResult(trace_path, self.sandbox.episode_dir, reason, error=error, setup_failed=not stopped,
                                    setup_exit_code=code)
        return self.result

    async def _shutdown(self) -> None:
        """Stop everything this episode started, newest first; each step runs even if an earlier one failed."""
        steps: list[Callable[[], Any]] = []
        if self.watcher is not None:
            steps.append(self.watcher.stop_polling)
        if self.live_grading is not None:
            steps.append(self.live_grading.close)
        if self.executor is not None:
            steps.append(self.executor.close)
        if self.sandbox is not None:
            steps.append(self.sandbox.stop)
        steps.append(self._held.aclose)  # the fixed ports, once nothing of the episode listens on them
        cancelled = False
        for step in steps:
            work = asyncio.ensure_future(step())
            while not work.done():
                try:
                    await asyncio.shield(work)  # a second Ctrl+C must not leave a service running
                except asyncio.CancelledError:
                    cancelled = True
                except Exception:  # noqa: BLE001 - keep stopping the rest
                    break
        if self.recorder is not None and not self.recorder.closed:
            self.recorder.close()
        if self.bus is not None:
            await self.bus.close(timeout=2)
        if self.backend is not None:
            if self.backend.server is not None:
                self.backend.server.emulator.off_event(self._nudge_watcher)
            if self.request_log is not None:
                self.request_log.detach()
            if self.proxy is not None:
                self.proxy.close()
            self.backend.close()
        atexit.unregister(self._atexit)
        if cancelled:
            raise asyncio.CancelledError

    def _atexit(self) -> None:
        # The event loop died without running our finally (a crash): at least let the watchdog sweep.
        if self.sandbox is not None and self.sandbox.watchdog is not None:
            self.sandbox.watchdog.close()


class _StopDuringSetup(Exception):
    """The operator stopped the episode before the agent started."""


def exit_code_for(result: EpisodeResult) -> int:
    """The CLI exit code of a finished episode (a bad file during setup is 3, other setup problems 4)."""
    return result.exit_code


async def run_episode(config: EpisodeConfig, subscribers: list[Handler] | None = None,
                      on_ready: Callable[[Episode], Any] | None = None) -> EpisodeResult:
    """Run one episode from start to end (``on_ready`` gets the Episode once its driver takes commands)."""
    episode = Episode(config, subscribers)
    if on_ready is None:
        return await episode.run()
    task = asyncio.ensure_future(episode.run())
    waiter = asyncio.ensure_future(episode.ready.wait())
    await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    if episode.ready.is_set():
        on_ready(episode)
    waiter.cancel()
    return await task


__all__ = ["Episode", "EpisodeConfig", "EpisodeResult", "exit_code_for", "fill_placeholders", "run_episode"]
