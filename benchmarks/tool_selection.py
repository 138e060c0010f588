"""Tool selection for `create_agent`: AnyToolSelectorMiddleware vs LangChain's LLMToolSelectorMiddleware.

    .venv/bin/python benchmarks/tool_selection.py                        # builtin (194 tools) + ToolBench when present
    .venv/bin/python benchmarks/tool_selection.py --sets builtin --max-tools 5
    .venv/bin/python benchmarks/tool_selection.py --model openai:gpt-4o-mini   # real recall for the LLM selector

Both middlewares run inside a real `create_agent` loop on the same tools and queries; the agent's own model is a
scripted one that answers at once, so only the selection step differs. Per query we record the tools the agent's
model was offered and compute selection recall = |relevant ∩ offered| / |relevant| (offered ≤ max_tools) and the
hit rate (some relevant tool offered; for the builtin set the labels are alternatives, so hit rate is the figure).

Sets:
- builtin: the 194 builtin APIs as tools (`api_tools`) and 20 hand-written requests, each labelled with the API(s)
  that answer it;
- toolbench (skipped when ../shared/toolbench is absent): the 2,490-API ToolBench catalog as tools and the first
  `--queries` StableToolBench dev queries of each group, labelled by their "relevant APIs".

AnyTool's selector is run flat (search over the tool list alone), with `catalog=` (search over the catalog the
tools came from) — both make no model call — and in its hierarchical mode (`mode="hierarchical"`: AnyTool's
meta / category / tool agents fill a pool once per request, AnyTool §4.1). Offline the hierarchical mode's agents
are played by the rule-based OFFLINE STAND-IN (`model="offline"`, NOT an LLM: its figures measure the retriever
graph driven by heuristics, not what an LLM would select; its tokens are characters / 4 of its prompts); with
--model that model plays them, and its usage is reported. LLMToolSelectorMiddleware makes one structured-output call per model call
whose prompt carries every tool's name and description. Offline (no --model) that call goes to a SCRIPTED model
which selects nothing: its recall is not measured (shown as "n/a"), and its prompt size is estimated as
characters / 4 of the messages plus the tool-selection schema it is sent (no tokenizer is available offline).
With --model the call goes to that model and its real recall and usage_metadata tokens are reported.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import LLMToolSelectorMiddleware
from langchain_core.callbacks import get_usage_metadata_callback
from langchain_core.messages import AIMessage, HumanMessage

from langgraph_anytool import AnyToolSelectorMiddleware, ApiExecutor, Catalog, api_tools
from langgraph_anytool.models.llm import total_tokens
from langgraph_anytool.models.testing import ScriptedChatModel, call

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "toolbench"
GROUPS = ("G1_instruction", "G1_category", "G1_tool", "G2_instruction", "G2_category", "G3_instruction")

# (request, function names that answer it) over the builtin catalog
BUILTIN_QUERIES: list[tuple[str, list[str]]] = [
    ("What is the distance between Paris and Berlin in km?", ["distance_between_cities_for_geo_distance_calculator"]),
    ("Convert 26.2 miles to kilometres.", ["convert_units_for_universal_unit_converter",
                                           "convert_length_for_quick_metric_converter"]),
    ("Is 2024-12-26 a public holiday in Germany?", ["is_public_holiday_for_public_holidays"]),
    ("List the public holidays in France in 2025.", ["list_public_holidays_for_public_holidays"]),
    ("Which currencies are used in Switzerland?", ["currencies_of_country_for_currency_reference"]),
    ("How many working days are there between 2024-03-01 and 2024-03-31 in the UK?",
     ["working_days_between_dates_for_business_day_calculator"]),
    ("What date is 45 days after 2024-01-15?", ["add_to_date_for_date_calculator"]),
    ("What is the population and capital of Japan?", ["get_country_for_country_profile"]),
    ("What time is it now in Tokyo?", ["current_time_in_zone_for_world_clock"]),
    ("Convert the Unix timestamp 1700000000 to a date.", ["timestamp_to_date_for_unix_time_converter"]),
    ("Format 1234567.891 as money in euros for a German reader.", ["format_money_for_currency_reference"]),
    ("How is Spain called in French?", ["country_name_in_language_for_country_profile"]),
    ("Give me the coordinates and population of Lyon.", ["city_details_for_world_cities_database"]),
    ("Convert 100 degrees Fahrenheit to Celsius.", ["convert_temperature_for_quick_metric_converter",
                                                    "convert_units_for_universal_unit_converter"]),
    ("What is the date of Easter in 2026?", ["easter_date_for_calendar_facts", "find_holiday_by_name_for_public_holidays"]),
    ("Which day of the week was 1969-07-20?", ["day_of_week_for_date_calculator"]),
    ("When is the next public holiday in Canada after 2025-01-02?", ["next_public_holiday_for_public_holidays"]),
    ("Is 2100 a leap year?", ["leap_year_check_for_calendar_facts"]),
    ("How much is $1,000 from 2000 worth after inflation at 2.5% a year until 2024?",
     ["inflation_adjustment_for_investment_calculator"]),
    ("What is the area of a circle with a radius of 3 metres?", ["circle_properties_for_geometry_calculator"]),
]


class SelectionSpy(ScriptedChatModel):
    """The agent's own model: records the tools it is offered, answers at once."""


