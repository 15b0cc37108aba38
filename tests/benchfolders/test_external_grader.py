"""External graders live and at the end: debounced, never two runs at once, killed at the end, bad output an error."""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from stripebench_tui.core.bus import EventBus
from stripebench_tui.core.events import ERROR, FAIL, PASS, GraderVerdict, StripeObject, ToolResult
from stripebench_tui.envs.bench_overlay import ExternalGraderSpec
from stripebench_tui.envs.benchfolder import load_bench_environment
from stripebench_tui.grading.context import GradingContext
from stripebench_tui.grading.external import GRADER_RUN, ExternalEvaluator, ExternalGrader, ExternalLiveGrading
from stripebench_tui.grading.external_reports import FAILED, PASSED, TestResult
from stripebench_tui.grading.external_run import RunResult
from tests.benchfolders.conftest import tree_hash


class FakeRunner:
    """A runner whose runs the test releases one by one; it counts runs and how many overlapped."""

    submission_path = None

    def __init__(self) -> None:
        self.stamp = 0
        self.started = 0
        self.running = 0
        self.most_at_once = 0
        self.cancelled = 0
        self.release: asyncio.Queue[list[TestResult]] = asyncio.Queue()
        self.entered: asyncio.Queue[int] = asyncio.Queue()

    def fingerprint(self) -> int:
        return self.stamp

    async def run(self) -> RunResult:
        self.started += 1
        self.running += 1
        self.most_at_once = max(self.most_at_once, self.running)
        self.entered.put_nowait(self.started)
        try:
            tests = await self.release.get()
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        finally:
            self.running -= 1
        return RunResult(tests=tests, submission="x")


def _grading(runner: FakeRunner, **spec: Any) -> tuple[ExternalLiveGrading, list[GraderVerdict], EventBus]:
    grader = ExternalGrader(ExternalGraderSpec(debounce=spec.pop("debounce", 0.05), **spec), Path("/nowhere"))
    live = ExternalLiveGrading(grader, None, runner=runner)  # type: ignore[arg-type]
    bus = EventBus()
    seen: list[GraderVerdict] = []
    bus.subscribe(lambda ev: seen.append(ev) if isinstance(ev, GraderVerdict) else None, name="test")
    return live.attach(bus), seen, bus


FAILING = [TestResult("test_a", FAILED, "assert 1 == 2"), TestResult("test_b", PASSED)]
PASSING = [TestResult("test_a", PASSED), TestResult("test_b", PASSED)]


async def test_first_run_then_a_burst_of_changes_costs_one_run() -> None:
    runner = FakeRunner()
    live, seen, bus = _grading(runner)
    assert await runner.entered.get() == 1  # the untouched workspace is graded at the start
    runner.release.put_nowait(FAILING)
    await live.idle()
    for n in range(5):  # five writes of the submission, each seen after a tool result
        runner.stamp += 1
        live._on_event(ToolResult(call_id=f"c{n}", tool="shell"))
    runner.release.put_nowait(PASSING)
    assert await runner.entered.get() == 2
    await live.idle()
    await bus.drain(timeout=5)
    assert runner.started == 2
    assert [(v.criterion, v.status, v.trigger) for v in seen] == [
        ("test_a", FAIL, "start"), ("test_b", PASS, "start"), ("test_a", PASS, "submission")]  # unchanged: not re-sent
    await live.close()


async def test_changes_during_a_run_queue_exactly_one_more_never_two_at_once() -> None:
    runner = FakeRunner()
    live, seen, bus = _grading(runner, debounce=0, on=["payment_intent"])
    await runner.entered.get()
    for n in range(3):  # objects it watches appear while the first run is still going
        live._on_event(StripeObject(object_type="payment_intent", object_id=f"pi_{n}", event_id=f"evt_{n}"))
    live._on_event(StripeObject(object_type="customer", object_id="cus_1"))  # not watched
    runner.release.put_nowait(FAILING)
    await runner.entered.get()
    runner.release.put_nowait(PASSING)
    await live.idle()
    assert (runner.started, runner.most_at_once) == (2, 1)
    await live.close()


async def test_the_end_kills_a_live_run_and_grades_once_more() -> None:
    runner = FakeRunner()
    live, seen, bus = _grading(runner)
    await runner.entered.get()  # a live run that would never finish on its own
    runner.release.put_nowait(PASSING)  # for the final run
    final = await live.final_hook()
    await bus.drain(timeout=5)
    assert (runner.cancelled, runner.started, runner.running) == (1, 2, 0)
    assert (final.score, final.passed) == (1.0, True)
    assert [(v.criterion, v.status, v.final) for v in seen] == [("test_a", PASS, True), ("test_b", PASS, True)]


