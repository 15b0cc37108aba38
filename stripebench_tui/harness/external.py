"""An external agent harness (Claude Code, an in-house loop, …) run as a process, watched through the model gateway.

The harness owns its loop and its tools; what we see is its model traffic. The
agent starts a ``Gateway`` (its upstream: ``--base-url`` or the provider's usual
variables, with the real key), then the harness process in the workspace, in its
own process group, with its base URL pointed at the gateway and a per-episode
dummy key (the provider keys are removed from its environment).

Every model request the harness sends is held at the gateway until the driver
asks for the next turn, so pause and step hold the harness between turns, and an
operator's note is appended to that request (in the provider's format). The
reply becomes an ``AgentTurn`` with ``observed=True``: the driver records its tool
calls and waits in ``observed_result`` for the result the harness sends back with
its next request. The harness exiting is the end of the episode ("done").
Its stdout and stderr go to the agent's log pane (``Task.log``).

A harness is described by a ``Harness``: a little data and one function that builds
the command line (``harnesses`` has the built-in ones).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import shutil
import signal
import sys
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stripebench_tui.child_env import base_env, runner_secrets
from stripebench_tui.core import operator as op
from stripebench_tui.core.agent import AgentError, AgentTurn, Observation, Task, ToolRequest
from stripebench_tui.core.redact import Redactor
from stripebench_tui.core.tool_types import ToolOutcome
from stripebench_tui.errors import UserError
from stripebench_tui.gateway.app import Gateway, GatewayError, Upstream
from stripebench_tui.gateway.exchange_events import failure_line, reply_message
from stripebench_tui.gateway.hold import Holds, StandIn, unknown_tool
from stripebench_tui.gateway.traffic import Exchange
from stripebench_tui.harness.in_container import HARNESS_MOUNT, in_container
from stripebench_tui.harness.installers import harness_cache
from stripebench_tui.runtime.reaper import TAG_VAR, kill_tagged

# Variables that carry a provider key: never passed on to a harness.
PROVIDER_KEYS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN")
STOP_GRACE = 3.0  # seconds between SIGTERM and SIGKILL of the harness, its group and its tagged processes
EXIT_GRACE = 10.0  # seconds the gateway has to end an exchange once the harness that sent it has exited
LAST_LINES = 8  # harness log lines quoted when it exits early


@dataclass
class HarnessContext:
    """What a harness's command line may refer to."""

    problem: str
    workspace: str
    base_url: str  # the gateway's root URL (Anthropic style)
    openai_base_url: str  # the gateway's /v1 URL (OpenAI style)
    api_key: str  # the per-episode dummy key
    model: str | None = None
    state_dir: str = ""  # a directory the harness may keep its own state in (config, sessions)
    tools: list[Any] = field(default_factory=list)  # our ToolSpecs
    # Our MCP tool servers the harness is offered (those it has no equivalent of): name -> {"command", "args"}
    mcp_servers: dict[str, dict[str, Any]] = field(default_factory=dict)

    def placeholders(self) -> dict[str, str]:
        return {"problem": self.problem, "workspace": self.workspace, "base_url": self.base_url,
                "openai_base_url": self.openai_base_url, "api_key": self.api_key, "model": self.model or ""}


