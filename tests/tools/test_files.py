"""The files tool server, driven through a real MCP client over stdio."""

from __future__ import annotations

import os
from pathlib import Path


async def test_view_numbers_lines_and_honours_ranges(files, workspace: Path):
    (workspace / "app.py").write_text("".join(f"line {n}\n" for n in range(1, 11)))
    whole = await files.call("view_file", {"path": "app.py"})
    assert whole.text.splitlines()[0] == "     1\tline 1"
    assert whole.data["total_lines"] == 10
    part = await files.call("view_file", {"path": "app.py", "start_line": 3, "end_line": 4})
    assert part.text.splitlines() == ["     3\tline 3", "     4\tline 4"]
    to_end = await files.call("view_file", {"path": "app.py", "start_line": 9, "end_line": -1})
    assert [line.split("\t")[1] for line in to_end.text.splitlines()] == ["line 9", "line 10"]
    bad = await files.call("view_file", {"path": "app.py", "start_line": 20})
    assert bad.is_error and "1-10" in bad.text


async def test_view_lists_a_directory_and_reports_missing_files(files, workspace: Path):
    (workspace / "src").mkdir()
    (workspace / "src" / "a.txt").write_text("a\n")
    listing = await files.call("view_file", {"path": "."})
    assert "src/" in listing.data["entries"]
    missing = await files.call("view_file", {"path": "nope.txt"})
    assert missing.is_error and "nope.txt does not exist" in missing.text


async def test_create_makes_parents_and_says_when_it_overwrites(files, workspace: Path):
    first = await files.call("create_file", {"path": "pkg/new.py", "content": "x = 1\n"})
    assert not first.is_error and first.data["overwrote"] is False
    assert (workspace / "pkg" / "new.py").read_text() == "x = 1\n"
    second = await files.call("create_file", {"path": "pkg/new.py", "content": "x = 2\ny = 3\n"})
    assert second.data["overwrote"] is True and "overwrote pkg/new.py" in second.text
    assert (workspace / "pkg" / "new.py").read_text() == "x = 2\ny = 3\n"


async def test_replace_needs_exactly_one_match(files, workspace: Path):
    target = workspace / "config.py"
    target.write_text("a = 1\nb = 1\nc = 2\n")
    none = await files.call("replace_in_file", {"path": "config.py", "old_text": "z = 9", "new_text": "q"})
    assert none.is_error and "does not occur" in none.text
    many = await files.call("replace_in_file", {"path": "config.py", "old_text": "= 1", "new_text": "= 5"})
    assert many.is_error and "occurs 2 times" in many.text and "lines 1, 2" in many.text
    assert target.read_text() == "a = 1\nb = 1\nc = 2\n"
    one = await files.call("replace_in_file", {"path": "config.py", "old_text": "b = 1", "new_text": "b = 7"})
    assert not one.is_error and one.data["line"] == 2
    assert target.read_text() == "a = 1\nb = 7\nc = 2\n"


async def test_insert_after_a_line(files, workspace: Path):
    target = workspace / "list.txt"
    target.write_text("one\ntwo\nthree")
    await files.call("insert_lines", {"path": "list.txt", "after_line": 0, "text": "zero"})
    await files.call("insert_lines", {"path": "list.txt", "after_line": 2, "text": "one and a half\n"})
    await files.call("insert_lines", {"path": "list.txt", "after_line": 5, "text": "four"})
    assert target.read_text() == "zero\none\none and a half\ntwo\nthree\nfour\n"
    bad = await files.call("insert_lines", {"path": "list.txt", "after_line": 99, "text": "x"})
    assert bad.is_error and "between 0 and 6" in bad.text


async def test_paths_outside_the_workspace_are_rejected(files, workspace: Path, tmp_path: Path):
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret\n")
    os.symlink(secret, workspace / "link.txt")
    os.symlink(tmp_path, workspace / "out")
    attempts = [
        ("view_file", {"path": "../secret.txt"}),
        ("view_file", {"path": str(secret)}),
        ("view_file", {"path": "link.txt"}),
        ("view_file", {"path": "out/secret.txt"}),
        ("create_file", {"path": "../escape.txt", "content": "x"}),
        ("create_file", {"path": "out/escape.txt", "content": "x"}),
        ("replace_in_file", {"path": "link.txt", "old_text": "top", "new_text": "no"}),
        ("insert_lines", {"path": "sub/../../secret.txt", "after_line": 0, "text": "x"}),
    ]
    for tool, args in attempts:
        result = await files.call(tool, args)
        assert result.is_error, (tool, args)
        assert "outside the workspace" in result.text
        assert "top secret" not in result.text
    assert secret.read_text() == "top secret\n"
    assert not (tmp_path / "escape.txt").exists()
    # A symlink that stays inside the workspace is fine.
    (workspace / "real.txt").write_text("inside\n")
    os.symlink(workspace / "real.txt", workspace / "alias.txt")
    assert "inside" in (await files.call("view_file", {"path": "alias.txt"})).text


async def test_tools_are_listed_with_schemas(files):
    specs = {spec.name: spec for spec in await files.list_tools()}
    assert set(specs) == {"view_file", "create_file", "replace_in_file", "insert_lines"}
    assert specs["replace_in_file"].input_schema["required"] == ["path", "old_text", "new_text"]
    assert all(spec.server == "files" for spec in specs.values())
