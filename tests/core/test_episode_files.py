"""Files an episode names are read only inside its directory: ``core.episode_files`` and the core readers using it.

A crafted episode folder (a mailed replay) must not make us read the reader's own files: links out of the folder,
``..`` and absolute names are refused, and so are FIFOs and devices (a FIFO would hang the reader).
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from pathlib import Path

import pytest

from stripebench_tui.core import episode_files
from stripebench_tui.core.annotations import Annotations, load_notes
from stripebench_tui.core.episode_files import OUTSIDE, Refused, episode_file, open_episode_file, read_episode_file
from stripebench_tui.core.events import Header, ModelMessage, ToolResult
from stripebench_tui.core.trace import open_trace
from stripebench_tui.core.trace_writer import TraceWriter, sidecar_dir
from stripebench_tui.errors import BadFileError

SECRET = "root:x:0:0:the reader's own secret"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A file of the reader's, outside any episode."""
    path = tmp_path / "home" / "secret.txt"
    path.parent.mkdir()
    path.write_text(SECRET, encoding="utf-8")
    return path


@pytest.fixture
def episode(tmp_path: Path) -> Path:
    ep = tmp_path / "ep"
    (ep / "screenshots").mkdir(parents=True)
    (ep / "screenshots" / "ok.png").write_bytes(b"png bytes")
    return ep


def refusal(episode: Path, name: str) -> str:
    """Why ``name`` is refused, by each of the helper's three calls (which must agree)."""
    reasons = set()
    for call in (episode_file, open_episode_file, read_episode_file):
        with pytest.raises(Refused) as caught:
            call(episode, name)
        reasons.add(caught.value.reason)
        assert str(caught.value) == f"{name}: refused, {caught.value.reason}"
    assert len(reasons) == 1
    return reasons.pop()


def test_a_file_inside_is_read_and_a_link_that_stays_inside_is_followed(episode: Path) -> None:
    assert read_episode_file(episode, "screenshots/ok.png") == b"png bytes"
    (episode / "latest.png").symlink_to("screenshots/ok.png")
    assert read_episode_file(episode, "latest.png") == b"png bytes"
    assert episode_file(episode, "latest.png") == (episode / "screenshots" / "ok.png").resolve()
    with pytest.raises(FileNotFoundError):
        read_episode_file(episode, "screenshots/gone.png")


def test_a_link_to_a_file_outside_is_refused(episode: Path, outside: Path) -> None:
    (episode / "leak.png").symlink_to(outside)
    assert refusal(episode, "leak.png") == OUTSIDE


def test_a_linked_directory_leading_outside_is_refused(episode: Path, outside: Path) -> None:
    (episode / "shots").symlink_to(outside.parent, target_is_directory=True)
    assert refusal(episode, "shots/secret.txt") == OUTSIDE


def test_dot_dot_and_absolute_names_are_refused_even_when_they_come_back_inside(episode: Path, outside: Path) -> None:
    assert refusal(episode, "../home/secret.txt") == OUTSIDE
    assert refusal(episode, str(outside)) == OUTSIDE
    assert refusal(episode, "screenshots/../screenshots/ok.png") == OUTSIDE  # a name with ".." is refused as written
    assert refusal(episode, str(episode / "screenshots" / "ok.png")) == OUTSIDE
    assert refusal(episode, "") == OUTSIDE


@pytest.mark.timeout(10)
def test_a_fifo_or_a_directory_is_refused_without_blocking(episode: Path) -> None:
    os.mkfifo(episode / "screenshots" / "hang.png")
    assert refusal(episode, "screenshots/hang.png") == "it is not a regular file (a FIFO)"
    assert refusal(episode, "screenshots") == "it is not a regular file (a directory)"
    (episode / "null.png").symlink_to("/dev/null")
    assert refusal(episode, "null.png") == OUTSIDE


