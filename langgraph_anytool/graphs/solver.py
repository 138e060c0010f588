"""The solver subgraph: DFSDT (or CoT, or α-UMi) over an explicit search tree.

    seed → expand → execute ─┬→ expand            (next step, a child of the new node)
      │       │              ├→ backtrack → expand (restart / depth limit: deepest ancestor with room)
      │       │              └→ finalize           (answer, give up, call budget)
      └───────┴→ finalize    (empty pool, token budget, model error)

In α-UMi mode `expand` is `plan → call → execute_call | summarize → finalize | backtrack`. The mode and every
limit are read per run. No checkpointer of its own: it runs as a node of the
AnyTool graph, which has one.
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
    make_route_step,
    make_seed,
    route_after_model,
)
from ..nodes.solver.tree import SolverState
from ..nodes.solver.umi import QUERY_LIMIT, make_call, make_plan, make_summarize, route_after_plan
from ..runtime import per_run
from ..state import SolverInput, SolverOutput
from .subgraph import node_output

if TYPE_CHECKING:
    from ..runtime import Deps


# Every loop is bounded by the solver's own counters (API calls, model calls, depth, width); the recursion limit is
# only a safety net far above them, fixed because the subgraph is compiled once and the limits are read per run.
RECURSION_SAFETY_NET = 10_000


def build_solver_graph(deps: Deps) -> CompiledStateGraph:
    """Compile the solver: DFSDT / CoT (`expand → execute`) and α-UMi (`plan → call → execute_call | summarize`)
    side by side; each run takes the branch of its own `solver` setting."""
    g = StateGraph(SolverState, input_schema=SolverInput, output_schema=SolverOutput)
    g.add_node("seed", per_run(make_seed, deps))
    g.add_node("expand", per_run(make_expand, deps))
    g.add_node("execute", per_run(make_execute, deps))
    g.add_node("plan", per_run(make_plan, deps))
    g.add_node("call", per_run(make_call, deps))
    g.add_node("execute_call", per_run(lambda d: make_execute(d, single_call=True, allow_finish=False,
                                                              nudge=prompts.CALLER_NUDGE, role="caller",
                                                              limit_note=QUERY_LIMIT), deps))
    g.add_node("summarize", per_run(make_summarize, deps))
    g.add_node("backtrack", per_run(make_backtrack, deps))
    g.add_node("finalize", per_run(make_finalize, deps))
    g.add_edge(START, "seed")
    step = per_run(make_route_step, deps)
    g.add_conditional_edges("seed", step, ["expand", "plan", "finalize"])
    g.add_conditional_edges("expand", route_after_model, {"execute": "execute", "finalize": "finalize"})
    g.add_conditional_edges("plan", route_after_plan, {"caller": "call", "summarizer": "summarize",
                                                       "backtrack": "backtrack", "finalize": "finalize"})
    g.add_conditional_edges("call", route_after_model, {"execute": "execute_call", "finalize": "finalize"})
    g.add_edge("summarize", "finalize")
    after_execute = per_run(make_route_after_execute, deps)
    g.add_conditional_edges("execute", after_execute, ["expand", "plan", "summarize", "backtrack", "finalize"])
    g.add_conditional_edges("execute_call", after_execute, ["expand", "plan", "summarize", "backtrack", "finalize"])
    g.add_conditional_edges("backtrack", step, ["expand", "plan", "finalize"])
    g.add_edge("finalize", END)
    return node_output(g.compile(name="solver")).with_config(recursion_limit=RECURSION_SAFETY_NET)
