"""OfflinePolicyModel (the rule-based stand-in, not an LLM): argument extraction, each role's reply (role and
inputs given as call metadata, as the graph gives them; the prompt text is deliberately meaningless), the generic
fall-back without metadata, determinism, and an end-to-end `run_demo` on the builtin catalog."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from langgraph_anytool.catalog import Api, Catalog, Param
from langgraph_anytool.graphs.anytool import create_anytool_graph
from langgraph_anytool.models.llm import role_config
from langgraph_anytool.nodes.solver.tree import message_to_dict
from langgraph_anytool.offline import (
    LABEL,
    OfflinePolicyModel,
    describe_response,
    extract_arguments,
    parse_observation,
    split_clauses,
    steps_from_dicts,
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


def test_history_dicts_pair_actions_with_observations() -> None:
    history = [
        {"role": "assistant", "content": "call it", "tool_calls": [{"name": "f_a", "args": {"x": 1}, "id": "1"}]},
        {"role": "tool", "content": '{"status":"ok","response":{"v":2}}', "tool_call_id": "1"},
        {"role": "assistant", "content": "", "tool_calls": [{"name": "f_b", "args": {}, "id": "2"}]},
        {"role": "tool", "content": '{"error":"bad"}', "tool_call_id": "2", "name": "f_b"},
        {"role": "user", "content": "a note"},
    ]
    steps = steps_from_dicts(history)
    assert [(s.function, s.args, s.ok) for s in steps] == [("f_a", {"x": 1}, True), ("f_b", {}, False)]
    assert steps[0].response == {"v": 2} and steps[1].error == "bad"


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


# The prompt the graph would send carries no information the policy may use: these stand in for it.
OPENING: list[BaseMessage] = [SystemMessage("(system prompt: any wording)"), HumanMessage("(any wording)")]


def reply(model: OfflinePolicyModel, role: str | None, inputs: dict[str, Any] | None,
          messages: list[BaseMessage] | None = None, tools: list[Any] | None = None) -> AIMessage:
    """One call as the graph makes it: role and inputs in the call's metadata (`role=None`: a direct call)."""
    runnable: Any = model.bind_tools(tools) if tools else model
    config = role_config(None, role, inputs) if role else None
    out = runnable.invoke(messages if messages is not None else OPENING, config)
    assert isinstance(out, AIMessage)
    return out


def answer_calls(ai: AIMessage, results: list[str], status: str = "success") -> list[BaseMessage]:
    return [ai, *(ToolMessage(content=r, tool_call_id=tc["id"], name=tc["name"], status=status) for tc, r in
                  zip(ai.tool_calls, results, strict=True))]


QUERY = "Convert 26.2 miles to kilometers. Is 2025-07-14 a public holiday in France?"


def test_meta_agent_creates_category_agents_then_finishes(model: OfflinePolicyModel, catalog: Catalog) -> None:
    inputs = {"query": QUERY, "agent_id": "meta"}
    first = reply(model, "meta", inputs, OPENING, agent_schemas("meta"))
    created = [tc["args"]["category_name"] for tc in first.tool_calls]
    assert {tc["name"] for tc in first.tool_calls} == {"create_agent_category_level"}
    assert len(created) == 3 and all(c in catalog.categories for c in created)
    assert created[:2] == ["Units_Conversion", "Holidays"]  # the category of each part's best API, in order
    done = [*OPENING, *answer_calls(first, ["Created."] * len(created))]
    second = reply(model, "meta", inputs, done, agent_schemas("meta"))
    assert [tc["name"] for tc in second.tool_calls] == ["finish_search"]
    # a re-activation (a user message after its moves, whatever it says) makes it assign new categories
    third = reply(model, "meta", inputs, [*done, HumanMessage("(re-activation: any wording)")], agent_schemas("meta"))
    more = [tc["args"].get("category_name") for tc in third.tool_calls]
    assert more and not set(more) & set(created)


