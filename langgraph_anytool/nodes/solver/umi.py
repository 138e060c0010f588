"""α-UMi's split of a solver step: the planner writes a rationale ending in a decision, then the caller makes one
function call or the summarizer writes the final answer. Each is its own model (role) with its own prompt
(α-UMi Appendix A.1-A.3); the history is shown to them as text, as in the paper.

A step is one tree node: [diversity prompt,] planner rationale, then caller action + observations or the
summary. A planner "give up" closes the node, and the search backtracks as DFSDT does.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.runnables import Runnable

from ...models.constrained import GrammarRunnable, holds_to_grammar
from ...models.profiles import profile_for
from ...protocol import DIVERSITY
from ...text import shorten
from ..abilities import ask_user as asking
from ..abilities.conversation import conversation_messages
from ..abilities.prompts import ASK_USER_NOTE, PLANNER_ASK_USER_NOTE
from . import prompts, umi_authors
from .dfsdt import (
    Node,
    describe_functions,
    invoke_model,
    open_step,
    outcome,
    pool_functions,
    precheck,
    reviewed,
    role_tools,
    text_of,
    tool_schemas,
    with_fewer_functions,
)
from .textmode import TextToolRunnable, format_inputs, probed, umi_template
from .tree import (
    NUDGE,
    QUERY_LIMIT_NOTE,
    SEED_NOTE,
    SolverState,
    add_child,
    message_to_dict,
    path_messages,
    update_node,
)

if TYPE_CHECKING:
    from ...runtime import Deps

Decision = Literal["caller", "summarizer", "give_up"]

_NEXT = re.compile(
    r"next\s*(?:step)?\s*[:：=\-]?\s*[\*_\"'`\[\(]*\s*"
    r"(caller|call|summari[sz]er|summary|conclusion|conclude|final\s*answer|answer|finish|give[\s_\-]*up)",
    re.IGNORECASE,
)
_OBS_CHARS = 1500

# call_limit "model_queries": the authors' note after `max_query_count` queries (DFS.py: call Finish, answering or
# giving up without restart), in α-UMi's terms: the planner's decisions (conclusion = Finish give_answer, give up =
# Finish give_up_and_restart in α-UMi's `utils.py collab_agent_parser`; it has no give-up without restart)
QUERY_LIMIT = ("You have made the maximum number of steps for this task. End now: let the next step give the final "
               "answer from the results above, or give up.")


def parse_next(text: str) -> tuple[Decision, str]:
    """The planner's decision (the last `Next: ...` in its text) → (decision, note; note non-empty on a fallback)."""
    matches = list(_NEXT.finditer(text or ""))
    if not matches:
        return "caller", prompts.PLANNER_NO_DECISION
    word = re.sub(r"[\s_\-]+", " ", matches[-1].group(1).lower())
    if word.startswith("give"):
        return "give_up", ""
    if word in ("caller", "call"):
        return "caller", ""
    return "summarizer", ""


# the planner's reply held to its protocol where a llama.cpp server serves the planner (`constrained.GrammarRunnable`):
# a thought of at most `PLANNER_THOUGHT_LINES` lines (none starting with "Ne", so that no `Next:` line echoed from the
# prompt comes before the decision), then the decision as the last line, which a small model cannot leave out. The
# "alpha_umi" profile keeps the authors' text: the rationale, a newline, then " Next: caller." / " Next:
# conclusion." / " Next: give up." (X-PLUG/Multi-LLM-Agent GLPFT/process_data/toolbench/prepro_raw_stage_2.py:
# `answer_span = content + '\n'`, then `answer_span + " Next: caller."`; ToolBench-multiLLM/toolbench/inference/LLM/
# collab_agent_model.py `CollbaAgentV3.prediction` routes on those three strings); ours ends with "Next: caller",
# "Next: summarizer" or "Next: give up" (prompts.PLANNER_SYSTEM).
PLANNER_THOUGHT_LINES = 4
PLANNER_LINE_CHARS = 150
DECISIONS: tuple[Decision, ...] = ("caller", "summarizer", "give_up")
_DECISIONS = {"default": ('"\\nNext: "', {"caller": "caller", "summarizer": "summarizer", "give_up": "give up"}, ""),
              "alpha_umi": ('"\\n Next: "', {"caller": "caller", "summarizer": "conclusion", "give_up": "give up"},
                            ' "."')}


