"""Issue 36 §1: under `paper()` (`reply_caps="local"`) a hosted endpoint's agent and solvability-check calls carry no
reply limit, as the authors' `call_gpt` sends none (dyabel/AnyTool `openai_utils.py`: `client.chat.completions.
create(seed=123, messages=..., functions=..., **kwargs)`, no `max_tokens`); the solver keeps its 1024
(`toolbench/inference/LLM/chatgpt_function_model.py chat_completion_request`: `"max_tokens": 1024`); a loopback
server keeps the role's limit (its window needs it); the call's usage says `uncapped`.

The servers are loopback ones; a "hosted" endpoint is one the guard's `is_local` does not call local.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langchain_openai import ChatOpenAI

from langgraph_anytool import AnyToolConfig
from langgraph_anytool.models.fitting import ROLE_REPLY_TOKENS
from langgraph_anytool.models.guard import CallGuard
from langgraph_anytool.models.llm import call_role
from tests.servers import OpenAIChatServer


def _sent(role: str, guard: CallGuard, **model: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    with OpenAIChatServer(["ok"]) as server:
        chat = ChatOpenAI(model="gpt-test", base_url=server.base_url, api_key="sk-loopback", max_retries=0,
                          streaming=False, **model)
        _, used = call_role(chat, role, [HumanMessage("hi")], guard=guard)
        (body,) = server.chat_requests
    return body, dict(used)


HOSTED = {"is_local": lambda endpoint: False}


@pytest.mark.parametrize("role", ["meta", "category", "tool", "solvable"])
def test_paper_sends_the_agents_hosted_calls_without_a_reply_limit(role: str) -> None:
    body, used = _sent(role, CallGuard(reply_caps="local", **HOSTED))
    assert "max_completion_tokens" not in body and "max_tokens" not in body
    assert used["uncapped"] == 1


@pytest.mark.parametrize(("role", "guard", "model", "cap"), [
    ("solver", CallGuard(reply_caps="local", **HOSTED), {}, 1024),  # chat_completion_request's max_tokens
    ("meta", CallGuard(reply_caps="local"), {}, ROLE_REPLY_TOKENS["meta"]),  # a loopback server keeps it
    ("meta", CallGuard(reply_caps="local", **HOSTED), {"max_tokens": 300}, 300),  # the model's own limit
    ("meta", CallGuard(reply_caps="local", token_budget=10_000, **HOSTED), {}, ROLE_REPLY_TOKENS["meta"]),
    ("meta", CallGuard(**HOSTED), {}, ROLE_REPLY_TOKENS["meta"]),  # ours: always
])
def test_the_limit_stays_where_the_authors_send_one_or_the_window_or_a_budget_needs_it(
        role: str, guard: CallGuard, model: dict[str, Any], cap: int) -> None:
    body, used = _sent(role, guard, **model)
    assert body["max_completion_tokens"] == cap and "uncapped" not in used


def test_paper_sets_local_reply_caps_and_the_run_guard_carries_it() -> None:
    from langgraph_anytool.catalog import Catalog
    from langgraph_anytool.models.llm import ModelSet
    from langgraph_anytool.runtime import Deps

    assert AnyToolConfig.paper().reply_caps == "local" and AnyToolConfig().reply_caps == "always"
    for config, caps in ((AnyToolConfig.paper(), "local"), (AnyToolConfig(), "always")):
        deps = Deps(catalog=Catalog([], name="empty"), models=ModelSet(default=None, by_role={}),
                    executor=None, config=config)  # type: ignore[arg-type]
        assert deps.guard("run").reply_caps == caps


@pytest.mark.parametrize(("role", "guard", "model", "seed"), [
    ("meta", CallGuard(reply_caps="local", **HOSTED), {}, 123),
    ("solvable", CallGuard(reply_caps="local"), {}, 123),  # a loopback server too: a seed decides no window
    ("tool", CallGuard(reply_caps="local", **HOSTED), {"seed": 7}, 7),  # the model's own seed stays
    # chat_completion_request (chatgpt_function_model.py) sends through call_gpt, which adds seed=123
    ("solver", CallGuard(reply_caps="local", **HOSTED), {}, 123),
    ("judge", CallGuard(reply_caps="local", **HOSTED), {}, None),  # ToolEval's completions_kwargs hold none
    ("meta", CallGuard(**HOSTED), {}, None),  # ours
])
def test_paper_sends_call_gpts_seed_on_the_agents_and_the_check(role: str, guard: CallGuard, model: dict[str, Any],
                                                              seed: int | None) -> None:
    """openai_utils.py `call_gpt`: `client.chat.completions.create(seed=123, messages=..., functions=..., **kwargs)`,
    used by scripts/main.py's agents, anytool/verifier.py's check_task_solvable_by_function and the DFSDT solver
    (toolbench/inference/LLM/chatgpt_function_model.py chat_completion_request → call_gpt)."""
    body, _ = _sent(role, guard, **model)
    assert body.get("seed") == seed
