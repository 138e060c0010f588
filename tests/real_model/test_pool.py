"""Real models that fill the API pool (issue 38 §1): SmolLM2-135M and Gemma 3 270M play the retriever's agents and
the DFSDT solver, their calls held to a call (a JSON schema; in text mode a GBNF grammar) whose names are pinned to
the agent's scope (nodes/agents/choices.py), on the small catalog and CPU-sized settings of `tests/real_model/small.py`
(the judge is the offline one: see there).

Checked whatever the model chooses: every held reply was a call of an offered function; the APIs in the pool came
from the agents' `add_apis_into_api_pool` calls; the solver was offered them, and an API it called was executed
(its observation in its next request) or its answer was judged; a reflection round ran; the run's usage (every
role but the offline judge) is the server's count. Never a model's answer.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import pytest

from tests.real_model import small
from tests.real_model.checks import usage_matches_server
from tests.real_model.harness import GEMMA, MAX_TOKENS, SMOLLM2, WINDOW
from tests.real_model.recorder import Exchange, RecordingProxy

pytestmark = pytest.mark.slow


def calls(chats: list[Exchange]) -> list[tuple[str, Any]]:
    return [c for e in chats if e.ok for c in e.function_calls()]


@pytest.mark.parametrize("model", [SMOLLM2, GEMMA])
@pytest.mark.parametrize("text", [False, True], ids=["dfsdt", "dfsdt-text"])
def test_agents_fill_the_pool_and_the_solver_executes_and_reflects(
        model: str, text: bool, proxy: Callable[..., RecordingProxy], monkeypatch: pytest.MonkeyPatch) -> None:
    p = proxy(model)
    started = time.monotonic()
    monkeypatch.setenv("OPENAI_BASE_URL", p.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local-unused")
    out = small.run(model, text=text, window=WINDOW, max_tokens=MAX_TOKENS)
    seconds = time.monotonic() - started
    chats = p.chats()
    summary = (f"{model} {'text' if text else 'constrained'}: {out['status']} in {seconds:.0f} s "
               f"({out.get('reason')}); pool {[a['function_name'] for a in out.get('api_pool') or []]}")
    assert out["status"] != "error", summary
    # every held reply (not cut at its max_tokens) was one call of an offered function
    held = [e for e in chats if e.ok and (e.grammar if text else e.constrained) and e.finish_reason != "length"]
    assert held, f"no held request: {summary}"
    for e in held:
        made = e.function_calls()
        assert len(made) == 1 and made[0][0] in e.offered, (e.reply_text[:300], sorted(e.offered))
    # the pool's APIs came from the agents' calls
    added = [args for name, args in calls(chats) if name == "add_apis_into_api_pool"]
    assert added and out["api_pool"], f"no API was added to the pool: {summary}"
    tool_agents = {k for k, a in out["agents"].items() if a["level"] == "tool"}
    assert {e["added_by"] for e in out["api_pool"]} <= tool_agents
    # the solver was offered the pool; an API it called was executed, or its answer judged
    pooled = {e["function_name"] for e in out["api_pool"]}
    solver = [e for e in chats if "Finish" in e.offered]
    assert any(set(e.offered) & pooled for e in solver), "the solver was never offered a pooled API"
    api_calls = sum(int(a.get("api_calls") or 0) for a in out["solver_attempts"])
    observed = any("Observation" in e.text for e in solver)
    judged = any(ev["kind"] == "judge" for ev in out["events"])
    assert (api_calls and observed) or judged, f"no API executed and no answer judged: {summary}"
    # a reflection round ran
    assert any(ev["kind"] == "reflect" for ev in out["events"]), f"no reflection round: {summary}"
    # the usage of every role the server played is the server's count (the offline judge is no server call)
    served = {role: v for role, v in out["usage"].items() if role != "judge"}
    if out["status"] != "time_limit":
        usage_matches_server(served, chats)
    print(summary, json.dumps({"requests": len(chats), "api_calls": api_calls}))
