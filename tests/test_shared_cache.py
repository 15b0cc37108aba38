"""Shared cache entries (``shared_cache``) across real processes: two at once on an empty cache build an entry once
and both use it; one SIGKILLed mid-build leaves nothing the next process takes for built; the grader's virtualenv
(the cache seen poisoned: "No module named pip.__main__") is built once when two processes want it at once.

Processes are forked and synchronised with multiprocessing events and FIFOs; the generous timeouts only stop a
broken run from hanging, nothing waits on them to pass."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import select
import signal
import sys
import zipfile
from pathlib import Path

import pytest

from stripebench_tui import shared_cache

FORK = multiprocessing.get_context("fork")
GUARD = 60.0  # seconds before a wait counts as a hang (a failure), never as a pace


def _build_blocking(log: Path, started, release):
    """A tiny fake build: note who built, say so, wait for the test, leave a half then a whole payload."""
    def build(target: Path) -> None:
        with open(log, "a") as out:
            out.write(f"{os.getpid()}\n")
        target.mkdir(parents=True, exist_ok=True)
        (target / "half").write_text("the build began")
        started.set()
        assert release.wait(GUARD), "the test never released the build"
        (target / "payload").write_text("built")
    return build


def _use(entry: str, log: str, started, release, waiting, use_async: bool) -> None:
    """Child: get the entry (building it if need be) and exit 0 only if what it got is whole."""
    build = _build_blocking(Path(log), started, release)
    if use_async:
        async def abuild(target: Path) -> None:
            await asyncio.to_thread(build, target)
        got = asyncio.run(shared_cache.ensure_entry_async(Path(entry), abuild, in_place=True, on_wait=waiting.set))
    else:
        got = shared_cache.ensure_entry(Path(entry), build, on_wait=waiting.set)
    os._exit(0 if (got / "payload").read_text() == "built" and shared_cache.is_complete(got) else 3)


def _start(*args) -> multiprocessing.process.BaseProcess:
    proc = FORK.Process(target=_use, args=args)
    proc.start()
    return proc


@pytest.mark.parametrize("use_async", [False, True], ids=["staged", "in-place-async"])
def test_two_processes_at_once_on_an_empty_cache_build_once_and_both_use_it(tmp_path: Path, use_async: bool) -> None:
    entry, log = tmp_path / "cache" / "entry", tmp_path / "builds.log"
    first_started, second_started, release, waiting = (FORK.Event() for _ in range(4))
    first = _start(str(entry), str(log), first_started, release, FORK.Event(), use_async)
    assert first_started.wait(GUARD), "the first process never began its build"
    second = _start(str(entry), str(log), second_started, release, waiting, use_async)
    try:
        assert waiting.wait(GUARD), "the second process did not wait for the first one's build"
        assert not shared_cache.is_complete(entry)
        release.set()
        first.join(GUARD)
        second.join(GUARD)
        assert (first.exitcode, second.exitcode) == (0, 0)
        assert not second_started.is_set() and len(log.read_text().split()) == 1, "one build"
        assert sorted(p.name for p in entry.parent.iterdir()) == [".entry.lock", "entry"], "no staging left"
    finally:
        for proc in (first, second):
            if proc.is_alive():
                proc.kill()


@pytest.mark.parametrize("use_async", [False, True], ids=["staged", "in-place-async"])
def test_a_build_killed_midway_leaves_an_entry_the_next_process_rebuilds(tmp_path: Path, use_async: bool) -> None:
    entry, log = tmp_path / "cache" / "entry", tmp_path / "builds.log"
    started, release = FORK.Event(), FORK.Event()
    victim = _start(str(entry), str(log), started, FORK.Event(), FORK.Event(), use_async)
    assert started.wait(GUARD)
    os.kill(victim.pid, signal.SIGKILL)  # mid-build, holding the lock
    victim.join(GUARD)
    assert victim.exitcode == -signal.SIGKILL
    assert not shared_cache.is_complete(entry), "a half-built entry never counts as built"
    assert any(p.name != ".entry.lock" for p in entry.parent.iterdir()), "the killed build did leave something"

    release.set()
    again = _start(str(entry), str(log), FORK.Event(), release, FORK.Event(), use_async)
    again.join(GUARD)
    assert again.exitcode == 0
    assert len(log.read_text().split()) == 2, "built again"
    assert not (entry / "half").exists() or (entry / "payload").is_file()
    assert sorted(p.name for p in entry.parent.iterdir()) == [".entry.lock", "entry"], "the killed build's leftovers are gone"


def test_a_failed_build_leaves_nothing_and_raises(tmp_path: Path) -> None:
    entry = tmp_path / "entry"

    def broken(target: Path) -> None:
        target.mkdir()
        (target / "half").write_text("x")
        raise RuntimeError("pip said no")

    with pytest.raises(RuntimeError, match="pip said no"):
        shared_cache.ensure_entry(entry, broken, in_place=True)
    assert not entry.exists()


def test_publish_file_writes_a_whole_file_and_no_temporary_stays(tmp_path: Path) -> None:
    target = tmp_path / "d" / "plan.toml"
    shared_cache.publish_file(target, b"one", mode=0o755)
    shared_cache.publish_file(target, b"two")
    assert target.read_bytes() == b"two" and [p.name for p in target.parent.iterdir()] == ["plan.toml"]


# ---- the grader's virtualenv, built for real ----


def _tiny_wheel(folder: Path) -> Path:
    """A wheel of one module, so pip installs it without any index."""
    wheel = folder / "tinygrader-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("tinygrader.py", "VALUE = 42\n")
        zf.writestr("tinygrader-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: tinygrader\nVersion: 1.0\n")
        zf.writestr("tinygrader-1.0.dist-info/WHEEL",
                    "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        zf.writestr("tinygrader-1.0.dist-info/RECORD",
                    "tinygrader.py,,\ntinygrader-1.0.dist-info/METADATA,,\ntinygrader-1.0.dist-info/WHEEL,,\n"
                    "tinygrader-1.0.dist-info/RECORD,,\n")
    return wheel


def _grader(cache: str, wrapper: str, requirements: list[str], signals: str) -> None:
    """Child: the grader's venv, with ``sys.executable`` a wrapper that announces each venv build and waits."""
    from stripebench_tui.grading.external_run import grader_venv

    os.environ["STRIPEBENCH_CACHE"] = cache
    sys.executable = wrapper

    def waiting() -> None:
        with open(signals, "w") as out:
            out.write(f"waiting {os.getpid()}\n")

    bin_dir = asyncio.run(grader_venv(requirements, on_wait=waiting))
    ran = os.system(f"{bin_dir}/python -c 'import tinygrader; assert tinygrader.VALUE == 42'")
    os._exit(0 if ran == 0 else 3)


