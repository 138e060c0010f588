"""The step subgraph every retriever agent runs (meta, category and tool agents alike).

`build_agent_step(role, deps)` compiles `call_model → run_functions` for one role: its input is one agent's
`AgentInput` (the dispatcher's `Send` payload), its output an `AgentOutput` (the agent's updated record, the
records of the children it created, its pool additions, the solvable flag and the usage of this step). The agent
loop itself is `dispatch ⇄ step` in the retriever, one step per superstep (see `nodes/agents/step.py`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from ..nodes.agents.records import NODE_FOR_LEVEL
from ..nodes.agents.roles import role_for_level
from ..nodes.agents.step import AgentStepState, make_call_model, make_run_functions, route_after_model
from ..state import AgentInput, AgentOutput
from .subgraph import node_output

if TYPE_CHECKING:
    from ..nodes.agents.context import Role
    from ..runtime import Deps


def build_agent_step(role: Role | str, deps: Deps) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Compile one step of a role (a `Role` or a level name) as a subgraph."""
    spec = role_for_level(role) if isinstance(role, str) else role
    builder = StateGraph(AgentStepState, input_schema=AgentInput, output_schema=AgentOutput)
    builder.add_node("call_model", make_call_model(spec, deps))
    builder.add_node("run_functions", make_run_functions(spec, deps))
    builder.add_edge(START, "call_model")
    builder.add_conditional_edges("call_model", route_after_model, ["run_functions", END])
    builder.add_edge("run_functions", END)
    return node_output(builder.compile(name=NODE_FOR_LEVEL[spec.level]))  # its output, also under astream_events