def planner_grammar(profile: str, allowed: Sequence[Decision] = DECISIONS) -> str:
    """The GBNF grammar of a planner's reply under the `umi_prompts` profile (see `PLANNER_THOUGHT_LINES`), its
    decision one of `allowed` (`planner_decisions`: what the protocol's state allows at this step)."""
    lead, words, end = _DECISIONS["alpha_umi" if profile == "alpha_umi" else "default"]
    choice = " | ".join(f'"{words[d]}"' for d in DECISIONS if d in allowed) or f'"{words["caller"]}"'
    return (f'root ::= line ( "\\n" line ){{0,{PLANNER_THOUGHT_LINES - 1}}} {lead} ( {choice} ){end}\n'
            f'line ::= ( [^\\nN ] | "N" [^\\ne] ) [^\\n]{{0,{PLANNER_LINE_CHARS - 2}}}\n')


# The decisions a held planner reply may end with follow the protocol's state, as the agents' held calls follow
# theirs (nodes/agents/choices.py): a summary needs something to answer from, a give-up a failure to give up on.
# SmolLM2, free to choose, routed its first step to the summarizer, which then answered from no result.
def planner_decisions(deps: Deps, state: SolverState, offered: Mapping[str, str]) -> tuple[Decision, ...]:
    """The decisions the planner may take at this step: the caller while it has a function to call (the pool's, or
    `ask_user`); the summarizer once there is something to answer from (an observation on this path, an earlier
    conversation) or once the query limit's note says to end; give up once a call failed (an error observation on
    this path, a function that failed earlier in this solve) or once that note says to end. Where nothing can be
    called, the summarizer and give up. The planner runs only while API calls remain in the budget (the budget spent,
    the summarizer's turn comes without it: `make_route_after_execute`)."""
    path = path_messages(state["nodes"], state["current"])
    observed = [m for m in path if isinstance(m, ToolMessage)]
    ending = any(isinstance(m, HumanMessage) and m.name == QUERY_LIMIT_NOTE for m in path)
    callable_ = bool(offered) or bool(deps.config.ask_user)
    failed = any(m.status == "error" for m in observed) or bool(state.get("failed_seen"))
    allowed: list[Decision] = ["caller"] if callable_ else []
    if observed or state.get("prior_messages") or ending or not callable_:
        allowed.append("summarizer")
    if failed or ending or not callable_:
        allowed.append("give_up")
    return tuple(allowed)


def planner_model(deps: Deps, allowed: Sequence[Decision] = DECISIONS) -> Runnable[Any, BaseMessage]:
    """The planner's model: its reply held to `planner_grammar` (its decision one of `allowed`) where llama.cpp serves
    it on loopback and its profile does not ask for native calls (`constrained.holds_to_grammar`), else as it is."""
    model = deps.models.for_role("planner")
    if holds_to_grammar(model, profile_for(model, deps.config.model_profiles), probed(deps)):
        return GrammarRunnable(model, planner_grammar(deps.config.umi_prompts, allowed))
    return model


