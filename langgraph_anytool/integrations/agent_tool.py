"""AnyTool as one LangChain tool: an outer agent hands it a request and gets back the answer and its sources.

`create_anytool_tool(catalog, model)` runs the whole AnyTool graph (hierarchical retrieval, solver, judge,
reflection) inside one tool call. The tool's content — what the outer model reads — is text: the answer (or why
there is none) and the APIs it rests on. The ToolMessage's `artifact` is the run's record, for the application (it
is not sent to the model): answer, status (and reason when it is not solved), the sources (function, tool, API,
category, how many calls and the last call's status), the query, token usage and the candidate pool.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, Field

from ..catalog import Catalog
from ..config import AnyToolConfig
from ..graphs.anytool import create_anytool_graph
from ..graphs.solver import RECURSION_SAFETY_NET
from ..models.llm import ModelSpec
from ..nodes.judge import carried_calls
from ..tools.pipeline import ApiExecutor


class AnyToolRequest(BaseModel):
    """The tool's single argument."""

    request: str = Field(description="The complete request in plain language, with every value it needs (names, "
                                     "places, numbers, dates): the tool finds and calls the APIs that answer it.")


def default_description(catalog: Catalog) -> str:
    """What the outer model reads about the tool: what it does and the catalog's scope."""
    cats = catalog.categories
    shown = ", ".join(cats[:12]) + (f" and {len(cats) - 12} more" if len(cats) > 12 else "")
    return (f"Answers a request by finding and calling the right APIs among {len(catalog)} APIs of "
            f"{catalog.num_tools} tools (categories: {shown}). Give the full request; returns the answer, "
            "whether it was solved, and the APIs it used.")


def _answer_path(tree: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The nodes root → the node that gave the answer (empty when no node did)."""
    by_id = {n["id"]: n for n in tree}
    answer = next((n for n in reversed(tree) if n.get("status") == "answer"), None)
    path: list[Mapping[str, Any]] = []
    while answer is not None:
        path.append(answer)
        answer = by_id.get(answer.get("parent"))
    return path[::-1]


def run_sources(values: Mapping[str, Any], catalog: Catalog) -> list[dict[str, Any]]:
    """The APIs a run's answer rests on: the calls on the answering attempt's path to its answer; for a run
    without an answer, every API its attempts called. One entry per API, in order of first call."""
    attempts = list(values.get("solver_attempts") or [])
    answering = [i for i, a in enumerate(attempts) if a.get("finish_type") == "give_answer"]
    observations: list[Mapping[str, Any]] = []
    if answering:  # the calls it carried over from the attempt before (a solve resumed after a reflection) too
        last = answering[-1]
        observations += [c for c, _ in carried_calls(attempts[last], attempts[:last])]
        nodes = _answer_path(attempts[last].get("tree") or [])
    else:
        nodes = [n for a in attempts for n in a.get("tree") or []]
    observations += [obs for node in nodes for obs in node.get("observations") or []]
    out: dict[str, dict[str, Any]] = {}
    for obs in observations:
        key = obs.get("api_id") or obs.get("function", "")
        entry = out.get(key)
        if entry is None:
            entry = {"function": obs.get("function", "")}
            if obs.get("api_id") and obs["api_id"] in catalog:
                api = catalog.api(obs["api_id"])
                entry.update({"tool": api.tool_name, "api": api.name, "category": api.category})
            entry["calls"] = 0
            out[key] = entry
        entry["calls"] += 1
        entry["status"] = obs.get("status", "")
    return list(out.values())


def tool_text(record: Mapping[str, Any]) -> str:
    """What the outer model reads: the answer (with why it is not confirmed when the run was not judged solved), or
    why there is none; then the APIs it rests on."""
    answer, status, reason = str(record.get("answer") or "").strip(), record.get("status", ""), record.get("reason")
    if answer:
        text = answer if status == "solved" else f"{answer}\n\n(Not confirmed: {status}: {reason or 'no reason given'})"
    else:
        text = f"No answer ({status}): {reason or 'no reason given'}"
    sources = [f"{s.get('tool') or s['function']} / {s.get('api') or s['function']} ({s['calls']} "
               f"call{'s' if s['calls'] != 1 else ''}, {s['status']})" for s in record.get("sources") or []]
    return text + ("\n\nSources: " + "; ".join(sources) if sources else "")


def tool_result(values: Mapping[str, Any], catalog: Catalog) -> tuple[str, dict[str, Any]]:
    """(content for the model: readable text, artifact for the application: the run's record) from a run's
    output. The record: answer, status, reason (when not solved), sources, query, token total and pool."""
    record: dict[str, Any] = {"answer": values.get("answer", ""), "status": values.get("status", "")}
    if record["status"] != "solved":
        record["reason"] = values.get("reason", "")
    record["sources"] = run_sources(values, catalog)
    record.update({"query": values.get("query", ""),
                   "total_tokens": (values.get("usage") or {}).get("total_tokens", 0),
                   "api_pool": [dict(e) for e in values.get("api_pool") or []]})
    return tool_text(record), record


def create_anytool_tool(
    catalog: Catalog | None = None,
    model: ModelSpec | None = None,
    *,
    models: Mapping[str, ModelSpec] | None = None,
    config: AnyToolConfig | None = None,
    executor: ApiExecutor | None = None,
    context: Mapping[str, Any] | None = None,
    name: str = "anytool",
    description: str | None = None,
) -> BaseTool:
    """A LangChain tool (one argument, `request`) that answers the request with the AnyTool graph over `catalog`.

    `catalog`, `model`, `models`, `config` and `executor` are those of `create_anytool_graph`; `context` is passed
    to every run (per-run overrides such as `{"max_api_pool": 16}`). `response_format="content_and_artifact"`: the
    content is readable text (the answer, or why there is none, and its sources), the artifact the run's record
    (`tool_result`): invoke the tool with a tool call to get the `ToolMessage` that carries both. Sync and async
    (`ainvoke`) both run the graph.
    """
    cat = catalog if catalog is not None else Catalog.builtin()
    graph = create_anytool_graph(cat, model, models=models, config=config, executor=executor, name=name)
    run_context = dict(context or {})

    # Inside a tool call the config LangChain hands down carries its generic recursion limit (25 supersteps), which
    # a run with a few reflections exceeds; the run's own budgets (steps, reflections, tokens, time) end it.
    limits: RunnableConfig = {"recursion_limit": RECURSION_SAFETY_NET}

    def run(request: str) -> tuple[str, dict[str, Any]]:
        values = graph.invoke({"query": request}, limits, context=run_context or None)
        return tool_result(values, cat)

    async def arun(request: str) -> tuple[str, dict[str, Any]]:
        values = await graph.ainvoke({"query": request}, limits, context=run_context or None)
        return tool_result(values, cat)

    return StructuredTool.from_function(
        func=run, coroutine=arun, name=name, description=description or default_description(cat),
        args_schema=AnyToolRequest, response_format="content_and_artifact")
