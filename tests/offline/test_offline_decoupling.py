"""The offline policy does not read our prompts: with every string of every `prompts.py` module replaced by other
wording (same placeholders), the demo and whole graph runs make the same moves and give the same answers.
Also: importing the package or the graph does not import the offline package."""

from __future__ import annotations

import importlib
import io
import json
import string
import subprocess
import sys
import types
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import LLMResult

import langgraph_anytool
from langgraph_anytool.catalog import Catalog
from langgraph_anytool.config import AnyToolConfig
from langgraph_anytool.graphs.anytool import create_anytool_graph
from langgraph_anytool.offline import OfflinePolicyModel

MARK = "Zorblax"  # a word no original prompt contains


def prompt_modules() -> list[types.ModuleType]:
    """Every `prompts.py` module of the package (found on disk, so new ones are covered too)."""
    root = Path(langgraph_anytool.__file__).parent
    names = sorted(".".join(("langgraph_anytool", *p.relative_to(root).with_suffix("").parts))
                   for p in root.rglob("prompts.py"))
    return [importlib.import_module(n) for n in names]


def reword(text: str, name: str) -> str:
    """Different wording with the same format placeholders (a template still formats with the same keys)."""
    try:
        fields = [(f, conv, spec) for _, f, spec, conv in string.Formatter().parse(text) if f is not None]
    except ValueError:  # not a format template
        fields = []
    holes = " | ".join("{" + f + (f"!{conv}" if conv else "") + (f":{spec}" if spec else "") + "}"
                       for f, conv, spec in fields)
    return f"{MARK} {name.lower()} in other words: {holes}" if holes else f"{MARK} {name.lower()} in other words."


def _swap(value: Any, table: dict[int, str]) -> Any:
    """`value` with the reworded strings in place of the originals (strings, and inside dicts/lists/tuples)."""
    if isinstance(value, str):
        return table.get(id(value), value)
    if isinstance(value, dict):
        return {k: _swap(v, table) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_swap(v, table) for v in value)
    return value


