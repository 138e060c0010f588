"""DFSDT / CoT solver nodes: seed, expand (one model call), execute (the step's function calls), backtrack, finalize.

Every loop is bounded by the solver's own counters: the depth limit, the API-call budget (a hard stop), the
token budget, a cap on model calls per solve (`model_call_cap`), and `max_malformed_turns` malformed replies in a
row (content faults, see `faults.py`: each is answered back to the model as an error it can correct first), and
`max_turns_without_call` replies in a row without any function call (finish type "no_calls").

With `call_limit="model_queries"` (`AnyToolConfig.paper()`, the authors' `toolbench/inference/Algorithms/DFS.py`
`DFS_tree_search.DFS`) there is no API-call budget and no model-call cap: every query (a model turn; α-UMi: a
step) counts, and once `max_solver_queries` (10, `anytool/rapidapi.py run_single_task`) are made, the node the
query produced gets a note asking for Finish (an answer, or a give-up without restart) after its observations,
as DFS.py appends it to `temp_now_node.messages`; the search goes on until the model finishes, the tree is
exhausted (width and depth bound it) or a run budget is spent.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol

from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.runnables import Runnable
from langgraph.errors import GraphBubbleUp

from ...catalog.errors import UnknownNameError
from ...models.constrained import choose_call_mode
from ...models.deadline import bounded
from ...models.faults import (
    EXTRA_CALL,
    MALFORMED_END,
    NO_CALLS_END,
    bound_reason,
    fault_usage,
    next_no_call_streak,
    next_streak,
    no_calls_reason,
    review_reply,
    turn_fault,
    with_call_ids,
)
from ...models.llm import BUDGET_KIND, FUNCTIONS_DROPPED, ModelCallError, ModelNotConfiguredError
from ...models.profiles import profile_for
from ...paper_prompts import PromptBook
from ...protocol import DIVERSITY, FINISH_NAME, text_of
from ...state import SolverAttempt, merge_usage
from ...text import shorten
from ...tools.observation import Status
from ..abilities import ask_user as asking
from ..abilities.conversation import conversation_messages
from ..abilities.prompts import ASK_USER_NOTE
from ..judge.tooleval_request import refuses_functions, speaks_functions
from . import authors, prompts
from .finish import FinishCall, FinishError, finish_schema, parse_finish, resolve_failed
from .functions import describe_functions, pool_functions, tool_schemas
from .textmode import TextToolRunnable, bind_role_tools, call_with_text_fallback, format_inputs, probed
from .tree import (
    NUDGE,
    QUERY_LIMIT_NOTE,
    SEED_NOTE,
    CallRecord,
    FinishOutcome,
    NodeStatus,
    SolverState,
    TreeNode,
    add_child,
    backtrack_target,
    chain_length,
    last_ai,
    message_to_dict,
    new_tree,
    path_messages,
    seed_messages,
    sibling_actions,
    tree_to_dicts,
    update_node,
)

if TYPE_CHECKING:
    from ...runtime import Deps



class Node(Protocol):
    """A solver graph node: state in, state update out."""

    def __call__(self, state: SolverState) -> dict[str, Any]: ...




# ------------------------------------------------------------------------------------------ settings
def is_cot(deps: Deps) -> bool:
    return deps.config.solver == "cot"


def tree_width(deps: Deps) -> int:
    """Children tried per node: `dfsdt_width` (DFSDT, α-UMi), 1 for CoT."""
    return 1 if is_cot(deps) else deps.config.dfsdt_width


def model_call_cap(deps: Deps) -> int:
    """Model calls allowed in one solve (every role counted)."""
    return 4 * deps.config.max_api_calls + 10


def query_limited(deps: Deps) -> bool:
    """`call_limit="model_queries"` (the authors' DFS.py), for every solver (α-UMi too: no API-call budget, no
    forced summarizer turn)."""
    return deps.config.call_limit == "model_queries"


def queries_made(state: SolverState) -> int:
    """The solve's queries as DFS.py counts them (`self.query_count += 1` after each `self.llm.parse`): one per
    tree node below the root, since each DFSDT / CoT model turn, and each α-UMi step (planner, then caller or
    summarizer: one `parse` of α-UMi's `collab_agent_model.py`), makes exactly one node."""
    return len(state["nodes"]) - 1


def query_limit_note(deps: Deps, state: SolverState, text: str) -> list[AnyMessage]:
    """The note DFS.py appends to the node a query produced once `query_count >= max_query_count` ([] before)."""
    if not query_limited(deps) or queries_made(state) < deps.config.max_solver_queries:
        return []
    return [HumanMessage(content=text, name=QUERY_LIMIT_NOTE)]


def outcome(type_: str, answer: str = "", reason: str = "", failed: Sequence[str] = ()) -> FinishOutcome:
    return FinishOutcome(type=type_, answer=answer, reason=reason, failed_functions=list(failed))


def _observation(node: TreeNode) -> str:
    """A node's observation as DFS.py keeps it (`tree_node.observation`): the result of its action ("" without one)."""
    results = [str(m.content) for m in node["messages"] if isinstance(m, ToolMessage)]
    return results[0] if results else ""


def authors_candidates(nodes: Sequence[TreeNode], node_id: int) -> str:
    """`{previous_candidate}` as DFS.py `DFS_tree_search.DFS` builds it (toolbench/inference/Algorithms/DFS.py):
    per child, down its first chain to the first action (`while ... node_type != "Action Input" ...:
    children[0]`), {"name", "arguments", "function_output", "mento-carlo-action-value": compute_weight(), 0.0 in
    Tree.py}; `json.dumps(js_list, indent=2)` and a newline, then "again, your former observation: <the node's
    observation>" when it has one. The name and arguments string as the model sent them (the legacy call of the
    authors' form, authors.py); a call in another form: its parsed arguments, dumped (the model's spacing not kept)."""
    js_list = []
    for child in nodes[node_id]["children"]:
        node = nodes[child]
        ai = last_ai(node)
        while (ai is None or not ai.tool_calls) and node["children"]:
            node = nodes[node["children"][0]]
            ai = last_ai(node)
        if ai is None or not ai.tool_calls:
            continue
        call = ai.tool_calls[0]
        raw = authors.raw_call(ai)  # DFS.py: the Action node's name and the Action Input's string as the model sent
        js_list.append({"name": raw["name"] if raw else call["name"],  # them (authors.py keeps the legacy call)
                        "arguments": raw["arguments"] if raw else json.dumps(call["args"]),
                        "function_output": _observation(node), "mento-carlo-action-value": 0.0})
    if not js_list:
        return ""
    text = f"{json.dumps(js_list, indent=2)}\n"
    former = _observation(nodes[node_id])
    return text + (f"again, your former observation: {former}\n" if former != "" else "")


def diversity_text(nodes: Sequence[TreeNode], node_id: int, book: PromptBook | None = None) -> str:
    if book is not None:  # DFS.py: DIVERSITY_PROMPT.replace("{previous_candidate}", former_candidates_des)
        return book.fill("solver_diversity", actions=authors_candidates(nodes, node_id))
    actions = sibling_actions(nodes, node_id)
    return prompts.DIVERSITY_PROMPT.format(actions=json.dumps(actions, ensure_ascii=False, indent=2, default=str))


# ------------------------------------------------------------------------------------------ model calls
def precheck(deps: Deps, state: SolverState) -> FinishOutcome | None:
    """Why the next model call must not happen (a budget of the run: tokens, cost, wall time; the model-call cap)."""
    deps.sync_run(state["run_key"], state)  # at least this solve's usage, and the run's start (e.g. after a resume)
    stop = deps.budget_stop(state["run_key"])
    if stop is not None:
        return outcome("budget", reason=stop.reason)
    cap = model_call_cap(deps)
    if not query_limited(deps) and state["model_calls"] >= cap:
        return outcome("call_budget", reason=f"model-call limit of {cap} calls per solve reached")
    return None


def role_tools(deps: Deps, state: SolverState, role: str, tools: Sequence[Mapping[str, Any]]
               ) -> Runnable[Any, BaseMessage]:
    """The role's model with `tools`: native, or text mode (configured, by the model's profile, or because the
    endpoint refused `tools` earlier in this run)."""
    return bind_role_tools(deps.models.for_role(role), deps.config, role, tools,
                           text=deps.signals.in_text_mode(state["run_key"], role), endpoints=probed(deps))


def invoke_model(deps: Deps, state: SolverState, role: str, runnable: Runnable[Any, BaseMessage],
                 prompt: list[BaseMessage], inputs: dict[str, Any] | None = None,
                 tools: Sequence[Mapping[str, Any]] | None = None, *, texts: bool = True,
                 ) -> tuple[AIMessage | None, dict[str, Any]]:
    """One model call with accounting → (reply or None on failure, state updates: counters, usage, finish).

    With `tools` (the functions `runnable` has bound natively): when the endpoint refuses them (a model without
    function calling), the call is made again in text mode and the role stays in text mode for the run.
    `texts=False`: long texts of the prompt are not cut to fit the window (see `with_fewer_functions`)."""
    return accounted(state, role, lambda: call_with_text_fallback(
        deps, role, state["run_key"], runnable, prompt, tools=tools, inputs={"query": state["query"], **(inputs or {})},
        texts=texts))


def accounted(state: SolverState, role: str, send: Callable[[], tuple[AIMessage, dict[str, Any]]]
              ) -> tuple[AIMessage | None, dict[str, Any]]:
    """`send()` (one model call) with the solver's accounting → (reply or None on failure, state updates)."""
    upd: dict[str, Any] = {"model_calls": state["model_calls"] + 1}
    try:
        ai, used = send()
    except (ModelNotConfiguredError, GraphBubbleUp):  # configuration errors and interrupts are not model failures
        raise
    except ModelCallError as exc:  # ends this solve, not the run; a prompt too long for the model: this attempt only
        kind = exc.kind if exc.kind in ("context_length", BUDGET_KIND) else "error"
        upd["finish"] = outcome(kind, reason=str(exc).split(": ", 1)[1] if kind == BUDGET_KIND else str(exc))
        if exc.usage():
            upd["usage"] = merge_usage(state["usage"], exc.usage())
        return None, upd
    except Exception as exc:  # a provider error ends this solve, not the run
        upd["finish"] = outcome("error", reason=f"{role} model call failed: {type(exc).__name__}: {exc}")
        return None, upd
    upd["usage"] = merge_usage(state["usage"], {role: used})
    return ai, upd


def with_fewer_functions(state: SolverState, role: str, functions: dict[str, str],
                         call: Callable[[dict[str, str], SolverState], tuple[AIMessage | None, dict[str, Any]]]
                         ) -> tuple[AIMessage | None, dict[str, Any]]:
    """`call(functions, state)` → (reply, state update); when its prompt does not fit the model's window even after every
    cut (a `context_length` finish), the call is made again offering the first half of the functions (pool order:
    the retriever's), while more than one is left. The functions left out are counted in the role's usage
    (`functions_dropped`); they stay in the pool (a later step with a shorter history may offer them again)."""
    offered, dropped = functions, 0
    while True:
        ai, upd = call(offered, state)
        finish = upd.get("finish")
        if ai is not None or not finish or finish["type"] != "context_length" or len(offered) <= 1:
            break
        keep = len(offered) // 2
        dropped += len(offered) - keep
        offered = dict(list(offered.items())[:keep])
        # the next try counts on from this one (its model call, what its failure spent: overflow replies)
        state = {**state, "usage": upd.get("usage", state["usage"]), "model_calls": upd["model_calls"]}
    if dropped:
        upd["usage"] = merge_usage(upd.get("usage", state["usage"]), {role: {FUNCTIONS_DROPPED: dropped}})
    return ai, upd


def reviewed(ai: AIMessage, upd: dict[str, Any], role: str, prefix: str) -> AIMessage:
    """The reply made usable (an `Action:` written as text becomes a call, a refusal's text its content, every
    call gets an id); what was done is added to the role's usage in `upd`."""
    ai, noted = review_reply(ai, id_prefix=prefix)
    if noted:
        upd["usage"] = merge_usage(upd["usage"], {role: noted})
    return with_call_ids(ai, prefix)


# ------------------------------------------------------------------------------------------ seed
def make_seed(deps: Deps) -> Node:
    """The first node: the root (seeded from the previous attempt's chain) and zeroed counters."""

    def seed(state: SolverState) -> dict[str, Any]:
        functions = pool_functions(deps, state.get("api_pool") or [])
        root: list[AnyMessage] = []
        previous = state.get("previous_attempts") or []
        if previous and functions:
            keep = [*functions, asking.ASK_USER_NAME] if deps.config.ask_user else functions
            if not deps.config.ask_user and authors_form(deps, state):  # paper(prompts_from): DFS.py start(messages)
                root = authors.seed_chain(previous[-1].get("tree") or [], [*functions, FINISH_NAME])
            else:
                root = seed_messages(previous[-1].get("tree") or [], keep)
                if root:
                    root.append(HumanMessage(content=prompts.SEED_NOTE, name=SEED_NOTE))
        upd: dict[str, Any] = {
            "nodes": new_tree(root), "current": 0, "api_calls": 0, "model_calls": 0, "failed_seen": [],
            "last_reason": "", "thought": "", "decision": "", "finish": None, "finish_only": False,
            "malformed_streak": 0, "no_call_streak": 0,
            "usage": {"api": {"calls": 0, "cache_hits": 0, "errors": 0}},
        }
        if not functions:
            upd["finish"] = outcome("no_apis", reason="the API-candidate pool holds no API of the catalog")
        return upd

    return seed


def make_route_step(deps: Deps) -> Callable[[SolverState], Literal["expand", "plan", "finalize"]]:
    """After seed or backtrack: the next step (α-UMi's planner or DFSDT/CoT's expand), or finalize."""

    def route_step(state: SolverState) -> Literal["expand", "plan", "finalize"]:
        if state.get("finish"):
            return "finalize"
        return "plan" if deps.config.solver == "umi" else "expand"

    return route_step


# ------------------------------------------------------------------------------------------ expand
AUTHORS_TOOL_DESCRIPTION_CHARS = 512  # anytool/rapidapi.py rapidapi_wrapper.__init__: `tool_des[:512]`


def authors_task_description(deps: Deps, book: PromptBook, functions: dict[str, str]) -> str:
    """The solver's task description as `rapidapi_wrapper.__init__` builds it: the authors' text, then one line per
    tool of the pooled APIs (first seen first): `f"{k+1}.{standardize_tool_name}: {striped}\n"`, the description's
    first 512 characters without newlines, stripped ("None" when empty)."""
    tools: dict[str, str] = {}
    for api_id in functions.values():
        api = deps.catalog.api(api_id)
        try:
            tool = deps.catalog.tool(api.category, api.tool_key)
            key, description = tool.key, tool.as_written  # the document's `tool_description` (get_white_list)
        except UnknownNameError:
            key, description = api.tool_key, ""
        tools.setdefault(key, description)
    text = book.fill("solver_task")
    for k, (key, description) in enumerate(tools.items()):
        striped = (description or "")[:AUTHORS_TOOL_DESCRIPTION_CHARS].replace("\n", "").strip() or "None"
        text += f"{k + 1}.{key}: {striped}\n"
    return text


def solver_system(deps: Deps, functions: dict[str, str]) -> str:
    book = deps.paper_prompts
    if book is not None:  # DFS.py start: FORMAT_INSTRUCTIONS_SYSTEM_FUNCTION_ADAPTED (use_original_prompt=False)
        return book.fill("solver_system", task_description=authors_task_description(deps, book, functions))
    cot = is_cot(deps)
    task = prompts.TASK_DESCRIPTION.format(
        give_up_types='return_type "give_up"' if cot else (
            'return_type "give_up_and_restart" to try another way, or "give_up" when no way can work with '
            "these functions,"),
        functions=describe_functions(deps, functions),
    )
    return prompts.SOLVER_SYSTEM.format(restart_rule="" if cot else prompts.RESTART_RULE, task_description=task)


def solver_query(deps: Deps, query: str) -> str:
    """The solver's first user message (DFS.py start: FORMAT_INSTRUCTIONS_USER_FUNCTION with the query)."""
    book = deps.paper_prompts
    return book.fill("solver_user", query=query) if book is not None else prompts.QUERY.format(query=query)


def open_step(deps: Deps, state: SolverState) -> tuple[FinishOutcome | None, dict[str, str], list[AnyMessage]]:
    """Start a step from the current node: why the solve must end now (or None), the pool's functions, and the
    diversity prompt when the node already has children (DFSDT's "do something different")."""
    stop = precheck(deps, state)
    nodes, cur = state["nodes"], state["current"]
    added: list[AnyMessage] = []
    book = deps.paper_prompts
    # (DFS.py sends none when no child reached an action: `if len(js_list) > 0`)
    if stop is None and nodes[cur]["children"] and (book is None or authors_candidates(nodes, cur)):
        added.append(HumanMessage(content=diversity_text(nodes, cur, book), name=DIVERSITY))
    return stop, pool_functions(deps, state["api_pool"]), added


def authors_form(deps: Deps, state: SolverState) -> bool:
    """Whether the solver's call goes out as AnyTool sends it (authors.py): `paper(prompts_from=...)` on an
    OpenAI-compatible client, in native call mode (not text mode, not constrained)."""
    if deps.paper_prompts is None or deps.config.solver == "umi" or deps.signals.in_text_mode(state["run_key"], "solver"):
        return False
    model = deps.models.for_role("solver")
    return ("solver" not in deps.config.text_mode_roles and speaks_functions(model) and choose_call_mode(
        model, profile_for(model, deps.config.model_profiles), probed(deps)) == "native")


def call_authors_form(deps: Deps, state: SolverState, prompt: list[BaseMessage], offer: authors.SolverFunctions,
                      inputs: dict[str, Any]) -> tuple[AIMessage | None, dict[str, Any]]:
    """One solver call as chat_completion_request → call_gpt makes it (`functions=`, their settings, the legacy
    history); a provider refusing `functions=` gets the same functions with `tools=` (usage `functions_refused`).
    The reply's call is read as ours (authors.py `read_reply`)."""
    model = deps.models.for_role("solver")
    full = {"query": state["query"], **inputs}

    def send() -> tuple[AIMessage, dict[str, Any]]:
        legacy = model.bind(functions=offer.functions, **authors.SETTINGS)
        try:
            return call_with_text_fallback(deps, "solver", state["run_key"], legacy,
                                           authors.wire_prompt(prompt, offer, "functions"), inputs=full, texts=False)
        except ModelCallError as exc:
            if not refuses_functions(exc):
                raise
        tools = model.bind_tools([{"type": "function", "function": f} for f in offer.functions]
                                 ).bind(**authors.SETTINGS)
        ai, used = call_with_text_fallback(deps, "solver", state["run_key"], tools,
                                           authors.wire_prompt(prompt, offer, "tools"), inputs=full, texts=False)
        return ai, {**used, "functions_refused": 1}

    ai, upd = accounted(state, "solver", send)
    return (authors.read_reply(ai, offer) if ai is not None else None), upd


def make_expand(deps: Deps) -> Node:
    """One solver model call from the current node; its reply becomes a new child, which becomes current."""

    def expand(state: SolverState) -> dict[str, Any]:
        stop, functions, added = open_step(deps, state)
        if stop:
            return {"finish": stop}
        nodes, cur = state["nodes"], state["current"]
        last_turn = bool(state.get("finish_only"))
        if last_turn:  # the API-call budget is spent: one Finish-only turn (ours; the authors' stop is soft)
            added = [*added, HumanMessage(content=prompts.CALL_LIMIT.format(limit=deps.config.max_api_calls),
                                          name=NUDGE)]
        ask = deps.config.ask_user and not last_turn
        chain = path_messages(nodes, cur)
        if not deps.config.keep_diversity_prompt:  # DFS.py: `messages[-1]["valid"] = False` after its one query
            chain = [m for m in chain if not (isinstance(m, HumanMessage) and m.name == DIVERSITY)]

        def call(offered: dict[str, str], state: SolverState) -> tuple[AIMessage | None, dict[str, Any]]:
            prompt: list[BaseMessage] = [
                SystemMessage(content=solver_system(deps, offered) + (ASK_USER_NOTE if ask else "")),
                *conversation_messages(state.get("prior_messages") or []),
                HumanMessage(content=solver_query(deps, state["query"])),
                *chain, *added,
            ]
            finish = finish_schema(allow_restart=not is_cot(deps) and not last_turn)
            tools = [finish] if last_turn else [*tool_schemas(deps, offered), finish]
            if ask:
                tools.insert(-1, asking.ask_user_schema())
            if not ask and authors_form(deps, state):  # paper(prompts_from): AnyTool's request (authors.py)
                offer = authors.solver_functions(deps, deps.paper_prompts, {} if last_turn else offered)  # type: ignore[arg-type]
                inputs = {"functions": list(offered), "ask_user": False,
                          **format_inputs(deps.config, "solver", text=False)}
                return call_authors_form(deps, state, prompt, offer, inputs)
            model = role_tools(deps, state, "solver", tools)
            inputs = {"functions": list(offered), "ask_user": ask,
                      **format_inputs(deps.config, "solver", text=isinstance(model, TextToolRunnable))}
            if inputs["text_mode"]:  # the prompt holds the trajectory as text only: give it as structured data too
                inputs["history"] = [message_to_dict(m) for m in [*chain, *added]]
            # the function list is not cut to fit the window: fewer functions are offered instead
            return invoke_model(deps, state, "solver", model, prompt, inputs, tools, texts=False)

        ai, upd = with_fewer_functions(state, "solver", functions, call)
        if ai is None:
            return upd
        nodes, child = add_child(nodes, cur, [*added, reviewed(ai, upd, "solver", f"n{len(nodes)}")])
        return {**upd, "nodes": nodes, "current": child}

    return expand


def route_after_model(state: SolverState) -> Literal["execute", "finalize"]:
    return "finalize" if state.get("finish") else "execute"


# ------------------------------------------------------------------------------------------ execute
def _record(tc_id: str, function: str, api_id: str, arguments: Any, status: str, cached: bool = False,
            simulated: bool = False) -> CallRecord:
    record = CallRecord(tool_call_id=tc_id, function=function, api_id=api_id, arguments=arguments, status=status,
                        cached=cached)
    if simulated:
        record["simulated"] = True
    return record


def _error(text: str, tc_id: str, name: str) -> ToolMessage:
    return ToolMessage(content=json.dumps({"error": text}, ensure_ascii=False), tool_call_id=tc_id, name=name,
                       status="error")


def make_execute(deps: Deps, *, single_call: bool = False, allow_finish: bool = True,
                 nudge: str = prompts.NUDGE, role: str = "solver", limit_note: str | None = None) -> Node:
    """Answer every function call of the current node's action (API calls through the executor, Finish, errors).

    `single_call` (α-UMi's caller): only the first call is executed, the others are answered "one call per turn:
    not run". The DFSDT / CoT solver runs every call of a turn, in order (Finish must come alone). Content faults
    (see `faults.py`) are answered as errors the model can correct, counted in `usage[role]`, and
    `max_malformed_turns` malformed turns in a row end the attempt (finish type "malformed"). With
    `call_limit="model_queries"`, `limit_note` follows the step's observations once the query limit is reached
    (None: the solver's note, the authors' own with `prompts_from`).
    """
    max_calls = deps.config.max_api_calls
    book = deps.paper_prompts
    if limit_note is None:
        limit_note = book.fill("solver_query_limit") if book is not None else prompts.QUERY_LIMIT
    limited_calls = not query_limited(deps)  # call_limit "model_queries": API calls are not limited

    def execute(state: SolverState) -> dict[str, Any]:
        nodes, cur = state["nodes"], state["current"]
        ai = last_ai(nodes[cur])
        functions = pool_functions(deps, state["api_pool"])
        api_calls = state["api_calls"]
        stats = dict(state["usage"].get("api") or {})
        msgs: list[AnyMessage] = []
        records: list[CallRecord] = []
        status: NodeStatus | None = None
        finish: FinishOutcome | None = None
        failed_seen = list(state["failed_seen"])
        last_reason = state["last_reason"]
        calls = list(ai.tool_calls) if ai is not None else []
        invalid = list(ai.invalid_tool_calls) if ai is not None else []
        faults: list[str] = []  # this turn's content faults (faults.py)
        accepted = False  # a call of this turn was accepted (run, asked, or a valid Finish)
        empty = turn_fault(ai)
        if not calls and not invalid:
            if empty is not None:
                faults.append(empty)
            if role != "solver" or not authors_form(deps, state):  # DFS.py: a reply without a call is a Thought
                msgs.append(HumanMessage(content=nudge, name=NUDGE))  # node, the next query follows it as it is
        alone = len(calls) == 1 and not invalid
        # ask_user first: the run may pause here (interrupt), and this node re-runs from its start on resume, so no
        # API call of the step may happen before the last question is answered
        answers = ask_users(deps, state, calls)
        handled = False  # a (non-Finish) call was answered already
        offered = [FINISH_NAME] if state.get("finish_only") and allow_finish else [
            *functions, *([asking.ASK_USER_NAME] if deps.config.ask_user else []),
            *([FINISH_NAME] if allow_finish else [])]
        for tc in calls:
            name, tc_id, args = tc["name"], str(tc["id"]), tc["args"]
            if tc_id in answers:
                msgs.append(answers[tc_id])
                ok = answers[tc_id].status == "success"
                accepted |= ok
                if not ok:  # no question asked
                    faults.append("bad_arguments")
                records.append(_record(tc_id, name, "", args, "asked_user" if ok else "ask_rejected"))
                continue
            if name == FINISH_NAME and allow_finish:
                if not alone:
                    msgs.append(_error(prompts.FINISH_ALONE, tc_id, name))
                    records.append(_record(tc_id, name, "", args, "finish_rejected"))
                    continue
                try:
                    fc = parse_finish(args)
                except FinishError as exc:
                    faults.append("bad_arguments")
                    msgs.append(_error(f"Finish not accepted: {exc}", tc_id, name))
                    records.append(_record(tc_id, name, "", args, "finish_rejected"))
                    continue
                accepted = True
                msgs.append(ToolMessage(content=_finish_reply(fc), tool_call_id=tc_id, name=name))
                records.append(_record(tc_id, name, "", args, f"finish:{fc.return_type}"))
                status, finish, failed_seen, last_reason = _decide(deps, fc, failed_seen, last_reason,
                                                                   bool(state.get("finish_only")))
                continue
            if single_call and handled:
                faults.append("extra_calls")
                msgs.append(_error(EXTRA_CALL, tc_id, name))
                records.append(_record(tc_id, name, "", args, "not_executed"))
                continue
            handled = True
            api_id = functions.get(name)
            if api_id is None:
                try:
                    known = deps.catalog.api_for_function(name).id
                except UnknownNameError:
                    known = ""
                why = "is not among the available functions" if known else "does not exist"
                faults.append("unknown_function")
                msgs.append(_error(f"function {name!r} {why}; call only the functions you were given: "
                                   f"{', '.join(offered)}", tc_id, name))
                records.append(_record(tc_id, name, known, args, "not_in_pool" if known else "unknown_function"))
                continue
            if limited_calls and api_calls >= max_calls:
                msgs.append(_error(f"not executed: the budget of {max_calls} API calls is used up", tc_id, name))
                records.append(_record(tc_id, name, api_id, args, "not_executed"))
                continue
            try:  # an API that a model plays (`--execution llm`) keeps to the run's deadline too (deadline.py)
                with bounded(deps.guard(state.get("run_key", "")).deadline()):
                    obs = deps.executor.call(api_id, dict(args) if isinstance(args, dict) else args)
            except GraphBubbleUp:
                raise
            except Exception as exc:  # executors return observations; this is a last guard
                api_calls += 1
                stats["calls"] = stats.get("calls", 0) + 1
                stats["errors"] = stats.get("errors", 0) + 1
                msgs.append(_error(f"the call failed: {type(exc).__name__}: {exc}", tc_id, name))
                records.append(_record(tc_id, name, api_id, args, "error"))
                accepted = True  # well-formed: the failure is the API's
                continue
            api_calls += 1
            stats["calls"] = stats.get("calls", 0) + 1
            stats["cache_hits"] = stats.get("cache_hits", 0) + int(obs.cached)
            stats["errors"] = stats.get("errors", 0) + int(not obs.ok)
            if obs.status == Status.INVALID_ARGUMENTS:  # the schema check (tools/validation.py) refused them and
                faults.append("bad_arguments")  # nothing was sent: a content fault of the model
            else:  # the API received the call (its own refusal of a value is `rejected`: an observation, no fault)
                accepted = True
            msgs.append(ToolMessage(content=deps.executor.render(obs), tool_call_id=tc_id, name=name,
                                    status="success" if obs.ok else "error"))
            records.append(_record(tc_id, name, api_id, args, str(obs.status.value), obs.cached, obs.simulated))
        for bad in invalid:
            tc_id, name = str(bad.get("id")), str(bad.get("name") or "")
            detail = bad.get("error") or "the arguments are not a valid JSON object"
            faults.append("bad_json")
            msgs.append(_error(f"malformed arguments ({detail}); send a JSON object matching the schema", tc_id, name))
            records.append(_record(tc_id, name, "", bad.get("args"), "malformed_arguments"))
        upd_only: dict[str, Any] = {}
        if finish is None and limited_calls and api_calls >= max_calls:
            if state.get("finish_only"):  # the Finish-only turn (α-UMi: the summary) is spent
                finish = outcome("call_budget", reason=f"the budget of {max_calls} API calls per solve is used up",
                                 failed=failed_seen)
            else:
                upd_only["finish_only"] = True
        streak = next_streak(int(state.get("malformed_streak") or 0), faults, accepted)
        note = None
        if empty == "refusal" and ai is not None:
            note = f"refusal: {shorten(text_of(ai), 300)}"
        if finish is None and faults and streak >= deps.config.max_malformed_turns:
            reason = bound_reason(streak, deps.config.max_malformed_turns, faults[-1],
                                  text_of(ai) if faults[-1] == "refusal" and ai is not None else "")
            finish = outcome(MALFORMED_END, reason=reason, failed=failed_seen)
            note = f"{note}; {reason}" if note else reason
        silent = next_no_call_streak(int(state.get("no_call_streak") or 0), ai)
        if finish is None and silent >= deps.config.max_turns_without_call:  # a model that never calls a function
            reason = no_calls_reason(silent, deps.config.max_turns_without_call)
            finish = outcome(NO_CALLS_END, reason=reason, failed=failed_seen)
            note = f"{note}; {reason}" if note else reason
        usage = {**state["usage"], "api": stats}
        if faults:
            usage = merge_usage(usage, {role: fault_usage(faults)})
        if finish is None and status is None:  # DFS.py: the note after this query's observations, once the limit
            msgs += query_limit_note(deps, state, limit_note)  # is reached; the functions stay offered and the search goes on
        nodes = update_node(nodes, cur, messages=msgs, calls=records, status=status, note=note)
        upd: dict[str, Any] = {"nodes": nodes, "api_calls": api_calls, "usage": usage, "failed_seen": failed_seen,
                               "last_reason": last_reason, "malformed_streak": streak, "no_call_streak": silent,
                               **upd_only}
        if finish is not None:
            upd["finish"] = finish
        return upd

    return execute


def ask_users(deps: Deps, state: SolverState, calls: Sequence[Any]) -> dict[str, ToolMessage]:
    """The answers to the step's `ask_user` calls (tool-call id → ToolMessage), asked in order; empty when the
    function is not offered. Interactive runs pause at each question until resumed with the answer."""
    if not deps.config.ask_user:
        return {}
    out: dict[str, ToolMessage] = {}
    for tc in calls:
        if tc["name"] != asking.ASK_USER_NAME:
            continue
        tc_id = str(tc["id"])
        question = asking.question_of(tc["args"])
        if not question:
            out[tc_id] = _error("ask_user needs a non-empty 'question'", tc_id, asking.ASK_USER_NAME)
            continue
        answer = asking.ask(question, batch=deps.config.batch, query=state["query"])
        out[tc_id] = ToolMessage(content=asking.result_content(answer), tool_call_id=tc_id,
                                 name=asking.ASK_USER_NAME)
    return out


def _finish_reply(fc: FinishCall) -> str:
    text = {"give_answer": "successfully giving the final answer.",
            "give_up_and_restart": "giving up on this branch; restarting from an earlier state.",
            "give_up": "giving up."}[fc.return_type]
    return json.dumps({"response": text})


def _decide(deps: Deps, fc: FinishCall, failed_seen: list[str], last_reason: str, last_turn: bool = False
            ) -> tuple[NodeStatus, FinishOutcome | None, list[str], str]:
    """Node status, outcome (None: backtrack), failed functions so far, latest reason after a valid Finish."""
    seen = failed_seen + [f for f in fc.failed_functions if f not in failed_seen]
    if fc.return_type == "give_answer":
        return "answer", outcome("give_answer", answer=fc.final_answer, reason=fc.reason), seen, last_reason
    failed = fc.failed_functions + [f for f in failed_seen if f not in fc.failed_functions]
    if fc.return_type == "give_up" or is_cot(deps) or last_turn:  # CoT has one chain; no calls left to restart
        return "given_up", outcome("give_up", answer=fc.final_answer, reason=fc.reason, failed=failed), seen, fc.reason
    return "given_up", None, seen, fc.reason or last_reason


RouteAfterExecute = Literal["expand", "plan", "summarize", "backtrack", "finalize"]


def make_route_after_execute(deps: Deps) -> Callable[[SolverState], RouteAfterExecute]:
    """answer / give up / budget → finalize; restart or depth limit (`max_depth` in ToolLLM tree nodes) →
    backtrack; the API-call budget just spent → the Finish-only turn (α-UMi: the summarizer); else the next step."""

    def route_after_execute(state: SolverState) -> RouteAfterExecute:
        if state.get("finish"):
            return "finalize"
        nodes, cur = state["nodes"], state["current"]
        umi = deps.config.solver == "umi"
        if state.get("finish_only"):  # the last turn answers from where the budget ran out
            return "summarize" if umi else "expand"
        if nodes[cur]["status"] == "given_up" or chain_length(nodes, cur) >= deps.config.max_depth:
            return "backtrack"
        return "plan" if umi else "expand"

    return route_after_execute


# ------------------------------------------------------------------------------------------ backtrack
def make_backtrack(deps: Deps) -> Node:
    """Close the current branch; continue from the deepest ancestor with room for another child, or give up.

    A restart (Finish give_up_and_restart, or an α-UMi planner's give-up) closes the step it was decided from as
    well: trying again from the very state the model just gave up on would mostly repeat it.
    """

    def backtrack(state: SolverState) -> dict[str, Any]:
        nodes, cur = state["nodes"], state["current"]
        depth_hit = nodes[cur]["status"] == "open" and chain_length(nodes, cur) >= deps.config.max_depth
        if depth_hit:
            nodes = update_node(nodes, cur, note=f"depth limit {deps.config.max_depth} reached")
        restart = nodes[cur]["status"] == "given_up"
        nodes, target = backtrack_target(nodes, cur, tree_width(deps), close_parent=restart)
        if target is not None:
            return {"nodes": nodes, "current": target}
        reason = "all branches exhausted"
        if depth_hit:
            reason += f" (the last one reached the depth limit of {deps.config.max_depth})"
        if state["last_reason"]:
            reason += f"; last reason given: {state['last_reason']}"
        return {"nodes": nodes, "finish": outcome("give_up", reason=reason, failed=state["failed_seen"])}

    return backtrack


# ------------------------------------------------------------------------------------------ finalize
def make_finalize(deps: Deps) -> Node:
    """Exactly one new `SolverAttempt` and this solve's usage."""

    def finalize(state: SolverState) -> dict[str, Any]:
        fin = state.get("finish") or outcome("error", reason="the solver stopped without an outcome")
        names, ids = resolve_failed(deps.catalog, fin["failed_functions"])
        previous = state.get("previous_attempts") or []
        attempt = SolverAttempt(
            attempt=len(previous) + 1, round=state.get("round", 0), mode=deps.config.solver, finish_type=fin["type"],
            answer=fin["answer"], reason=fin["reason"], failed_functions=names, failed_api_ids=ids,
            api_calls=state.get("api_calls", 0), tree=tree_to_dicts(state.get("nodes") or []),
        )
        return {"solver_attempts": [attempt], "usage": state.get("usage") or {}}

    return finalize
