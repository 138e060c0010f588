"""Installing the package into your own app's environment (issue 35 §3): it is not on PyPI, so no message or page
says `pip install 'langgraph-anytool[...]'`; an extra's hint names where this installation came from; and a wheel
built from the checkout, installed into a fresh venv, runs the README example and the CLI from another folder."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

import langgraph_anytool
from langgraph_anytool.install.extras import install_hint, install_source
from tests.docs.test_docs_blocks import blocks_of, keyless_environ

REPO = Path(__file__).resolve().parents[2]
PACKAGE = Path(langgraph_anytool.__file__).resolve().parent
# the PyPI form of an install line: `pip install 'langgraph-anytool[viz]'` (or without quotes / extras)
PYPI_FORM = re.compile(r"pip install (-U )?['\"]?langgraph-anytool(\[[\w,-]+\])?(?![\[\w-])(?! @)['\"]?(?! @)")


def test_no_message_or_page_tells_to_install_from_pypi() -> None:
    for line, pypi in [("pip install 'langgraph-anytool[viz]'", True), ("pip install -U langgraph-anytool", True),
                       ("pip install 'langgraph-anytool[viz] @ git+https://host/me/x.git'", False),
                       ("pip install '/src/langgraph-anytool[viz]'", False)]:
        assert bool(PYPI_FORM.search(line)) is pypi, line
    found = [f"{path.relative_to(REPO)}:{n}" for path in [*PACKAGE.rglob("*.py"), REPO / "README.md",
                                                           *(REPO / "docs").rglob("*.md")]
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if PYPI_FORM.search(line)]
    assert not found, f"these say `pip install 'langgraph-anytool[...]'`, which PyPI cannot answer: {found}"


def _fake_dist(root: Path, name: str, direct_url: dict[str, object] | None) -> None:
    info = root / f"{name.replace('-', '_')}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n", encoding="utf-8")
    if direct_url is not None:
        (info / "direct_url.json").write_text(json.dumps(direct_url), encoding="utf-8")


@pytest.mark.parametrize(("direct_url", "hint"), [
    ({"url": "file:///home/me/src/fake%20anytool", "dir_info": {"editable": True}},
     "pip install -e '/home/me/src/fake anytool[viz]'"),
    ({"url": "file:///home/me/src/fake-anytool", "dir_info": {}}, "pip install '/home/me/src/fake-anytool[viz]'"),
    ({"url": "file:///tmp/w/fake_anytool-1.0-py3-none-any.whl", "archive_info": {}},
     "pip install '/tmp/w/fake_anytool-1.0-py3-none-any.whl[viz]'"),
    ({"url": "https://git.example/me/fake-anytool.git", "vcs_info": {"vcs": "git", "commit_id": "abc123"}},
     "pip install 'fake-anytool[viz] @ git+https://git.example/me/fake-anytool.git@abc123'"),
    (None, "pip install '<your fake-anytool checkout or wheel>[viz]'"),
    ({"url": "https://files.example/fake_anytool-1.0.tar.gz", "archive_info": {}},
     "pip install '<your fake-anytool checkout or wheel>[viz]'"),
])
def test_an_extras_hint_names_where_the_package_came_from(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         direct_url: dict[str, object] | None, hint: str) -> None:
    _fake_dist(tmp_path, "fake-anytool", direct_url)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert install_hint("viz", "fake-anytool").startswith(hint)
    assert install_source("no-such-distribution-here") == ""


def test_the_viz_error_gives_the_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    from langgraph_anytool import viz

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` raises ImportError
    with pytest.raises(ImportError) as err:
        viz._plt()
    assert str(err.value) == f"drawing needs matplotlib: {install_hint('viz')}"
    assert "[viz]" in str(err.value) and not PYPI_FORM.search(str(err.value))


def _readme_example() -> str:
    (block,) = [b for b in blocks_of(REPO / "README.md") if b.lang == "python"][:1]
    return block.code


@pytest.mark.slow
def test_a_wheel_in_a_fresh_venv_runs_the_readme_example_from_another_folder(tmp_path: Path) -> None:
    """The documented path for your own app: build the wheel (`make dist` does `pip wheel --no-deps`), install it
    into a fresh venv, run the README's example and `anytool run` in a folder of the app's own. Offline: the fresh
    venv sees this environment's dependencies (like `--system-site-packages`) and pip installs the wheel alone."""
    src = tmp_path / "src"  # a copy: building in the checkout would write build/ and *.egg-info into it
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, src / name)
    shutil.copytree(PACKAGE, src / "langgraph_anytool", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input"]
    subprocess.run([*pip, "wheel", "--quiet", "--no-deps", "--no-build-isolation", "--no-index",
                    "--wheel-dir", str(tmp_path / "dist"), str(src)], check=True, cwd=tmp_path)
    (wheel,) = (tmp_path / "dist").glob("langgraph_anytool-*-py3-none-any.whl")

    venv = tmp_path / "app-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    # this environment's packages, as a plain path: its .pth files (the checkout's editable finder) are not read
    Path(purelib, "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    subprocess.run([*pip, "--python", str(python), "install", "--quiet", "--no-deps", "--no-index", str(wheel)],
                   check=True)

    app = tmp_path / "my-app"
    app.mkdir()
    env = {**keyless_environ(os.environ), "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
           "HOME": str(tmp_path / "home")}
    env.pop("PYTHONPATH", None)
    where = ("import langgraph_anytool, pathlib\n"
             f"assert pathlib.Path(langgraph_anytool.__file__).is_relative_to({str(venv)!r}), "
             "langgraph_anytool.__file__\n")
    (app / "example.py").write_text(where + _readme_example(), encoding="utf-8")
    done = subprocess.run([str(python), "example.py"], cwd=app, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.startswith("solved"), done.stdout
    cli = subprocess.run(["anytool", "run", "Convert 26.2 miles to kilometers.", "--offline", "--db", "runs.sqlite",
                          "--thread", "t2"], cwd=app, env=env, capture_output=True, text=True, timeout=600)
    assert cli.returncode == 0, cli.stderr[-3000:]
    assert shutil.which("anytool", path=env["PATH"]) == str(venv / "bin" / "anytool")
    assert sorted(p.name for p in app.iterdir()) == ["example.py", "runs.sqlite"]
    # the example files the docs read ship in the wheel: copied out, they run the docs' compare command
    copied = subprocess.run([str(python), "-m", "langgraph_anytool.examples"], cwd=app, env=env, capture_output=True,
                            text=True, timeout=600)
    assert copied.returncode == 0, copied.stderr[-2000:]
    compare = subprocess.run(["anytool", "eval", "compare", "examples/compare/a.jsonl", "examples/compare/b.jsonl",
                              "--offline", "--no-cache"], cwd=app, env=env, capture_output=True, text=True,
                             timeout=600)
    assert compare.returncode == 0, compare.stderr[-2000:]
    assert re.search(r"^overall +10 +50.0 +80.0 ", compare.stdout, re.M), compare.stdout
    tasks = subprocess.run(["anytool", "eval", "tasks", "--task", "1-8", "--data", "examples/oppo_tasks", "--catalog",
                            "examples/oppo_toolset", "--offline", "--execution", "template"], cwd=app, env=env,
                           capture_output=True, text=True, timeout=600)
    assert tasks.returncode == 0, tasks.stderr[-2000:]


def test_the_examples_copy_into_any_folder_and_keep_the_users_edits(tmp_path: Path) -> None:
    from langgraph_anytool.examples import NAMES, copy_examples, example_path, main

    assert main([str(tmp_path)]) == 0
    for name in NAMES:
        shipped = sorted(p.relative_to(example_path(name)) for p in example_path(name).rglob("*") if p.is_file())
        copied = sorted(p.relative_to(tmp_path / "examples" / name)
                        for p in (tmp_path / "examples" / name).rglob("*") if p.is_file())
        assert shipped and copied == shipped, name
    edited = tmp_path / "examples" / "compare" / "a.jsonl"
    edited.write_text("mine\n", encoding="utf-8")
    copy_examples(tmp_path)
    assert edited.read_text(encoding="utf-8") == "mine\n"
    for bad in ("../__init__.py", "__init__.py", "no_such_example", "/etc/passwd"):
        with pytest.raises(FileNotFoundError):
            example_path(bad)
    assert main(["a", "b"]) == 2


def test_after_make_demo_the_last_line_says_how_to_reach_anytool(tmp_path: Path) -> None:
    """`make demo` runs `.venv/bin/anytool demo`; the user's shell has no `anytool` on its PATH. The demo's last line
    says what to type, and typing it works: `source .../activate`, then `anytool`."""
    anytool = Path(sys.executable).parent / "anytool"
    if not anytool.is_file() or not (anytool.parent / "activate").is_file():
        pytest.skip(f"no venv `anytool` command beside {sys.executable}")
    path = os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep)
                           if p and Path(p).resolve() != anytool.parent.resolve())
    env = {**keyless_environ(os.environ), "PATH": path}
    env.pop("VIRTUAL_ENV", None)
    assert shutil.which("anytool", path=path) is None
    relative = os.path.relpath(anytool, REPO)  # as the Makefile calls it: `.venv/bin/anytool demo`
    demo = subprocess.run([relative, "demo", "Convert 26.2 miles to kilometers."], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=600)
    assert demo.returncode == 0, demo.stderr[-2000:]
    last = demo.stdout.strip().splitlines()[-1]
    match = re.fullmatch(r"next: `anytool` is not on your PATH; run `source (\S+)`, then (anytool run .+ --offline)"
                         r"  \(or call (\S+) directly\)", last)
    assert match, last
    assert Path(match[3]) == anytool.absolute()
    typed = subprocess.run(["bash", "-c", f"source {match[1]} && command -v anytool && {match[2]} --db x.sqlite"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert typed.returncode == 0, typed.stderr[-2000:]
    assert Path(typed.stdout.splitlines()[0]).parent.resolve() == anytool.parent.resolve()


def _requirements() -> list[tuple[str, Requirement]]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return [("dependencies", Requirement(r)) for r in project["dependencies"]] + [
        (f"[{extra}]", Requirement(r)) for extra, rs in project["optional-dependencies"].items() for r in rs]


# Packages whose major version is a different program for us: a checkpoint format, a graph or chat-model API, the
# MCP SDK. Their floor must be in the major version the suite runs, never an older one it has never run.
MAJOR_BOUND = ("langgraph", "langchain", "langchain-core", "langchain-openai", "langgraph-checkpoint-sqlite",
               "langgraph-checkpoint-postgres", "mcp", "langchain-mcp-adapters")


@pytest.mark.parametrize("name", MAJOR_BOUND)
def test_floors_are_in_the_major_version_the_suite_runs(name: str) -> None:
    try:
        installed = Version(metadata.version(name))
    except metadata.PackageNotFoundError:
        pytest.skip(f"{name} is not installed here")
    declared = [(where, r) for where, r in _requirements() if r.name == name]
    assert declared, f"{name} is not a dependency"
    for where, req in declared:
        assert req.specifier.contains(installed, prereleases=True), f"{where} {req} excludes the installed {installed}"
        floors = [Version(s.version) for s in req.specifier if s.operator in (">=", "==", "~=")]
        assert floors and floors[0].major == installed.major and floors[0] <= installed, (
            f"{where} {req}: its floor is not in {installed.major}.x, the major version the suite runs ({installed})")


def test_mcp_2_is_excluded_while_the_adapters_and_the_test_server_need_mcp_1() -> None:
    """mcp 2 removed `mcp.server.fastmcp` (tests/mcp_notes_server.py) and langchain-mcp-adapters requires mcp<2:
    every declaration of mcp says so itself, not only through the adapters' cap."""
    mcps = [(where, r) for where, r in _requirements() if r.name == "mcp"]
    assert mcps
    for where, req in mcps:
        assert not req.specifier.contains("2.0.0") and not req.specifier.contains("2.3.0"), f"{where} {req}"
    adapters = Requirement(next(r for r in metadata.requires("langchain-mcp-adapters") or [] if r.startswith("mcp")))
    assert not adapters.specifier.contains("2.0.0"), f"langchain-mcp-adapters now accepts {adapters}: try mcp 2"
