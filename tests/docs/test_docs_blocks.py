"""Every code block of README.md and docs/**/*.md runs here, offline (the rules: docs/writing-docs.md).

- ```python blocks run in this process, in order; the blocks of one page share one namespace (like a notebook)
  and run in a temporary working directory of their own, beside a `../shared` link to the shared data when it
  exists;
- ```bash blocks run with bash in the same kind of directory, one command after another; each command must exit
  0, or the code its trailing comment names (`anytool run ... --offline   # exits 1: unsolved`); `anytool` and
  `python` are this interpreter with this checkout;
- ```text and ```mermaid blocks are never run (outputs, synopses, drawings); any other fence is an error.

Every block runs AS WRITTEN, as a user without a key runs it: nothing is swapped in for a provider model, and the
environment holds no provider key, base URL or `ANYTOOL_MODEL` (`keyless_environ`). So a block must run offline as
written (the offline model in the code, the provider line beside it as a comment). No block reaches the network.
After each block the repository's `git status` is what it was before (a block writes only into its scratch folder).

A comment on the line before a fence marks the block: `<!-- docs-test: slow -->` (runs, marked slow),
`<!-- docs-test: needs-shared -->` (needs ../shared/toolbench; skipped when absent), `<!-- docs-test:
needs-network REASON -->` (a network service or a key; not run, and the page says so beside the block),
`<!-- docs-test: manual REASON -->` (a set-up command this suite cannot run inside itself, e.g. `make test`),
`<!-- docs-test: xfail REASON -->` (a known bug makes the block fail; strict: the test fails once it passes),
`<!-- docs-test: real-model -->` (needs a real model: run by tests/real_model/ against llama-server, not here).
"""

from __future__ import annotations

import logging
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("ANYTOOL_TEST_SHARED") or REPO.parent / "shared")
RUN = ("python", "bash")
NOT_RUN = ("text", "mermaid")
MARKS = ("slow", "needs-shared", "needs-network", "manual", "xfail", "real-model")
FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
MARKER = re.compile(r"^\s*<!--\s*docs-test:\s*(?P<body>.*?)\s*-->\s*$")
EXPECTED_EXIT = re.compile(r"#.*\bexits? (?:code )?(?P<code>\d+)\b")
HEREDOC = re.compile(r"<<-?\s*(?P<q>['\"]?)(?P<word>\w+)(?P=q)")  # `cat > f <<'EOF'`: the body is not commands
# what a user without a key has not set: provider keys, tokens and endpoints, and the default model
KEYLESS = re.compile(r"^(?:.*_API_KEY|.*_API_TOKEN|.*_BASE_URL|OPENAI_.*|AZURE_OPENAI_.*|ANTHROPIC_.*|GROQ_.*|"
                     r"MISTRAL_.*|GOOGLE_API_.*|LANGSMITH_.*|LANGCHAIN_API_KEY|ANYTOOL_MODEL)$")


