"""The values a retriever agent's function arguments may take, for a reply held to a call (`call_mode`
"constrained", or text mode on llama.cpp: models/constrained.py).

A JSON schema or a grammar holds a small model to a call, but not to a call that means something: SmolLM2 asked the
meta-agent's `get_tools_in_category` for a tool's name as a category, then for the same listing again, until the
run's budget was spent (issue 38). Here each agent's functions get their names pinned (`enum`) to what its scope
holds, and a browsing call already answered in the agent's history, an agent already created or an API already in
the pool is no longer a value it may write:

- the meta-agent: categories of the catalog (not yet listed; not yet given an agent);
- a category agent: its own category, its tools not yet assigned to a tool agent (at most `max_tools_per_agent`);
- a tool agent: its own tools (not yet listed), each with its own API names (not yet described; not in the pool,
  not removed by reflection; at most the room left in the pool); `check_if_request_solvable` once the pool holds
  an API.

A list of names holds at most `MAX_ITEMS`. A function with no value left is not offered (`finish_search` always
is, and last, except as an agent's first call while it has another); an agent left with nothing but `finish_search` finishes without a model call (nodes/agents/step.py). Only the reply's constraint changes: the
prompt lists the role's functions as before (so a server's prompt cache still holds), and a natively calling model
gets its schemas unchanged. Nothing here decides for the model: it still chooses which call to make.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage, ToolMessage

from ...catalog import UnknownNameError
from ...models.constrained import ConstrainedToolRunnable
from ...state import AgentRecord
from ..solver.textmode import GrammarTextToolRunnable

if TYPE_CHECKING:
    from ...runtime import Deps

# the end reason of an agent whose held reply could only have been `finish_search()`
NOTHING_LEFT = "finish_search: nothing left to call"
# the most names one call may list (an API's details, APIs to add): a grammar cannot ask for distinct items, and
# SmolLM2 repeated one name until its `max_tokens`
MAX_ITEMS = 5
# enums longer than this are not pinned (a grammar of a 16,000-tool catalog's names would cost more than it holds)
MAX_ENUM = 512


def answered_calls(record: AgentRecord) -> list[tuple[str, dict[str, Any]]]:
    """The agent's calls that were answered without an error, in order: (name, arguments)."""
    ok = {m.tool_call_id for m in record["messages"] if isinstance(m, ToolMessage) and m.status != "error"}
    return [(str(tc.get("name")), dict(tc.get("args") or {})) for m in record["messages"]
            if isinstance(m, AIMessage) for tc in m.tool_calls if tc.get("id") in ok]


def _names(values: Iterable[Any]) -> set[str]:
    return {v for v in values if isinstance(v, str)}


def _listed(record: AgentRecord, function: str, key: str) -> set[str]:
    """The values of argument `key` in the agent's answered calls of `function`."""
    return {str(args.get(key)) for name, args in answered_calls(record) if name == function and key in args}


def _described_tools(record: AgentRecord) -> set[str]:
    """The tool names whose descriptions the agent was given."""
    out: set[str] = set()
    for name, args in answered_calls(record):
        if name == "get_tools_descriptions":
            tools = args.get("tool_names")
            out.update(_names([tools] if isinstance(tools, str) else tools if isinstance(tools, list) else []))
    return out


def _described(record: AgentRecord) -> set[tuple[str, str]]:
    """(tool, API) pairs whose details the agent was given."""
    out: set[tuple[str, str]] = set()
    for name, args in answered_calls(record):
        if name == "get_api_details":
            apis = args.get("api_names", args.get("api_name"))
            for api in [apis] if isinstance(apis, str) else apis if isinstance(apis, list) else []:
                out.add((str(args.get("tool_name")), str(api)))
    return out


def _enum(values: Sequence[str]) -> dict[str, Any] | None:
    return {"type": "string", "enum": list(values)} if 0 < len(values) <= MAX_ENUM else None


