"""OfflinePolicyModel (the rule-based stand-in, not an LLM): argument extraction, each role's reply,
determinism, and an end-to-end `run_demo` on the builtin catalog."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from langgraph_anytool.catalog import Api, Catalog, Param
from langgraph_anytool.graphs.anytool import create_anytool_graph
from langgraph_anytool.offline import (
    OfflinePolicyModel,
    describe_response,
    extract_arguments,
    parse_observation,
    split_clauses,
    steps_from_history,
)


def api(*params: Param, name: str = "Test API") -> Api:
    return Api(id=f"Cat/tool/{name.lower().replace(' ', '_')}", name=name, tool_key="tool", tool_name="Tool",
               category="Cat", params=params)


UNITS = ("mi", "km", "m", "ft")


# ------------------------------------------------------------------------------------------ argument extraction
@pytest.mark.parametrize(
    ("params", "text", "expected"),
    [
        # string unit params take the spelled-out units in order, the number goes to `value`
        ((Param("value", "number", required=True), Param("from_unit", required=True),
          Param("to_unit", required=True)),
         "Convert 26.2 miles to kilometers", {"value": 26.2, "from_unit": "mile", "to_unit": "kilometer"}),
        # enum params map spelled-out units onto their codes; the target is the one after "to"/"in"
        ((Param("value", "number", required=True), Param("from_unit", "enum", required=True, enum=UNITS),
          Param("to_unit", "enum", required=True, enum=UNITS)),
         "How many feet are in 3 kilometers?", {"value": 3, "from_unit": "km", "to_unit": "ft"}),
        ((Param("value", "number", required=True), Param("from_scale", "enum", required=True, enum=("C", "F", "K")),
          Param("to_scale", "enum", required=True, enum=("C", "F", "K"))),
         "What is 100 degrees Fahrenheit in Celsius?", {"value": 100, "from_scale": "F", "to_scale": "C"}),
        # country codes when the parameter documents ISO codes; ISO and written dates
        ((Param("country", description="ISO alpha-2 country code.", required=True),
          Param("date", "date", required=True)),
         "Is 2025-07-14 a public holiday in France?", {"country": "FR", "date": "2025-07-14"}),
        ((Param("country", description="Country name.", required=True), Param("date", "date", required=True)),
         "Is 14 July 2025 a holiday in France?", {"country": "France", "date": "2025-07-14"}),
        # years go to `year`; capitalised names to the remaining string parameter; optional ones stay out
        ((Param("country", description="ISO code.", required=True), Param("year", "integer", required=True),
          Param("name", required=True), Param("subdivision")),
         "When is Thanksgiving in the US in 2025?", {"country": "US", "year": 2025, "name": "Thanksgiving"}),
        # source/target pairs of places
        ((Param("from_city", required=True), Param("to_city", required=True)),
         "How long is a flight to Los Angeles from New York?", {"from_city": "New York", "to_city": "Los Angeles"}),
        ((Param("city_a", required=True), Param("city_b", required=True), Param("unit", "enum", enum=UNITS)),
         "How far is Paris from Berlin in miles?", {"city_a": "Paris", "city_b": "Berlin", "unit": "mi"}),
        # quoted strings first; numbers in order
        ((Param("text", required=True), Param("a", "number", required=True), Param("b", "number", required=True)),
         'Count the words of "hello big world" then add 1,500 and -2.5', {"text": "hello big world", "a": 1500,
                                                                         "b": -2.5}),
        # required parameters the text does not give fall back to their documented default / first enum value
        ((Param("country", required=True, default="US"), Param("market", "enum", required=True, enum=("NYSE", "LSE")),
          Param("limit", "integer")),
         "Which markets are closed?", {"country": "US", "market": "NYSE"}),
    ],
)
def test_extract_arguments(params: tuple[Param, ...], text: str, expected: dict[str, Any]) -> None:
    assert extract_arguments(api(*params), text) == expected


def test_a_mention_feeds_one_parameter_only() -> None:
    args = extract_arguments(api(Param("country", description="ISO code", required=True), Param("subdivision"),
                                 Param("city")), "Holidays in Germany")
    assert args == {"country": "DE"}


@pytest.mark.parametrize(
    ("query", "parts"),
    [
        ("Convert 26.2 miles to kilometers. Is 2025-07-14 a holiday in France? How far is Paris from Berlin?", 3),
        ("Convert 5 miles to km and tell me the distance between Paris and Berlin", 2),
        ("What is the distance between Paris and Berlin?", 1),
        ("Convert 2.5 kg to pounds", 1),
    ],
)
def test_split_clauses(query: str, parts: int) -> None:
    clauses = split_clauses(query)
    assert len(clauses) == parts
    assert "".join(clauses).replace(" ", "") in query.replace(" ", "").replace(",", "") or parts > 1


def test_observations_and_response_text() -> None:
    ok = parse_observation(json.dumps({"status": "ok", "response": {"result": 42.16, "text": "26.2 mi = 42.16 km"}}))
    assert ok[0] and ok[1]["result"] == 42.16
    bad = parse_observation(json.dumps({"status": "invalid_arguments", "error": "unknown unit"}))
    assert not bad[0] and bad[2] == "unknown unit"
    assert not parse_observation(json.dumps({"error": "function 'x' does not exist"}))[0]
    assert describe_response({"result": 42.16, "text": "26.2 mi = 42.16 km"}) == "26.2 mi = 42.16 km"
    text = describe_response({"date": "2025-07-14", "is_holiday": True, "holidays": [{"name": "National Day"}]})
    assert "is holiday: yes" in text and "National Day" in text


def test_history_parsing_pairs_actions_with_observations() -> None:
    history = ("Planner: call it\nAction: f_a\nAction Input: {\"x\": 1}\n"
               "Observation (f_a): {\"status\":\"ok\",\"response\":{\"v\":2}}\n"
               "Action: f_b\nAction Input: {}\nObservation (f_b): {\"error\":\"bad\"}")
    steps = steps_from_history(history)
    assert [(s.function, s.args, s.ok) for s in steps] == [("f_a", {"x": 1}, True), ("f_b", {}, False)]


# ------------------------------------------------------------------------------------------ roles on the builtin catalog
@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return Catalog.builtin(embeddings="none")  # BM25-only: fast, independent of the MiniLM index cache


@pytest.fixture(scope="module")
def model(catalog: Catalog) -> OfflinePolicyModel:
    return OfflinePolicyModel(catalog=catalog)


def agent_schemas(level: str) -> list[dict[str, Any]]:
    from langgraph_anytool.tools.agent_functions import CATEGORY_FUNCTIONS, META_FUNCTIONS, TOOL_FUNCTIONS

    functions = {"meta": META_FUNCTIONS, "category": CATEGORY_FUNCTIONS, "tool": TOOL_FUNCTIONS}[level]
    return [f.as_tool() for f in functions]


def reply(model: OfflinePolicyModel, messages: list[BaseMessage], tools: list[dict[str, Any]] | None = None
          ) -> AIMessage:
    runnable: Any = model.bind_tools(tools) if tools else model
    out = runnable.invoke(messages)
    assert isinstance(out, AIMessage)
    return out


def answer_calls(ai: AIMessage, results: list[str]) -> list[BaseMessage]:
    return [ai, *(ToolMessage(content=r, tool_call_id=tc["id"], name=tc["name"]) for tc, r in
                  zip(ai.tool_calls, results, strict=True))]


QUERY = "Convert 26.2 miles to kilometers. Is 2025-07-14 a public holiday in France?"


def meta_prompt(catalog: Catalog, query: str) -> list[BaseMessage]:
    from langgraph_anytool.nodes.meta_agent import prompts

    hint = prompts.SEARCH_HINT.format(categories=", ".join(catalog.categories[:3]))
    return [SystemMessage(prompts.BOOTSTRAP_PROMPT.format(categories=", ".join(catalog.categories))),
            HumanMessage(prompts.FIRST_MESSAGE.format(query=query) + "\n" + hint)]


def test_meta_agent_creates_category_agents_then_finishes(model: OfflinePolicyModel, catalog: Catalog) -> None:
    msgs = meta_prompt(catalog, QUERY)
    first = reply(model, msgs, agent_schemas("meta"))
    created = [tc["args"]["category_name"] for tc in first.tool_calls]
    assert {tc["name"] for tc in first.tool_calls} == {"create_agent_category_level"}
    assert len(created) == 3 and all(c in catalog.categories for c in created)
    assert created[:2] == ["Units_Conversion", "Holidays"]  # the category of each part's best API, in order
    second = reply(model, [*msgs, *answer_calls(first, ["Created."] * len(created))], agent_schemas("meta"))
    assert [tc["name"] for tc in second.tool_calls] == ["finish_search"]
    # a re-activation message makes it assign categories it has not assigned yet
    from langgraph_anytool.nodes.meta_agent.prompts import REACTIVATE_PROMPT

    again = HumanMessage(REACTIVATE_PROMPT.format(reason="no API answered the distance"))
    done = [*msgs, *answer_calls(first, ["Created."] * len(created)), again]
    third = reply(model, done, agent_schemas("meta"))
    more = [tc["args"].get("category_name") for tc in third.tool_calls]
    assert not set(more) & set(created)


def test_category_agent_assigns_its_best_tools(model: OfflinePolicyModel, catalog: Catalog) -> None:
    from langgraph_anytool.nodes.category_agent import prompts

    category = "Holidays"
    n = len(catalog.tools(category))
    msgs: list[BaseMessage] = [
        SystemMessage(prompts.BOOTSTRAP_PROMPT.format(category=category, max_tools=2)),
        HumanMessage(prompts.FIRST_MESSAGE.format(query=QUERY, category=category, n_tools=n)),
    ]
    first = reply(model, msgs, agent_schemas("category"))
    assert [tc["name"] for tc in first.tool_calls] == ["create_agent_tool_level"]
    names = first.tool_calls[0]["args"]["tool_names"]
    assert 1 <= len(names) <= 2 and all(catalog.tool(category, t) for t in names)
    second = reply(model, [*msgs, *answer_calls(first, ["Created."])], agent_schemas("category"))
    assert [tc["name"] for tc in second.tool_calls] == ["finish_search"]


def tool_agent_prompt(catalog: Catalog, query: str, category: str, tools: list[str]) -> list[BaseMessage]:
    from langgraph_anytool.nodes.tool_agent import prompts

    lines = "\n".join(f"- {t}: {catalog.tool(category, t).description}" for t in tools)
    return [SystemMessage(prompts.BOOTSTRAP_PROMPT.format(tools=", ".join(tools), category=category,
                                                          descriptions=lines)),
            HumanMessage(prompts.FIRST_MESSAGE.format(query=query))]


def test_tool_agent_adds_apis_checks_then_finishes(model: OfflinePolicyModel, catalog: Catalog) -> None:
    target = catalog.find_api("Public Holidays", "Is Public Holiday")
    msgs = tool_agent_prompt(catalog, QUERY, target.category, [target.tool_name])
    first = reply(model, msgs, agent_schemas("tool"))
    assert [tc["name"] for tc in first.tool_calls] == ["add_apis_into_api_pool"]
    apis = first.tool_calls[0]["args"]["apis"]
    assert apis[0] == {"tool_name": target.tool_name, "api_name": target.name}
    assert len(apis) <= model.max_apis_per_agent
    msgs = [*msgs, *answer_calls(first, ['{"added": ["x"], "pool_size": 1}'])]
    second = reply(model, msgs, agent_schemas("tool"))
    assert [tc["name"] for tc in second.tool_calls] == ["check_if_request_solvable"]
    msgs = [*msgs, *answer_calls(second, ["False: a part is missing"])]
    third = reply(model, msgs, agent_schemas("tool"))
    assert [tc["name"] for tc in third.tool_calls] == ["finish_search"]


def test_tool_agent_with_irrelevant_tools_finishes_at_once(model: OfflinePolicyModel, catalog: Catalog) -> None:
    tool = catalog.find_api("Public Holidays", "Is Public Holiday").tool_name
    msgs = tool_agent_prompt(catalog, "Convert 26.2 miles to kilometers", "Holidays", [tool])
    first = reply(model, msgs, agent_schemas("tool"))
    assert [tc["name"] for tc in first.tool_calls] == ["finish_search"]


def solvable_prompt(query: str, pool: list[Api]) -> list[BaseMessage]:
    from langgraph_anytool.nodes.tool_agent.prompts import SOLVABLE_HUMAN, SOLVABLE_SYSTEM

    listing = "\n".join(json.dumps({"tool": a.tool_name, "api": a.name, "description": a.description}) for a in pool)
    return [SystemMessage(SOLVABLE_SYSTEM), HumanMessage(SOLVABLE_HUMAN.format(query=query, apis=listing))]


def test_solvable_check_needs_an_api_for_every_part(model: OfflinePolicyModel, catalog: Catalog) -> None:
    convert = catalog.find_api("Universal Unit Converter", "Convert Units")
    holiday = catalog.find_api("Public Holidays", "Is Public Holiday")
    assert str(reply(model, solvable_prompt(QUERY, [convert, holiday])).content) == "Solvable"
    partial = str(reply(model, solvable_prompt(QUERY, [convert])).content)
    assert partial.startswith("Unsolvable:") and "holiday" in partial


def solver_prompt(query: str) -> list[BaseMessage]:
    from langgraph_anytool.nodes.solver import prompts

    return [SystemMessage(prompts.SOLVER_SYSTEM.format(restart_rule=prompts.RESTART_RULE, task_description="...")),
            HumanMessage(prompts.QUERY.format(query=query))]


def solver_tools(catalog: Catalog, apis: list[Api]) -> list[dict[str, Any]]:
    from langgraph_anytool.nodes.solver.finish import finish_schema
    from langgraph_anytool.tools.lc import api_json_schema

    return [*(api_json_schema(catalog, a.id) for a in apis), finish_schema()]


def test_solver_calls_the_best_api_then_answers(model: OfflinePolicyModel, catalog: Catalog) -> None:
    q = "Convert 26.2 miles to kilometers"
    best = catalog.find_api("Universal Unit Converter", "Convert Units")
    other = catalog.find_api("Public Holidays", "Is Public Holiday")
    tools = solver_tools(catalog, [other, best])
    msgs = solver_prompt(q)
    first = reply(model, msgs, tools)
    assert len(first.tool_calls) == 1 and first.tool_calls[0]["name"] == catalog.function_name(best.id)
    assert 26.2 in first.tool_calls[0]["args"].values()
    obs = json.dumps({"status": "ok", "response": {"result": 42.16, "text": "26.2 mi = 42.16 km"}})
    second = reply(model, [*msgs, *answer_calls(first, [obs])], tools)
    (finish,) = second.tool_calls
    assert finish["name"] == "Finish" and finish["args"]["return_type"] == "give_answer"
    assert "42.16" in finish["args"]["final_answer"]


def test_solver_tries_another_api_after_an_error_then_gives_up(model: OfflinePolicyModel, catalog: Catalog) -> None:
    q = "Convert 26.2 miles to kilometers"
    ranked = [catalog.find_api("Universal Unit Converter", "Convert Units"),
              catalog.find_api("Quick Metric Converter", "Convert Length"),
              catalog.find_api("Public Holidays", "Is Public Holiday")]
    tools = solver_tools(catalog, ranked)
    msgs = solver_prompt(q)
    tried: list[str] = []
    for _ in range(len(ranked) + 1):
        ai = reply(model, msgs, tools)
        (tc,) = ai.tool_calls
        if tc["name"] == "Finish":
            break
        assert tc["name"] not in tried
        tried.append(tc["name"])
        msgs = [*msgs, *answer_calls(ai, [json.dumps({"status": "server_error", "error": "HTTP 500"})])]
    assert tc["name"] == "Finish" and tc["args"]["return_type"] == "give_up"
    assert tried == [catalog.function_name(a.id) for a in ranked[:2]]  # the holiday API does not fit
    assert tc["args"]["failed_functions"] == tried
    assert "HTTP 500" in tc["args"]["reason"]


def test_umi_planner_caller_summarizer(model: OfflinePolicyModel, catalog: Catalog) -> None:
    from langgraph_anytool.nodes.solver import prompts

    q = "Convert 26.2 miles to kilometers"
    best = catalog.find_api("Universal Unit Converter", "Convert Units")
    fn = catalog.function_name(best.id)
    doc = f"1. {fn} (tool {best.tool_name!r}, API {best.name!r}): {best.description}"
    plan = reply(model, [SystemMessage(prompts.PLANNER_SYSTEM.format(doc=doc, history=prompts.EMPTY_HISTORY,
                                                                     diversity="")), HumanMessage(q)])
    assert str(plan.content).endswith("Next: caller") and fn in str(plan.content)
    caller_sys = prompts.CALLER_SYSTEM.format(doc=doc, history=prompts.EMPTY_HISTORY, thought=plan.content,
                                              tool_names=fn)
    call = reply(model, [SystemMessage(caller_sys), HumanMessage(q)], solver_tools(catalog, [best])[:1])
    assert [tc["name"] for tc in call.tool_calls] == [fn]
    history = (f"Action: {fn}\nAction Input: {json.dumps(call.tool_calls[0]['args'])}\n"
               f'Observation ({fn}): {{"status":"ok","response":{{"text":"26.2 mi = 42.16 km"}}}}')
    plan2 = reply(model, [SystemMessage(prompts.PLANNER_SYSTEM.format(doc=doc, history=history, diversity="")),
                          HumanMessage(q)])
    assert str(plan2.content).endswith("Next: summarizer")
    summary = reply(model, [SystemMessage(prompts.SUMMARIZER_SYSTEM.format(history=history, thought=plan2.content)),
                            HumanMessage(q)])
    assert "42.16 km" in str(summary.content)


def test_judge_labels(model: OfflinePolicyModel) -> None:
    from langgraph_anytool.nodes.judge.prompts import JUDGE_SYSTEM, JUDGE_USER

    def judge(calls: str, answer: str, query: str = "Convert 26.2 miles to kilometers") -> dict[str, Any]:
        out = reply(model, [SystemMessage(JUDGE_SYSTEM), HumanMessage(JUDGE_USER.format(
            query=query, calls=calls, answer=answer))])
        return dict(json.loads(str(out.content)))

    assert judge("- convert_units → ok", "Convert Units: 26.2 mi = 42.16 km.")["label"] == "Solved"
    assert judge("- convert_units → server_error", "Convert Units: 26.2 mi = 42.16 km.")["label"] == "Unsolved"
    assert judge("- convert_units → ok", "")["label"] == "Unsolved"
    # every part must be addressed: one of its values and one of its topic words
    two = "Convert 26.2 miles to kilometers. Is 2025-07-14 a public holiday in France?"
    partial = judge("- convert_units → ok", "Convert Units: 26.2 mi = 42.16 km.", two)
    assert partial["label"] == "Unsolved" and "holiday" in partial["reason"]
    full = "Convert Units: 26.2 mi = 42.16 km. Is Public Holiday: date 2025-07-14, holiday: yes."
    assert judge("- convert_units → ok\n- is_public_holiday → ok", full, two)["label"] == "Solved"
    off_topic = judge("- city_details → ok", "City Details: Paris, population 11200000.",
                      "What is the weather in Paris tomorrow?")
    assert off_topic["label"] == "Unsolved"


def test_no_api_is_taken_for_a_topic_the_catalog_lacks(model: OfflinePolicyModel, catalog: Catalog) -> None:
    query = "What is the weather in Paris tomorrow?"
    tools = [t.name for t in catalog.tools("Geography")]
    first = reply(model, tool_agent_prompt(catalog, query, "Geography", tools), agent_schemas("tool"))
    assert [tc["name"] for tc in first.tool_calls] == ["finish_search"]
    city = catalog.find_api("World Cities Database", "City Details")
    assert str(reply(model, solvable_prompt(query, [city])).content).startswith("Unsolvable")


def test_umi_prompts_that_embed_other_markers_keep_their_role(model: OfflinePolicyModel) -> None:
    from langgraph_anytool.nodes.solver import prompts

    history = 'Observation (f): {"status":"ok","response":{"label":"x"}}\nPlanner: ok. Next: caller'
    msgs: list[BaseMessage] = [SystemMessage(prompts.SUMMARIZER_SYSTEM.format(history=history, thought="done")),
                               HumanMessage("q")]
    assert model.role_of(msgs, []) == "summarizer"


def test_replies_are_deterministic_and_carry_estimated_usage(model: OfflinePolicyModel, catalog: Catalog) -> None:
    msgs = meta_prompt(catalog, QUERY)
    a = reply(model, msgs, agent_schemas("meta"))
    b = reply(OfflinePolicyModel(catalog=catalog), msgs, agent_schemas("meta"))
    assert a.tool_calls == b.tool_calls and a.content == b.content
    assert all(tc["id"] for tc in a.tool_calls) and len({tc["id"] for tc in a.tool_calls}) == len(a.tool_calls)
    assert a.usage_metadata is not None
    assert a.usage_metadata["input_tokens"] == sum(len(str(m.content)) for m in msgs) // 4
    assert a.response_metadata["estimated_usage"] is True and a.response_metadata["model_name"] == "offline-policy"


# ------------------------------------------------------------------------------------------ end to end
def test_whole_runs_are_deterministic(catalog: Catalog) -> None:
    query = "Convert 26.2 miles to kilometers. How far is Paris from Berlin?"
    outs = []
    for _ in range(2):
        graph = create_anytool_graph(catalog, OfflinePolicyModel(catalog=catalog))
        outs.append(graph.invoke({"query": query}, {"recursion_limit": 500}))
    a, b = outs
    assert a["answer"] and a["answer"] == b["answer"]
    assert sorted(e["api_id"] for e in a["api_pool"]) == sorted(e["api_id"] for e in b["api_pool"])
    assert "42.1648" in a["answer"] and "Berlin" in a["answer"]


def test_run_demo_solves_the_default_query(monkeypatch: pytest.MonkeyPatch) -> None:
    from langgraph_anytool.demo import run_demo

    monkeypatch.delenv("ANYTOOL_MODEL", raising=False)
    monkeypatch.setenv("ANYTOOL_EMBEDDINGS", "none")  # BM25-only search: fast and independent of the MiniLM cache
    out = io.StringIO()
    code = run_demo(None, out)
    text = out.getvalue()
    first_line = text.splitlines()[0]
    assert "OfflinePolicyModel" in first_line and "NOT an LLM" in first_line
    assert "status: solved" in text, text
    assert code == 0
    pool = text.split("API pool (", 1)[1]
    assert int(pool.split(")", 1)[0]) > 0
    assert int(text.split("API calls:", 1)[1].split()[0]) >= 1
    assert "42.1648" in text.split("answer:", 1)[1].splitlines()[0]  # the local unit converter ran
