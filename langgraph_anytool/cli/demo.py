"""`anytool demo`: one AnyTool run on the builtin offline catalog, with live progress and a usage table.

With no model configured (no `model` argument, no `ANYTOOL_MODEL`), the run uses `OfflinePolicyModel`, a
rule-based heuristic stand-in for an LLM, and says so in the first line of its output.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any, TextIO

from langchain_core.runnables import RunnableConfig

from ..catalog import Catalog
from ..catalog.builtin._sandbox import announce_code_tool
from ..config import AnyToolConfig
from ..models.llm import ModelSpec
from .interaction import answer_questions, read_line
from .labels import OFFLINE_NAME, last_line
from .progress import ProgressPrinter, stream_run, usage_table

# A three-part request the builtin toolset answers locally: a unit conversion, a public holiday, a distance.
DEFAULT_QUERY = (
    "Convert 26.2 miles to kilometers. Is 2025-07-14 a public holiday in France? How far is Paris from Berlin?"
)


def _model_choice(catalog: Catalog, model: str | None) -> tuple[ModelSpec, str, bool]:
    """(model spec, description for the first output line, whether it is the offline policy)."""
    from .labels import is_stand_in, resolve_stand_in

    spec = model or os.environ.get("ANYTOOL_MODEL", "").strip()
    source = "the --model option" if model else "ANYTOOL_MODEL"
    if spec and not is_stand_in(spec):
        return spec, f"model: {spec} (from {source})", False
    from ..offline import LABEL  # only when used: the graph never imports it

    why = f"chosen by {source}" if spec else "no ANYTOOL_MODEL set"
    return (resolve_stand_in(OFFLINE_NAME, catalog),
            f"model: {LABEL}; {why}, so every role is played by heuristics over the catalog search, not an LLM", True)


def _pool_lines(pool: list[dict[str, Any]]) -> list[str]:
    return [f"  - {e['function_name']}  ({e['category']} / {e['tool']} / {e['api']})" for e in pool]


def run_demo(query: str | None, out: TextIO, model: str | None = None, cache: bool = True,
             config: AnyToolConfig | None = None) -> int:
    """Run one query (default: `DEFAULT_QUERY`) on the builtin catalog; 0 when solved, 1 otherwise.

    `cache`: the on-disk response cache in the user cache dir (non-deterministic APIs are never cached);
    `config`: the run's settings (default: `AnyToolConfig()`; `anytool demo --set FIELD=VALUE`)."""
    from langgraph.checkpoint.memory import InMemorySaver

    from ..graphs.anytool import create_anytool_graph, default_executor

    text = (query or DEFAULT_QUERY).strip()
    settings = config or AnyToolConfig()
    catalog = Catalog.builtin()
    spec, described, offline = _model_choice(catalog, model)
    out.write(described + "\n")
    out.write(f"catalog: {catalog!r}\nquery: {text}\n")
    announce_code_tool(out.write)
    changed = _changed_settings(settings)
    if changed:
        out.write(f"settings: {changed}\n")
    out.write("\n")
    out.flush()
    executor = default_executor(catalog, settings, persistent_cache=cache)
    try:
        return _run(graph_factory=lambda: create_anytool_graph(catalog, spec, config=settings,
                                                               checkpointer=InMemorySaver(), executor=executor),
                    text=text, out=out, offline=offline)
    finally:
        executor.close()


def _changed_settings(config: AnyToolConfig) -> str:
    """The settings that differ from the defaults, as `field=value` pairs ("" when none do)."""
    return ", ".join(f"{k}={','.join(v) if isinstance(v, tuple) else v}" for k, v in config.changed().items())


def _run(graph_factory: Any, text: str, out: TextIO, offline: bool) -> int:
    graph = graph_factory()  # a model that cannot be made (no key): one `anytool: error:` line, exit 2 (app.main)
    thread = "demo-" + hashlib.sha1(text.encode()).hexdigest()[:12]
    config: RunnableConfig = {"configurable": {"thread_id": thread}, "recursion_limit": 500}
    printer = ProgressPrinter(out)
    stream_run(graph, {"query": text}, config, printer.handle)
    # ask_user (`--set ask_user=true`): the agent's questions are answered from standard input
    while (resume := answer_questions(graph, config, read_line(sys.stdin, out), out)) is not None:
        stream_run(graph, resume, config, printer.handle)
    state: dict[str, Any] = dict(graph.get_state(config).values)
    status = str(state.get("status", "unknown"))
    pool = list(state.get("api_pool") or [])
    out.write("\n" + "=" * 80 + "\n")
    out.write(f"answer: {state.get('answer') or '(none)'}\n")
    out.write(f"status: {status}" + (f" ({state['reason']})" if state.get("reason") else "") + "\n")
    out.write(f"API pool ({len(pool)}):\n" + "\n".join(_pool_lines(pool) or ["  (empty)"]) + "\n\n")
    out.write(usage_table(state.get("usage") or {}) + "\n")
    if offline:
        out.write(last_line() + "\n")
    out.write(next_step(sys.argv[0], os.environ.get("PATH", "")) + "\n")
    out.flush()
    return 0 if status == "solved" else 1


def next_step(command: str, path: str) -> str:
    """The demo's last line: what to type next. `make demo` runs `.venv/bin/anytool`, which is not on the user's
    PATH: then the line says how to put it there (the venv's `activate`) or gives the command's full path."""
    example = 'anytool run "Is 2025-07-14 a public holiday in France?" --offline'
    here = Path(command).absolute()
    found = shutil.which("anytool", path=path)
    if Path(command).name != "anytool" or (found is not None and Path(found).absolute() == here):
        return f"next: {example}  (anytool --help lists the commands)"
    activate = here.parent / "activate"
    if activate.is_file():
        return (f"next: `anytool` is not on your PATH; run `source {shlex.quote(str(activate))}`, then "
                f"{example}  (or call {shlex.quote(str(here))} directly)")
    return f"next: `anytool` is not on your PATH; call it by its path: {shlex.quote(str(here))}{example[7:]}"
