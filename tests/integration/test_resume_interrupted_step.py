"""A batch query interrupted after every task of a step had saved its writes, but before the step's checkpoint was
written, resumes from its checkpoint (LangGraph's `next` is empty then: its tasks all have writes) instead of
starting the query again on the same thread (which appended the request a second time)."""

from __future__ import annotations

import asyncio
from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from langgraph_anytool.config import AnyToolConfig
from langgraph_anytool.eval.anytool.runner import solve
from tests.fakes import ScriptedChatModel, ai, call
from tests.nodes.test_agent_loop import SMALL_PLAN, make_catalog


class CrashOnce(InMemorySaver):
    """Fails (as a killed process would) to write the checkpoint that ends step `step`, once."""

    def __init__(self, step: int) -> None:
        super().__init__()
        self.step, self.crashed = step, False

    async def aput(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        if metadata.get("step") == self.step and not self.crashed:
            self.crashed = True
            raise RuntimeError("killed")
        return await super().aput(config, checkpoint, metadata, new_versions)


def test_a_step_whose_tasks_all_finished_is_resumed_not_restarted() -> None:
    catalog = make_catalog(SMALL_PLAN)
    model = ScriptedChatModel(responder=lambda m, t: ai("", call("finish_search")))
    config = AnyToolConfig(seed_with_search=False, route_tools=False)
    saver = CrashOnce(step=3)  # the checkpoint after the meta agent's first step

    def run() -> dict[str, Any]:
        return asyncio.run(solve(catalog, model, config, "tell me a joke", api_ids=None, executor=None,
                                 checkpointer=saver, thread_id="t"))

    try:
        run()
    except RuntimeError as exc:
        assert "killed" in str(exc)
    assert saver.crashed
    calls = len(model.calls)
    out = run()
    requests = [m for m in out["messages"] if isinstance(m, HumanMessage)]
    assert len(requests) == 1 and out["status"] not in (None, "running")
    assert len(model.calls) == calls  # the meta step's saved writes were used, not the step run again