def render_history(messages: Sequence[BaseMessage]) -> str:
    """The trajectory as text: planner thoughts, actions with their inputs, observations, notes."""
    lines: list[str] = []
    for m in messages:
        if isinstance(m, AIMessage):
            who = {"planner": "Planner", "caller": "Caller", "summarizer": "Summarizer"}.get(m.name or "", "Assistant")
            text = text_of(m).strip()
            if text:
                lines.append(f"{who}: {text}")
            for tc in m.tool_calls:
                lines.append(f"Action: {tc['name']}\nAction Input: {json.dumps(tc['args'], ensure_ascii=False)}")
            for bad in m.invalid_tool_calls:
                lines.append(f"Action: {bad.get('name')}\nAction Input: {bad.get('args')}")
        elif isinstance(m, ToolMessage):
            text = text_of(m)
            text = shorten(text, _OBS_CHARS + 1)
            lines.append(f"Observation ({m.name or 'function'}): {text}")
        elif isinstance(m, HumanMessage):
            if m.name in (DIVERSITY,):
                continue
            label = "Note" if m.name in (NUDGE, SEED_NOTE, QUERY_LIMIT_NOTE) else "User"
            lines.append(f"{label}: {text_of(m)}")
    return "\n".join(lines) if lines else prompts.EMPTY_HISTORY


def _step_messages(state: SolverState) -> list[AnyMessage]:
    """Messages before the current step (the parent's path): the current step's rationale is passed apart."""
    nodes, cur = state["nodes"], state["current"]
    parent = nodes[cur]["parent"]
    return path_messages(nodes, parent) if parent is not None else []


def _step_history(state: SolverState) -> str:
    return render_history(_step_messages(state))


def umi_inputs(history: Sequence[BaseMessage], functions: Mapping[str, str], thought: str | None = None
               ) -> dict[str, Any]:
    """Structured inputs of an α-UMi role call: the trajectory so far (as message dicts) and the functions."""
    out: dict[str, Any] = {"history": [message_to_dict(m) for m in history], "functions": list(functions)}
    if thought is not None:
        out["thought"] = thought
    return out


def make_plan(deps: Deps) -> Node:
    """The planner: a rationale for a new step (a child of the current node) ending in its decision."""

    def plan(state: SolverState) -> dict[str, Any]:
        stop, functions, added = open_step(deps, state)
        if stop:
            return {"finish": stop}
        nodes, cur = state["nodes"], state["current"]
        diversity = f"\n{added[0].content}\n" if added else ""

        def call(offered: dict[str, str], state: SolverState) -> tuple[AIMessage | None, dict[str, Any]]:
            system = umi_template(deps.config, "planner").format(
                doc=describe_functions(deps, offered, with_params=True),
                history=render_history(path_messages(nodes, cur)), diversity=diversity)
            if deps.config.ask_user:  # the caller may ask the user: the planner decides when
                system += PLANNER_ASK_USER_NOTE
            prompt: list[BaseMessage] = [SystemMessage(content=system),
                                         *conversation_messages(state.get("prior_messages") or []),
                                         HumanMessage(content=state["query"])]
            allowed = planner_decisions(deps, state, offered)
            return invoke_model(deps, state, "planner", planner_model(deps, allowed), prompt,
                                {**umi_inputs(path_messages(nodes, cur), offered),
                                 **format_inputs(deps.config, "planner"), "ask_user": deps.config.ask_user})

        authors = umi_authors.book_of(deps)  # umi_prompts_from: the authors' run-time request (umi_authors.py)
        ai, upd = with_fewer_functions(state, "planner", functions, call if authors is None else
                                       umi_authors.planner_call(deps, authors, [*path_messages(nodes, cur), *added]))
        if ai is None:
            return upd
        rationale = text_of(ai).strip()
        decision, note = parse_next(rationale)
        if authors is not None:
            rationale, decision = umi_authors.read_plan(text_of(ai))
            note = ""
        nodes, child = add_child(nodes, cur, [*added, AIMessage(content=rationale, name="planner")])
        upd.update({"current": child, "thought": rationale, "decision": decision})
        if note:
            nodes = update_node(nodes, child, note=note)
        if decision == "give_up":
            named = [f for f in functions if f in rationale]
            upd["failed_seen"] = state["failed_seen"] + [f for f in named if f not in state["failed_seen"]]
            upd["last_reason"] = rationale
            nodes = update_node(nodes, child, status="given_up", note="planner gave up")
        upd["nodes"] = nodes
        return upd

    return plan