def reword_all_prompts(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Patch every prompt constant wherever it is bound: the prompt modules, every module that imported the
    name, module-level containers holding it, and function defaults. Returns original → reworded."""
    originals: dict[int, str] = {}
    replaced: dict[str, str] = {}
    for mod in prompt_modules():
        for name, value in vars(mod).items():
            if name.isupper() and isinstance(value, str):
                originals[id(value)] = reword(value, name)
                replaced[value] = originals[id(value)]
    for mod in [m for n, m in list(sys.modules.items()) if n.startswith("langgraph_anytool") and m is not None]:
        for name, value in list(vars(mod).items()):
            swapped = _swap(value, originals) if isinstance(value, str | dict | list | tuple) else value
            if swapped is not value and swapped != value:
                monkeypatch.setattr(mod, name, swapped)
            if isinstance(value, types.FunctionType):
                if value.__defaults__ and _swap(value.__defaults__, originals) != value.__defaults__:
                    monkeypatch.setattr(value, "__defaults__", _swap(value.__defaults__, originals))
                if value.__kwdefaults__ and _swap(value.__kwdefaults__, originals) != value.__kwdefaults__:
                    monkeypatch.setattr(value, "__kwdefaults__", _swap(value.__kwdefaults__, originals))
    assert len(replaced) >= 20, "expected the prompt modules' constants"
    return replaced


class Recorder(BaseCallbackHandler):
    """Every prompt the model received and every move it made (tool-call ids left out: they hash the prompt)."""

    def __init__(self) -> None:
        self.prompts: list[tuple[str, str]] = []
        self.moves: list[str] = []

    def on_chat_model_start(self, serialized: dict[str, Any], messages: list[list[BaseMessage]], *, run_id: UUID,
                            metadata: dict[str, Any] | None = None, **kwargs: Any) -> None:
        role = str((metadata or {}).get("anytool_role"))
        self.prompts.extend((role, str(m.content)) for m in messages[0])

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        msg = getattr(response.generations[0][0], "message", None)
        assert isinstance(msg, AIMessage)
        calls = [{"name": tc["name"], "args": tc["args"]} for tc in msg.tool_calls]
        self.moves.append(json.dumps([msg.response_metadata.get("role"), msg.content, calls], sort_keys=True))


RUNS = [
    ("dfsdt", "Convert 26.2 miles to kilometers. Is 2025-07-14 a public holiday in France? How far is Paris from "
              "Berlin?"),
    ("dfsdt", "What is the SHA-256 hash of 'hello'? Encode 'hello' in base64."),  # category agent, reflection
    ("umi", "How far is Paris from Berlin, and is 2025-07-14 a public holiday in France?"),
    ("cot", "Is 2025-07-14 a public holiday in France?"),
    # the reply formats named by the call's inputs: a text-mode caller in the alpha_umi profile, a text-mode solver
    ("umi+text+alpha_umi", "How far is Paris from Berlin?"),
    ("dfsdt+text", "Is 2025-07-14 a public holiday in France?"),
]
SETTINGS: dict[str, dict[str, Any]] = {
    "umi+text+alpha_umi": {"solver": "umi", "text_mode_roles": ("caller",), "umi_prompts": "alpha_umi"},
    "dfsdt+text": {"solver": "dfsdt", "text_mode_roles": ("solver",)},
}


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return Catalog.builtin(embeddings="none")


def literal_chunks(text: str) -> list[str]:
    """The literal text between a template's placeholders (the whole text when it is no template)."""
    try:
        return [literal for literal, *_ in string.Formatter().parse(text)]
    except ValueError:
        return [text]


def run(catalog: Catalog, solver: str, query: str) -> tuple[dict[str, Any], Recorder]:
    rec = Recorder()  # one task at a time: parallel agents racing on the live pool would vary the moves run to run
    config = AnyToolConfig(**SETTINGS.get(solver, {"solver": solver}))
    graph = create_anytool_graph(catalog, OfflinePolicyModel(catalog=catalog), config=config)
    out = graph.invoke({"query": query}, {"recursion_limit": 500, "callbacks": [rec], "max_concurrency": 1})
    return out, rec


def outcome(out: dict[str, Any]) -> tuple[Any, ...]:
    return (out.get("status"), out.get("answer"), sorted(e["api_id"] for e in out["api_pool"]),
            len(out["solver_attempts"]))


def test_reworded_prompts_give_the_same_moves_and_answers(catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    before = [run(catalog, solver, query) for solver, query in RUNS]
    replaced = reword_all_prompts(monkeypatch)
    after = [run(catalog, solver, query) for solver, query in RUNS]
    roles: set[str] = set()
    for (solver, query), (out_a, rec_a), (out_b, rec_b) in zip(RUNS, before, after, strict=True):
        assert out_a["answer"], (solver, query, out_a.get("status"))
        assert outcome(out_b) == outcome(out_a), (solver, query)
        assert sorted(rec_b.moves) == sorted(rec_a.moves), (solver, query)
        # the rewording reached the model: the new words are there, no long run of the old ones is
        sent = "\n".join(text for _, text in rec_b.prompts)
        assert MARK in sent
        for original in replaced:
            leftover = [c.strip() for c in literal_chunks(original) if len(c.strip()) >= 30 and c.strip() in sent]
            assert not leftover, leftover
        roles |= {role for role, _ in rec_b.prompts}
    assert {"meta", "category", "tool", "solvable", "solver", "planner", "caller", "summarizer", "judge"} <= roles
    assert "42.1648" in str(before[0][0]["answer"]) and "879.7" in str(before[0][0]["answer"])


def test_demo_answer_is_the_same_with_reworded_prompts(monkeypatch: pytest.MonkeyPatch) -> None:
    from langgraph_anytool.cli.demo import run_demo

    monkeypatch.delenv("ANYTOOL_MODEL", raising=False)
    monkeypatch.setenv("ANYTOOL_EMBEDDINGS", "none")

    def demo() -> tuple[int, list[str]]:
        out = io.StringIO()
        code = run_demo(None, out)
        text = out.getvalue()
        result = text.split("=" * 80, 1)[1]
        return code, [line for line in result.splitlines() if line.startswith(("answer:", "status:", "  - "))]

    code_a, lines_a = demo()
    reword_all_prompts(monkeypatch)
    code_b, lines_b = demo()
    assert code_a == code_b == 0
    assert lines_a == lines_b and any("42.1648" in line for line in lines_a)


def test_importing_the_graph_does_not_import_the_offline_package() -> None:
    code = ("import sys, langgraph_anytool, langgraph_anytool.graphs.anytool, langgraph_anytool.graphs.studio, "
            "langgraph_anytool.cli; print([m for m in sys.modules if 'offline' in m.split('.')])")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300)
    assert proc.stdout.strip() == "[]"