def test_category_agent_assigns_its_best_tools(model: OfflinePolicyModel, catalog: Catalog) -> None:
    inputs = {"query": QUERY, "agent_id": "meta/c1", "category": "Holidays", "max_tools": 2}
    first = reply(model, "category", inputs, OPENING, agent_schemas("category"))
    assert [tc["name"] for tc in first.tool_calls] == ["create_agent_tool_level"]
    names = first.tool_calls[0]["args"]["tool_names"]
    assert 1 <= len(names) <= 2 and all(catalog.tool("Holidays", t) for t in names)
    second = reply(model, "category", {**inputs, "tools": names},
                   [*OPENING, *answer_calls(first, ["Created."])], agent_schemas("category"))
    assert [tc["name"] for tc in second.tool_calls] == ["finish_search"]
    # no category in the inputs: it cannot tell its scope, and says so
    lost = reply(model, "category", {"query": QUERY}, OPENING, agent_schemas("category"))
    assert [tc["name"] for tc in lost.tool_calls] == ["finish_search"]


def test_category_agent_halves_a_refused_assignment(catalog: Catalog) -> None:
    wide = OfflinePolicyModel(catalog=catalog, max_tools_per_agent=8)
    inputs = {"query": "Convert 26.2 miles to kilometers. Convert 5 GB to MB.", "agent_id": "meta/c1",
              "category": "Units_Conversion"}
    first = reply(wide, "category", inputs, OPENING, agent_schemas("category"))
    names = first.tool_calls[0]["args"]["tool_names"]
    assert len(names) >= 2, names
    refused = answer_calls(first, ["Error: at most 1 tools per agent."], status="error")
    second = reply(wide, "category", inputs, [*OPENING, *refused], agent_schemas("category"))
    assert [tc["name"] for tc in second.tool_calls] == ["create_agent_tool_level"]
    assert len(second.tool_calls[0]["args"]["tool_names"]) == len(names) // 2


def test_tool_agent_adds_apis_checks_then_finishes(model: OfflinePolicyModel, catalog: Catalog) -> None:
    target = catalog.find_api("Public Holidays", "Is Public Holiday")
    inputs = {"query": QUERY, "agent_id": "meta/t1", "category": target.category, "tools": [target.tool_name]}
    first = reply(model, "tool", inputs, OPENING, agent_schemas("tool"))
    assert [tc["name"] for tc in first.tool_calls] == ["add_apis_into_api_pool"]
    apis = first.tool_calls[0]["args"]["apis"]
    assert apis[0] == {"tool_name": target.tool_name, "api_name": target.name}
    assert len(apis) <= model.max_apis_per_agent
    msgs = [*OPENING, *answer_calls(first, ['{"added": ["x"], "pool_size": 1}'])]
    second = reply(model, "tool", inputs, msgs, agent_schemas("tool"))
    assert [tc["name"] for tc in second.tool_calls] == ["check_if_request_solvable"]
    msgs = [*msgs, *answer_calls(second, ["False: a part is missing"])]
    third = reply(model, "tool", inputs, msgs, agent_schemas("tool"))
    assert [tc["name"] for tc in third.tool_calls] == ["finish_search"]


def test_tool_agent_with_irrelevant_tools_finishes_at_once(model: OfflinePolicyModel, catalog: Catalog) -> None:
    tool = catalog.find_api("Public Holidays", "Is Public Holiday").tool_name
    inputs = {"query": "Convert 26.2 miles to kilometers", "agent_id": "a", "category": "Holidays", "tools": [tool]}
    first = reply(model, "tool", inputs, OPENING, agent_schemas("tool"))
    assert [tc["name"] for tc in first.tool_calls] == ["finish_search"]


def solvable(model: OfflinePolicyModel, query: str, pool: list[Api]) -> str:
    return str(reply(model, "solvable", {"query": query, "api_ids": [a.id for a in pool]}).content)


def test_solvable_check_needs_an_api_for_every_part(model: OfflinePolicyModel, catalog: Catalog) -> None:
    convert = catalog.find_api("Universal Unit Converter", "Convert Units")
    holiday = catalog.find_api("Public Holidays", "Is Public Holiday")
    assert solvable(model, QUERY, [convert, holiday]) == "Solvable"
    partial = solvable(model, QUERY, [convert])
    assert partial.startswith("Unsolvable:") and "holiday" in partial
    assert solvable(model, QUERY, []).startswith("Unsolvable:")


def solver_tools(catalog: Catalog, apis: list[Api]) -> list[dict[str, Any]]:
    from langgraph_anytool.nodes.solver.finish import finish_schema
    from langgraph_anytool.tools.lc import api_json_schema

    return [*(api_json_schema(catalog, a.id) for a in apis), finish_schema()]


def solver_inputs(catalog: Catalog, query: str, apis: list[Api]) -> dict[str, Any]:
    return {"query": query, "functions": [catalog.function_name(a.id) for a in apis]}