def route_after_plan(state: SolverState) -> Literal["caller", "summarizer", "backtrack", "finalize"]:
    if state.get("finish"):
        return "finalize"
    decision = state.get("decision")
    if decision == "give_up":
        return "backtrack"
    return "summarizer" if decision == "summarizer" else "caller"


def make_call(deps: Deps) -> Node:
    """The caller: one function call that carries out the planner's thought (the pooled APIs bound as tools, and
    `ask_user` when the config offers it)."""

    def call(state: SolverState) -> dict[str, Any]:
        stop = precheck(deps, state)
        if stop:
            return {"finish": stop}
        nodes, cur = state["nodes"], state["current"]
        functions = pool_functions(deps, state["api_pool"])
        ask = deps.config.ask_user  # `ask_user(question)` is offered beside the pooled APIs (answered by execute)

        def call(offered: dict[str, str], state: SolverState) -> tuple[AIMessage | None, dict[str, Any]]:
            system = umi_template(deps.config, "caller").format(
                doc=describe_functions(deps, offered, with_params=True), history=_step_history(state),
                thought=state["thought"] or "(none)",
                tool_names=", ".join([*offered, asking.ASK_USER_NAME] if ask else offered),
            ) + (ASK_USER_NOTE if ask else "")
            prompt: list[BaseMessage] = [SystemMessage(content=system),
                                         *conversation_messages(state.get("prior_messages") or []),
                                         HumanMessage(content=state["query"])]
            tools = [*tool_schemas(deps, offered), *([asking.ask_user_schema()] if ask else [])]
            model = role_tools(deps, state, "caller", tools)
            return invoke_model(deps, state, "caller", model, prompt,
                                {**umi_inputs(_step_messages(state), offered, state["thought"]), "ask_user": ask,
                                 **format_inputs(deps.config, "caller", text=isinstance(model, TextToolRunnable))},
                                tools)

        authors = umi_authors.book_of(deps)
        ai, upd = with_fewer_functions(state, "caller", functions, call if authors is None else
                                       umi_authors.role_call(deps, authors, "caller", _step_messages(state)))
        if ai is None:
            return upd
        if authors is not None:  # the call is read from the caller's text (collab_agent_parser)
            ai = umi_authors.caller_message(text_of(ai))
        ai = reviewed(ai, upd, "caller", f"n{cur}").model_copy(update={"name": "caller"})
        return {**upd, "nodes": update_node(nodes, cur, messages=[ai])}

    return call


def make_summarize(deps: Deps) -> Node:
    """The summarizer: the final answer from the trajectory and the planner's last thought (→ give_answer)."""

    def summarize(state: SolverState) -> dict[str, Any]:
        stop = precheck(deps, state)
        if stop:
            return {"finish": stop}
        nodes, cur = state["nodes"], state["current"]
        system = umi_template(deps.config, "summarizer").format(history=_step_history(state), thought=state["thought"] or "(none)")
        prompt: list[BaseMessage] = [SystemMessage(content=system), *conversation_messages(state.get("prior_messages") or []),
                                     HumanMessage(content=state["query"])]
        authors = umi_authors.book_of(deps)
        ai, upd = invoke_model(deps, state, "summarizer", deps.models.for_role("summarizer"), prompt,
                               {**umi_inputs(_step_messages(state), pool_functions(deps, state["api_pool"]),
                                             state["thought"]), **format_inputs(deps.config, "summarizer")}) \
            if authors is None else umi_authors.role_call(deps, authors, "summarizer", _step_messages(state))(
                pool_functions(deps, state["api_pool"]), state)
        if ai is None:
            return upd
        answer = text_of(ai).strip()
        summary = AIMessage(content=answer, name="summarizer")
        if not answer:
            upd["finish"] = outcome("give_up", reason="the summarizer wrote an empty answer", failed=state["failed_seen"])
            return {**upd, "nodes": update_node(nodes, cur, messages=[summary], status="given_up")}
        upd["finish"] = outcome("give_answer", answer=answer, reason=state["thought"])
        return {**upd, "nodes": update_node(nodes, cur, messages=[summary], status="answer")}

    return summarize
