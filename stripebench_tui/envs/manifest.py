"""An environment's manifest (``environments/<id>/environment.toml``), checked by a schema.

The manifest says what an episode of the environment needs: the task text, the
services to start and how to tell they are healthy, the Stripe seed script, the
submission file, limits, hints, the oracle's solution plan and the mutants.
Loading reports the first problem on one line, naming the file and the field.
"""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from stripebench_tui.errors import BadFileError

MANIFEST = "environment.toml"
# Files every environment may ask for by name (``shared``): copied into the episode's workspace beside its own
# files (envs.workspace.copy_workspace), so one dev server serves every Flask app instead of a copy in each.
SHARED_DIR = Path(__file__).resolve().parent / "shared"
ID_PATTERN = re.compile(r"^[a-z][a-z0-9-]{1,48}$")
SQL_NAME = r"^[A-Za-z_][A-Za-z0-9_]{0,62}$"  # a PostgreSQL role or database name that needs no quoting


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Health(_Strict):
    """How to tell a service is up: an HTTP URL answering 2xx/3xx, or a TCP port accepting connections."""

    http: str | None = None  # e.g. "http://127.0.0.1:${APP_PORT}/health"
    tcp: str | None = None  # e.g. "127.0.0.1:${APP_PORT}"
    timeout: float = Field(30.0, gt=0, le=600)
    # A 5xx answer ends the wait at once: a dev server that compiled with errors (next dev) answers 500 and will
    # not get better by waiting. Off by default: some servers answer 502/503 while they start.
    fail_on_5xx: bool = False

    @model_validator(mode="after")
    def _one_probe(self) -> Health:
        if (self.http is None) == (self.tcp is None):
            raise ValueError("give exactly one of 'http' or 'tcp'")
        return self


class ServiceSpec(_Strict):
    """A process the environment runs for the whole episode (an app server, a worker)."""

    name: str = Field(pattern=r"^[a-z][a-z0-9_-]*$")
    command: str  # run with bash in the workspace; ${VAR} expands from the episode's environment
    ports: list[str] = Field(default_factory=list)  # env var names that each get a free port, e.g. ["APP_PORT"]
    health: Health | None = None
    env: dict[str, str] = Field(default_factory=dict)
    restart: bool = False  # restart when it exits (agents often restart the app themselves)


class ManifestLimits(_Strict):
    max_turns: int = Field(80, gt=0)
    wall_time: float = Field(1800.0, gt=0)  # seconds
    max_tokens: int | None = Field(None, gt=0)
    max_cost_usd: float | None = Field(None, gt=0)


class StripeSetup(_Strict):
    # Script in the environment dir, run in the workspace before the agent starts, with the environment's python: its
    # requirements must hold what the seed imports (the stripe SDK); without requirements, stripebench's own python.
    seed: str | None = None
    api_version: str | None = None  # the account's default API version for this environment


class PlanRef(_Strict):
    """A tool-call plan (solution or mutant): a TOML file of steps, see ``envs.plans``."""

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]*$")
    plan: str  # path relative to the environment directory
    description: str = ""
    finding: str = ""  # a mutant's signature finding (a findings detector's name), checked by validate


class FinalState(_Strict):
    """The states the task lets objects of one Stripe type end in (``invoice``: paid, void, open…)."""

    object: Literal["invoice", "subscription", "payment_intent"]  # the types findings.final_state knows the ends of
    states: list[str] = Field(min_length=1)  # Stripe's own words: deleted, void, uncollectible, paid, canceled…
    metadata: str | None = None  # only objects made or updated with this metadata key (e.g. legacy_booking_id)


class Expects(_Strict):
    """What the task asks for in terms a trace can show; the episode copies it into the trace header, where the
    findings detectors read it (a detector that needs a declaration stays quiet without one)."""

    # The app's own server code calls Stripe with a restricted key (rk_), not the account's secret key.
    restricted_key: bool = False
    final_states: list[FinalState] = Field(default_factory=list)

    def header_form(self) -> dict[str, Any]:
        """The declaration as the trace header keeps it: only what was declared."""
        return self.model_dump(exclude_defaults=True, exclude_none=True)


class PostgresSpec(_Strict):
    """A PostgreSQL cluster of the episode's own (``runtime.postgres``): started before the services, on a free
    port (``POSTGRES_PORT``), with the role and database the task names; ``POSTGRES_URL`` is its URL."""

    role: str = Field("app", pattern=SQL_NAME)
    password: str = Field("password", min_length=1)
    database: str = Field("app", pattern=SQL_NAME)
    timeout: float = Field(60.0, gt=0, le=600)  # seconds until it must accept connections


