"""The oracle agent: plays the environment's solution plan (or a mutant) as real tool calls.

Deterministic and offline: one plan step per turn, ``${NAME}`` expanded from the
episode's context (APP_URL, STRIPE_API_BASE, WORKSPACE, …). It does not look at
what its calls return; the grader judges the outcome.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stripebench_tui.core.agent import AgentError, AgentTurn, Observation, Task, ToolRequest
from stripebench_tui.core.events import AGENT, ModelMessage, ToolCall
from stripebench_tui.envs.catalog import find_environment, load_environment
from stripebench_tui.envs.manifest import Environment
from stripebench_tui.envs.plans import PlanError, PlanStep, expand, load_plan

ENV_DIR = "ENV_DIR"  # context key the episode sets to the environment's directory


def plan_path(env: Environment, plan: str | None) -> Path:
    """The file of the solution plan (``plan`` None or "solution") or of the mutant named ``plan``."""
    manifest = env.manifest
    if plan in (None, "", "solution"):
        if manifest.solution is None:
            raise PlanError(f"environment {manifest.id!r} has no solution plan")
        return env.path(manifest.solution.plan)
    for mutant in manifest.mutants:
        if mutant.name == plan:
            return env.path(mutant.plan)
    names = ", ".join(m.name for m in manifest.mutants) or "none"
    raise PlanError(f"environment {manifest.id!r} has no mutant {plan!r} (mutants: {names})")


class OracleAgent:
    """Plays the environment's solution plan (option plan=MUTANT plays a mutant instead)."""

    name = "oracle"

    def __init__(self, plan: str | None = None, **options: Any) -> None:
        self.plan = plan
        self.options = options  # model, on_retry, … mean nothing to a plan
        self.steps: list[PlanStep] = []
        self.context: dict[str, str] = {}
        self._next = 0

    async def start(self, task: Task) -> None:
        """Load the plan of the task's environment."""
        root = task.context.get(ENV_DIR)
        try:
            env = load_environment(Path(root)) if root else find_environment(task.env_id)
            self.steps = load_plan(plan_path(env, self.plan), env.root)
        except PlanError as exc:
            raise AgentError(str(exc)) from None
        self.context = {k: str(v) for k, v in task.context.items()}

    def continue_from(self, events: list[Any], at_turn: int) -> None:
        """A fork of an episode at the end of ``at_turn`` (its recorded ``events``): the plan goes on after the steps
        those turns played (one step per agent turn)."""
        played = {ev.turn for ev in events if ev.turn <= at_turn and (
            (isinstance(ev, ToolCall) and ev.actor == AGENT) or (isinstance(ev, ModelMessage) and ev.role == "assistant"))}
        self._next = min(len(played), len(self.steps))

    async def next_turn(self, observations: list[Observation]) -> AgentTurn:
        """The next step of the plan; done after the last one."""
        if self._next >= len(self.steps):
            return AgentTurn(text="The plan is complete.", done=True, model="oracle")
        n = self._next
        step = self.steps[n]
        self._next += 1
        try:
            text = expand(step.say, self.context)
            calls = [ToolRequest(call_id=f"oracle-{n + 1}", tool=step.tool, arguments=expand(step.args, self.context))] \
                if step.tool else []
        except PlanError as exc:
            raise AgentError(f"plan step {n + 1}: {exc}") from None
        return AgentTurn(text=text, tool_calls=calls, done=step.done or self._next >= len(self.steps) and not calls,
                         model="oracle")

    async def close(self) -> None:
        """Nothing to release."""
