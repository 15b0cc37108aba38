"""One run of an external grader: a copy of its folder, the episode's Stripe settings, a killable process, a report.

The command runs with bash in a fresh copy of the grader folder (the benchmark folder is never written: pytest's
caches, reports and the submission copies land in the copy), beside a link to the agent's workspace (the full
workspace where the environment hides paths from the agent: ``envs.workspace``), in its own session so that
stopping it stops everything it started. The outcome is a ``RunResult``: the report's tests, or why there are none
(a crash, a timeout, garbage) with the output's last lines.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import re
import shutil
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stripebench_tui.envs import ruby_gems
from stripebench_tui.envs.deps import cache_root
from stripebench_tui.grading.external_reports import ReportError, TestResult, parse_report, tail
from stripebench_tui.shared_cache import ensure_entry_async

# What to install when a grader's command is missing (bash's exit 127, "NAME: command not found").
INSTALL_HINTS = {
    "ruby": "Ruby: apt-get install ruby-full ruby-bundler", "bundle": "Ruby's bundler: apt-get install ruby-bundler",
    "rspec": "RSpec: gem install rspec (or bundle install in the grader)", "node": "Node.js: apt-get install nodejs npm",
    "npm": "npm: apt-get install npm", "npx": "npm: apt-get install npm",
    "dotnet": ".NET SDK: see https://learn.microsoft.com/dotnet/core/install/linux-debian",
    "mvn": "Maven and a JDK: apt-get install maven default-jdk", "java": "a JDK: apt-get install default-jdk",
    "pytest": "pytest: pip install pytest", "python": "Python 3: apt-get install python3 python-is-python3",
}
_NOT_FOUND = re.compile(r"(?:^|\s)([A-Za-z0-9_.+-]+): (?:command not found|No such file or directory)")
_NO_MODULE = re.compile(r"No module named '?([A-Za-z0-9_.]+)'?")
_PIP_NAMES = {"dotenv": "python-dotenv", "pytest_jsonreport": "pytest-json-report", "yaml": "PyYAML"}
OUTPUT_TAIL = 2000  # characters of the grader's output kept when it reported nothing usable


@dataclass(frozen=True)
class RunResult:
    """What a run found: tests, or ``error`` (the grader's fault) / ``invalid`` (the submission's) with output."""

    tests: list[TestResult] = field(default_factory=list)
    error: str = ""
    invalid: str = ""
    output: str = ""
    exit_code: int | None = None
    duration: float = 0.0
    submission: str | None = None


@dataclass
class GraderRun:
    """Where and how to run one grader spec (``envs.bench_overlay.ExternalGraderSpec``) for one episode."""

    spec: Any
    source: Path  # the grader folder to copy, the first part of spec.cwd (never written)
    work: Path  # a directory of ours: the copy, the reports and the logs go here
    workspace: Path
    env: dict[str, str]  # the process environment (allow-listed base, episode variables, Stripe settings)
    submission_path: Path | None = None
    problem: str = ""
    gems: ruby_gems.GemBundle | None = None  # a Gemfile the command runs under (bundle exec)
    # What the link beside the copy points at: the full workspace when the environment hides paths from the agent
    # (envs.workspace), else (None) the workspace.
    link_to: Path | None = None
    runs: int = 0
    _copied: bool = False

    def _prepare(self) -> tuple[Path, Path]:
        copy = self.work / self.source.name
        if not self._copied:
            if copy.exists():
                shutil.rmtree(copy)
            shutil.copytree(self.source, copy, symlinks=True,
                            ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache", "node_modules"))
            link = self.work / self.spec.workspace_link
            if self.spec.workspace_link and not link.exists() and link != copy:
                link.symlink_to(self.link_to or self.workspace, target_is_directory=True)
            self._copied = True
        cwd = self.work / self.spec.cwd  # the source is the first part of cwd: grader/<problem> copies grader/
        for dest, src in self.spec.inputs.items():  # the agent's files, copied where the grader reads them
            target, origin = cwd / dest, self.workspace / src
            target.parent.mkdir(parents=True, exist_ok=True)
            if origin.is_file():
                shutil.copyfile(origin, target)
            elif target.exists():
                target.unlink()
        return copy, cwd

    def submission(self) -> tuple[str | None, str]:
        """(the submission's text or None when absent/empty, why it is unusable or "")."""
        if self.submission_path is None:
            return None, ""
        try:
            text = self.submission_path.read_text(encoding="utf-8", errors="replace").strip()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            return None, ""
        if not text:
            return None, ""
        if self.spec.submission_format == "json":
            try:
                json.loads(text)
            except json.JSONDecodeError as exc:
                return text, f"{self.submission_path.name} is not valid JSON: {exc}"
        pattern = self.spec.submission_pattern
        if pattern and not re.search(pattern, text):
            return text, f"{self.submission_path.name} does not match {pattern!r}: {text[:80]!r}"
        return text, ""

    def fingerprint(self) -> tuple[int, int] | None:
        """(mtime, size) of the submission file, None when absent: a cheap test for "it changed"."""
        if self.submission_path is None:
            return None
        try:
            st = self.submission_path.stat()
        except OSError:
            return None
        return st.st_mtime_ns, st.st_size

    async def run(self) -> RunResult:
        """Run the grader once (cancelling the task kills it and everything it started)."""
        text, invalid = self.submission()
        if invalid:
            return RunResult(invalid=invalid, submission=text)
        path_first = ""
        if self.spec.requirements:
            try:
                path_first = await grader_venv(self.spec.requirements)
            except RuntimeError as exc:
                return RunResult(error=str(exc).splitlines()[0], output=str(exc), submission=text)
        gem_env: dict[str, str] = {}
        if self.gems is not None:
            try:
                gem_env = await asyncio.to_thread(self._gem_env)
            except ruby_gems.GemProblem as exc:
                return RunResult(error=f"the grader's gems: {exc}", output=str(exc), submission=text)
        self.runs += 1
        _, cwd = await asyncio.to_thread(self._prepare)
        report = self.work / f"report-{self.runs}{'.xml' if self.spec.report == 'junit' else '.json'}"
        log_path = self.work / f"output-{self.runs}.log"
        env = {**self.env, **self.spec.env, "SUBMISSION": (text or "").splitlines()[0] if text else "",
               "SUBMISSION_PATH": str(self.submission_path or ""), "REPORT": str(report),
               "WORKSPACE": str(self.workspace), "PROBLEM": self.problem, "PYTHONDONTWRITEBYTECODE": "1"}
        if path_first:
            env["PATH"] = path_first + os.pathsep + env.get("PATH", "")
            env["VIRTUAL_ENV"] = str(Path(path_first).parent)
        if gem_env:
            env.update(gem_env, PATH=gem_env["PATH"] + os.pathsep + env.get("PATH", ""))
        started = time.monotonic()
        with open(log_path, "wb") as log:
            proc = await asyncio.create_subprocess_exec("bash", "-c", self.spec.command, cwd=str(cwd), env=env,
                                                        stdin=asyncio.subprocess.DEVNULL, stdout=log,
                                                        stderr=asyncio.subprocess.STDOUT, start_new_session=True)
            try:
                code = await asyncio.wait_for(proc.wait(), self.spec.timeout)
            except TimeoutError:
                await _kill(proc)
                output = _read_tail(log_path)
                return RunResult(error=f"the grader ran longer than {self.spec.timeout:g}s and was stopped",
                                 output=output, duration=time.monotonic() - started, submission=text)
            except BaseException:  # cancelled (episode end, a newer run): stop it and all it started
                await _kill(proc)
                raise
        duration = time.monotonic() - started
        output = log_path.read_text(encoding="utf-8", errors="replace")
        source = output if self.spec.report_file == "-" else None
        if source is None:
            path = report if self.spec.report_file in (None, "$REPORT") else cwd / self.spec.report_file
            try:
                source = path.read_text(encoding="utf-8", errors="replace")
            except (FileNotFoundError, IsADirectoryError):
                why = f"the grader exited {code} and wrote no report ({path.name})" + missing_runtime(code, output)
                return RunResult(error=why,
                                 output=tail(output, OUTPUT_TAIL), exit_code=code, duration=duration, submission=text)
        try:
            tests = parse_report(source, self.spec.report)
        except ReportError as exc:
            return RunResult(error=f"the grader exited {code}; its report is unusable: {exc}",
                             output=tail(output, OUTPUT_TAIL), exit_code=code, duration=duration, submission=text)
        return RunResult(tests=tests, output=tail(output, OUTPUT_TAIL), exit_code=code, duration=duration, submission=text)

    def _gem_env(self) -> dict[str, str]:
        """The variables of the grader's bundle, installed the first time (its lines go to ``gems.log``)."""
        assert self.gems is not None
        self.work.mkdir(parents=True, exist_ok=True)
        with open(self.work / "gems.log", "a", encoding="utf-8") as log:
            where = ruby_gems.ensure(self.gems, lambda line: print(line, file=log, flush=True))
        return ruby_gems.process_env(where, env_path="")


async def grader_venv(requirements: list[str], on_wait: Callable[[], object] | None = None) -> str:
    """The bin/ of a cached virtualenv holding ``requirements`` (built on first use); RuntimeError with pip's tail.

    Other processes (batch workers, a second terminal) share the cache: the build is ``shared_cache``'s, one at a
    time across processes, in place (a venv's scripts name their own path) and complete only once marked."""
    key = hashlib.sha256(("\n".join(sorted(requirements)) + sys.version).encode()).hexdigest()[:16]
    venv = cache_root() / "grader-venvs" / key

    async def build(target: Path) -> None:
        target.parent.mkdir(parents=True, exist_ok=True)
        for argv in ([sys.executable, "-m", "venv", str(target)],
                     [str(target / "bin" / "python"), "-m", "pip", "install", "-q",
                      "--disable-pip-version-check", *requirements]):
            proc = await asyncio.create_subprocess_exec(*argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
            try:
                out, _ = await proc.communicate()
            except BaseException:  # cancelled: pip must not go on writing into what is being removed
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                await asyncio.shield(proc.wait())
                raise
            if proc.returncode != 0:
                raise RuntimeError(f"cannot install the grader's requirements ({' '.join(requirements)}): "
                                   f"{' '.join(argv[1:3])} exited {proc.returncode}\n"
                                   + tail(out.decode(errors="replace"), OUTPUT_TAIL))
        (target / "requirements.txt").write_text("\n".join(requirements) + "\n")

    await ensure_entry_async(venv, build, in_place=True, on_wait=on_wait)
    return str(venv / "bin")


def missing_runtime(code: int | None, output: str) -> str:
    """"; it needs X, which is not installed: how to install it" when the output says a runtime is missing."""
    found = _NOT_FOUND.search(output) if code == 127 else None
    if found:
        name = found.group(1)
        return f"; it needs {name}, which is not installed here (install {INSTALL_HINTS.get(name, name)})"
    module = _NO_MODULE.search(output)
    if module:
        top = module.group(1).split(".")[0]
        return f"; its Python lacks the module {top} (pip install {_PIP_NAMES.get(top, top)})"
    return ""


async def _kill(proc: asyncio.subprocess.Process) -> None:
    """SIGKILL the grader's whole session (it may have started a server) and reap it."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        await asyncio.wait_for(proc.wait(), 5)
    except TimeoutError:  # pragma: no cover - a process SIGKILL cannot stop is the kernel's business
        pass


def _read_tail(path: Path) -> str:
    try:
        return tail(path.read_text(encoding="utf-8", errors="replace"), OUTPUT_TAIL)
    except FileNotFoundError:
        return ""


__all__ = ["GraderRun", "INSTALL_HINTS", "RunResult", "missing_runtime"]