def test_a_directory_swapped_for_a_link_after_the_check_is_not_followed(episode: Path, outside: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The check and the open are apart in time: the open walks down with O_NOFOLLOW, so a link put in between is
    refused instead of followed."""
    (outside.parent / "ok.png").write_text(SECRET, encoding="utf-8")
    checked = episode_files.episode_file

    def check_then_swap(episode_dir: Path, name: str) -> Path:
        path = checked(episode_dir, name)
        (episode / "screenshots").rename(episode / "was-screenshots")
        (episode / "screenshots").symlink_to(outside.parent, target_is_directory=True)
        return path

    monkeypatch.setattr(episode_files, "episode_file", check_then_swap)
    with pytest.raises(Refused, match="replaced by a link"):
        read_episode_file(episode, "screenshots/ok.png")


# -- the core readers -------------------------------------------------------------------------------------------


def _trace_with_sidecar(episode: Path) -> tuple[Path, ToolResult]:
    path = episode / "trace.jsonl"
    with TraceWriter(path, Header(env="e"), inline_cap=10) as w:
        w.write(ModelMessage(t=0.5, turn=1, text="hello"))
        result = w.write(ToolResult(t=1, turn=1, call_id="c", tool="shell", output="x" * 100))
    assert isinstance(result, ToolResult) and result.sidecar
    return path, result


def test_a_sidecar_linked_outside_is_not_read_and_the_output_says_so(episode: Path, outside: Path) -> None:
    path, result = _trace_with_sidecar(episode)
    sidecar = episode / result.sidecar
    sidecar.unlink()
    sidecar.symlink_to(outside)
    text = open_trace(path).full_output(result)
    assert SECRET not in text
    assert text == result.output + f"\n[full output not shown: sidecar {result.sidecar}: refused, {OUTSIDE}]"


def test_a_sidecar_directory_linked_outside_is_not_read(episode: Path, outside: Path) -> None:
    path, result = _trace_with_sidecar(episode)
    outputs = sidecar_dir(path) / "outputs"
    (outside.parent / Path(result.sidecar).name).write_text(SECRET, encoding="utf-8")
    for f in outputs.iterdir():
        f.unlink()
    outputs.rmdir()
    outputs.symlink_to(outside.parent, target_is_directory=True)
    text = open_trace(path).full_output(result)
    assert SECRET not in text and OUTSIDE in text


@pytest.mark.timeout(10)
def test_a_fifo_sidecar_or_turn_index_does_not_hang_the_reader(episode: Path) -> None:
    path, result = _trace_with_sidecar(episode)
    (episode / result.sidecar).unlink()
    os.mkfifo(episode / result.sidecar)
    trace = open_trace(path)
    assert "refused, it is not a regular file (a FIFO)" in trace.full_output(result)
    index = sidecar_dir(path) / "turns.idx"
    index.unlink()
    os.mkfifo(index)
    assert open_trace(path).quick_turns() is None  # only a hint: the reader scans instead
    assert [ev.turn for ev in open_trace(path).events_for_turn(1)] == [1, 1]


def test_a_notes_file_linked_outside_is_refused_in_one_line(episode: Path, tmp_path: Path) -> None:
    trace = episode / "trace.jsonl"
    elsewhere = tmp_path / "other" / "trace.jsonl"
    elsewhere.parent.mkdir()
    Annotations(elsewhere).add(1, SECRET)  # a real notes file, so only the refusal can keep it out
    (episode / "trace.jsonl.notes.json").symlink_to(elsewhere.with_name("trace.jsonl.notes.json"))
    with pytest.raises(BadFileError) as caught:
        load_notes(trace)
    message = str(caught.value)
    assert message == f"{episode / 'trace.jsonl.notes.json'}: refused, {OUTSIDE}"
    assert SECRET not in message and "\n" not in message


# -- readers outside core: the model recording a fork replays, the emulator state a grade reopens -----------------


def test_a_model_recording_naming_a_file_outside_is_refused(tmp_path: Path, outside: Path) -> None:
    from stripebench_tui.gateway.recording import EXCHANGES, load_recording

    model = tmp_path / "ep" / "model"
    model.mkdir(parents=True)
    (model / "0001.body").symlink_to(outside)
    for body in ("../../home/secret.txt", str(outside), "0001.body"):
        exchange = {"number": 1, "protocol": "anthropic", "path": "/v1/messages", "stream": False, "status": 200,
                    "turn": 1, "body": body}
        (model / EXCHANGES).write_text(json.dumps(exchange) + "\n", encoding="utf-8")
        with pytest.raises(ValueError) as caught:
            load_recording(model)
        assert str(caught.value) == f"{model / EXCHANGES}, line 1: {body}: refused, {OUTSIDE}"


def test_grading_does_not_open_an_emulator_state_linked_outside(tmp_path: Path) -> None:
    """The emulator writes to its state file: a link in a crafted folder must not point it at another database."""
    from contextlib import AsyncExitStack

    from stripebench_tui.runtime.grade import EMULATOR_STATE, _stripe_backend

    elsewhere = tmp_path / "home" / "app.sqlite"
    elsewhere.parent.mkdir()
    with contextlib.closing(sqlite3.connect(elsewhere)) as db:  # a real database: one the emulator would write to
        db.execute("CREATE TABLE mine (x)")
        db.commit()
    before = elsewhere.read_bytes()
    episode = tmp_path / "ep"
    episode.mkdir()
    (episode / EMULATOR_STATE).symlink_to(elsewhere)
    with pytest.raises(BadFileError) as caught:
        _stripe_backend(AsyncExitStack(), episode, "emulator", None, None, None)
    assert str(caught.value) == f"{episode / EMULATOR_STATE}: refused, {OUTSIDE}"
    assert elsewhere.read_bytes() == before and [p.name for p in elsewhere.parent.iterdir()] == ["app.sqlite"]