def agent_model() -> SelectionSpy:
    return SelectionSpy(responder=lambda messages, tools: AIMessage(content="done"))


def scripted_selector() -> ScriptedChatModel:
    """The LLM selector's model, offline: one structured-output reply that selects nothing."""
    return ScriptedChatModel(responder=lambda messages, tools: AIMessage(
        content="", tool_calls=[call(tools[0] if tools else "ToolSelectionResponse", tools=[])]))


def schema_chars(model: ScriptedChatModel) -> int:
    return sum(len(str(m.content)) for c in model.calls for m in c["messages"]) + sum(
        len(json.dumps(s)) for c in model.calls for s in c["tool_schemas"])


def run(method: str, tools: list[Any], queries: list[tuple[str, list[str]]], *, max_tools: int,
        catalog: Catalog | None, model_spec: str | None) -> dict[str, Any]:
    """One method over all queries: recall and hit rate, model calls and tokens spent on selection, time per query.

    One middleware serves every query (as in an application); AnyTool's index build is its first query's cost.
    """
    recalls: list[float] = []
    hits: list[float] = []
    offered_sizes: list[int] = []
    seconds: list[float] = []
    selection_tokens = 0
    sel_model: Any = None
    hierarchical = method == "anytool+hierarchical"
    if hierarchical:  # the offline stand-in (NOT an LLM) plays the retriever's agents unless --model is given
        mw: Any = AnyToolSelectorMiddleware(max_tools=max_tools, catalog=catalog, mode="hierarchical",
                                            model=model_spec or "offline")
    elif method.startswith("anytool"):
        mw = AnyToolSelectorMiddleware(max_tools=max_tools, catalog=catalog if method == "anytool+catalog" else None)
    else:
        from langchain.chat_models import init_chat_model

        sel_model = init_chat_model(model_spec) if model_spec else scripted_selector()
        mw = LLMToolSelectorMiddleware(model=sel_model, max_tools=max_tools, on_parsing_failure="none")
    for query, relevant in queries:
        main = agent_model()
        agent = create_agent(main, tools=tools, middleware=[mw])
        start = time.perf_counter()
        with get_usage_metadata_callback() as usage_cb:  # counts models that report a model_name (not scripted ones)
            agent.invoke({"messages": [HumanMessage(query)]})
        seconds.append(time.perf_counter() - start)
        selection_tokens += sum(u.get("total_tokens", 0) for u in usage_cb.usage_metadata.values())
        offered = set(main.calls[0]["tools"])
        offered_sizes.append(len(offered))
        recalls.append(len(offered & set(relevant)) / len(relevant))
        hits.append(float(bool(offered & set(relevant))))
    scripted = isinstance(sel_model, ScriptedChatModel)
    if scripted:
        selection_tokens = schema_chars(sel_model) // 4
    calls = len(sel_model.calls) if scripted else (len(queries) if sel_model is not None else 0)
    estimated = scripted
    if hierarchical:  # the retriever's own accounting (usage_metadata; the stand-in's are labelled estimates)
        usage = mw.usage
        calls = sum(int(u.get("model_calls", 0)) for u in usage.values())
        selection_tokens = total_tokens(usage)
        estimated = any(u.get("estimated_tokens") for u in usage.values())
    measured = not (method == "llm-selector" and model_spec is None)
    return {
        "method": method + (" (stand-in, not an LLM)" if hierarchical and not model_spec else ""),
        "queries": len(queries),
        "recall": round(100 * statistics.fmean(recalls), 1) if measured else None,
        "hit": round(100 * statistics.fmean(hits), 1) if measured else None,
        "mean_tools_offered": round(statistics.fmean(offered_sizes), 2),
        "selection_model_calls": calls,
        "selection_tokens_per_query": round(selection_tokens / len(queries)),
        "tokens_estimated": estimated,
        # hierarchical: requests whose retrieval failed or pooled none of the tools (the search selected instead)
        "search_fallbacks": sum(r.failed or not r.api_ids for r in mw.retrievals) if hierarchical else None,
        "first_query_ms": round(1000 * seconds[0], 1),
        "ms_per_query": round(1000 * statistics.median(seconds[1:] or seconds), 1),
    }