class NodeSpec(_Strict):
    """The workspace's npm packages, installed before setup with pnpm (``runtime.node_packages``), its store cached
    between episodes; every process of the episode finds ``pnpm`` on PATH, using the same store."""

    package_manager: Literal["pnpm"] = "pnpm"
    dir: str = "."  # where package.json is, relative to the workspace
    # A package whose commands must be in node_modules/.bin though it is only a dependency's dependency (pnpm's
    # public-hoist-pattern), e.g. "tsx" for a script that runs `npx tsx`; the same for every pnpm the episode runs.
    public_hoist_pattern: str = ""
    # The oldest Node.js major version the app runs on (Next.js 15.5 needs 20; Debian 12 has 18): an older Node on
    # this machine is replaced, for the episode's processes, by that version from the npm registry (cached).
    min_node: int | None = Field(None, ge=16)


class RubySpec(_Strict):
    """An app's Gemfile (``envs.ruby_gems``), installed before setup: from the Ruby registry with the app's own
    Gemfile.lock, or offline from local sources (installed gems where they fit the Gemfile, the rest built at the
    lock's versions), the episode's copy of the lock then being that resolution (the install log names each version
    that differs). Every process of the episode gets the ``GEM_HOME`` holding the gems, so ``bundle exec`` in the
    app's directory runs under the app's own Gemfile."""

    gemfile: str = "Gemfile"  # relative to the workspace
    # Gems installed beside the app's, "name version" each, as the folder's Dockerfile prefetches them (the SDK an
    # upgrade task moves to): the agent's `bundle install` of its changed Gemfile finds them without a registry.
    prefetch: list[str] = Field(default_factory=list)


class DockerSpec(_Strict):
    dockerfile: str | None = None
    cpus: float = Field(1.0, gt=0)
    memory: str = "1g"
    pids: int = Field(512, ge=32)  # most processes the container may hold at once (a fork bomb stops there)


class Manifest(_Strict):
    id: str
    title: str
    category: Literal["backend", "full-stack", "gym"]
    stack: str = ""  # what the workspace is built with, for the envs table, e.g. "Python · Flask · SQLite"
    summary: str = ""
    problem: str = "PROBLEM.md"
    workspace: str = "workspace"
    # Names of files in stripebench's shared workspace files (stripebench_tui/envs/shared/, e.g. "devserver.py")
    # copied into the workspace when an episode lays it out; the environment's workspace must not hold them itself.
    shared: list[str] = Field(default_factory=list)
    # Workspace paths the agent must not see (a server's code holding the answers): left out of the agent's
    # workspace, kept in the full workspace the services, setup, graders and oracle work in (envs.workspace);
    # ``visible`` names paths under them the agent still sees, shared with that full workspace.
    hidden: list[str] = Field(default_factory=list)
    visible: list[str] = Field(default_factory=list)
    submission: str | None = None  # file in the workspace where the agent puts its answer (e.g. a cs_ id)
    grader: str | None = None  # module in graders/ (default: the id with dashes as underscores)
    tools: list[str] = Field(default_factory=lambda: ["shell", "files", "stripe_docs"])
    # Commands run with bash in the fresh workspace before the seed script (e.g. making the app's own venv);
    # they see the episode's environment variables. A failing command ends the episode before the agent starts.
    setup: list[str] = Field(default_factory=list)
    # A pip requirements file (relative to the environment directory) of what the app, its seed script and setup
    # commands need; installed into a cached virtualenv first on their PATH (see envs.deps). Default: the
    # workspace's requirements.txt when there is one; "" for none.
    requirements: str | None = None
    limits: ManifestLimits = Field(default_factory=ManifestLimits)
    stripe: StripeSetup = Field(default_factory=StripeSetup)
    # Make the official Stripe SDKs of an app that reads no base URL use the episode's backend anyway (Python,
    # Node, Ruby preloads in every process of the episode; see stripebench_tui.preload and docs/stripe-preload.md).
    stripe_preload: bool = False
    services: list[ServiceSpec] = Field(default_factory=list)
    postgres: PostgresSpec | None = None  # a cluster of the episode's own, before the services (local sandbox)
    node: NodeSpec | None = None  # npm packages installed before setup (local sandbox)
    ruby: RubySpec | None = None  # an app's gems installed before setup (local sandbox)
    # Ports on this machine the app or its grader must listen on whatever the episode (a published folder's server
    # hard-codes 4242): the episode holds each for its whole life, so a second episode of any environment that
    # fixes the same port waits for the first instead of colliding with it (runtime.fixed_ports).
    fixed_ports: list[int] = Field(default_factory=list)
    hints: list[str] = Field(default_factory=list)
    solution: PlanRef | None = None
    mutants: list[PlanRef] = Field(default_factory=list)
    expects: Expects = Field(default_factory=Expects)
    docker: DockerSpec = Field(default_factory=DockerSpec)

    @field_validator("id")
    @classmethod
    def _id_shape(cls, v: str) -> str:
        if not ID_PATTERN.match(v):
            raise ValueError("must be lower-case letters, digits and dashes, starting with a letter")
        return v

    @field_validator("fixed_ports")
    @classmethod
    def _port_numbers(cls, v: list[int]) -> list[int]:
        bad = [p for p in v if not 1 <= p <= 65535]
        if bad:
            raise ValueError(f"{bad[0]} is not a TCP port (1-65535)")
        return sorted(set(v))

    @field_validator("hidden", "visible")
    @classmethod
    def _relative_paths(cls, v: list[str]) -> list[str]:
        for path in v:
            parts = path.strip("/").split("/")
            if not path.strip("/") or path.startswith("/") or ".." in parts or "." in parts:
                raise ValueError(f"{path!r} is not a path inside the workspace (relative, without . or ..)")
        return v

    @model_validator(mode="after")
    def _visible_under_hidden(self) -> Manifest:
        hidden = [h.strip("/") for h in self.hidden]
        for path in self.visible:
            rel = path.strip("/")
            if not any(rel.startswith(h + "/") for h in hidden):
                raise ValueError(f"visible: {path!r} is under no hidden path (every other path is visible already)")
        return self

    @field_validator("tools")
    @classmethod
    def _known_tools(cls, v: list[str]) -> list[str]:
        unknown = sorted(set(v) - {"shell", "files", "browser", "stripe_docs"})
        if unknown:
            raise ValueError(f"unknown tool server(s) {', '.join(unknown)}")
        return v

    @property
    def grader_module(self) -> str:
        return self.grader or self.id.replace("-", "_")