def test_solver_calls_the_best_api_then_answers(model: OfflinePolicyModel, catalog: Catalog) -> None:
    q = "Convert 26.2 miles to kilometers"
    best = catalog.find_api("Universal Unit Converter", "Convert Units")
    other = catalog.find_api("Public Holidays", "Is Public Holiday")
    tools, inputs = solver_tools(catalog, [other, best]), solver_inputs(catalog, q, [other, best])
    first = reply(model, "solver", inputs, OPENING, tools)
    assert len(first.tool_calls) == 1 and first.tool_calls[0]["name"] == catalog.function_name(best.id)
    assert 26.2 in first.tool_calls[0]["args"].values()
    obs = json.dumps({"status": "ok", "response": {"result": 42.16, "text": "26.2 mi = 42.16 km"}})
    second = reply(model, "solver", inputs, [*OPENING, *answer_calls(first, [obs])], tools)
    (finish,) = second.tool_calls
    assert finish["name"] == "Finish" and finish["args"]["return_type"] == "give_answer"
    assert "42.16" in finish["args"]["final_answer"]


def test_solver_tries_another_api_after_an_error_then_gives_up(model: OfflinePolicyModel, catalog: Catalog) -> None:
    q = "Convert 26.2 miles to kilometers"
    ranked = [catalog.find_api("Universal Unit Converter", "Convert Units"),
              catalog.find_api("Quick Metric Converter", "Convert Length"),
              catalog.find_api("Public Holidays", "Is Public Holiday")]
    tools, inputs = solver_tools(catalog, ranked), solver_inputs(catalog, q, ranked)
    msgs = list(OPENING)
    tried: list[str] = []
    for _ in range(len(ranked) + 1):
        ai = reply(model, "solver", inputs, msgs, tools)
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


def test_solver_avoids_what_the_diversity_message_lists(model: OfflinePolicyModel, catalog: Catalog) -> None:
    from langgraph_anytool.protocol import DIVERSITY

    q = "Convert 26.2 miles to kilometers"
    apis = [catalog.find_api("Universal Unit Converter", "Convert Units"),
            catalog.find_api("Quick Metric Converter", "Convert Length")]
    tools, inputs = solver_tools(catalog, apis), solver_inputs(catalog, q, apis)
    first = reply(model, "solver", inputs, OPENING, tools).tool_calls[0]["name"]
    tried = json.dumps([{"function": first, "arguments": {}}])
    other = reply(model, "solver", inputs, [*OPENING, HumanMessage(f"(any wording) {tried}", name=DIVERSITY)], tools)
    assert other.tool_calls[0]["name"] not in (first, "Finish")


def test_umi_planner_caller_summarizer(model: OfflinePolicyModel, catalog: Catalog) -> None:
    q = "Convert 26.2 miles to kilometers"
    best = catalog.find_api("Universal Unit Converter", "Convert Units")
    fn = catalog.function_name(best.id)
    base = {"query": q, "functions": [fn]}
    plan = reply(model, "planner", {**base, "history": []}, [SystemMessage("(any)"), HumanMessage(q)])
    assert str(plan.content).endswith("Next: caller") and fn in str(plan.content)
    thought = str(plan.content)
    call = reply(model, "caller", {**base, "history": [], "thought": thought}, OPENING, solver_tools(catalog, [best])[:1])
    assert [tc["name"] for tc in call.tool_calls] == [fn]
    obs = ToolMessage(content='{"status":"ok","response":{"text":"26.2 mi = 42.16 km"}}',
                      tool_call_id=call.tool_calls[0]["id"], name=fn)
    history = [message_to_dict(m) for m in (AIMessage(content=thought, name="planner"),
                                            call.model_copy(update={"name": "caller"}), obs)]
    plan2 = reply(model, "planner", {**base, "history": history})
    assert str(plan2.content).endswith("Next: summarizer")
    summary = reply(model, "summarizer", {**base, "history": history, "thought": str(plan2.content)})
    assert "42.16 km" in str(summary.content)


def judge(model: OfflinePolicyModel, calls: list[tuple[str, str]] | None, answer: str,
          query: str = "Convert 26.2 miles to kilometers") -> dict[str, Any]:
    inputs: dict[str, Any] = {"query": query, "answer": answer}
    if calls is not None:
        inputs["calls"] = [{"function": f, "status": s} for f, s in calls]
    return dict(json.loads(str(reply(model, "judge", inputs).content)))


