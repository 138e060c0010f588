"""The solver subgraph: DFSDT (or CoT, or α-UMi) over an explicit search tree.

    seed → expand → execute ─┬→ expand            (next step, a child of the new node)
      │       │              ├→ backtrack → expand (restart / depth limit: deepest ancestor with room)
      │       │              └→ finalize           (answer, give up, call budget)
      └───────┴→ finalize    (empty pool, token budget, model error)

In α-UMi mode `expand` is `plan → call → execute | summarize → finalize | backtrack`.
No checkpointer of its own: it runs as a node of the AnyTool graph, which has one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from ..nodes.solver import prompts
from ..nodes.solver.dfsdt import (
    make_backtrack,
    make_execute,
    make_expand,
    make_finalize,
    make_route_after_execute,
    make_seed,
    recursion_budget,
    route_after_backtrack,
    route_after_model,
    route_seed,
)
from ..nodes.solver.tree import SolverState
from ..nodes.solver.umi import make_call, make_plan, make_summarize, route_after_plan
from ..state import SolverInput, SolverOutput

if TYPE_CHECKING:
    from ..runtime import Deps


def build_solver_graph(deps: Deps) -> CompiledStateGraph:
    """Compile the solver for `deps.config.solver` ("dfsdt", "cot" or "umi")."""
    g = StateGraph(SolverState, input_schema=SolverInput, output_schema=SolverOutput)
    umi = deps.config.solver == "umi"
    expand = "plan" if umi else "expand"
    g.add_node("seed", make_seed(deps))
    g.add_node("finalize", make_finalize(deps))
    g.add_node("backtrack", make_backtrack(deps))
    g.add_edge(START, "seed")
    g.add_conditional_edges("seed", route_seed, {"expand": expand, "finalize": "finalize"})
    if umi:
        g.add_node("plan", make_plan(deps))
        g.add_node("call", make_call(deps))
        g.add_node("summarize", make_summarize(deps))
        g.add_node("execute", make_execute(deps, single_call=True, allow_finish=False, nudge=prompts.CALLER_NUDGE))
        g.add_conditional_edges("plan", route_after_plan, {"caller": "call", "summarizer": "summarize",
                                                           "backtrack": "backtrack", "finalize": "finalize"})
        g.add_conditional_edges("call", route_after_model, {"execute": "execute", "finalize": "finalize"})
        g.add_edge("summarize", "finalize")
    else:
        g.add_node("expand", make_expand(deps))
        g.add_node("execute", make_execute(deps))
        g.add_conditional_edges("expand", route_after_model, {"execute": "execute", "finalize": "finalize"})
    g.add_conditional_edges("execute", make_route_after_execute(deps),
                            {"expand": expand, "backtrack": "backtrack", "finalize": "finalize"})
    g.add_conditional_edges("backtrack", route_after_backtrack, {"expand": expand, "finalize": "finalize"})
    g.add_edge("finalize", END)
    # Every loop is bounded by the solver's own counters; the recursion limit is only a safety net above them.
    return g.compile(name="solver").with_config(recursion_limit=recursion_budget(deps))
