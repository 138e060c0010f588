"""The requests the real-model tier and `benchmarks/real_model.py` run: builtin-catalog queries (answered by local
APIs, nothing leaves the machine), and the `anytool` options of each solver mode."""

from __future__ import annotations

import json
from pathlib import Path

# (request, [tool, API] that answers it) over the builtin catalog
QUERIES: list[tuple[str, list[str]]] = [
    ("Convert 26.2 miles to kilometers.", ["Universal Unit Converter", "Convert Units"]),
    ("Is 2025-07-14 a public holiday in France?", ["Public Holidays", "Is Public Holiday"]),
    ("How far is Paris from Berlin?", ["Geo Distance Calculator", "Distance Between Cities"]),
    ("What day of the week was 2024-02-29?", ["Date Calculator", "Day of Week"]),
    ("Which currencies are used in Switzerland?", ["Currency Reference", "Currencies of Country"]),
]

# solver mode → (options of `anytool run` and `anytool eval run`, whether the profile says the models call functions
# (`tool_calling`): on llama.cpp their calls are then constrained by a JSON schema, else written as Action / Action
# Input text held to one call by a grammar; models/constrained.py)
MODES: dict[str, tuple[list[str], bool]] = {
    # AnyTool as the paper runs it: the hierarchical retriever's agents and the DFSDT solver, function calls
    "dfsdt": (["--set", "solver=dfsdt"], True),
    # issue 26's first failure: the search retriever's 64-API pool and the DFSDT solver writing Action / Action
    # Input text (the model's profile says tool_calling false)
    "dfsdt-text": (["--set", "solver=dfsdt", "--set", "retriever=search"], False),
    # one chain of thought over the search retriever's pool, function calls
    "cot": (["--set", "solver=cot", "--set", "retriever=search"], True),
    # one chain of thought over the search retriever's pool, in text
    "cot-text": (["--set", "solver=cot", "--set", "retriever=search"], False),
    # α-UMi's planner / caller / summarizer over the search retriever's pool (the caller's calls as functions)
    "umi": (["--solver", "umi", "--set", "retriever=search"], True),
}


def write_queries(path: Path, n: int) -> Path:
    """The first `n` queries as a StableToolBench-style query file (`anytool eval run --queries`)."""
    path.write_text(json.dumps([{"query": q, "query_id": i, "api_list": [{"tool_name": t, "api_name": a}],
                                 "relevant APIs": [[t, a]]} for i, (q, [t, a]) in enumerate(QUERIES[:n])]),
                    encoding="utf-8")
    return path


def profiles(models: list[str], window: int, tool_calling: bool, max_tokens: int | None = None) -> str:
    """`--set model_profiles=...`: each model's declared window, function calling, a price of 0 (local), and
    `max_tokens` for every role when given (else each role's default)."""
    cap = {"max_tokens": max_tokens} if max_tokens else {}
    return json.dumps({m: {"context_window": window, "tool_calling": tool_calling, "input_price": 0,
                           "output_price": 0, **cap} for m in models})