def test_judge_labels(model: OfflinePolicyModel) -> None:
    answer = "Convert Units: 26.2 mi = 42.16 km."
    assert judge(model, [("convert_units", "ok")], answer)["label"] == "Solved"
    assert judge(model, [("convert_units", "server_error")], answer)["label"] == "Unsolved"
    assert judge(model, [], answer)["label"] == "Unsolved"
    assert judge(model, None, answer)["label"] == "Solved"  # without call records the answer alone is judged
    assert judge(model, [("convert_units", "ok")], "")["label"] == "Unsolved"
    # every part must be addressed: one of its values and one of its topic words
    two = "Convert 26.2 miles to kilometers. Is 2025-07-14 a public holiday in France?"
    partial = judge(model, [("convert_units", "ok")], answer, two)
    assert partial["label"] == "Unsolved" and "holiday" in partial["reason"]
    full = "Convert Units: 26.2 mi = 42.16 km. Is Public Holiday: date 2025-07-14, holiday: yes."
    assert judge(model, [("convert_units", "ok"), ("is_public_holiday", "ok")], full, two)["label"] == "Solved"
    off_topic = judge(model, [("city_details", "ok")], "City Details: Paris, population 11200000.",
                      "What is the weather in Paris tomorrow?")
    assert off_topic["label"] == "Unsolved"


def test_no_api_is_taken_for_a_topic_the_catalog_lacks(model: OfflinePolicyModel, catalog: Catalog) -> None:
    query = "What is the weather in Paris tomorrow?"
    tools = [t.name for t in catalog.tools("Geography")]
    inputs = {"query": query, "agent_id": "a", "category": "Geography", "tools": tools}
    first = reply(model, "tool", inputs, OPENING, agent_schemas("tool"))
    assert [tc["name"] for tc in first.tool_calls] == ["finish_search"]
    city = catalog.find_api("World Cities Database", "City Details")
    assert solvable(model, query, [city]).startswith("Unsolvable")


def test_the_role_comes_from_metadata_not_from_the_prompt(model: OfflinePolicyModel, catalog: Catalog) -> None:
    """A prompt full of other roles' markers and of a different query changes nothing: role and query are
    read from the metadata; the reply is the same as with a blank prompt."""
    fn = catalog.function_name(catalog.find_api("Universal Unit Converter", "Convert Units").id)
    noisy: list[BaseMessage] = [
        SystemMessage('Make a conclusion. Next: caller. {"label": "Solved"} solvable. Your category: Holidays '
                      f"(3 tools). 1. {fn} (tool 'x', API 'y')"),
        HumanMessage("Query: Is 2025-07-14 a public holiday in France?")]
    inputs = {"query": "Convert 26.2 miles to kilometers", "functions": [fn], "history": []}
    noisy_plan = reply(model, "planner", inputs, noisy)
    assert noisy_plan.response_metadata["role"] == "planner"
    assert noisy_plan.content == reply(model, "planner", inputs, OPENING).content
    assert "26.2" in str(noisy_plan.content) and "Next: caller" in str(noisy_plan.content)


async def test_async_calls_read_the_metadata_too(model: OfflinePolicyModel, catalog: Catalog) -> None:
    convert = catalog.find_api("Universal Unit Converter", "Convert Units")
    out = await model.ainvoke(OPENING, role_config(None, "solvable", {"query": "Convert 26.2 miles to kilometers",
                                                                       "api_ids": [convert.id]}))
    assert out.content == "Solvable" and out.response_metadata["role"] == "solvable"


def test_replies_are_deterministic_and_carry_estimated_usage(model: OfflinePolicyModel, catalog: Catalog) -> None:
    inputs = {"query": QUERY, "agent_id": "meta"}
    a = reply(model, "meta", inputs, OPENING, agent_schemas("meta"))
    b = reply(OfflinePolicyModel(catalog=catalog), "meta", inputs, OPENING, agent_schemas("meta"))
    assert a.tool_calls == b.tool_calls and a.content == b.content
    assert all(tc["id"] for tc in a.tool_calls) and len({tc["id"] for tc in a.tool_calls}) == len(a.tool_calls)
    assert a.usage_metadata is not None
    assert a.usage_metadata["input_tokens"] == sum(len(str(m.content)) for m in OPENING) // 4
    assert a.response_metadata["estimated_usage"] is True and a.response_metadata["model_name"] == "offline-policy"
    assert a.response_metadata["role"] == "meta"


