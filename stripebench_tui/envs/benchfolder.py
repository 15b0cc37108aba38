"""Benchmark folders as published (``environment/``, ``grader/``, ``solution/``, a Dockerfile), opened as they are.

A folder in that layout becomes one environment, or one per problem when ``environment/`` holds several problems
in sub-folders (each with its PROBLEM.md; its id is ``<folder>-<problem>``). What our manifest needs and the folder
does not say comes from an overlay of ours (``overlay.Overlay``): ``<folder>.stripebench.toml`` beside the folder,
else the bundled ``environments/published/<name>.toml``, else defaults. Nothing is ever written into the folder:
the oracle's plan (the solution's files written through real tool calls, then the overlay's steps) is generated
into the cache, and the grader runs on a copy (``grading.external``).
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
import shlex
from pathlib import Path
from typing import Any, cast

from pydantic import ValidationError

from stripebench_tui.core.json_value import JSONValue
from stripebench_tui.envs.bench_overlay import OVERLAY_SUFFIX, ExternalGraderSpec, MutantSpec, Overlay, find_overlay
from stripebench_tui.envs.deps import cache_root
from stripebench_tui.envs.manifest import ID_PATTERN, MANIFEST, DockerSpec, Environment, Manifest, PlanRef, StripeSetup
from stripebench_tui.errors import BadFileError, UserError
from stripebench_tui.shared_cache import publish_file

LAYOUT_HELP = ("a benchmark folder holds environment/ (with PROBLEM.md, or problems in sub-folders), grader/ and "
               "optionally solution/")
_PLAN_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")  # what envs.plans.expand would replace
FOLDER_VAR = "${BENCH_FOLDER}"
OVERLAY_DIR_VAR = "${BENCH_OVERLAY_DIR}"
SUBMISSION_NAMES = ("ids_for_grading.txt", "submission.json", "submission.txt")
_TEXT_LIMIT = 2_000_000  # bytes; bigger solution files are copied with the shell, not written through the files tool


class BenchEnvironment(Environment):
    """An environment read from a benchmark folder: the manifest we derived plus the overlay and grader spec."""

    def __init__(self, root: Path, manifest: Manifest, *, folder: Path, problem: str | None, overlay: Overlay,
                 overlay_path: Path | None) -> None:
        super().__init__(root, manifest)
        self.folder = folder
        self.problem = problem  # the sub-folder name of a multi-problem folder, else None
        self.overlay = overlay
        self.overlay_path = overlay_path

    @property
    def external_grader(self) -> ExternalGraderSpec:
        """How to run this folder's grader (``grading.external`` reads it); ``${BENCH_OVERLAY_DIR}`` in its ``gems``
        paths is the overlay's directory (a Gemfile.lock of ours for a folder that ships none)."""
        spec = self.overlay.grader_for(self.problem)
        gems = spec.gems
        if gems is None or self.overlay_path is None:
            return spec
        here = str(self.overlay_path.parent.resolve())
        placed = {k: v.replace(OVERLAY_DIR_VAR, here) for k, v in (("gemfile", gems.gemfile), ("lockfile", gems.lockfile))
                  if v is not None and OVERLAY_DIR_VAR in v}
        return spec.model_copy(update={"gems": gems.model_copy(update=placed)}) if placed else spec

    @property
    def grader_dir(self) -> Path:
        """The folder's grader/ (never copied into the workspace)."""
        return self.folder / "grader"

    @property
    def solution_dir(self) -> Path | None:
        base = self.folder / "solution"
        if self.problem is not None:
            base = base / self.problem
        return base if base.is_dir() else None

    @property
    def needs(self) -> list[str]:
        """What running it needs beyond this machine (from the overlay), for ``envs --path``."""
        return list(self.overlay.needs)

    def problem_text(self) -> str:
        text = super().problem_text()
        for old, new in self.overlay.problem_replace.items():  # e.g. the task's /workdir paths onto the workspace
            text = text.replace(old, new)
        return text


def is_bench_folder(path: Path) -> bool:
    """A directory that looks like the published layout (and is not one of our manifest environments)."""
    return path.is_dir() and not (path / MANIFEST).is_file() and (
        (path / "environment").is_dir() or (path / "grader").is_dir() or _problem_parent(path) is not None)


def _problem_parent(path: Path) -> Path | None:
    """The benchmark folder of ``path`` when ``path`` is ``<folder>/environment/<problem>``."""
    if path.parent.name == "environment" and (path / "PROBLEM.md").is_file() and (path.parent.parent / "grader").is_dir():
        return path.parent.parent
    return None