class Environment:
    """A loaded environment: its manifest and the directory it lives in."""

    def __init__(self, root: Path, manifest: Manifest) -> None:
        self.root = root
        self.manifest = manifest

    @property
    def id(self) -> str:
        return self.manifest.id

    @property
    def workspace(self) -> Path:
        return self.root / self.manifest.workspace

    def path(self, relative: str) -> Path:
        return self.root / relative

    def problem_text(self) -> str:
        return self.path(self.manifest.problem).read_text(encoding="utf-8")

    def __repr__(self) -> str:
        return f"Environment({self.id!r}, {str(self.root)!r})"


def _format_error(path: Path, exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or "(top level)"
    msg = err["msg"].removeprefix("Value error, ")
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"{path}: {where}: {msg}{more}"


def read_toml(path: Path) -> dict[str, Any]:
    """A TOML file's table; BadFileError naming the file when it is missing or not TOML."""
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BadFileError(f"{path}: no such file") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise BadFileError(f"{path}: not valid TOML: {exc}") from None


def load_manifest_environment(root: Path) -> Environment:
    """Load and check ``root/environment.toml``; BadFileError with file and field on any problem."""
    path = root / MANIFEST
    data = read_toml(path)
    try:
        manifest = Manifest.model_validate(data)
    except ValidationError as exc:
        raise BadFileError(_format_error(path, exc)) from None
    if manifest.id != root.name:
        raise BadFileError(f"{path}: id: {manifest.id!r} does not match its directory name {root.name!r}")
    env = Environment(root, manifest)
    for field_name, rel in [("problem", manifest.problem), ("workspace", manifest.workspace)] + [
        (f"{kind}.plan", ref.plan)
        for kind, ref in [("solution", manifest.solution)] + [("mutants", m) for m in manifest.mutants] if ref
    ] + ([("stripe.seed", manifest.stripe.seed)] if manifest.stripe.seed else []) + (
        [("requirements", manifest.requirements)] if manifest.requirements else []
    ):
        if not env.path(rel).exists():
            raise BadFileError(f"{path}: {field_name}: {rel} does not exist")
    for name in manifest.shared:
        if "/" in name or not (SHARED_DIR / name).is_file():
            known = ", ".join(sorted(p.name for p in SHARED_DIR.iterdir() if p.is_file()))
            raise BadFileError(f"{path}: shared: no shared file {name!r} (there are: {known})")
        if (env.workspace / name).exists():
            raise BadFileError(f"{path}: shared: {name} is also in {manifest.workspace}/; remove one of them")
    return env


def bundled_dir(name: str) -> Path:
    """``name`` (environments, graders, replays) beside the package in a checkout, else the copy in the wheel.

    A checkout has them at its root; an installed wheel carries them as ``stripebench_tui/bundled/<name>``.
    """
    package = Path(__file__).resolve().parents[1]
    checkout = package.parent / name
    if checkout.is_dir():
        return checkout
    return package / "bundled" / name


def environments_dir() -> Path:
    """Where environments live: $STRIPEBENCH_ENVIRONMENTS, else the checkout's environments/, else the bundled ones."""
    override = os.environ.get("STRIPEBENCH_ENVIRONMENTS")
    if override:
        return Path(override).resolve()
    return bundled_dir("environments")


