"""Loading folders in the published layout as they are: ids, problems, overlays, plans, and the errors for bad ones."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from stripebench_tui.envs.benchfolder import bench_folders_under, load_bench_environment, load_bench_folder
from stripebench_tui.envs.catalog import find_environment, load_environment
from stripebench_tui.envs.plans import expand, load_plan
from stripebench_tui.errors import BadFileError, UserError
from tests.benchfolders.conftest import FOLDERS, tree_hash


def _folder(root: Path, name: str = "demo-task", *, problems: tuple[str, ...] = (),
            solution: dict[str, bytes] | None = None) -> Path:
    folder = root / name
    (folder / "grader").mkdir(parents=True)
    (folder / "grader" / "test_it.py").write_text("def test_ok():\n    pass\n")
    if problems:
        for p in problems:
            (folder / "environment" / p).mkdir(parents=True)
            (folder / "environment" / p / "PROBLEM.md").write_text(f"# Problem {p}\n")
    else:
        (folder / "environment").mkdir()
        (folder / "environment" / "PROBLEM.md").write_text("# Demo\n\nWrite the id to `/workdir/ids_for_grading.txt`.\n")
    for rel, data in (solution or {}).items():
        (folder / "solution" / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / "solution" / rel).write_bytes(data)
    return folder


def test_fixture_folders_load_with_their_overlays_and_stay_unchanged() -> None:
    before = {name: tree_hash(FOLDERS / name) for name in ("pi-script", "config-gym")}
    pi = load_bench_environment(FOLDERS / "pi-script")
    gym = find_environment(str(FOLDERS / "config-gym"))
    assert (pi.id, pi.manifest.category, pi.manifest.submission) == ("pi-script", "backend", "ids_for_grading.txt")
    assert (gym.id, gym.manifest.category, gym.manifest.submission) == ("config-gym", "gym", "submission.json")
    assert pi.overlay_path == FOLDERS / "pi-script.stripebench.toml"
    assert pi.workspace == FOLDERS / "pi-script" / "environment" and pi.problem_text().startswith("# Move the order")
    # the hidden server's command names the folder; the agent's workspace holds no trace of it
    assert str(FOLDERS / "config-gym") in gym.manifest.services[0].command
    assert not (gym.workspace / "pages.py").exists() and [m.name for m in gym.manifest.mutants] == ["one-wrong"]
    assert {name: tree_hash(FOLDERS / name) for name in before} == before


def test_defaults_without_an_overlay_and_the_oracle_plan(tmp_path: Path) -> None:
    js = b"const url = `/s?id=${sessionId}&$${x}&${a.name}&$${b(c)}`;\n"  # solution code full of ${...}: written as it is
    folder = _folder(tmp_path, solution={"server/app.py": b"print('new')\n", "db/data.db": b"SQLite\0\x01\x02",
                                         "client/app.js": js})
    before = tree_hash(folder)
    env = load_environment(folder)  # no environment.toml: read as a benchmark folder
    m = env.manifest
    assert (env.id, m.title, m.category, m.submission) == ("demo-task", "Demo", "backend", "ids_for_grading.txt")
    assert env.overlay_path is None and m.tools == ["shell", "files", "stripe_docs"]
    steps = load_plan(Path(m.solution.plan), env.root)
    by_tool = {(s.tool, s.args.get("path") or s.args.get("command")) for s in steps}
    assert ("create_file", "server/app.py") in by_tool  # text goes through the files tool: the trace shows it
    assert steps[[s.args.get("path") for s in steps].index("server/app.py")].args["content"] == "print('new')\n"
    played = {s.args["path"]: expand(s.args, {"APP_URL": "x"})["content"] for s in steps if s.tool == "create_file"}
    assert played["client/app.js"] == js.decode()
    binary = [s for s in steps if s.tool == "shell"]
    assert len(binary) == 1 and "db/data.db" in binary[0].args["command"] and "cp " in binary[0].args["command"]
    assert Path(m.solution.plan).is_relative_to(Path(__import__("os").environ["STRIPEBENCH_CACHE"]))
    assert tree_hash(folder) == before


def test_several_problems_are_several_environments(tmp_path: Path) -> None:
    folder = _folder(tmp_path, "sdk-upgrades-go", problems=("charges", "invoices"))
    envs = load_bench_folder(folder)
    assert [e.id for e in envs] == ["sdk-upgrades-go-charges", "sdk-upgrades-go-invoices"]
    with pytest.raises(UserError, match="holds 2 problems; name one: .*environment/charges"):
        find_environment(str(folder))
    one = find_environment(str(folder / "environment" / "invoices"))
    assert one.id == "sdk-upgrades-go-invoices" and one.workspace == folder / "environment" / "invoices"
    assert load_environment(one.root).id == one.id  # what the oracle does with the task's ENV_DIR


@pytest.mark.parametrize("breakage, message", [
    ("environment", "no environment/"),
    ("grader", "no grader/"),
    ("problem", "environment/ has no PROBLEM.md"),
])
def test_a_folder_not_in_the_layout_says_which_part_is_missing(tmp_path: Path, breakage: str, message: str) -> None:
    import shutil

    folder = _folder(tmp_path)
    target = folder / ("environment/PROBLEM.md" if breakage == "problem" else breakage)
    shutil.rmtree(target) if target.is_dir() else target.unlink()
    with pytest.raises(BadFileError, match=message):
        find_environment(str(folder))


def test_the_overlay_beside_the_folder_is_checked_field_by_field(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    overlay = tmp_path / "demo-task.stripebench.toml"
    overlay.write_text('category = "gym"\nsubmission = "answer.json"\nproblem_replace = { "/workdir" = "." }\n'
                       'needs = ["real Stripe test mode"]\nstripe_preload = true\n')
    env = load_bench_environment(folder)
    assert (env.manifest.category, env.manifest.submission, env.needs) == ("gym", "answer.json", ["real Stripe test mode"])
    assert "`./ids_for_grading.txt`" in env.problem_text() and env.overlay.stripe_preload
    overlay.write_text('category = "frontend"\n')
    with pytest.raises(BadFileError, match=r"demo-task.stripebench.toml: category: "):
        load_bench_environment(folder)
    overlay.write_text("[grader]\ncomand = 'x'\n")
    with pytest.raises(BadFileError, match=r"grader.comand: Extra inputs"):
        load_bench_environment(folder)


def test_published_overlays_all_parse_and_say_how_to_run() -> None:
    from stripebench_tui.envs.bench_overlay import Overlay, published_dir

    shipped = sorted(published_dir().glob("*.toml"))
    assert len(shipped) == 11
    for path in shipped:
        overlay = Overlay.load(path)
        assert overlay.category and (overlay.offline or overlay.needs), path.name
        assert tomllib.loads(path.read_text())  # plain TOML a user can read and copy beside their folder


def test_listing_a_directory_of_folders(tmp_path: Path) -> None:
    _folder(tmp_path, "a-task")
    _folder(tmp_path, "b-task")
    (tmp_path / "notes").mkdir()
    assert [p.name for p in bench_folders_under(tmp_path)] == ["a-task", "b-task"]
    assert bench_folders_under(tmp_path / "a-task") == [tmp_path / "a-task"]


def test_a_problem_of_a_folder_has_its_own_mutants_after_the_folders(tmp_path: Path) -> None:
    folder = _folder(tmp_path, "sdk-upgrades-go", problems=("charges", "invoices"))
    for p in ("charges", "invoices"):
        (folder / "solution" / p / "server").mkdir(parents=True)
        (folder / "solution" / p / "server" / "main.go").write_text(f"package main // {p}: Charge.list\n")
    overlay = tmp_path / "sdk-upgrades-go.stripebench.toml"
    overlay.write_text('[[mutants]]\nname = "everywhere"\nsteps = [{ say = "Give up.", done = true }]\n\n'
                       '[[problems.charges.mutants]]\nname = "charges-only"\nfrom_oracle = true\n'
                       'replace = [["Charge.list", "PaymentIntent.charges"]]\n')
    charges, invoices = load_bench_folder(folder)
    assert [m.name for m in charges.manifest.mutants] == ["everywhere", "charges-only"]
    assert [m.name for m in invoices.manifest.mutants] == ["everywhere"]
    mutated = load_plan(Path(charges.manifest.mutants[1].plan), charges.root)
    assert mutated[0].args["content"] == "package main // charges: PaymentIntent.charges\n"
    # a problem's replace that finds nothing in its own oracle is an error naming the mutant
    overlay.write_text('[[problems.invoices.mutants]]\nname = "wrong"\nfrom_oracle = true\n'
                       'replace = [["Subscription.list", "x"]]\n')
    with pytest.raises(BadFileError, match="mutant wrong: replace finds no"):
        load_bench_folder(folder)


def test_a_batch_over_a_folder_of_several_problems_runs_each_of_them(tmp_path: Path) -> None:
    """`batch run FOLDER` takes sdk-upgrades-ruby as its three problems, each passed on as its problem's path."""
    from stripebench_tui.batch.matrix import resolve_environments

    folder = _folder(tmp_path, "sdk-upgrades-go", problems=("charges", "invoices"))
    single = _folder(tmp_path, "demo-task")
    got = resolve_environments([str(folder), str(single), str(folder / "environment" / "charges")])
    assert [(ref, env.id) for ref, env in got] == [
        (str((folder / "environment" / "charges").resolve()), "sdk-upgrades-go-charges"),
        (str((folder / "environment" / "invoices").resolve()), "sdk-upgrades-go-invoices"),
        (str(single.resolve()), "demo-task"),
    ]  # a problem named again is run once
    assert find_environment(got[1][0]).id == "sdk-upgrades-go-invoices"  # what each batch episode's `run` resolves
