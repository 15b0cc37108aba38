"""The overlay of ours kept beside a benchmark folder: what our manifest needs and the folder does not say.

Looked up as ``<folder>.stripebench.toml`` beside the folder, else ``environments/published/<name>.toml`` (the
overlays we ship for the published benchmark), else every field's default. Example::

    title = "Migrate Card Element to embedded Checkout"
    category = "full-stack"
    submission = "ids_for_grading.txt"          # relative to the workspace (the folder's environment/)
    needs = ["Stripe test mode: the grader reads the session back"]   # shown by `stripebench envs --path`
    stripe_preload = true                       # the app hard-codes api.stripe.com: it needs the SDK preload
    problem_replace = { "/workdir" = "${WORKSPACE}" }
    hidden = ["server/"]                        # workspace paths the agent must not see (the server's code)...
    visible = ["server/submission.json"]        # ...but for these: shared by the agent and the full workspace

    [[services]]                                # as in a manifest; commands run in the workspace,
                                                # ${BENCH_FOLDER} is the folder (a hidden server's code),
                                                # ${BENCH_OVERLAY_DIR} this file's directory
    name = "app"
    command = "cd server && python main.py"
    ports = ["APP_PORT"]

    [grader]                                    # a command; its per-test report becomes the criteria
    command = 'python -m pytest -q checkout_tests.py --checkout-session-id="$SUBMISSION" --junitxml="$REPORT"'
    report = "junit"

    [oracle]                                    # after solution/'s files are written through real tool calls
    steps = [{ tool = "shell", args = { command = "echo done" } }]

The grader's command runs with bash in a copy of ``grader/`` (``cwd``), with ``SUBMISSION`` (the submission's text),
``SUBMISSION_PATH``, ``REPORT`` (where to write the report), ``WORKSPACE``, ``PROBLEM`` and the episode's
``STRIPE_API_BASE`` / ``STRIPE_SECRET_KEY`` in its environment (and ``APP_GEM_HOME``, the app's gems, when the
environment has ``[ruby]``): write ``"$SUBMISSION"`` quoted, it is the agent's text.

With ``hidden`` paths the agent's workspace lacks them (but for the ``visible`` ones under them), and what must
see the folder's whole environment/ sees the full workspace beside it (``envs.workspace``): the services, setup
commands and seed run there, the grader's link (``workspace_link``) points there, and oracle steps name it
``${FULL_WORKSPACE}``. Name every file under a hidden path the agent reads or writes as visible, also those made
at run time (a catalog the server writes, a .env the setup writes).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from stripebench_tui.envs.manifest import ManifestLimits, NodeSpec, PostgresSpec, RubySpec, ServiceSpec, bundled_dir, read_toml
from stripebench_tui.errors import BadFileError

OVERLAY_SUFFIX = ".stripebench.toml"
REPORT_KINDS = ("auto", "junit", "pytest-json", "rspec-json", "score-json")


class _StrictOverlay(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class GemsSpec(_StrictOverlay):
    """A Gemfile of the folder the grader runs under ``bundle exec`` (``envs.ruby_gems``): installed for it from the
    Ruby registry, or where that is not reachable from local sources (installed gems where they fit, the rest built
    from their public repositories at the pinned release); the grader's processes get ``BUNDLE_GEMFILE`` and the
    ``GEM_HOME`` that holds them."""

    # Relative to the folder; ${BENCH_OVERLAY_DIR}/… is a file of ours beside the overlay (a lock for a folder without one).
    gemfile: str = "Gemfile"
    lockfile: str | None = "Gemfile.lock"  # the versions to build where the Gemfile does not pin one exactly
    # Whether bundler resolves with the lock: as the folder's Dockerfile does (galtee's copies the Gemfile alone).
    use_lock: bool = False


class ExternalGraderSpec(_StrictOverlay):
    """A grader that is a command (pytest, RSpec, a script) whose report becomes criteria."""

    # Default: pytest over the grader folder with a JUnit report (the published Python graders are pytest files).
    command: str = 'python -m pytest -q -p no:cacheprovider --junitxml="$REPORT"'
    cwd: str = "grader"  # relative to the folder; the command runs in a fresh copy of it, never in the folder
    report: Literal["auto", "junit", "pytest-json", "rspec-json", "score-json"] = "auto"
    # Where the report is, relative to the copy of cwd ("$REPORT" or unset: the file $REPORT names; "-": stdout).
    report_file: str | None = None
    timeout: float = Field(300.0, gt=0)
    debounce: float = Field(0.5, ge=0)  # seconds of quiet after a change before a live re-run
    on: list[str] = Field(default_factory=lambda: ["*"])  # Stripe object types whose appearance re-runs it ("*": any)
    live: bool = True  # False: run only at the end (a slow grader)
    submission_format: Literal["text", "json"] = "text"  # json: a malformed submission fails without running it
    submission_pattern: str | None = None  # a regex the submission must match (e.g. "^cs_"), else it fails unrun
    # Copies of the agent's files the grader reads at fixed places: {path in the grader copy: path in the workspace}.
    inputs: dict[str, str] = Field(default_factory=dict)
    # pip requirement specs the grader needs beyond this machine's python (e.g. an older stripe it was written for):
    # installed once into a cached virtualenv that comes first on the command's PATH.
    requirements: list[str] = Field(default_factory=list)
    # Extra variables for the command (e.g. PYTEST_DISABLE_PLUGIN_AUTOLOAD = "1": pytest starts in a fraction of
    # the time when it does not import every plugin installed on the machine).
    env: dict[str, str] = Field(default_factory=dict)
    # The name, beside the grader copy, of a link to the agent's workspace (published graders read ../environment/…).
    workspace_link: str = "environment"
    gems: GemsSpec | None = None  # a Ruby grader's Gemfile (RSpec under bundle exec)


class OracleSpec(_StrictOverlay):
    map: dict[str, str] = Field(default_factory=dict)  # solution/ path -> workspace path, where they differ
    skip: list[str] = Field(default_factory=list)  # globs of solution/ files not to write (notes, READMEs)
    # A directory of our own files (relative to the overlay file) written after solution/'s, the same way: for
    # folders whose solution/ holds only notes.
    files: str | None = None
    steps: list[dict[str, Any]] = Field(default_factory=list)  # plan steps (see envs.plans) after the files


class MutantSpec(_StrictOverlay):
    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]*$")
    description: str = ""
    files: str | None = None  # a directory of overlay files, relative to the overlay file
    steps: list[dict[str, Any]] = Field(default_factory=list)
    finding: str = ""  # its signature finding (a detector's name), checked by validate
    # A mutant made from the oracle: its plan (files and steps), changed by `replace` (old, new text in any step;
    # each must be found), without the steps `drop` names, cut at the first step `cut_at` names (a step is named
    # by its `say` or one of its arguments' values, whole); then `files` and `steps` as above.
    from_oracle: bool = False
    replace: list[tuple[str, str]] = Field(default_factory=list)
    drop: list[str] = Field(default_factory=list)
    cut_at: str | None = None


class OverlayStripe(_StrictOverlay):
    seed: str | None = None  # a script relative to the overlay file, run in the workspace before the agent starts
    api_version: str | None = None


class OverlayDocker(_StrictOverlay):
    # --sandbox docker builds the folder's Dockerfile first, our image on top (single-problem folders only).
    use_folder_dockerfile: bool = False
    cpus: float = Field(1.0, gt=0)
    memory: str = "1g"


class ProblemOverride(_StrictOverlay):
    """Per-problem settings of a folder with several problems."""

    title: str | None = None
    category: Literal["backend", "full-stack", "gym"] | None = None
    submission: str | None = None
    setup: list[str] = Field(default_factory=list)
    hints: list[str] = Field(default_factory=list)
    grader: ExternalGraderSpec | None = None
    # This problem's mutants, after the folder-wide ones (a mutant made from one problem's oracle names its text).
    mutants: list[MutantSpec] = Field(default_factory=list)


class Overlay(_StrictOverlay):
    title: str | None = None
    # The name the published results give it (their CSV's `eval name`), when it is not the folder's name; in a
    # folder with problems, `{problem}` stands for the problem's sub-folder name (e.g. "ruby-{problem}").
    eval_name: str | None = None
    category: Literal["backend", "full-stack", "gym"] | None = None
    summary: str = ""
    submission: str | None = None
    tools: list[str] = Field(default_factory=list)
    setup: list[str] = Field(default_factory=list)
    requirements: str | None = None  # a pip requirements file relative to the overlay file
    hints: list[str] = Field(default_factory=list)
    limits: ManifestLimits = Field(default_factory=ManifestLimits)
    stripe: OverlayStripe = Field(default_factory=OverlayStripe)
    services: list[ServiceSpec] = Field(default_factory=list)
    # What the folder's Dockerfile would bring up, made by us on this machine: a PostgreSQL cluster of the episode's
    # own (the role and database its PROBLEM.md names) and the app's npm packages (pnpm, cached between episodes).
    postgres: PostgresSpec | None = None
    node: NodeSpec | None = None
    ruby: RubySpec | None = None  # the app's Gemfile, in the workspace (a Sinatra/Puma server)
    fixed_ports: list[int] = Field(default_factory=list)  # ports the folder's server or grader hard-codes (Manifest)
    # What it needs that this machine may not have (real test mode, a toolchain, a package not reachable offline).
    needs: list[str] = Field(default_factory=list)
    offline: bool = True  # False: it cannot run on the emulator alone (say why in needs)
    # The app hard-codes api.stripe.com: run it with the per-language Stripe SDK preload (added by the preload
    # work; this overlay only records that the app needs it).
    stripe_preload: bool = False
    problem_replace: dict[str, str] = Field(default_factory=dict)  # text in PROBLEM.md -> what the agent reads
    # Workspace paths the agent must not see, and the paths under them it still sees (see the module docstring).
    hidden: list[str] = Field(default_factory=list)
    visible: list[str] = Field(default_factory=list)
    grader: ExternalGraderSpec = Field(default_factory=ExternalGraderSpec)
    oracle: OracleSpec = Field(default_factory=OracleSpec)
    mutants: list[MutantSpec] = Field(default_factory=list)
    docker: OverlayDocker = Field(default_factory=OverlayDocker)
    problems: dict[str, ProblemOverride] = Field(default_factory=dict)

    @classmethod
    def load(cls, path: Path) -> Overlay:
        """Read and check an overlay file; BadFileError naming the file and field."""
        data = read_toml(path)
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(p) for p in err["loc"]) or "(top level)"
            raise BadFileError(f"{path}: {where}: {err['msg'].removeprefix('Value error, ')}") from None

    def problem(self, name: str | None) -> dict[str, Any]:
        """The set fields of problem ``name``'s override ({} for none)."""
        if name is None or name not in self.problems:
            return {}
        return self.problems[name].model_dump(exclude_defaults=True)

    def mutants_for(self, problem: str | None) -> list[MutantSpec]:
        """The folder's mutants, then problem ``problem``'s own."""
        override = self.problems.get(problem) if problem else None
        return list(self.mutants) + (list(override.mutants) if override is not None else [])

    def grader_for(self, problem: str | None) -> ExternalGraderSpec:
        override = self.problems.get(problem) if problem else None
        return override.grader if override is not None and override.grader is not None else self.grader


def published_dir() -> Path:
    """Where the overlays we ship for the published benchmark live."""
    return bundled_dir("environments") / "published"


def find_overlay(folder: Path) -> Path | None:
    """The overlay for ``folder``: beside it, else the one we ship for its name, else None."""
    beside = folder.parent / f"{folder.name}{OVERLAY_SUFFIX}"
    if beside.is_file():
        return beside
    shipped = published_dir() / f"{folder.name}.toml"
    return shipped if shipped.is_file() else None


__all__ = ["ExternalGraderSpec", "GemsSpec", "OVERLAY_SUFFIX", "Overlay", "REPORT_KINDS", "find_overlay", "published_dir"]