@dataclass(frozen=True)
class Block:
    """One fenced code block of a Markdown page."""

    page: Path
    line: int  # 1-based line of the opening fence
    lang: str
    code: str
    marks: dict[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"{shown(self.page)}:{self.line}"


def shown(page: Path) -> str:
    """A page's path relative to the repository (as it is when outside)."""
    return str(page.relative_to(REPO)) if page.is_relative_to(REPO) else str(page)


def pages() -> list[Path]:
    """README.md and every Markdown page of the site."""
    return [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


def parse_marks(line: str, where: str) -> dict[str, str]:
    """`<!-- docs-test: slow needs-shared -->` → {"slow": "", "needs-shared": ""}; a mark's reason follows it."""
    m = MARKER.match(line)
    if not m:
        return {}
    marks: dict[str, str] = {}
    words = m.group("body").split()
    current = None
    for word in words:
        if word in MARKS:
            current = word
            marks[word] = ""
        elif current is None:
            raise ValueError(f"{where}: unknown docs-test mark {word!r}; marks are {', '.join(MARKS)}")
        else:
            marks[current] = f"{marks[current]} {word}".strip()
    for mark in ("needs-network", "manual", "xfail"):
        if mark in marks and not marks[mark]:
            raise ValueError(f"{where}: the {mark} mark needs a reason, e.g. <!-- docs-test: {mark} needs X -->")
    return marks


def blocks_of(page: Path) -> list[Block]:
    """The fenced code blocks of a page, with the marks on the line before each (fences may be indented, as in
    admonitions; the fence's indentation is removed from the code)."""
    lines = page.read_text(encoding="utf-8").splitlines()
    out: list[Block] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, info = len(m.group("indent")), m.group("fence"), m.group("info").strip()
        start = i
        body: list[str] = []
        i += 1
        while i < len(lines) and not re.match(rf"^ {{0,{indent + 3}}}{re.escape(fence[0])}{{{len(fence)},}}\s*$",
                                             lines[i]):
            body.append(lines[i][indent:] if lines[i][:indent].strip() == "" else lines[i])
            i += 1
        if i >= len(lines):
            raise ValueError(f"{shown(page)}:{start + 1}: code fence never closed")
        i += 1
        prev = next((lines[j] for j in range(start - 1, -1, -1) if lines[j].strip()), "")
        where = f"{shown(page)}:{start + 1}"
        lang = info.split()[0].lstrip(".{") if info else ""
        out.append(Block(page, start + 1, lang, "\n".join(body) + "\n", parse_marks(prev, where)))
    return out


def all_blocks() -> list[Block]:
    return [b for p in pages() for b in blocks_of(p)]


# --- running blocks ---------------------------------------------------------------------------------------------


def work_dir(root: Path) -> Path:
    """A page's working directory: `root/work`, beside `root/shared` → the shared data (when it exists), with
    links to the repository's `notebooks` and `benchmarks` (contributors' scripts, run from a checkout: `python
    notebooks/build.py`), and what a block writes lands in the scratch folder, not in the repository. No link to
    `tests/`: the example files a block reads come with the package (`python -m langgraph_anytool.examples`), as
    in a user's own folder (issue 35 §3)."""
    work = root / "work"
    if not work.exists():
        work.mkdir(parents=True)
        if SHARED.is_dir():
            (root / "shared").symlink_to(SHARED)
        for name in ("notebooks", "benchmarks"):
            (work / name).symlink_to(REPO / name)
    return work


def keyless_environ(environ: Mapping[str, str]) -> dict[str, str]:
    """`environ` without what a user who has no key has not set (`KEYLESS`: provider keys and endpoints,
    `ANYTOOL_MODEL`)."""
    return {name: value for name, value in environ.items() if not KEYLESS.match(name)}


def bash_script(code: str) -> str:
    """The block as a bash script that stops at the first command whose exit code is not the one expected
    (0, or the `# exits N` of its trailing comment); `anytool` is the installed command of this interpreter."""
    python = shlex.quote(sys.executable)
    out = [f'anytool() {{ {python} -m langgraph_anytool.cli "$@"; }}', f'python() {{ {python} "$@"; }}']
    logical: list[tuple[int, str]] = []
    pending, first, heredoc = "", 0, ""
    for n, raw in enumerate(code.splitlines(), 1):
        if heredoc:  # a here-document's body and its terminator belong to the command that opened it
            logical[-1] = (logical[-1][0], logical[-1][1] + "\n" + raw)
            if raw.strip() == heredoc:
                heredoc = ""
            continue
        if not pending:
            first = n
        if raw.rstrip().endswith("\\"):
            pending += raw.rstrip()[:-1] + " "
            continue
        logical.append((first, pending + raw))
        pending = ""
        m = HEREDOC.search(raw)
        heredoc = m.group("word") if m else ""
    for n, command in logical:
        if not command.strip() or command.lstrip().startswith("#"):
            continue
        m = EXPECTED_EXIT.search(command.splitlines()[0])
        expected = int(m.group("code")) if m else 0
        out.append(command)
        out.append(f'__rc=$?; if [ "$__rc" != {expected} ]; then echo "docs-test: the command of block line {n} '
                   f'exited $__rc, expected {expected}" >&2; exit 97; fi')
    return "\n".join(out) + "\n"


def run_python(block: Block, namespace: dict[str, Any]) -> None:
    code = "\n" * block.line + block.code  # tracebacks name the page's own lines
    environ = dict(os.environ)
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        os.environ.clear()
        os.environ.update(keyless_environ(environ))
        exec(compile(code, str(block.page), "exec"), namespace)  # the documentation's own code, not model output
    finally:  # a block that sets variables (os.environ["ANYTOOL_MODEL"] = ...) leaves no trace in the next test
        os.environ.clear()
        os.environ.update(environ)
        # nor does one that configures logging (`logging.basicConfig(force=True)` binds a handler to this test's
        # captured stderr, closed when the test ends: a later test's log record would print a "Logging error")
        root.handlers[:] = handlers
        root.setLevel(level)


def run_bash(block: Block, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**keyless_environ(os.environ), "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "PYTHONPATH": os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)}
    return subprocess.run(["bash", "-c", bash_script(block.code)], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=1800)


def repository_status() -> str | None:
    """`git status --porcelain` of the repository, untracked files included (None: not a git checkout)."""
    try:
        done = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=all"],
                              capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def skip_reason(block: Block) -> str | None:
    """Why a block is not run (None: it runs)."""
    if block.lang in NOT_RUN:
        return f"{block.lang} block: never run"
    if "needs-network" in block.marks:
        return f"needs a network service: {block.marks['needs-network']}"
    if "manual" in block.marks:
        return f"manual: {block.marks['manual']}"
    if "real-model" in block.marks:
        return "needs a real model: runs against llama-server in tests/real_model/test_docs_blocks.py"
    if "needs-shared" in block.marks and not (SHARED / "toolbench").is_dir():
        return f"needs {SHARED / 'toolbench'}"
    return None


# --- the tests --------------------------------------------------------------------------------------------------


BLOCKS = all_blocks()


def _param(block: Block) -> Any:
    marks = [pytest.mark.slow] if "slow" in block.marks else []
    if "needs-shared" in block.marks:
        marks.append(pytest.mark.toolbench)
    if "xfail" in block.marks:  # strict: once the cause is fixed the block passes, and the mark must go
        marks.append(pytest.mark.xfail(reason=block.marks["xfail"], strict=True))
    return pytest.param(block, id=block.name, marks=marks)


@dataclass
class PageState:
    """One page's python namespace, its working directory and the lines of the python blocks run so far."""

    namespace: dict[str, Any]
    cwd: Path
    ran: set[int] = field(default_factory=set)


@pytest.fixture(scope="module")
def page_state(tmp_path_factory: pytest.TempPathFactory) -> Callable[[Path], PageState]:
    """Per page: one namespace for its python blocks and one working directory for all its blocks."""
    state: dict[Path, PageState] = {}

    def get(page: Path) -> PageState:
        if page not in state:
            root = tmp_path_factory.mktemp(re.sub(r"\W+", "-", shown(page)))
            state[page] = PageState({"__name__": "__docs__"}, work_dir(root))
        return state[page]

    return get


@pytest.mark.parametrize("block", [_param(b) for b in BLOCKS])
def test_block(block: Block, page_state: Callable[[Path], PageState], monkeypatch: pytest.MonkeyPatch,
               capfd: pytest.CaptureFixture[str]) -> None:
    reason = skip_reason(block)
    if reason:
        pytest.skip(reason)
    page = page_state(block.page)
    monkeypatch.chdir(page.cwd)
    before = repository_status()
    capfd.readouterr()
    run_block(block, page)
    if block.lang == "python":  # what a reader sees is what the block prints: no log line, warning or bar
        err = capfd.readouterr().err
        assert not err.strip(), f"{block.name} wrote to stderr (a log line, a warning?):\n{err[-3000:]}"
    after = repository_status()
    assert after == before, (f"{block.name} changed the repository (git status --porcelain):\n"
                             f"before:\n{before}\nafter:\n{after}\na block writes only into its own folder (or was the "
                             "repository edited while the block ran?)")


def run_block(block: Block, page: PageState) -> None:
    """Run a block in its page's namespace and folder (python: after the page's earlier python blocks)."""
    if block.lang == "python":
        # a selection (-k, -m) may leave out earlier blocks this one builds on: run those first
        for earlier in BLOCKS:
            if (earlier.page == block.page and earlier.lang == "python" and earlier.line < block.line
                    and earlier.line not in page.ran and not skip_reason(earlier) and "xfail" not in earlier.marks):
                page.ran.add(earlier.line)
                run_python(earlier, page.namespace)
        page.ran.add(block.line)
        run_python(block, page.namespace)
    else:
        done = run_bash(block, page.cwd)
        assert done.returncode == 0, f"{block.name}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"


def test_every_block_is_python_bash_or_text() -> None:
    """A fence in another language (or none) would be silently left out: name the allowed ones instead."""
    odd = [f"{b.name}: ```{b.lang}" for b in BLOCKS if b.lang not in RUN + NOT_RUN]
    assert not odd, "code blocks must be ```python, ```bash (run) or ```text, ```mermaid (not run): " + ", ".join(odd)


def test_blocks_are_found() -> None:
    """The collector sees the blocks (a parser that found none would pass every page)."""
    langs = {b.lang for b in BLOCKS}
    assert {"python", "bash"} <= langs
    assert any(b.page.name == "README.md" for b in BLOCKS)


def test_collector_on_a_hand_made_page(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("text\n\n<!-- docs-test: slow needs-network needs an OpenAI key -->\n```python\nx = 1\n```\n\n"
                    "!!! note\n    ```bash\n    anytool demo  # exits 2\n    ```\n\n~~~text\n```\n~~~\n")
    got = blocks_of(page)
    assert [(b.line, b.lang, b.code) for b in got] == [(4, "python", "x = 1\n"), (9, "bash", "anytool demo  # exits 2\n"),
                                                     (13, "text", "```\n")]
    assert got[0].marks == {"slow": "", "needs-network": "needs an OpenAI key"}
    assert got[1].marks == {}
    with pytest.raises(ValueError, match="unknown docs-test mark 'fast'"):
        parse_marks("<!-- docs-test: fast -->", "page.md:1")
    with pytest.raises(ValueError, match="needs a reason"):
        parse_marks("<!-- docs-test: manual -->", "page.md:1")


def test_bash_blocks_check_each_exit_code(tmp_path: Path) -> None:
    """A command's exit code is checked against 0 or its `# exits N`; a later command does not hide a failure."""
    ok = Block(tmp_path / "p.md", 1, "bash", "false   # exits 1\nX=3 \\\n  true\necho $X\n")
    assert run_bash(ok, tmp_path).returncode == 0
    bad = Block(tmp_path / "p.md", 1, "bash", "true\nfalse\ntrue\n")
    done = run_bash(bad, tmp_path)
    assert done.returncode == 97 and "block line 2 exited 1, expected 0" in done.stderr
    wrong = Block(tmp_path / "p.md", 1, "bash", "true   # exits 2\n")
    assert "expected 2" in run_bash(wrong, tmp_path).stderr
    # a here-document's body is data, not commands: no exit check inside it, and the file holds exactly the body
    doc = Block(tmp_path / "p.md", 1, "bash", "cat > a.json <<'JSON'\n[1,\n 2]\nJSON\npython - <<EOF\nprint(3)\nEOF\n"
                "false   # exits 1\n")
    assert run_bash(doc, tmp_path).returncode == 0 and (tmp_path / "a.json").read_text() == "[1,\n 2]\n"


def test_the_runner_catches_the_old_readme_snippet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 19 point 2: the README's former "Use it" block, run as the runner runs a block, fails on its first call
    (the temporary context manager closes the connection as soon as it is collected); the README's block now holds
    the connection open itself."""
    import sqlite3

    monkeypatch.chdir(tmp_path)
    page = tmp_path / "old.md"
    page.write_text("""```python
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph_anytool import AnyToolConfig, Catalog, create_anytool_graph

cat = Catalog.builtin()
graph = create_anytool_graph(
    catalog=cat,
    model="offline",
    config=AnyToolConfig(max_api_pool=64, solver="dfsdt"),
    checkpointer=SqliteSaver.from_conn_string("runs.sqlite").__enter__(),
)
out = graph.invoke({"query": "Convert 26.2 miles to kilometers."}, {"configurable": {"thread_id": "t1"}})
```
""")
    (block,) = blocks_of(page)
    with pytest.raises(sqlite3.ProgrammingError, match="closed database"):
        run_python(block, {})


def test_blocks_run_as_written_without_a_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 29 point 2: nothing stands in for a provider model, and a key in the test's own environment does not
    reach the block: a block that names one fails as it fails for a user without a key."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-developers-shell")
    monkeypatch.setenv("ANYTOOL_MODEL", "offline")
    monkeypatch.chdir(tmp_path)
    from langgraph_anytool.models.llm import ModelNotConfiguredError

    seen: dict[str, Any] = {}
    block = Block(tmp_path / "p.md", 1, "python", "import os\nseen['env'] = dict(os.environ)\n"
                  "from langgraph_anytool import Catalog, create_anytool_graph\n"
                  "create_anytool_graph(Catalog.builtin(), 'openai:gpt-4o-mini')\n")
    with pytest.raises(ModelNotConfiguredError, match="OPENAI_API_KEY"):
        run_python(block, {"seen": seen})
    assert "OPENAI_API_KEY" not in seen["env"] and "ANYTOOL_MODEL" not in seen["env"]
    assert os.environ["OPENAI_API_KEY"] == "sk-from-the-developers-shell"  # restored after the block
    shell = run_bash(Block(tmp_path / "p.md", 1, "bash", 'test -z "$OPENAI_API_KEY$ANYTOOL_MODEL"\n'
                           'anytool run "Convert 26.2 miles to kilometers." --model openai:gpt-4o-mini  # exits 2\n'),
                     tmp_path)
    assert shell.returncode == 0, shell.stderr


def test_a_block_that_writes_into_the_repository_is_seen(tmp_path: Path) -> None:
    """Issue 29 point 12: the check around each block sees a file a block leaves in the repository."""
    probe = REPO / "tests" / "docs" / f"_probe_{os.getpid()}.txt"
    before = repository_status()
    if before is None:
        pytest.skip("not a git checkout")
    try:
        run_python(Block(tmp_path / "p.md", 1, "python", f"open({str(probe)!r}, 'w').write('x')\n"), {})
        assert repository_status() != before
    finally:
        probe.unlink(missing_ok=True)
    assert repository_status() == before