@dataclass(frozen=True)
class Harness:
    """An external agent harness: data, plus the one function that builds its command line."""

    name: str
    executable: str  # program name looked up on PATH (and in ``search_dirs``)
    command: Callable[[str, HarnessContext], list[str]]  # (resolved executable, context) -> argv
    install: str  # one line telling the user how to install it
    protocol: str = "anthropic"  # which API family it speaks: "anthropic" or "openai"
    base_url_env: tuple[str, ...] = ("ANTHROPIC_BASE_URL",)  # set to the gateway's URL for the protocol
    key_env: tuple[str, ...] = ("ANTHROPIC_API_KEY",)  # set to the dummy key
    extra_env: Callable[[HarnessContext], dict[str, str]] | None = None
    search_dirs: Callable[[], list[Path]] | None = None  # where an installer of ours puts it
    done: str = "exit"  # how "done" is detected: the process exits
    native_servers: tuple[str, ...] = ()  # our tool servers the harness has its own equivalent of (not offered)
    # The call a rejected one is replaced with, one the harness answers without acting (gateway.hold; default:
    # a tool it does not have). The model is shown its own call and the rejection either way.
    reject_as: StandIn | None = None

    def locate(self) -> str | None:
        """The executable's path, or None when it is not installed."""
        if os.sep in self.executable:
            return self.executable if os.access(self.executable, os.X_OK) else None
        for folder in self.search_dirs() if self.search_dirs else []:
            candidate = folder / self.executable
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return str(candidate)
        return shutil.which(self.executable)

    def environment(self, ctx: HarnessContext, base: dict[str, str]) -> dict[str, str]:
        env = {k: v for k, v in base.items() if k not in PROVIDER_KEYS}
        url = ctx.base_url if self.protocol == "anthropic" else ctx.openai_base_url
        env.update({name: url for name in self.base_url_env})
        env.update({name: ctx.api_key for name in self.key_env})
        if self.extra_env is not None:
            env.update(self.extra_env(ctx))
        return env


@dataclass
class _Held:
    exchange: Exchange
    released: asyncio.Event = field(default_factory=asyncio.Event)
    ended: asyncio.Event = field(default_factory=asyncio.Event)