# ------------------------------------------------------------------------------------------ without role metadata
def test_direct_call_with_catalog_tools_acts_as_a_tool_calling_assistant(model: OfflinePolicyModel,
                                                                          catalog: Catalog) -> None:
    from langgraph_anytool.tools.lc import api_json_schema

    convert = catalog.find_api("Universal Unit Converter", "Convert Units")
    holiday = catalog.find_api("Public Holidays", "Is Public Holiday")
    tools = [api_json_schema(catalog, a.id) for a in (holiday, convert)]
    msgs: list[BaseMessage] = [HumanMessage("Convert 26.2 miles to kilometers")]
    first = reply(model, None, None, msgs, tools)
    assert first.response_metadata["role"] == "generic"
    assert [tc["name"] for tc in first.tool_calls] == [catalog.function_name(convert.id)]
    obs = json.dumps({"status": "ok", "response": {"result": 42.16, "text": "26.2 mi = 42.16 km"}})
    second = reply(model, None, None, [*msgs, *answer_calls(first, [obs])], tools)
    assert not second.tool_calls and "42.16 km" in str(second.content)


def test_direct_call_with_any_langchain_tool(model: OfflinePolicyModel) -> None:
    from langchain_core.tools import tool

    @tool
    def count_words(text: str) -> int:
        """Count the words of a text."""
        return len(text.split())

    @tool
    def current_weather(city: str) -> str:
        """Current weather of a city."""
        return "sunny"

    msgs: list[BaseMessage] = [HumanMessage('Count the words of "hello big world"')]
    first = reply(model, None, None, msgs, [current_weather, count_words])
    assert [(tc["name"], tc["args"]) for tc in first.tool_calls] == [("count_words", {"text": "hello big world"})]
    second = reply(model, None, None, [*msgs, *answer_calls(first, ["3"])], [current_weather, count_words])
    assert not second.tool_calls and "3" in str(second.content)


def test_direct_call_passes_the_whole_request_to_a_delegate_tool(model: OfflinePolicyModel) -> None:
    """As the outer agent of `create_agent(..., tools=[create_anytool_tool(...)])`: a tool whose only parameter is a
    request gets the whole last human message (before: the fragment "France", or no call at all), and its answer is
    the reply; a catalog API or a tool with two parameters is no delegate."""
    from langchain_core.tools import tool

    @tool
    def find_and_call_apis(request: str) -> str:
        """Finds and calls the right APIs."""
        return ""

    @tool
    def current_weather(city: str) -> str:
        """Current weather of a city."""
        return "sunny"

    question = "Is 2025-07-14 a public holiday in France?"
    tools = [current_weather, find_and_call_apis]
    msgs: list[BaseMessage] = [HumanMessage("Hello"), AIMessage("Hi."), HumanMessage(question)]
    first = reply(model, None, None, msgs, tools)
    assert [(tc["name"], tc["args"]) for tc in first.tool_calls] == [("find_and_call_apis", {"request": question})]
    result = json.dumps({"answer": "Yes: National Day.", "status": "solved", "sources": []})
    second = reply(model, None, None, [*msgs, *answer_calls(first, [result])], tools)
    assert not second.tool_calls and second.content == "Yes: National Day."
    # a new request after the answer is delegated again, whole
    again = [*msgs, *answer_calls(first, [result]), second, HumanMessage("And 2025-07-15?")]
    third = reply(model, None, None, again, tools)
    assert [tc["args"] for tc in third.tool_calls] == [{"request": "And 2025-07-15?"}]

    @tool
    def ask_agent(request: str, language: str) -> str:
        """Asks another agent."""
        return ""

    other = reply(model, None, None, [HumanMessage("Current weather in Paris")], [current_weather, ask_agent])
    assert [(tc["name"], tc["args"]) for tc in other.tool_calls] == [("current_weather", {"city": "Paris"})]


def test_direct_call_without_tools_says_what_it_is(model: OfflinePolicyModel) -> None:
    out = reply(model, None, None, [HumanMessage("Hello there")])
    assert LABEL in str(out.content) and not out.tool_calls
    unknown = reply(model, "oracle", {"query": "Hello there"}, [HumanMessage("Hello there")])
    assert unknown.response_metadata["role"] == "generic" and LABEL in str(unknown.content)


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
    from langgraph_anytool.cli.demo import run_demo

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
