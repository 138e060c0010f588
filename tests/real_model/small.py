"""The hierarchical retriever and the DFSDT solver on a small builtin catalog, sized for a CPU: what the real-model
tier's pool test (test_pool.py) and `benchmarks/real_model.py --modes dfsdt-small dfsdt-small-text` run.

A CPU run over the whole builtin catalog spends minutes on the meta-agent's browsing, so the catalog is the builtin
`Units_Conversion` category cut to two tools (12 APIs, executed locally), and the settings are small: the authors'
functions per agent (`agent_functions="authors"`: a tool agent adds APIs or finishes, as their scripts/main.py
offers), a pool of 3 APIs, 1 API call per solve, one reflection round. The request has a part that no API of that
catalog answers (a public holiday), and the judge is the OFFLINE judge (`models={"judge": "offline"}`, a rule-based
check, not an LLM): it says Unsolved while a part is unanswered, so a finished solve is followed by a reflection
round whatever the model answers.

    OPENAI_BASE_URL=http://127.0.0.1:8080/v1 python -m tests.real_model.small smollm2 [--text]   # prints the result
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from typing import Any

from langgraph_anytool import AnyToolConfig, Catalog, create_anytool_graph
from langgraph_anytool.catalog.builtin import builtin_categories

QUERY = "Convert 26.2 miles to kilometers, and is 2025-07-14 a public holiday in France?"
CATEGORY, TOOLS = "Units_Conversion", ("Universal Unit Converter", "Quick Metric Converter")
RUN_SECONDS = 600.0  # max_run_seconds: a loaded CPU reads 10-20 prompt tokens a second, the solver first ~1,500
SETTINGS: dict[str, Any] = dict(agent_functions="authors", max_api_pool=3, max_api_calls=1, max_reflections=1,
                                max_run_seconds=RUN_SECONDS, token_budget=30_000, models={"judge": "offline"})


def small_catalog() -> Catalog:
    """The builtin catalog's `CATEGORY` with `TOOLS` only (its APIs run locally)."""
    cats = [replace(c, tools=tuple(t for t in c.tools if t.name in TOOLS)) for c in builtin_categories()
            if c.name == CATEGORY]
    return Catalog.merge(Catalog(cats, name="builtin"))


def run(model: str, *, text: bool, window: int, max_tokens: int, **overrides: Any) -> dict[str, Any]:
    """One run of `QUERY` with `openai:MODEL` ($OPENAI_BASE_URL) playing every role but the judge."""
    profile = {"context_window": window, "max_tokens": max_tokens, "tool_calling": not text, "input_price": 0,
               "output_price": 0}
    config = AnyToolConfig(model_profiles={model: profile}, **{**SETTINGS, **overrides})
    graph = create_anytool_graph(catalog=small_catalog(), model=f"openai:{model}", config=config)
    return dict(graph.invoke({"query": QUERY}, {"configurable": {"thread_id": f"{model}-{text}"}}))


def summary(out: dict[str, Any]) -> dict[str, Any]:
    """The JSON fields of a result that the benchmark reads (as `anytool run --json` prints them)."""
    keep = ("status", "reason", "answer", "api_pool", "solver_attempts", "usage", "error_kind")
    agents = {k: {f: a.get(f) for f in ("level", "steps", "end_reason")} for k, a in out.get("agents", {}).items()}
    events = [{"kind": e.get("kind")} for e in out.get("events") or []]
    attempts = [{k: v for k, v in a.items() if k in ("api_calls", "finish_type", "round")}
                for a in out.get("solver_attempts") or []]
    return {**{k: out.get(k) for k in keep}, "solver_attempts": attempts, "agents": agents, "events": events}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model")
    p.add_argument("--text", action="store_true", help="text mode (the profile's tool_calling false)")
    p.add_argument("--window", type=int, default=2048)
    p.add_argument("--max-tokens", type=int, default=256)
    args = p.parse_args(argv)
    out = run(args.model, text=args.text, window=args.window, max_tokens=args.max_tokens)
    print(json.dumps(summary(out), default=str))
    return 0 if out.get("status") == "solved" else 1


if __name__ == "__main__":
    sys.exit(main())
