"""The solver's explicit search tree: plain-data nodes, pure operations on them, and the solver's state.

A node holds the messages one step added (the model's action, the answers to its function calls, a nudge or
the diversity prompt that preceded it); the root holds what the solve starts from (messages seeded from an
earlier attempt). The prompt of a step is the concatenation of the messages on the path root → current node.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, NotRequired

from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from typing_extensions import TypedDict

from ...protocol import DIVERSITY, FINISH_NAME
from ...state import PoolEntry, SolverAttempt
from ...text import shorten
from ...tools.observation import Status

NodeStatus = Literal["open", "dead", "answer", "given_up"]

# `name` of the human messages the solver itself adds (they are not part of the task).
NUDGE = "nudge"
SEED_NOTE = "seed_note"
QUERY_LIMIT_NOTE = "query_limit"  # call_limit "model_queries": the note asking for Finish (not kept by a reseed)


class CallRecord(TypedDict):
    """One function call of a step and what came of it (status: an Observation status or a solver verdict)."""

    tool_call_id: str
    function: str
    api_id: str  # "" when the function is not an API of the pool
    arguments: Any
    # ok | invalid_arguments (our schema check: nothing sent) | rejected (by the API) | ... | not_in_pool |
    # unknown_function | finish | finish_rejected | ...
    status: str
    cached: bool
    simulated: NotRequired[bool]  # the observation came from a simulator (template, LLM), not the real API


class TreeNode(TypedDict):
    id: int
    parent: int | None
    depth: int
    children: list[int]
    messages: list[AnyMessage]
    status: NodeStatus
    calls: list[CallRecord]
    note: str


class FinishOutcome(TypedDict):
    """How the solve ended (finish_type as in `SolverAttempt`)."""

    type: str
    answer: str
    reason: str
    failed_functions: list[str]


class SolverState(TypedDict, total=False):
    """Internal state of the solver subgraph (input: `SolverInput`; output: `SolverOutput`)."""

    query: str
    run_key: str
    round: int
    api_pool: list[PoolEntry]
    previous_attempts: list[SolverAttempt]
    prior_messages: list[BaseMessage]  # the conversation before the request (shown as context)
    started_at: float  # the run's start (the wall-time budget)
    nodes: list[TreeNode]
    current: int
    api_calls: int
    model_calls: int
    api_stats: dict[str, int]  # calls, cache_hits, errors
    failed_seen: list[str]  # failed functions named so far (restarts, planner give-ups)
    last_reason: str  # the latest restart / give-up reason
    thought: str  # α-UMi: the planner's rationale of the current step
    decision: str  # α-UMi: caller | summarizer | give_up
    finish: FinishOutcome | None
    finish_only: bool  # the API-call budget is spent: the next turn may only call Finish
    malformed_streak: int  # malformed model turns in a row (faults.py), bounded by `max_malformed_turns`
    no_call_streak: int  # replies without a function call in a row, bounded by `max_turns_without_call`
    usage: dict[str, Any]
    solver_attempts: list[SolverAttempt]


# ------------------------------------------------------------------------------------------- operations
def new_tree(root_messages: Sequence[AnyMessage] = ()) -> list[TreeNode]:
    """A tree of one (root) node."""
    return [TreeNode(id=0, parent=None, depth=0, children=[], messages=list(root_messages), status="open",
                     calls=[], note="")]


def _copy(node: TreeNode) -> TreeNode:
    return TreeNode(id=node["id"], parent=node["parent"], depth=node["depth"], children=list(node["children"]),
                    messages=list(node["messages"]), status=node["status"], calls=list(node["calls"]),
                    note=node["note"])


def add_child(nodes: Sequence[TreeNode], parent: int, messages: Sequence[AnyMessage] = ()) -> tuple[list[TreeNode], int]:
    """A new child of `parent` holding `messages` → (new node list, child id)."""
    out = list(nodes)
    child_id = len(out)
    par = _copy(out[parent])
    par["children"].append(child_id)
    out[parent] = par
    out.append(TreeNode(id=child_id, parent=parent, depth=par["depth"] + 1, children=[], messages=list(messages),
                        status="open", calls=[], note=""))
    return out, child_id


def update_node(nodes: Sequence[TreeNode], node_id: int, *, messages: Sequence[AnyMessage] = (),
                calls: Sequence[CallRecord] = (), status: NodeStatus | None = None, note: str | None = None) -> list[TreeNode]:
    """Append messages / call records to a node, optionally set its status or note (a new list is returned)."""
    out = list(nodes)
    node = _copy(out[node_id])
    node["messages"].extend(messages)
    node["calls"].extend(calls)
    if status is not None:
        node["status"] = status
    if note is not None:
        node["note"] = f"{node['note']}; {note}" if node["note"] else note
    out[node_id] = node
    return out


def path_ids(nodes: Sequence[TreeNode], node_id: int) -> list[int]:
    """Node ids from the root to `node_id`."""
    ids: list[int] = []
    cur: int | None = node_id
    while cur is not None:
        ids.append(cur)
        cur = nodes[cur]["parent"]
    return ids[::-1]


def path_messages(nodes: Sequence[TreeNode], node_id: int) -> list[AnyMessage]:
    """The messages along root → `node_id`."""
    return [m for i in path_ids(nodes, node_id) for m in nodes[i]["messages"]]


def chain_length(nodes: Sequence[TreeNode], node_id: int) -> int:
    """The chain root → `node_id` in ToolLLM's tree nodes (the unit of its `single_chain_max_step`): a thought per
    model turn with text, and an action node plus an action-input node per function call."""
    length = 0
    for i in path_ids(nodes, node_id):
        for m in nodes[i]["messages"]:
            if isinstance(m, AIMessage):
                length += int(bool(str(m.content).strip())) + 2 * (len(m.tool_calls) + len(m.invalid_tool_calls))
    return length


def last_ai(node: TreeNode) -> AIMessage | None:
    """The latest AI message of a node (its action)."""
    for m in reversed(node["messages"]):
        if isinstance(m, AIMessage):
            return m
    return None


def backtrack_target(nodes: Sequence[TreeNode], node_id: int, width: int, *, close_parent: bool = False
                     ) -> tuple[list[TreeNode], int | None]:
    """DFSDT backtracking: close `node_id`'s branch and find the deepest ancestor with fewer than `width` children.

    The closed node becomes `dead` (a `given_up` node keeps its status). With `close_parent` (a restart: the model
    judged the state it acted from a dead end) the node's parent step is closed as well, unless it is the root.
    Ancestors passed over (they have `width` children, all closed) become `dead` too.
    Returns (new node list, target id or None when the tree is exhausted).
    """
    out = list(nodes)
    if out[node_id]["status"] == "open":
        out = update_node(out, node_id, status="dead")
    cur = out[node_id]["parent"]
    if close_parent and cur is not None and out[cur]["parent"] is not None:
        out = update_node(out, cur, status="dead")
        cur = out[cur]["parent"]
    while cur is not None:
        if out[cur]["status"] == "open" and len(out[cur]["children"]) < width:
            return out, cur
        out = update_node(out, cur, status="dead")
        cur = out[cur]["parent"]
    return out, None


def sibling_actions(nodes: Sequence[TreeNode], node_id: int, max_result_chars: int = 300) -> list[dict[str, Any]]:
    """The actions taken by the existing children of `node_id`: function, arguments and a short result."""
    actions: list[dict[str, Any]] = []
    for child in nodes[node_id]["children"]:
        node = nodes[child]
        results = {m.tool_call_id: str(m.content) for m in node["messages"] if isinstance(m, ToolMessage)}
        ai = last_ai(node)
        calls = list(ai.tool_calls) if ai is not None else []
        if not calls:
            text = str(ai.content) if ai is not None else ""
            actions.append({"function": None, "thought": shorten(text, max_result_chars)})
            continue
        for tc in calls:
            entry: dict[str, Any] = {"function": tc["name"], "arguments": tc["args"]}
            result = results.get(tc.get("id") or "")
            if result is not None:
                entry["result"] = shorten(result, max_result_chars)
            actions.append(entry)
    return actions


# ------------------------------------------------------------------------------------- JSON rendering
def message_to_dict(msg: BaseMessage) -> dict[str, Any]:
    """A JSON-friendly `{role, content, ...}` form of a message."""
    content = msg.content if isinstance(msg.content, str) else json.dumps(msg.content, ensure_ascii=False, default=str)
    d: dict[str, Any]
    if isinstance(msg, AIMessage):
        d = {"role": "assistant", "content": content}
        if msg.tool_calls:
            d["tool_calls"] = [{"name": tc["name"], "args": tc["args"], "id": tc.get("id")} for tc in msg.tool_calls]
        if msg.invalid_tool_calls:
            d["invalid_tool_calls"] = [{"name": tc.get("name"), "args": tc.get("args"), "id": tc.get("id"),
                                        "error": tc.get("error")} for tc in msg.invalid_tool_calls]
        raw = msg.additional_kwargs.get("function_call")
        if isinstance(raw, dict):  # the legacy call as the model sent it (nodes/solver/authors.py sends it back)
            d["function_call"] = {"name": str(raw.get("name") or ""), "arguments": str(raw.get("arguments") or "")}
    elif isinstance(msg, ToolMessage):
        d = {"role": "tool", "content": content, "tool_call_id": msg.tool_call_id}
    elif isinstance(msg, SystemMessage):
        d = {"role": "system", "content": content}
    else:
        d = {"role": "user", "content": content}
    if msg.name:
        d["name"] = msg.name
    return d


def message_from_dict(d: Mapping[str, Any]) -> AnyMessage:
    """Inverse of `message_to_dict` (invalid tool calls come back as plain tool calls only when parsed)."""
    role, content, name = d.get("role"), str(d.get("content") or ""), d.get("name")
    if role == "assistant":
        calls = [{"name": tc["name"], "args": tc.get("args") or {}, "id": tc.get("id"), "type": "tool_call"}
                 for tc in d.get("tool_calls") or []]
        invalid = [{"name": tc.get("name"), "args": tc.get("args"), "id": tc.get("id"), "error": tc.get("error"),
                    "type": "invalid_tool_call"} for tc in d.get("invalid_tool_calls") or []]
        raw = d.get("function_call")
        extra = {"function_call": dict(raw)} if isinstance(raw, Mapping) else {}
        return AIMessage(content=content, tool_calls=calls, invalid_tool_calls=invalid, name=name,
                         additional_kwargs=extra)
    if role == "tool":
        return ToolMessage(content=content, tool_call_id=str(d.get("tool_call_id") or ""), name=name)
    if role == "system":
        return SystemMessage(content=content, name=name)
    return HumanMessage(content=content, name=name)


_OBSERVATION_STATUSES = frozenset(s.value for s in Status)


def tree_to_dicts(nodes: Iterable[TreeNode]) -> list[dict[str, Any]]:
    """The tree as JSON-friendly dicts: the messages rendered, plus for convenience the node's `tool_calls`
    (every function call of its action, Finish included) and `observations` (the calls that reached the
    executor: function, api_id, arguments, status, cached)."""
    out: list[dict[str, Any]] = []
    for n in nodes:
        messages = [message_to_dict(m) for m in n["messages"]]
        out.append({
            "id": n["id"], "parent": n["parent"], "depth": n["depth"], "children": list(n["children"]),
            "status": n["status"], "note": n["note"],
            "tool_calls": [tc for m in messages for tc in m.get("tool_calls", [])],
            "observations": [{k: c[k] for k in ("function", "api_id", "arguments", "status", "cached")}
                             for c in n["calls"] if c["status"] in _OBSERVATION_STATUSES],
            "calls": [dict(c) for c in n["calls"]],
            "messages": messages,
        })
    return out


# ------------------------------------------------------------------------------------- seeding
def last_chain(tree: Sequence[Mapping[str, Any]], last: int | None = None) -> list[Mapping[str, Any]]:
    """The nodes (as `tree_to_dicts` writes them) on the path root → `last` (default: the tree's last node)."""
    by_id = {int(n["id"]): n for n in tree}
    chain: list[Mapping[str, Any]] = []
    cur: int | None = last if last is not None else max(by_id) if by_id else None
    while cur is not None and cur in by_id:
        chain.append(by_id[cur])
        parent = by_id[cur].get("parent")
        cur = None if parent is None else int(parent)
    chain.reverse()
    return chain


def seed_messages(tree: Sequence[Mapping[str, Any]], keep_functions: Iterable[str]) -> list[AnyMessage]:
    """The chain an earlier attempt ended on, as messages to seed a new solve's root with.

    The chain is the path root → the attempt's last node. Removed from it: the `Finish` call (and the final
    step when it held only the decision: a Finish-only step, an α-UMi give-up or summary), calls to functions not
    in `keep_functions` (pruned or failed APIs: "their calls leave the solver's history", AnyTool §4.3) with
    their answers, calls without an answer, the solver's own diversity prompts, seed notes and query-limit notes
    (the authors' DFS.py drops theirs when it reuses a chain), and assistant
    messages left without calls whose calls were all removed.
    """
    if not tree:
        return []
    keep = set(keep_functions)
    chain = last_chain(tree)
    final = chain[-1] if len(chain) > 1 else None
    if final is not None and final.get("status") in ("answer", "given_up"):
        api_calls = [tc for m in final.get("messages") or [] for tc in m.get("tool_calls") or []
                     if tc.get("name") != FINISH_NAME]
        if not api_calls:
            chain = chain[:-1]
    dicts = [m for node in chain for m in node.get("messages") or []]
    answered = {str(m.get("tool_call_id")) for m in dicts if m.get("role") == "tool"}
    out: list[AnyMessage] = []
    kept_ids: set[str] = set()
    for d in dicts:
        role = d.get("role")
        if role == "user" and d.get("name") in (DIVERSITY, SEED_NOTE, QUERY_LIMIT_NOTE):
            continue
        if role == "assistant":
            if d.get("name") == "summarizer":
                continue
            calls = d.get("tool_calls") or []
            had_calls = bool(calls) or bool(d.get("invalid_tool_calls"))
            kept = [tc for tc in calls
                    if tc.get("name") in keep and tc.get("name") != FINISH_NAME and str(tc.get("id")) in answered]
            if had_calls and not kept:
                continue
            if not had_calls and not str(d.get("content") or "").strip():
                continue
            kept_ids.update(str(tc.get("id")) for tc in kept)
            out.append(message_from_dict({**d, "tool_calls": kept, "invalid_tool_calls": []}))
        elif role == "tool":
            if str(d.get("tool_call_id")) in kept_ids:
                out.append(message_from_dict(d))
        else:
            out.append(message_from_dict(d))
    return out
