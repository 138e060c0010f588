"""The values a retriever agent's held call may take (issue 38; nodes/agents/choices.py).

A real small model held to a JSON schema wrote schema-valid calls that meant nothing: SmolLM2 asked the meta-agent's
`get_tools_in_category` for a tool's name, then for the same listing again, until its budget was spent. The graph
tests run the hierarchical retriever against a loopback llama-server (tests/model_servers.py) whose policy writes a
RANDOM call that the request's `response_format` allows (any function, any value the schema admits): whatever such
a model writes, every agent call is accepted (no error answer), no browsing call is answered twice, and an agent
with nothing left but `finish_search` finishes without a model call.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from langgraph_anytool import AnyToolConfig, Catalog, create_anytool_graph
from langgraph_anytool.catalog.builtin import builtin_categories
from langgraph_anytool.models.constrained import ConstrainedToolRunnable, action_grammar, call_schema
from langgraph_anytool.models.testing import ScriptedChatModel
from langgraph_anytool.nodes.agents.choices import NOTHING_LEFT, held_to_finish, narrowed
from langgraph_anytool.nodes.agents.records import new_agent_record
from langgraph_anytool.nodes.agents.roles import ROLES
from tests.model_servers import LlamaCppServer

QUERY = "Convert 26.2 miles to kilometers."
WORDS = ["mi", "Units_Conversion", "Convert Units", "Quick Metric Converter", "km", "miles"]
BROWSING = ("get_tools_in_category", "get_tools_descriptions", "get_apis_in_tool", "get_api_details")


def sample(schema: Any, rng: random.Random) -> Any:
    """A random value the JSON schema admits (the subset a constrained call's schema uses)."""
    if not isinstance(schema, dict) or not schema:
        return rng.choice(WORDS)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return rng.choice(schema["enum"])
    for key in ("oneOf", "anyOf"):
        if key in schema:
            return sample(rng.choice(schema[key]), rng)
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        props = schema.get("properties") or {}
        keys = [k for k in props if k in schema.get("required", []) or rng.random() < 0.5]
        return {k: sample(props[k], rng) for k in keys}
    if kind == "array":
        low, high = int(schema.get("minItems", 0)), int(schema.get("maxItems", 3))
        return [sample(schema.get("items"), rng) for _ in range(rng.randint(low, max(low, min(high, 3))))]
    if kind in ("number", "integer"):
        return 3
    if kind == "boolean":
        return rng.random() < 0.5
    return rng.choice(WORDS)


class RandomCaller:
    """A model held to the request's schema that writes any call the schema allows (seeded)."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.requests: list[dict[str, Any]] = []

    def __call__(self, body: dict[str, Any]) -> str:
        self.requests.append(body)
        fmt = body.get("response_format")
        if not fmt:
            return "Unsolved: the answer is not checked."
        return json.dumps(sample(fmt["json_schema"]["schema"], self.rng))


def small_catalog(*tools: str) -> Catalog:
    """The builtin catalog's Units_Conversion category (those tools), its APIs executed locally."""
    cats = [c for c in builtin_categories() if c.name == "Units_Conversion"]
    from dataclasses import replace

    cats = [replace(c, tools=tuple(t for t in c.tools if not tools or t.name in tools)) for c in cats]
    return Catalog.merge(Catalog(cats, name="builtin"))


def run(server: LlamaCppServer, monkeypatch: pytest.MonkeyPatch, catalog: Catalog, **settings: Any) -> dict[str, Any]:
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    config = AnyToolConfig(max_reflections=0, max_api_pool=8, agent_step_limit=12, max_api_calls=2, **settings)
    graph = create_anytool_graph(catalog=catalog, model="openai:smollm2-135m", config=config)
    return dict(graph.invoke({"query": QUERY}, {"configurable": {"thread_id": "t"}}))


def agent_calls(record: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(function, arguments as JSON, status of its answer) of every call the agent made."""
    answers = {m.tool_call_id: m for m in record["messages"] if isinstance(m, ToolMessage)}
    return [(tc["name"], json.dumps(tc["args"], sort_keys=True), answers[tc["id"]].status)
            for m in record["messages"] if isinstance(m, AIMessage) for tc in m.tool_calls if tc["id"] in answers]


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("catalog", [(), ("Universal Unit Converter", "Quick Metric Converter")],
                         ids=["category", "two-tools"])
def test_every_call_a_held_model_can_write_is_accepted_and_no_browsing_call_repeats(
        seed: int, catalog: tuple[str, ...], monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: the schema let `category_name`, `tool_name` and API names be any string, so most calls it allowed
    were refused ("unknown category ..."), and a listing could be asked for again and again. Now every call the
    schema allows is one the agent's handler accepts, and a browsing call is never answered twice."""
    policy = RandomCaller(seed)
    with LlamaCppServer(policy=policy, n_ctx=8192, chars_per_token=3.3) as server:
        out = run(server, monkeypatch, small_catalog(*catalog))
    assert out["status"] != "error", out.get("reason")
    made = [c for rec in out["agents"].values() for c in agent_calls(rec)]
    assert made, "no agent call was made"
    refused = [c for c in made if c[2] == "error"]
    assert not refused, refused
    for rec in out["agents"].values():
        browsing = [c[:2] for c in agent_calls(rec) if c[0] in BROWSING]
        assert len(browsing) == len(set(browsing)), f"{rec['id']} repeated a browsing call: {browsing}"
    # the tool agent's pool additions came from its calls
    added = [c for c in made if c[0] == "add_apis_into_api_pool"]
    assert bool(added) == bool(out["api_pool"])


def test_an_agent_left_with_finish_search_alone_finishes_without_a_model_call(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The meta-agent of a one-category catalog that listed its category, described its tools and created its
    agent can only call finish_search: it ends without a request (end reason NOTHING_LEFT)."""
    class Greedy(RandomCaller):
        """Each held call: the first function offered other than finish_search, its first values."""

        def __call__(self, body: dict[str, Any]) -> str:
            self.requests.append(body)
            fmt = body.get("response_format")
            if not fmt:
                return "Unsolved."
            schema = fmt["json_schema"]["schema"]
            branches = schema.get("oneOf") or [schema]
            pick = next((b for b in branches if b["properties"]["name"]["const"] != "finish_search"), branches[0])
            return json.dumps(sample(pick, random.Random(0)))

    policy = Greedy(0)
    with LlamaCppServer(policy=policy, n_ctx=8192, chars_per_token=3.3) as server:
        out = run(server, monkeypatch, small_catalog("Universal Unit Converter"))
    meta = out["agents"]["meta"]
    assert meta["end_reason"] == NOTHING_LEFT, meta["end_reason"]
    assert meta["steps"] == len(agent_calls(meta))  # every model call it made was a call; none for the finish
    offers = [b["response_format"]["json_schema"]["schema"] for b in policy.requests if b.get("response_format")]
    assert all((s.get("oneOf") or [s]) for s in offers)


def test_the_narrowing_follows_the_record_and_the_pool() -> None:
    """A tool agent's schema: its own tools, each with its own API names; an API in the pool or removed is no value
    to add; a full pool or a tool listed once leaves those functions out; an empty pool has no solvable check."""
    catalog = small_catalog()
    deps = type("D", (), {"catalog": catalog, "config": AnyToolConfig(max_api_pool=8)})()
    tools = ["Universal Unit Converter", "Quick Metric Converter"]
    rec = new_agent_record("meta/Units_Conversion/t1", "tool", parent="meta/Units_Conversion",
                           category="Units_Conversion", tools=tools)
    rec["messages"] = [HumanMessage(QUERY), AIMessage("", tool_calls=[
        {"name": "get_apis_in_tool", "args": {"tool_name": tools[0]}, "id": "1"}]),
        ToolMessage("[]", tool_call_id="1", name="get_apis_in_tool")]
    offered = [f.as_tool() for f in ROLES["tool"].functions]
    convert = catalog.find_api(tools[0], "Convert Units").id
    length = catalog.find_api(tools[1], "Convert Length").id
    by_name = {t["function"]["name"]: t["function"]["parameters"]
               for t in narrowed("tool", rec, deps, offered, pool=[convert], removed=[length])}
    assert by_name["get_apis_in_tool"]["properties"]["tool_name"]["enum"] == [tools[1]]
    refs = by_name["add_apis_into_api_pool"]["properties"]["apis"]["items"]["anyOf"]
    allowed = {r["properties"]["tool_name"]["const"]: r["properties"]["api_name"]["enum"] for r in refs}
    assert set(allowed) == set(tools)
    assert "Convert Units" not in allowed[tools[0]] and "Convert Length" not in allowed[tools[1]]
    assert {a.name for a in catalog.tool("Units_Conversion", tools[1]).apis} - {"Convert Length"} == set(
        allowed[tools[1]])
    assert "check_if_request_solvable" in by_name
    empty = [t["function"]["name"] for t in narrowed("tool", rec, deps, offered, pool=[])]
    assert "check_if_request_solvable" not in empty
    full = [t["function"]["name"] for t in narrowed("tool", rec, deps, offered, pool=[str(i) for i in range(8)])]
    assert "add_apis_into_api_pool" not in full and "finish_search" in full
    # finish_search: last; not the first call of an agent that has anything else to call
    assert [t["function"]["name"] for t in narrowed("tool", rec, deps, offered, pool=[])][-1] == "finish_search"
    fresh = new_agent_record("meta/Units_Conversion/t2", "tool", parent="meta/Units_Conversion",
                             category="Units_Conversion", tools=tools)
    fresh["messages"] = [HumanMessage(QUERY)]
    authors = [t for t in offered if t["function"]["name"] in ("finish_search", "add_apis_into_api_pool")]
    assert [t["function"]["name"] for t in narrowed("tool", fresh, deps, authors, pool=[])] == [
        "add_apis_into_api_pool"]
    # the constraint carries the pins; the prompt's listing (the runnable's tools) stays the role's functions
    held = ConstrainedToolRunnable(ScriptedChatModel(replies=[]), offered, narrowed("tool", rec, deps, offered,
                                                                                     pool=[]))
    assert held.tools == offered and "enum" in json.dumps(call_schema(held.constraint))
    finish = [t for t in offered if t["function"]["name"] == "finish_search"]
    assert held_to_finish(ConstrainedToolRunnable(ScriptedChatModel(replies=[]), offered, finish), finish)
    assert not held_to_finish(ScriptedChatModel(replies=[]).bind_tools(finish), finish)


def test_in_text_mode_the_grammar_holds_the_same_pins() -> None:
    """Text mode on llama.cpp (a GBNF grammar): the pinned names are the only values the grammar lets through, a
    list holds its items' forms (each tool with its own API names), and a function whose parameters are all
    required cannot be called with `{}`."""
    catalog = small_catalog("Universal Unit Converter", "Quick Metric Converter")
    deps = type("D", (), {"catalog": catalog, "config": AnyToolConfig(max_api_pool=8)})()
    rec = new_agent_record("meta/Units_Conversion/t1", "tool", parent="meta/Units_Conversion",
                           category="Units_Conversion", tools=["Universal Unit Converter", "Quick Metric Converter"])
    rec["messages"] = [HumanMessage(QUERY)]
    grammar = action_grammar(narrowed("tool", rec, deps, [f.as_tool() for f in ROLES["tool"].functions], pool=[]))
    rules = {line.split(" ::= ")[0]: line.split(" ::= ", 1)[1] for line in grammar.splitlines() if " ::= " in line}
    add = next(r for r in rules.values() if r.startswith('"add_apis_into_api_pool"'))
    assert add.startswith('"add_apis_into_api_pool" "\\nAction Input: " "{" ws "\\"apis\\"" ":" ws "["'), add[:200]
    assert '"\\"Universal Unit Converter\\"" ) ws "," ws "\\"api_name\\"" ":" ws ( "\\"Convert Units\\""' in add
    assert '"\\"Convert Length\\""' in add and "value" not in add and "string" not in add
    details = next(r for r in rules.values() if r.startswith('"get_api_details"'))
    assert '"\\"tool_name\\"" ":" ws ( "\\"Quick Metric Converter\\"" ) ws' in details and "string" not in details
