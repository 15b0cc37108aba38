"""What a batch runs: environments × agents × runs as cells, checked before anything starts."""

from __future__ import annotations

import re
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from stripebench_tui.agents import agent_names
from stripebench_tui.envs.benchfolder import is_bench_folder, load_bench_folder
from stripebench_tui.envs.catalog import find_environment, list_environments
from stripebench_tui.envs.manifest import Environment
from stripebench_tui.errors import UserError

# Agents a batch can run unattended: the built-in non-interactive ones and the external harnesses (":MODEL").
MODEL_AGENTS = ("anthropic", "openai", "claude-code", "codex", "mini-swe-agent")
PLAIN_AGENTS = ("oracle", "noop")
MUTANT = "mutant"
_SLUG = re.compile(r"[^a-z0-9.]+")


@dataclass(frozen=True)
class AgentSpec:
    """One entry of ``--agents``: ``oracle``, ``noop``, ``mutant:NAME`` or ``AGENT:MODEL``."""

    label: str  # as the user wrote it; the "model" column of the report
    agent: str
    options: dict[str, str] = field(default_factory=dict)

    @property
    def slug(self) -> str:
        return _SLUG.sub("-", self.label.lower()).strip("-")


def parse_agents(text: str) -> list[AgentSpec]:
    """``oracle,mutant:NAME,anthropic:MODEL`` → specs; UserError naming the entry that is not an agent."""
    specs: list[AgentSpec] = []
    for raw in (part.strip() for part in text.split(",")):
        if not raw:
            continue
        name, _, arg = raw.partition(":")
        if name == MUTANT:
            if not arg:
                raise UserError("mutant needs the mutant's name: --agents mutant:NAME (see the environment's manifest)")
            specs.append(AgentSpec(raw, "oracle", {"plan": arg}))
        elif name in PLAIN_AGENTS and not arg:
            specs.append(AgentSpec(raw, name))
        elif name in MODEL_AGENTS:
            specs.append(AgentSpec(raw, name, {"model": arg} if arg else {}))
        elif name in agent_names():
            raise UserError(f"agent {name!r} cannot run unattended in a batch; use {', '.join(PLAIN_AGENTS)}, "
                            f"mutant:NAME or one of {', '.join(MODEL_AGENTS)} (AGENT:MODEL)")
        else:
            raise UserError(f"unknown agent {raw!r} in --agents; known: {', '.join(PLAIN_AGENTS)}, mutant:NAME, "
                            + ", ".join(f"{a}:MODEL" for a in MODEL_AGENTS))
    if not specs:
        raise UserError("--agents names no agent (e.g. --agents oracle,mutant:NAME)")
    if len({s.slug for s in specs}) != len(specs):
        raise UserError("--agents names the same agent twice")
    return specs


def resolve_environments(refs: list[str], *, all_envs: bool = False,
                         category: str | None = None) -> list[tuple[str, Environment]]:
    """(what to pass to ``run``, environment) for ids, paths, ``--all`` and ``--category``; UserError for an unknown one."""
    found: list[tuple[str, Environment]] = []
    if all_envs or category:
        listed = list_environments()
        if category:
            listed = [e for e in listed if e.manifest.category == category]
            if not listed:
                raise UserError(f"no environment of category {category!r} (backend, full-stack, gym)")
        found += [(e.id, e) for e in listed]
    for ref in refs:
        found += _environments_of(ref)
    if not found:
        raise UserError("name at least one environment (ids, paths, --all or --category)")
    seen: dict[str, tuple[str, Environment]] = {}
    for ref, env in found:
        seen.setdefault(env.id, (ref, env))
    return list(seen.values())


def _environments_of(ref: str) -> list[tuple[str, Environment]]:
    """(what to pass to ``run``, environment) of one ref: an id is passed on by id (another node finds its own copy),
    a path as an absolute path; a benchmark folder that holds several problems (sdk-upgrades-ruby) gives each of them,
    as the path of its problem (``run`` takes one problem at a time)."""
    path = Path(ref).expanduser()
    if is_bench_folder(path):
        envs = load_bench_folder(path)
        if len(envs) > 1:
            return [(str((env.folder / "environment" / env.problem).resolve()), env) for env in envs if env.problem]
    env = find_environment(ref)
    return [(env.id if ref == env.id else str(path.resolve()), env)]


def check_agents_fit(envs: list[tuple[str, Environment]], agents: list[AgentSpec]) -> None:
    """Every ``mutant:NAME`` exists in every environment; UserError naming the first that lacks it."""
    for spec in agents:
        plan = spec.options.get("plan")
        if plan is None:
            continue
        for _, env in envs:
            names = [m.name for m in env.manifest.mutants]
            if plan not in names:
                raise UserError(f"environment {env.id!r} has no mutant {plan!r}"
                                + (f" (it has: {', '.join(names)})" if names else " (it has none)"))


def memory_bytes(text: str) -> int:
    """``"1g"``, ``"512m"`` (the manifest's docker memory) as bytes."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)b?\s*", text.lower())
    if not match:
        return 1 << 30
    return int(float(match.group(1)) * 1024 ** " kmgt".index(match.group(2) or " "))


@dataclass
class Cell:
    """One episode of the batch: an environment, an agent, a run number and its seed."""

    id: str
    env: str
    env_ref: str
    category: str
    agent_label: str
    agent: str
    options: dict[str, str]
    run: int
    seed: int
    memory: int
    argv: list[str] = field(default_factory=list)  # `stripebench run …` without the episode directory

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Cell:
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})

    def command(self, episode_dir: Path) -> list[str]:
        """The episode as a process of this interpreter: ``stripebench run … --headless --episode-dir DIR``."""
        return [sys.executable, "-m", "stripebench_tui", *self.argv, "--episode-dir", str(episode_dir)]


def build_cells(envs: list[tuple[str, Environment]], agents: list[AgentSpec], runs: int, seed: int, *,
                backend: str = "emulator", sandbox: str | None = None, max_turns: int | None = None) -> list[Cell]:
    """Every (environment, agent, run) with run r seeded ``seed + r - 1`` (the same seed across a run's cells)."""
    cells = []
    for ref, env in envs:
        for spec in agents:
            for run in range(1, runs + 1):
                argv = ["run", ref, "--headless", "--agent", spec.agent, "--seed", str(seed + run - 1), "--backend", backend]
                if "plan" in spec.options:
                    argv += ["--plan", spec.options["plan"]]
                if "model" in spec.options:
                    argv += ["--model", spec.options["model"]]
                if sandbox:
                    argv += ["--sandbox", sandbox]
                if max_turns:
                    argv += ["--max-turns", str(max_turns)]
                cells.append(Cell(id=f"{env.id}__{spec.slug}__r{run}", env=env.id, env_ref=ref,
                                  category=env.manifest.category, agent_label=spec.label, agent=spec.agent,
                                  options=dict(spec.options), run=run, seed=seed + run - 1,
                                  memory=memory_bytes(env.manifest.docker.memory), argv=argv))
    return cells


__all__ = ["AgentSpec", "Cell", "build_cells", "check_agents_fit", "memory_bytes", "parse_agents", "resolve_environments"]
