"""extract_within: the same refusals with tarfile's filters (Python 3.11.4+) and without them (Debian 12's 3.11.2)."""

from __future__ import annotations

import io
import os
import stat
import tarfile
from pathlib import Path

import pytest

from stripebench_tui import archives


@pytest.fixture(params=["tarfile's filter", "by hand"])
def way(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "by hand":
        monkeypatch.setattr(archives, "_HAS_FILTERS", False)
    elif not archives._HAS_FILTERS:
        pytest.skip("this Python has no extraction filters; the by-hand case covers it")
    return request.param


def _tarball(*entries: tuple[str, str, str | bytes]) -> io.BytesIO:
    """(kind, name, data-or-link-target) entries, kind one of file, dir, symlink, hardlink."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        for kind, name, data in entries:
            info = tarfile.TarInfo(name)
            if kind == "file":
                body = data if isinstance(data, bytes) else data.encode()
                info.size, info.mode = len(body), 0o6777
                tar.addfile(info, io.BytesIO(body))
            elif kind == "dir":
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                tar.addfile(info)
            else:
                info.type = tarfile.SYMTYPE if kind == "symlink" else tarfile.LNKTYPE
                info.linkname = str(data)
                tar.addfile(info)
    out.seek(0)
    return out


def _extract(packed: io.BytesIO, dest: Path, stream: bool = False) -> None:
    with tarfile.open(fileobj=packed, mode="r|" if stream else "r:*") as tar:
        archives.extract_within(tar, dest)


@pytest.mark.parametrize("stream", [False, True], ids=["file", "stream"])
def test_an_episode_comes_back_whole_with_its_absolute_venv_link(way: str, tmp_path: Path, stream: bool) -> None:
    packed = _tarball(("dir", "episode", ""), ("file", "episode/trace.jsonl", "{}\n"),
                      ("symlink", "episode/venv-python", "/usr/bin/python3"), ("file", "/episode/lead.txt", "x"))
    _extract(packed, tmp_path, stream)
    assert (tmp_path / "episode" / "trace.jsonl").read_text() == "{}\n"
    assert os.readlink(tmp_path / "episode" / "venv-python") == "/usr/bin/python3"
    assert (tmp_path / "episode" / "lead.txt").read_text() == "x"  # the leading slash stripped, kept inside
    mode = (tmp_path / "episode" / "trace.jsonl").stat().st_mode
    assert not mode & (stat.S_ISUID | stat.S_ISGID | stat.S_IWOTH)


@pytest.mark.parametrize("entries", [
    [("file", "../escaped.txt", "x")],
    [("symlink", "out", "OUTSIDE"), ("file", "out/escaped.txt", "x")],
    [("hardlink", "inside", "../secret")],
], ids=["dot-dot", "through a symlink", "hard link"])
def test_a_member_that_would_land_outside_is_refused(way: str, tmp_path: Path, entries: list) -> None:
    dest, outside = tmp_path / "dest", tmp_path / "outside"
    dest.mkdir()
    outside.mkdir()
    (tmp_path / "secret").write_text("s")
    entries = [(k, n, str(outside) if d == "OUTSIDE" else d) for k, n, d in entries]
    with pytest.raises(tarfile.TarError):
        _extract(_tarball(*entries), dest)
    assert not (tmp_path / "escaped.txt").exists() and not (outside / "escaped.txt").exists()