def problems(folder: Path) -> list[str | None]:
    """[None] for a single-problem folder, else the problem sub-folder names; BadFileError naming what is missing."""
    env_dir = folder / "environment"
    if not env_dir.is_dir():
        raise BadFileError(f"{folder}: not a benchmark folder: no environment/ ({LAYOUT_HELP})")
    if not (folder / "grader").is_dir():
        raise BadFileError(f"{folder}: not a benchmark folder: no grader/ ({LAYOUT_HELP})")
    if (env_dir / "PROBLEM.md").is_file():
        return [None]
    subs = sorted(d.name for d in env_dir.iterdir() if d.is_dir() and (d / "PROBLEM.md").is_file())
    if not subs:
        raise BadFileError(f"{folder}: environment/ has no PROBLEM.md, neither at its top nor in a sub-folder ({LAYOUT_HELP})")
    return cast("list[str | None]", subs)


def env_id(folder: Path, problem: str | None) -> str:
    """Our id for a folder's problem: the folder name (plus ``-<problem>``), made to fit ``ID_PATTERN``."""
    raw = folder.name + (f"-{problem}" if problem else "")
    ident = re.sub(r"[^a-z0-9]+", "-", raw.lower()).strip("-")
    if not ident or not ident[0].isalpha():
        ident = "bench-" + ident
    ident = ident[:49].rstrip("-")
    if not ID_PATTERN.match(ident):  # pragma: no cover - the steps above always fit
        raise BadFileError(f"{folder}: cannot make an environment id of {raw!r}")
    return ident


def load_bench_folder(path: Path, overlay_path: Path | None = None) -> list[BenchEnvironment]:
    """Every environment of the folder at ``path`` (a problem sub-folder gives just that one)."""
    path = path.expanduser().resolve()
    parent = _problem_parent(path)
    folder, only = (parent, path.name) if parent is not None else (path, None)
    names = problems(folder)
    if only is not None:
        names = [only]
    found = overlay_path or find_overlay(folder)
    overlay = Overlay.load(found) if found else Overlay()
    return [_environment(folder, name, overlay, found) for name in names]


def bench_folders_under(path: Path) -> list[Path]:
    """``path`` itself when it is a benchmark folder, else its sub-directories that are (sorted)."""
    path = path.expanduser().resolve()
    if not path.is_dir():
        raise UserError(f"{path}: no such directory")
    if (path / "environment").is_dir() and (path / "grader").is_dir():
        return [path]
    return [d for d in sorted(path.iterdir()) if d.is_dir() and (d / "environment").is_dir() and (d / "grader").is_dir()]


def load_bench_environment(path: Path) -> BenchEnvironment:
    """The one environment at ``path``; UserError listing the problems when the folder holds several."""
    envs = load_bench_folder(path)
    if len(envs) > 1:
        listed = ", ".join(f"{e.folder}/environment/{e.problem}" for e in envs)
        raise UserError(f"{path} holds {len(envs)} problems; name one: {listed}")
    return envs[0]


