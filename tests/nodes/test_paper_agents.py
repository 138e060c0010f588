"""Issue 36 §3: `paper()`'s retriever agents are not ended by replies without a function call.

dyabel/AnyTool `scripts/main.py` (`Main_Search_Agent.assign_main`, `Category_Agent.category_search` /
`resume_search`, `Tool_Agent.tool_search`): `for i in range(20)`, and a reply without a function call is answered
with the nudge (`self.messages.append({"role": "user", "content": ...})`) and the loop goes on; only the 20 steps
end it. Ours ends an activation after `max_turns_without_call` (3) such replies in a row.
"""

from __future__ import annotations

from typing import Any, cast

from langchain_core.messages import HumanMessage

from langgraph_anytool import AnyToolConfig
from langgraph_anytool.models.llm import ModelSet
from langgraph_anytool.nodes.agents import new_agent_record
from langgraph_anytool.runtime import Deps, RunSignals
from tests.fakes import ScriptedChatModel, ai
from tests.nodes.test_agent_loop import SMALL_PLAN, make_catalog, run_loop


def _silent_meta(config: AnyToolConfig) -> dict[str, Any]:
    model = ScriptedChatModel(responder=lambda m, t: ai("Let me think about the categories."))
    deps = Deps(catalog=make_catalog(SMALL_PLAN), models=ModelSet(default=model, by_role={}),
                executor=cast(Any, None), config=config, signals=RunSignals())
    return dict(run_loop("meta", new_agent_record("meta", "meta"), deps)["agents"]["meta"])


def test_a_paper_agent_is_nudged_up_to_the_step_limit_as_main_py_does() -> None:
    rec = _silent_meta(AnyToolConfig.paper())
    assert (rec["status"], rec["end_reason"], rec["steps"]) == ("finished", "step_limit", 20)
    nudges = [m for m in rec["messages"] if isinstance(m, HumanMessage)][1:]  # after the first user message
    assert len(nudges) == 20  # each reply without a call is answered (the 20th too, as main.py's loop does)


def test_ours_ends_a_silent_agent_after_max_turns_without_call() -> None:
    rec = _silent_meta(AnyToolConfig(seed_with_search=False))
    assert rec["steps"] == 3 and str(rec["end_reason"]).startswith("no_calls")