def _next_line(fd: int) -> str:
    ready, _, _ = select.select([fd], [], [], GUARD)
    assert ready, "no process said anything"
    line = b""
    while not line.endswith(b"\n"):
        line += os.read(fd, 1)
    return line.decode().strip()


def test_two_processes_wanting_the_same_grader_venv_build_it_once(tmp_path: Path) -> None:
    signals, gate = tmp_path / "signals", tmp_path / "gate"
    os.mkfifo(signals)
    os.mkfifo(gate)
    wrapper = tmp_path / "python"
    wrapper.write_text(f'#!/bin/sh\necho "building $$" > {signals}\nread _ < {gate}\nexec {sys.executable} "$@"\n')
    wrapper.chmod(0o755)
    requirements = [str(_tiny_wheel(tmp_path))]
    heard = os.open(signals, os.O_RDWR)  # read/write: opening never blocks and the reader never sees EOF
    release = os.open(gate, os.O_RDWR)
    procs = []
    try:
        args = (str(tmp_path / "cache"), str(wrapper), requirements, str(signals))
        procs.append(FORK.Process(target=_grader, args=args))
        procs[0].start()
        assert _next_line(heard).startswith("building"), "the first process builds"
        procs.append(FORK.Process(target=_grader, args=args))
        procs[1].start()
        said = _next_line(heard)
        assert said == f"waiting {procs[1].pid}", f"the second process must wait, not build under the first: {said}"
        os.write(release, b"go\n")
        for proc in procs:
            proc.join(120)
        assert [proc.exitcode for proc in procs] == [0, 0], "both graders use the one venv"
    finally:
        for proc in procs:
            if proc.is_alive():
                proc.kill()
        os.close(heard)
        os.close(release)