def builtin_set() -> tuple[Catalog, list[tuple[str, list[str]]]]:
    catalog = Catalog.builtin()
    names = {catalog.function_name(a.id) for a in catalog}
    bad = [f for _, fs in BUILTIN_QUERIES for f in fs if f not in names]
    if bad:
        raise SystemExit(f"benchmark labels name functions the builtin catalog lacks: {bad}")
    return catalog, BUILTIN_QUERIES


def toolbench_set(per_group: int) -> tuple[Catalog, list[tuple[str, list[str]]]] | None:
    if not (SHARED / "tools").is_dir():
        return None
    from langgraph_anytool.eval.retrieval import load_queries

    catalog = Catalog.from_toolbench(SHARED / "tools")
    out: list[tuple[str, list[str]]] = []
    for group in GROUPS:
        qs = [q for q in load_queries([SHARED / "queries" / f"{group}.json"], catalog) if q.relevant][:per_group]
        out += [(q.query, [catalog.function_name(i) for i in q.relevant]) for q in qs]
    return catalog, out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sets", nargs="+", default=["builtin", "toolbench"], choices=("builtin", "toolbench"))
    ap.add_argument("--max-tools", type=int, default=5)
    ap.add_argument("--queries", type=int, default=10, help="ToolBench queries per group (default 10, 6 groups)")
    ap.add_argument("--model", default=None, help="'provider:model' for the LLM selector (default: scripted, offline)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)

    results = []
    for name in args.sets:
        loaded = builtin_set() if name == "builtin" else toolbench_set(args.queries)
        if loaded is None:
            print(f"[{name}] skipped: {SHARED} is absent", file=sys.stderr)
            continue
        catalog, queries = loaded
        executor = ApiExecutor.for_catalog(catalog, kind="template")  # selection only: nothing is executed
        tools = api_tools(catalog, executor)
        for method in ("anytool", "anytool+catalog", "anytool+hierarchical", "llm-selector"):
            row = run(method, tools, queries, max_tools=args.max_tools, catalog=catalog, model_spec=args.model)
            row["set"], row["tools"] = name, len(tools)
            results.append(row)
            print(f"[{name}] {method}: done", file=sys.stderr)
        executor.close()

    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    llm = f"model {args.model}" if args.model else "SCRIPTED offline model: recall n/a, tokens ≈ chars/4"
    hier = f"model {args.model}" if args.model else "the OFFLINE STAND-IN (rule-based, not an LLM; tokens ≈ chars/4)"
    print(f"max_tools={args.max_tools}; LLM selector driven by {llm}; anytool+hierarchical's agents played by {hier}\n")
    head = ["set", "tools", "queries", "method", "recall %", "hit %", "offered", "sel. calls/q", "sel. tokens/q",
            "1st ms", "ms/q"]
    rows = [[r["set"], str(r["tools"]), str(r["queries"]), r["method"],
             "n/a" if r["recall"] is None else f"{r['recall']:.1f}", "n/a" if r["hit"] is None else f"{r['hit']:.1f}",
             f"{r['mean_tools_offered']:.2f}",
             f"{r['selection_model_calls'] / r['queries']:.2f}",
             ("≈" if r["tokens_estimated"] else "") + str(r["selection_tokens_per_query"]),
             f"{r['first_query_ms']:.0f}", f"{r['ms_per_query']:.1f}"] for r in results]
    widths = [max(len(x[i]) for x in [head, *rows]) for i in range(len(head))]
    for line in [head, ["-" * w for w in widths], *rows]:
        print("  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
