"""Unpacking a tarball of ours into a folder: nothing may land outside it, on every Python we support.

tarfile's extraction filters (``filter="tar"``) came with Python 3.11.4; Debian 12's Python is 3.11.2, where
``extractall(filter=...)`` is a TypeError (found by ``make fresh-check``). There the same refusals are made here,
member by member, before each is written.
"""

from __future__ import annotations

import os
import stat
import tarfile
from collections.abc import Iterable
from pathlib import Path

_HAS_FILTERS = hasattr(tarfile, "tar_filter")


def extract_within(tar: tarfile.TarFile, dest: Path, members: Iterable[tarfile.TarInfo] | None = None) -> None:
    """Extract ``members`` (default: all, also from a stream) into ``dest`` as tarfile's "tar" filter does: leading
    slashes stripped, a member whose path (after symlinks already extracted) leaves ``dest`` refused with
    ``tarfile.TarError``, setuid/setgid/sticky and group/other write bits cleared; and, stricter than that filter, a
    hard link to a file outside ``dest`` refused. Symlinks may point anywhere (a workspace's venv links to its
    machine's interpreter), as with that filter."""
    if _HAS_FILTERS:
        tar.extractall(dest, members=members, filter=lambda m, path: _hard_link_inside(tarfile.tar_filter(m, path), path))
        return
    root = os.path.realpath(dest)
    for member in members if members is not None else tar:
        name = member.name.lstrip("/" + os.sep)
        target = os.path.realpath(os.path.join(root, name))
        if os.path.isabs(name) or os.path.commonpath([root, target]) != root:
            raise tarfile.TarError(f"{member.name!r} would be extracted outside {dest}")
        member.name = name  # this Python's TarInfo has no replace(); the member is ours to change
        _hard_link_inside(member, root)
        if member.isreg() or member.isdir():
            member.mode &= ~(stat.S_ISUID | stat.S_ISGID | stat.S_ISVTX | stat.S_IWGRP | stat.S_IWOTH)
        tar.extract(member, root)


def _hard_link_inside(member: tarfile.TarInfo, dest: str) -> tarfile.TarInfo:
    if member.islnk():
        root = os.path.realpath(dest)
        source = os.path.realpath(os.path.join(root, member.linkname.lstrip("/" + os.sep)))
        if os.path.commonpath([root, source]) != root:
            raise tarfile.TarError(f"{member.name!r} links to {member.linkname!r}, outside {dest}")
    return member


__all__ = ["extract_within"]