async def test_a_grader_that_only_runs_at_the_end() -> None:
    runner = FakeRunner()
    live, seen, bus = _grading(runner, live=False)
    runner.stamp += 1
    live._on_event(ToolResult(call_id="c", tool="shell"))
    runner.release.put_nowait(FAILING)
    final = await live.final_hook()
    assert runner.started == 1 and final.score == 0.5


# ---- real runs of a command: what bad graders and bad submissions look like ----

def _env(tmp_path: Path, grader_toml: str, files: dict[str, str] | None = None, submission: str | None = None):
    folder = tmp_path / "task"
    (folder / "environment").mkdir(parents=True)
    (folder / "environment" / "PROBLEM.md").write_text("# Task\n")
    (folder / "grader").mkdir()
    for rel, text in (files or {"test_x.py": "def test_ok():\n    pass\n"}).items():
        (folder / "grader" / rel).write_text(text)
    (tmp_path / "task.stripebench.toml").write_text('submission = "answer.json"\n[grader]\n' + grader_toml)
    env = load_bench_environment(folder)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    if submission is not None:
        (workspace / "answer.json").write_text(submission)
    ctx = GradingContext(env=env, episode_dir=tmp_path, workspace=workspace, stripe_api_base="http://127.0.0.1:9",
                         stripe_api_key="sk_test_external")
    return env, ctx


async def _final(env: Any, ctx: GradingContext) -> dict[str, Any]:
    report = await ExternalEvaluator(ExternalGrader.for_env(env), ctx).final()
    return {name: (r.status, r.evidence()) for name, r in report.items()}


async def test_a_pytest_grader_gets_the_episodes_stripe_settings_and_leaves_the_folder_alone(tmp_path: Path) -> None:
    files = {"test_env.py": "import os\n\ndef test_base():\n    assert os.environ['STRIPE_API_BASE'] == 'http://127.0.0.1:9'\n\n"
                            "def test_key():\n    assert os.environ['STRIPE_SECRET_KEY'] == 'sk_test_external'\n\n"
                            "def test_submission():\n    assert os.environ['SUBMISSION'] == '{\"id\": 1}'\n"}
    env, ctx = _env(tmp_path, 'command = \'python -m pytest -q --junitxml="$REPORT"\'\n', files, submission='{"id": 1}')
    before = tree_hash(env.folder)
    got = await _final(env, ctx)
    assert {name: status for name, (status, _) in got.items()} == {"test_base": PASS, "test_key": PASS, "test_submission": PASS}
    assert tree_hash(env.folder) == before  # pytest's caches and the report went to the copy


async def test_a_crashing_grader_is_an_error_with_its_output(tmp_path: Path) -> None:
    env, ctx = _env(tmp_path, "command = 'echo partial work; echo Traceback: boom >&2; exit 3'\n", submission="{}")
    got = await _final(env, ctx)
    status, evidence = got[GRADER_RUN]
    assert list(got) == [GRADER_RUN] and status == ERROR
    assert "exited 3 and wrote no report" in evidence["error"] and "Traceback: boom" in evidence["output"]


async def test_garbage_on_stdout_is_an_error_never_a_pass(tmp_path: Path) -> None:
    env, ctx = _env(tmp_path, "command = 'echo all good, 100%'\nreport_file = '-'\nreport = 'score-json'\n", submission="{}")
    status, evidence = (await _final(env, ctx))[GRADER_RUN]
    assert status == ERROR and "report is unusable" in evidence["error"] and "all good" in evidence["output"]


async def test_a_missing_runtime_is_named_with_how_to_install_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env, ctx = _env(tmp_path, "command = 'bundle exec rspec --format json --out \"$REPORT\"'\n", submission="{}")
    # No bundler here, whatever the machine has (on a merged-/usr system /bin is /usr/bin, where Debian's ruby puts
    # it): a PATH of the shells alone.
    shells = tmp_path / "shells-only"
    shells.mkdir()
    for shell in ("bash", "sh"):
        (shells / shell).symlink_to(shutil.which(shell) or f"/bin/{shell}")
    monkeypatch.setenv("PATH", str(shells))
    status, evidence = (await _final(env, ctx))[GRADER_RUN]
    assert status == ERROR and "it needs bundle, which is not installed here (install Ruby's bundler" in evidence["error"]