def _pin(tool: Mapping[str, Any], properties: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of the OpenAI tool dict `tool` with `properties` replacing its parameters' ones of the same names."""
    out = copy.deepcopy(dict(tool))
    params = out["function"].setdefault("parameters", {"type": "object", "properties": {}})
    props = params.setdefault("properties", {})
    for key, schema in properties.items():
        described = props.get(key, {}).get("description") if isinstance(props.get(key), Mapping) else None
        props[key] = {**schema, **({"description": described} if described else {})}
    return out


def _array(items: Mapping[str, Any], most: int) -> dict[str, Any]:
    return {"type": "array", "items": dict(items), "minItems": 1, "maxItems": max(1, most)}


def _choices(one_of: list[dict[str, Any]]) -> dict[str, Any]:
    return one_of[0] if len(one_of) == 1 else {"anyOf": one_of}


def narrowed(level: str, record: AgentRecord, deps: Deps, tools: Sequence[Mapping[str, Any]], *,
             pool: Sequence[str], removed: Sequence[str] = ()) -> list[dict[str, Any]]:
    """`tools` (the role's OpenAI tool dicts) with their arguments pinned to what `record`'s scope still holds, and
    the functions with nothing left dropped (see the module docstring). `pool`: the API ids in the pool as the
    step sees them; `removed`: those reflection removed."""
    catalog, cfg = deps.catalog, deps.config
    out: list[dict[str, Any]] = []
    category = record.get("category") or ""
    own_tools: list[Any] = []
    if level == "tool":
        for name in record["tools"]:
            try:
                own_tools.append(catalog.tool(category, name))
            except UnknownNameError:
                continue
    for tool in tools:
        name = str(tool.get("function", {}).get("name"))
        pinned: dict[str, Any] | None = dict(tool)
        if name == "finish_search":
            pass
        elif name == "check_if_request_solvable":
            pinned = dict(tool) if pool else None  # an empty pool covers nothing: its check has one answer
        elif level == "meta" and name == "get_tools_in_category":
            left = [c for c in catalog.categories if c not in _listed(record, name, "category_name")]
            pinned = _pin(tool, {"category_name": e}) if (e := _enum(left)) else None if not left else dict(tool)
        elif name == "get_tools_descriptions" and level in ("meta", "category"):
            scope = list(catalog.categories) if level == "meta" else [category] if category in catalog.categories \
                else []
            seen = _described_tools(record)
            undescribed = {c: [t.name for t in catalog.tools(c) if t.name not in seen] for c in scope}
            undescribed = {c: tools_ for c, tools_ in undescribed.items() if tools_}
            names_left = list(dict.fromkeys(t for tools_ in undescribed.values() for t in tools_))
            if not undescribed:
                pinned = None
            elif (cats := _enum(list(undescribed))) is None:
                pinned = dict(tool)
            else:
                e = _enum(names_left)
                pinned = _pin(tool, {"category_name": cats, **(
                    {"tool_names": _array(e, min(len(names_left), cfg.max_tools_per_agent))} if e else {})})
        elif level == "meta" and name == "create_agent_category_level":
            given = {str(c).rsplit("/", 1)[-1] for c in record["children"]}
            left = [c for c in catalog.categories if c.replace("/", "_") not in given]
            pinned = _pin(tool, {"category_name": e}) if (e := _enum(left)) else None if not left else dict(tool)
        elif level == "category" and name in ("get_tools_in_category", "create_agent_tool_level"):
            names = [t.name for t in catalog.tools(category)] if category in catalog.categories else []
            if name == "get_tools_in_category":
                pinned = (None if category in _listed(record, name, "category_name")
                          else _pin(tool, {"category_name": {"type": "string", "enum": [category]}}))
            else:
                left = [t for t in names if t not in _names(record["tools"])]
                e = _enum(left)
                pinned = (None if not left else
                          _pin(tool, {"tool_names": _array(e, min(len(left), cfg.max_tools_per_agent))}) if e
                          else dict(tool))
        elif level == "tool" and name == "get_apis_in_tool":
            left = [t.name for t in own_tools if t.name not in _listed(record, name, "tool_name")]
            pinned = _pin(tool, {"tool_name": e}) if (e := _enum(left)) else None if not left else dict(tool)
        elif level == "tool" and name in ("get_api_details", "add_apis_into_api_pool"):
            done = _described(record) if name == "get_api_details" else set()
            taken = set(pool) | set(removed)
            per_tool = {t.name: [a.name for a in t.apis if (t.name, a.name) not in done
                                 and (name == "get_api_details" or a.id not in taken)] for t in own_tools}
            per_tool = {t: apis for t, apis in per_tool.items() if apis}
            room = max(0, cfg.max_api_pool - len(pool))
            if not per_tool or (name == "add_apis_into_api_pool" and room == 0):
                pinned = None
            elif sum(len(a) for a in per_tool.values()) > MAX_ENUM:
                pinned = dict(tool)
            elif name == "get_api_details":
                pinned = _pin(tool, {})  # one form per tool: its name and its own API names
                pinned["function"]["parameters"] = _choices([
                    {"type": "object", "properties": {
                        "tool_name": {"const": t},
                        "api_names": _array({"type": "string", "enum": apis}, min(len(apis), MAX_ITEMS))},
                     "required": ["tool_name", "api_names"]} for t, apis in per_tool.items()])
            else:
                refs = _choices([{"type": "object", "properties": {"tool_name": {"const": t},
                                                                    "api_name": {"type": "string", "enum": apis}},
                                  "required": ["tool_name", "api_name"]} for t, apis in per_tool.items()])
                most = min(room, sum(len(a) for a in per_tool.values()), MAX_ITEMS)
                pinned = _pin(tool, {"apis": _array(refs, most)})
        if pinned is not None:
            out.append(pinned)
    # an agent's first call is never its finish while it has anything else to call: both models' tool agents called
    # finish_search first in 4 of 4 runs of ours (a search that ends before looking ends the run `no_apis`)
    if len(out) > 1 and not answered_calls(record):
        out = [t for t in out if t.get("function", {}).get("name") != "finish_search"]
    # the call that ends the search goes last: a held small model takes the first form its grammar allows more
    # often than not (SmolLM2 and Gemma called the first function offered at each step of our runs, and a tool
    # agent offered the authors' order, finish_search first, finished before adding anything)
    return sorted(out, key=lambda t: t.get("function", {}).get("name") == "finish_search")



def held_to_finish(runnable: Any, constraint: Sequence[Mapping[str, Any]]) -> bool:
    """Whether `runnable` holds its reply to `constraint` (a constrained or grammar-held call) and that leaves only
    `finish_search()`: a call the model cannot choose otherwise is not worth its prompt on a CPU."""
    names = [str(t.get("function", {}).get("name")) for t in constraint]
    return isinstance(runnable, ConstrainedToolRunnable | GrammarTextToolRunnable) and names == ["finish_search"]