def _environment(folder: Path, problem: str | None, overlay: Overlay, overlay_path: Path | None) -> BenchEnvironment:
    env_dir = folder / "environment"
    workspace = env_dir / problem if problem else env_dir
    root = workspace if problem else folder
    ident = env_id(folder, problem)
    problem_file = workspace / "PROBLEM.md"
    base = overlay_path.parent if overlay_path else folder
    per = overlay.problem(problem)
    category = per.get("category") or overlay.category or _guess_category(folder, workspace)
    tools = overlay.tools or (["shell", "files", "stripe_docs"] + (["browser"] if category != "backend" else []))
    solution, mutants = _plans(folder, problem, ident, overlay, base)
    submission = per.get("submission") or overlay.submission or _guess_submission(problem_file, workspace)
    requirements = overlay.requirements
    if requirements:
        requirements = str((base / requirements).resolve())
    seed = str((base / overlay.stripe.seed).resolve()) if overlay.stripe.seed else None
    # ${BENCH_FOLDER} in a service or setup command is the folder itself (a hidden server's code lives there),
    # ${BENCH_OVERLAY_DIR} the overlay's directory (a script of ours the folder lacks).
    def place(cmd: str) -> str:
        return cmd.replace(FOLDER_VAR, str(folder)).replace(OVERLAY_DIR_VAR, str(base))

    services = [sv.model_copy(update={"command": place(sv.command)}) for sv in overlay.services]
    setup = [place(cmd) for cmd in (per.get("setup") or overlay.setup)]
    # The folder's Dockerfile builds with the folder as its context; a problem of a multi-problem folder has a root
    # of its own, so it runs on our base image.
    use_own = overlay.docker.use_folder_dockerfile and problem is None and (folder / "Dockerfile").is_file()
    dockerfile = "Dockerfile" if use_own else None
    try:
        manifest = Manifest(
            id=ident, title=per.get("title") or _problem_title(overlay.title, problem) or _title(problem_file, ident),
            category=category,
            summary=overlay.summary, problem=str(problem_file), workspace=str(workspace), submission=submission,
            hidden=overlay.hidden, visible=overlay.visible,
            tools=tools, setup=setup, requirements=requirements if requirements is not None else "",
            limits=overlay.limits, stripe=StripeSetup(seed=seed, api_version=overlay.stripe.api_version),
            services=services, postgres=overlay.postgres, node=overlay.node, ruby=overlay.ruby,
            fixed_ports=overlay.fixed_ports,
            hints=list(per.get("hints") or overlay.hints), solution=solution, mutants=mutants,
            docker=DockerSpec(dockerfile=dockerfile, cpus=overlay.docker.cpus, memory=overlay.docker.memory),
            # The per-language Stripe SDK preload (stripebench_tui.preload) for apps that read no base URL.
            stripe_preload=overlay.stripe_preload,
        )
    except ValidationError as exc:  # the field and what is wrong with it, not pydantic's headline
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "(top level)"
        raise BadFileError(f"{overlay_path or folder}: {where}: {err['msg'].removeprefix('Value error, ')}") from None
    except ValueError as exc:
        raise BadFileError(f"{overlay_path or folder}: {exc}".splitlines()[0]) from None
    return BenchEnvironment(root, manifest, folder=folder, problem=problem, overlay=overlay, overlay_path=overlay_path)


def _problem_title(title: str | None, problem: str | None) -> str | None:
    """The overlay's title, naming the problem when the folder holds several."""
    return f"{title}: {problem}" if title and problem else title


def _title(problem_file: Path, fallback: str) -> str:
    for line in problem_file.read_text(encoding="utf-8", errors="replace").splitlines():
        if line.startswith("#"):
            return line.lstrip("#").strip() or fallback
    return fallback


def _guess_category(folder: Path, workspace: Path) -> str:
    if "gym" in folder.name:
        return "gym"
    return "full-stack" if (workspace / "client").is_dir() else "backend"


def _guess_submission(problem_file: Path, workspace: Path) -> str | None:
    """The submission file the task names: where it already is in the workspace, else at its top."""
    text = problem_file.read_text(encoding="utf-8", errors="replace")
    for name in SUBMISSION_NAMES:
        if name in text:
            existing = sorted(workspace.rglob(name))
            return str(existing[0].relative_to(workspace)) if existing else name
    return None


# ---- the oracle's plans, generated into the cache (never into the folder) ----

def _plans(folder: Path, problem: str | None, ident: str, overlay: Overlay, base: Path) -> tuple[PlanRef | None, list[PlanRef]]:
    sol_dir = folder / "solution" / (problem or "")
    solution = None
    oracle: list[dict[str, Any]] = []
    if sol_dir.is_dir() or overlay.oracle.steps or overlay.oracle.files:
        oracle = _overlay_steps(sol_dir, overlay.oracle.map, overlay.oracle.skip,
                                "the reference solution") if sol_dir.is_dir() else []
        if overlay.oracle.files:
            oracle += _overlay_steps((base / overlay.oracle.files).resolve(), {}, [], "our oracle's files")
        oracle += [dict(s) for s in overlay.oracle.steps]
        solution = PlanRef(name="oracle", plan=str(_write_plan(ident, "solution", oracle)),
                           description="solution/ applied through real tool calls, then the overlay's oracle steps")
    mutants = []
    for m in overlay.mutants_for(problem):
        steps = _from_oracle(oracle, m) if m.from_oracle else []
        steps += _overlay_steps((base / m.files).resolve(), {}, [], f"mutant {m.name}") if m.files else []
        steps += [dict(s) for s in m.steps]
        mutants.append(PlanRef(name=m.name, plan=str(_write_plan(ident, m.name, steps)), description=m.description,
                               finding=m.finding))
    return solution, mutants