async def test_a_grader_past_its_timeout_is_stopped_with_all_it_started(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    env, ctx = _env(tmp_path, f"command = 'sleep 60 & echo $! > {pid_file}; wait'\ntimeout = 1\n", submission="{}")
    status, evidence = (await _final(env, ctx))[GRADER_RUN]
    assert status == ERROR and "longer than 1s" in evidence["error"]
    assert not _alive(int(pid_file.read_text()))  # the background child went with the grader's session


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"


@pytest.mark.parametrize("submission", ['{"basic": {"mode": "payment"', "not json"])
async def test_a_malformed_json_submission_fails_without_running_the_grader(tmp_path: Path, submission: str) -> None:
    marker = tmp_path / "ran"
    env, ctx = _env(tmp_path, f"command = 'touch {marker}'\nsubmission_format = 'json'\n", submission=submission)
    status, evidence = (await _final(env, ctx))[GRADER_RUN]
    assert status == FAIL and "answer.json is not valid JSON" in evidence["submission"] and not marker.exists()


async def test_a_submission_not_of_the_expected_shape_fails_unrun(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    env, ctx = _env(tmp_path, f"command = 'touch {marker}'\nsubmission_pattern = '^cs_test_'\n", submission="pi_123")
    status, evidence = (await _final(env, ctx))[GRADER_RUN]
    assert status == FAIL and "does not match '^cs_test_'" in evidence["submission"] and not marker.exists()


@pytest.mark.slow
async def test_grader_requirements_that_cannot_install_are_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PIP_NO_INDEX", "1")  # no package index: pip fails at once, offline
    env, ctx = _env(tmp_path, "command = 'true'\nrequirements = ['stripebench-no-such-package==0.0']\n", submission="{}")
    status, evidence = (await _final(env, ctx))[GRADER_RUN]
    assert status == ERROR and "cannot install the grader's requirements (stripebench-no-such-package==0.0)" in evidence["error"]
    assert "No matching distribution" in evidence["output"] or "ERROR" in evidence["output"]


async def test_an_absent_submission_still_runs_the_grader_and_says_so(tmp_path: Path) -> None:
    files = {"test_sub.py": "import os\n\ndef test_has_id():\n    assert os.environ['SUBMISSION'].startswith('pi_')\n"}
    env, ctx = _env(tmp_path, 'command = \'python -m pytest -q --junitxml="$REPORT"\'\n', files)
    status, evidence = (await _final(env, ctx))["test_has_id"]
    assert status == FAIL and evidence["submission"] == "answer.json is absent" and "AssertionError" in evidence["message"]


async def test_a_ruby_grader_runs_under_bundle_exec_with_the_folders_gemfile_installed_for_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`gems` in the grader's spec: the folder's Gemfile is installed into the cache (offline here: Ruby's own json
    fits, nothing to build) and the command's `bundle exec` runs under it; the folder gets no Gemfile.lock."""
    monkeypatch.setenv("STRIPEBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("STRIPEBENCH_RUBY_GEMS", "local")
    script = ('require "json"; gemfile = ENV["BUNDLE_GEMFILE"].to_s; '
              'ok = gemfile.start_with?(ENV["STRIPEBENCH_CACHE"]) && Gem.loaded_specs.key?("json") && defined?(Bundler); '
              'File.write(ENV["REPORT"], JSON.generate("examples" => [{"full_description" => "bundled", '
              '"status" => ok ? "passed" : "failed"}]))')
    env, ctx = _env(tmp_path, f"command = '''bundle exec ruby -e '{script}' '''\nreport = 'rspec-json'\n"
                              "gems = { gemfile = 'Gemfile', lockfile = 'Gemfile.lock' }\n", submission="{}")
    (env.folder / "Gemfile").write_text('source "https://rubygems.org"\ngem "json"\n')
    before = tree_hash(env.folder)
    got = await _final(env, ctx)
    assert got == {"bundled": (PASS, got["bundled"][1])}, got
    assert tree_hash(env.folder) == before and not (env.folder / "Gemfile.lock").exists()


async def test_a_grader_whose_gems_cannot_be_had_is_an_error_naming_the_gem_and_the_fix(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STRIPEBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("STRIPEBENCH_RUBY_GEMS", "local")
    monkeypatch.setenv("STRIPEBENCH_GEM_SOURCES", str(tmp_path / "no-sources"))
    monkeypatch.setattr("stripebench_tui.envs.ruby_gems.MIRROR_ROOT", tmp_path / "no-mirror")
    env, ctx = _env(tmp_path, "command = 'bundle exec rspec'\nreport = 'rspec-json'\ngems = { gemfile = 'Gemfile' }\n",
                    submission="{}")
    (env.folder / "Gemfile").write_text('source "https://rubygems.org"\ngem "stripe", "15.2.1"\n')
    status, evidence = (await _final(env, ctx))[GRADER_RUN]
    assert status == ERROR
    assert evidence["error"].startswith("the grader's gems: gem stripe 15.2.1 must be built, but there is no checkout of it: "
                                        "clone https://github.com/stripe/stripe-ruby"), evidence


async def test_a_grader_gets_the_apps_gem_home_and_marks_its_requests_when_the_preload_is_on(tmp_path: Path) -> None:
    """sdk-upgrades-ruby's grade.sh asks bundler about the app's Gemfile: the grader's process gets the app's gems
    ([ruby], APP_GEM_HOME); with the SDK preload its own requests say they are the grader's."""
    from types import SimpleNamespace

    files = {"test_env.py": "import os\n\ndef test_app_gems():\n    assert os.environ['APP_GEM_HOME'] == '/gems/app'\n\n"
                            "def test_source():\n    assert os.environ['STRIPEBENCH_REQUEST_SOURCE'] == 'grader'\n"}
    env, ctx = _env(tmp_path, 'command = \'python -m pytest -q -p no:cacheprovider --junitxml="$REPORT"\'\n', files)
    (tmp_path / "task.stripebench.toml").write_text('stripe_preload = true\n[grader]\ncommand = \'python -m pytest -q '
                                                    '-p no:cacheprovider --junitxml="$REPORT"\'\n')
    env = load_bench_environment(env.folder)
    app = SimpleNamespace(ruby_env={"GEM_HOME": "/gems/app", "GEM_PATH": "/gems/app", "PATH": "/gems/app/bin"})
    ctx = GradingContext(env=env, episode_dir=tmp_path, workspace=ctx.workspace, stripe_api_base="http://127.0.0.1:9",
                         stripe_api_key="sk_test_external", processes=app)  # type: ignore[arg-type]
    got = await _final(env, ctx)
    assert {name: status for name, (status, _) in got.items()} == {"test_app_gems": PASS, "test_source": PASS}


async def test_a_lock_of_ours_beside_the_overlay_names_what_a_folder_without_one_leaves_open(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`${BENCH_OVERLAY_DIR}` in `gems.lockfile`: the folder's Gemfile pins toy-app, whose toy-base (~> 2.0) no
    lock of the folder names (checkout-gym's grader: rspec 3.13.0's rspec-core ~> 3.13.0); offline, our lock beside
    the overlay says which version to build, and the grader runs under it."""
    from tests.envs.test_ruby_gems import _toy_gem

    sources = tmp_path / "sources"
    _toy_gem(sources, "toy-base", {"2.0.0": "", "2.1.0": ""})
    _toy_gem(sources, "toy-app", {"0.3.0": "'toy-base', '~> 2.0'"})
    monkeypatch.setenv("STRIPEBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("STRIPEBENCH_RUBY_GEMS", "local")
    monkeypatch.setenv("STRIPEBENCH_GEM_SOURCES", str(sources))
    monkeypatch.setattr("stripebench_tui.envs.ruby_gems.MIRROR_ROOT", tmp_path / "no-mirror")
    script = ('require "json"; require "toy-base"; File.write(ENV["REPORT"], JSON.generate("examples" => '
              '[{"full_description" => "toy-base #{ToyBase::VERSION}", "status" => "passed"}]))')
    env, ctx = _env(tmp_path, f"command = '''bundle exec ruby -e '{script}' '''\nreport = 'rspec-json'\n"
                              "gems = { gemfile = 'Gemfile', lockfile = '${BENCH_OVERLAY_DIR}/task.Gemfile.lock' }\n",
                    submission="{}")
    (env.folder / "Gemfile").write_text('source "https://rubygems.org"\ngem "toy-app", "0.3.0"\n')
    (tmp_path / "task.Gemfile.lock").write_text(
        "GEM\n  remote: https://rubygems.org/\n  specs:\n    toy-app (0.3.0)\n      toy-base (~> 2.0)\n"
        "    toy-base (2.0.0)\n\nPLATFORMS\n  ruby\n\nDEPENDENCIES\n  toy-app (= 0.3.0)\n")
    bundle = ExternalGrader.for_env(env).gem_bundle()
    assert bundle is not None and bundle.lockfile == tmp_path.resolve() / "task.Gemfile.lock"
    got = await _final(env, ctx)
    assert got == {"toy-base 2.0.0": (PASS, got["toy-base 2.0.0"][1])}, got