class ExternalAgent:
    """Runs a ``Harness`` as a process behind the model gateway (see the module docstring)."""

    local_only = False  # with --sandbox docker the harness runs in the episode's container (use_sandbox)

    def __init__(self, harness: Harness, *, model: str | None = None, base_url: str | None = None,
                 api_key: str | None = None, on_retry: Callable[..., None] | None = None, env: dict[str, str] | None = None,
                 state_dir: str | None = None) -> None:
        self.harness = harness
        self.name = harness.name
        self.model = model or ""
        self.executable = harness.locate()
        if self.executable is None:
            raise UserError(f"the {harness.name} harness is not installed: {harness.install}")
        self.base_url = base_url
        self.upstream = Upstream.from_env(base_url, api_key=api_key)
        # The model recording (harness.replay) is redacted with these, plus the episode's (add_secrets).
        self.redactor = Redactor([*self.upstream.secrets, *runner_secrets()])
        self.replay: Any = None  # a gateway.recorded.RecordedUpstream when forked from a recording
        # the allow-listed part of ours (child_env): never a provider key, which stays in the gateway
        self._base_env = base_env() if env is None else dict(env)
        self._state_dir = state_dir
        self.sandbox: Any = None  # a sandbox with exec_argv (docker): the harness runs inside it
        self._moved: tuple[str, str] | None = None  # (harness cache here, where the container sees it)
        self.gateway: Gateway | None = None
        self.holds: Holds | None = None  # set when calls wait for the operator's approval
        self.process: asyncio.subprocess.Process | None = None
        self.exit_code: int | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: Task | None = None
        self._arrivals: deque[_Held] = deque()
        self._next: _Held | None = None
        self._changed = asyncio.Event()
        self._results: dict[str, ToolOutcome] = {}
        self._last_lines: deque[str] = deque(maxlen=LAST_LINES)
        self._pumps: list[asyncio.Task[None]] = []
        self._exited = asyncio.Event()
        self.argv: list[str] = []
        self.process_env: dict[str, str] = {}
        # Every process the harness starts inherits this tag, so stop also finds those it put in a session of their own.
        self.tag = f"{harness.name}-{secrets.token_hex(6)}"

    @property
    def secrets(self) -> list[str]:
        """The provider keys the gateway holds (the trace redacts them, though nothing should carry them)."""
        return self.upstream.secrets

    # Any: any sandbox; only a container's (one with exec_argv) changes where the harness runs
    def use_sandbox(self, sandbox: Any) -> None:
        """Run the harness where the episode's code runs, when that is a container (a local sandbox changes nothing)."""
        if hasattr(sandbox, "exec_argv"):
            self.sandbox = sandbox
            cache = harness_cache()
            if cache.is_dir():  # the installed harnesses, read-only, outside any home the agent user cannot enter
                sandbox.mount_read_only(cache, HARNESS_MOUNT)
                self._moved = (str(cache.resolve()), HARNESS_MOUNT)

    def add_secrets(self, values: list[str]) -> None:
        """More values the model recording must not contain (the episode's Stripe keys, control token, …)."""
        for value in values:
            self.redactor.add_secret(value)

    def fork_from(self, trace_path: Path, at_turn: int | None, offline: bool = False) -> Any:
        """This harness restarted with its model answered from ``trace_path``'s recording up to ``at_turn`` (None: all)."""
        # model_replay brings the episode runtime (runtime.fork, about a second); `stripebench agents` loads
        # this module to list the harnesses
        from stripebench_tui.harness.model_replay import ExternalFork

        return ExternalFork(self, trace_path, at_turn, offline=offline)

    # ---- the gateway tap (called on the gateway's thread) ----

    async def before(self, exchange: Exchange) -> None:
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        held = await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(self._arrive(exchange), loop))
        try:
            await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(held.released.wait(), loop))
        except asyncio.CancelledError:  # the harness gave up on this request while it was held
            if not loop.is_closed():
                loop.call_soon_threadsafe(self._abandon, held)
            raise

    def after(self, exchange: Exchange) -> None:
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._ended, exchange)

    async def _arrive(self, exchange: Exchange) -> _Held:
        for result in exchange.results:
            if self.holds is not None and result.call_id in self.holds.originals:
                continue  # a rejected call: the driver recorded its result
            self._results[result.call_id] = ToolOutcome(text=result.output, is_error=result.is_error, duration=result.duration)
        held = _Held(exchange)
        self._arrivals.append(held)
        self._poke()
        return held

    def _abandon(self, held: _Held) -> None:
        """A held request whose connection closed: it is no turn (a released one ends with no reply)."""
        if held.released.is_set():
            held.ended.set()
        elif held in self._arrivals:
            self._arrivals.remove(held)
        self._poke()

    def _ended(self, exchange: Exchange) -> None:
        for held in self._arrivals:
            if held.exchange is exchange:
                held.ended.set()
        if self._next is not None and self._next.exchange is exchange:
            self._next.ended.set()
        self._poke()

    def _poke(self) -> None:
        """Wake every waiter (each took the current event before checking its condition)."""
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    @property
    def held_requests(self) -> int:
        """Model requests of the harness waiting at the gateway for the next turn."""
        return sum(1 for h in self._arrivals if not h.released.is_set())

    async def wait_held(self, count: int = 1) -> None:
        """Wait until ``count`` model requests are held (for controls and tests), or the harness exited."""
        while self.held_requests < count and not self._exited.is_set():
            await self._changed.wait()

    # ---- Agent protocol ----

    async def start(self, task: Task) -> None:
        """Start the gateway, then the harness process in the workspace."""
        self._loop = asyncio.get_running_loop()
        self._task = task
        # heavy (the runtime, through runtime.fork): loaded when the harness starts, not when it is listed
        from stripebench_tui.harness.model_replay import model_recorder

        if task.needs_approval is not None:
            loop = self._loop
            self.holds = Holds(task.needs_approval, self.harness.reject_as or unknown_tool,
                               on_held=lambda exchange: loop.call_soon_threadsafe(self._ended, exchange))
        self.gateway = Gateway(self.upstream, tap=self, recorder=model_recorder(task, self.redactor, self.replay),
                               holds=self.holds)
        self.redactor.add_secret(self.gateway.dummy_key)
        try:
            await asyncio.to_thread(self.gateway.start)
        except GatewayError as exc:
            raise AgentError(str(exc)) from exc
        if self.sandbox is not None and self._state_dir is None:  # writable by the container's user, in the episode
            state = str(self.sandbox.scratch_dir(f"{self.name}-state-"))
        else:
            state = self._state_dir or str(Path(task.workspace or ".").resolve().parent / f"{self.name}-state")
            Path(state).mkdir(parents=True, exist_ok=True)
        workspace = task.workspace or os.getcwd()
        ctx = HarnessContext(problem=task.problem, workspace=workspace, base_url=self.gateway.url,
                             openai_base_url=self.gateway.openai_base_url, api_key=self.gateway.dummy_key,
                             model=self.model or None, state_dir=state, tools=list(task.tools),
                             mcp_servers=self._mcp_servers(task, workspace, state))
        self.argv = self.harness.command(self.executable or "", ctx)
        context_env = {k: str(v) for k, v in task.context.items() if isinstance(v, (str, int, float)) and k.isupper()}
        # In a container, only the episode's variables: this machine's PATH and HOME mean nothing there.
        base = {} if self.sandbox is not None else self._base_env
        self.process_env = self.harness.environment(ctx, {**base, **context_env})
        self.process_env[TAG_VAR] = self.tag
        argv, env = self.argv, self.process_env
        if self.sandbox is not None:
            argv, env = in_container(self.sandbox, self.argv, self.process_env, self._moved)
        try:
            self.process = await asyncio.create_subprocess_exec(
                *argv, cwd=ctx.workspace, env=env, stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, start_new_session=True)
        except OSError as exc:
            raise AgentError(f"cannot start {self.name} ({self.argv[0]}): {exc.strerror or exc}") from exc
        self._log(f"started {self.name} (pid {self.process.pid}) in {ctx.workspace}", "stdout")
        self._pumps = [asyncio.ensure_future(self._pump(self.process.stdout, "stdout")),
                       asyncio.ensure_future(self._pump(self.process.stderr, "stderr")),
                       asyncio.ensure_future(self._watch())]

    def _mcp_servers(self, task: Task, workspace: str, state: str) -> dict[str, dict[str, Any]]:
        """How to start each of our tool servers the harness should be offered (stdio MCP)."""
        servers: dict[str, dict[str, Any]] = {}
        for spec in task.tools:
            name = spec.server
            if not name or name in servers or name in self.harness.native_servers:
                continue
            args = ["-m", f"stripebench_tui.tools.{name}", "--workspace", workspace]
            if name == "browser":
                args += ["--screenshots", str(Path(state) / "screenshots")]
            servers[name] = {"command": "python3" if self.sandbox is not None else sys.executable, "args": args}
        return servers

    async def next_turn(self, observations: list[Observation]) -> AgentTurn:
        """Release the harness's next model request (with any operator note), and return the reply as an observed turn."""
        notes = [o.text for o in observations if o.kind == "operator_message"]
        while True:
            held = self._next if self._next in self._arrivals else await self._next_arrival()
            self._next = None
            if held is None:
                return self._finished()
            for note in notes:
                held.exchange.inject(note)
            notes = []
            held.released.set()
            while not held.ended.is_set():
                changed = self._changed
                if self._exited.is_set():
                    # Its connection is closed, so the gateway ends this exchange at once; a reply it got is still
                    # a turn (a harness may exit before the gateway has told us the exchange ended).
                    try:
                        await asyncio.wait_for(held.ended.wait(), EXIT_GRACE)
                    except TimeoutError:
                        return self._finished()
                    break
                await changed.wait()
            if held in self._arrivals:
                self._arrivals.remove(held)
            exchange = held.exchange
            reply = exchange.reply
            if exchange.error:
                self._log(failure_line(exchange), "stderr")
            if reply is None or not reply.complete:
                continue  # the harness sees the error and usually retries: not a turn
            message = reply_message(reply, exchange)
            turn = AgentTurn(text=reply.text, reasoning=reply.reasoning, model=reply.model or self.model,
                             tokens_in=message.tokens_in, tokens_out=message.tokens_out, cost_usd=message.cost_usd,
                             ttft=message.ttft, latency=message.latency, observed=True,
                             tool_calls=[ToolRequest(c.call_id, c.name, dict(c.arguments)) for c in reply.calls])
            if not turn.tool_calls:
                # A reply without calls: the harness either exits (done) or sends another request.
                self._next = await self._next_arrival()
                turn.done = self._next is None
            return turn

    async def observed_result(self, call_id: str) -> ToolOutcome:
        """The result of ``call_id`` from the harness's next request."""
        while True:
            changed = self._changed
            if call_id in self._results:
                return self._results.pop(call_id)
            if any(not h.released.is_set() for h in self._arrivals):
                return ToolOutcome(text="(the harness sent its next request without a result for this call)",
                                   is_error=True, duration=0.0)
            if self._exited.is_set():
                return ToolOutcome(text=f"(no result: {self.name} ended before sending one)", is_error=True, duration=0.0)
            await changed.wait()

    def decide(self, call_id: str, decision: op.Command) -> None:
        """The operator's Approve/Edit/Reject of a call the gateway holds (the driver calls this)."""
        if self.holds is not None:
            self.holds.decide(call_id, decision)

    async def close(self) -> None:
        """End the harness's process group, then the gateway."""
        await self._terminate()
        if self.holds is not None:
            self.holds.release_all()
        for held in list(self._arrivals):
            held.released.set()
        for pump in self._pumps:
            pump.cancel()
        await asyncio.gather(*self._pumps, return_exceptions=True)
        if self.gateway is not None:
            gateway, self.gateway = self.gateway, None
            await asyncio.to_thread(gateway.stop)

    # ---- the process ----

    async def _next_arrival(self) -> _Held | None:
        """The oldest request not yet released, or None once the harness has exited."""
        while True:
            changed = self._changed
            for held in self._arrivals:
                if not held.released.is_set():
                    return held
            if self._exited.is_set():
                return None
            await changed.wait()

    def _finished(self) -> AgentTurn:
        code = self.exit_code
        if code not in (0, None):
            tail = " | ".join(self._last_lines)
            raise AgentError(f"{self.name} exited with code {code}" + (f"; last output: {tail}" if tail else ""))
        return AgentTurn(done=True)

    async def _pump(self, stream: asyncio.StreamReader | None, name: str) -> None:
        if stream is None:
            return
        while True:
            line = await stream.readline()
            if not line:
                return
            text = line.decode("utf-8", "replace").rstrip("\n")
            if text:
                self._last_lines.append(text[:300])
                self._log(text, name)

    async def _watch(self) -> None:
        assert self.process is not None
        self.exit_code = await self.process.wait()
        await asyncio.gather(*self._pumps[:2], return_exceptions=True)
        self._log(f"{self.name} exited with code {self.exit_code}", "stdout")
        self._exited.set()
        self._poke()

    async def _terminate(self) -> None:
        """SIGTERM the harness's process group and every process carrying its tag (its shells run in sessions of
        their own), SIGKILL what is left after one grace; then the group's untagged rest. One grace for all of
        them keeps the whole stop within the driver's wait for ``close`` (CANCEL_GRACE): a stop cut short there
        would leave the shells running."""
        process = self.process
        if process is None:
            return
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
        await asyncio.to_thread(kill_tagged, self.tag, STOP_GRACE)
        with contextlib.suppress(ProcessLookupError):  # whatever the harness left in its group without its tag
            os.killpg(process.pid, signal.SIGKILL)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(process.wait(), 1.0)

    def _log(self, text: str, stream: str) -> None:
        if self._task is not None and self._task.log is not None:
            self._task.log(text, stream)


__all__ = ["ExternalAgent", "Harness", "HarnessContext", "PROVIDER_KEYS"]