def _from_oracle(oracle: list[dict[str, Any]], mutant: MutantSpec) -> list[dict[str, Any]]:
    """The oracle's steps changed as ``mutant`` says (``MutantSpec``); BadFileError for a change that finds nothing."""
    what = f"mutant {mutant.name}"
    if not oracle:
        raise BadFileError(f"{what}: from_oracle, but the environment has no oracle plan")
    steps = copy.deepcopy(oracle)
    if mutant.cut_at is not None:
        cut = next((i for i, step in enumerate(steps) if mutant.cut_at in _names(step)), None)
        if cut is None:
            raise BadFileError(f"{what}: cut_at {mutant.cut_at!r} names no step of the oracle")
        steps = steps[:cut]
    for name in mutant.drop:
        kept = [step for step in steps if name not in _names(step)]
        if len(kept) == len(steps):
            raise BadFileError(f"{what}: drop {name!r} names no step of the oracle")
        steps = kept
    for old, new in mutant.replace:
        found = sum(_count_in(step, old) for step in steps)
        if not found:
            raise BadFileError(f"{what}: replace finds no {old[:60]!r} in the oracle's steps")
        steps = [cast("dict[str, Any]", _replaced(step, old, new)) for step in steps]
    return steps


def _count_in(value: JSONValue, text: str) -> int:
    """How often ``text`` occurs in the strings of ``value``."""
    if isinstance(value, str):
        return value.count(text)
    if isinstance(value, dict):
        return sum(_count_in(v, text) for v in value.values())
    if isinstance(value, list):
        return sum(_count_in(v, text) for v in value)
    return 0


def _replaced(value: JSONValue, old: str, new: str) -> JSONValue:
    """``value`` with ``old`` replaced by ``new`` in every string it holds."""
    if isinstance(value, str):
        return value.replace(old, new)
    if isinstance(value, dict):
        return {k: _replaced(v, old, new) for k, v in value.items()}
    if isinstance(value, list):
        return [_replaced(v, old, new) for v in value]
    return value


def _names(step: dict[str, Any]) -> set[str]:
    """What names a plan step: its ``say`` and its arguments' string values."""
    args = step.get("args") or {}
    return {v for v in [step.get("say"), *args.values()] if isinstance(v, str) and v}


def _overlay_steps(src: Path, mapping: dict[str, str], skip: list[str], what: str) -> list[dict[str, Any]]:
    """One tool call per file of ``src``: text through ``create_file`` (the trace shows it), other files by ``cp``."""
    if not src.is_dir():
        raise BadFileError(f"{src}: no such directory (the files of {what})")
    steps: list[dict[str, Any]] = []
    files = sorted(p for p in src.rglob("*") if p.is_file())
    for f in files:
        rel = f.relative_to(src).as_posix()
        if any(Path(rel).match(pattern) for pattern in skip):
            continue
        dest = mapping.get(rel, rel)
        say = f"Apply {what}: {dest}" if not steps else ""
        if _is_text(f):
            # Inline, with ${NAME} escaped: plans expand it, and solution code is full of ${…} (JS, shell).
            content = _PLAN_VAR.sub(r"$${\1}", f.read_text(encoding="utf-8"))
            steps.append({"say": say, "tool": "create_file", "args": {"path": dest, "content": content}})
        else:
            quoted = _shell_quote(str(f))
            command = f"mkdir -p \"$(dirname {_shell_quote(dest)})\" && cp {quoted} {_shell_quote(dest)}"
            steps.append({"say": say, "tool": "shell", "args": {"command": command}})
    return steps


def _is_text(path: Path) -> bool:
    if path.stat().st_size > _TEXT_LIMIT:
        return False
    data = path.read_bytes()
    if b"\0" in data:
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _shell_quote(text: str) -> str:
    return shlex.quote(text)


def _toml(value: JSONValue) -> str:
    """A TOML value of plain data (JSON's string escapes are TOML's, but DEL must be escaped too)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(str(k))} = {_toml(v)}" for k, v in value.items()) + " }"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} into a plan")


def _write_plan(ident: str, name: str, steps: list[dict[str, Any]]) -> Path:
    """The plan as TOML in the cache (content-addressed, so loading twice writes nothing new)."""
    if not steps:
        steps = [{"say": "Nothing to apply.", "done": True}]
    text = "".join("[[step]]\n" + "".join(f"{k} = {_toml(v)}\n" for k, v in step.items()) + "\n" for step in steps)
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    path = cache_root() / "bench-plans" / f"{ident}-{digest}" / f"{name}.toml"
    if not path.is_file():
        publish_file(path, text.encode("utf-8"))  # another process may be writing the same plan
    return path


__all__ = ["BenchEnvironment", "OVERLAY_SUFFIX", "bench_folders_under", "is_bench_folder", "load_bench_environment",
           "load_bench_folder",
           "problems"]
