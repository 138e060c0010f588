"""α-UMi with real small models (issue 38 §1): SmolLM2-135M and Gemma 3 270M on llama-server play the planner, the
caller and the summarizer over the search retriever's pool.

The planner's reply is held by a GBNF grammar to a thought and a last `Next:` line (before, SmolLM2 echoed the
prompt's format line and ended on its "Next: give up", so its caller never ran), and the decisions that line may
take follow the protocol's state (nodes/solver/umi.py `planner_decisions`: only the caller before any observation,
the summarizer once there is one, give up after a failed call; before, SmolLM2 chose the summarizer at its first
step, which answered from no API result); the caller's reply is held by a JSON schema to a call of an offered API;
the summarizer writes plain text. What must hold whatever the models say, for BOTH models: every planner reply ends
with a decision its state allows, the first one routes to the caller, and the request after each decision is the
role it named (a caller's constrained call, the summarizer's plain request, or a new planner step after a give-up);
the caller's call is one of the offered functions and is executed against the builtin catalog (its observation in a
later request, the solver's API calls counted); the run ends with a documented status, its usage the server's.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.real_model.checks import settings, usage_matches_server
from tests.real_model.harness import GEMMA, SMOLLM2
from tests.real_model.recorder import Exchange, RecordingProxy
from tests.real_model.test_calls import BOUNDS
from tests.real_model.test_run import holds, run
from tests.real_model.workload import QUERIES

pytestmark = pytest.mark.slow

# the planner's and the caller's prompts (the pool's 8 APIs written out, about 900 and 1,100 tokens) read and answered
# before the caller's call is executed: 5-10 minutes on a CPU loaded by other work (at load 8-13, a 300 s run ended
# before the caller's request); on a quiet machine the whole run takes under a minute
UMI_SECONDS = 540  # under the harness's 600 s for the command
DECISION = re.compile(r"\n ?Next: (caller|summarizer|conclusion|give up)\.?$")


def role_of(e: Exchange) -> str:
    if e.decision:
        return "planner"
    if e.constrained or e.grammar:
        return "caller"
    return "summarizer" if e.text.startswith(("Make a conclusion", "Write the conclusion")) else "other"


@pytest.mark.parametrize("model", [SMOLLM2, GEMMA])
def test_the_planner_routes_to_a_caller_whose_call_is_executed(model: str, proxy: Callable[..., RecordingProxy],
                                                               tmp_path: Path) -> None:
    p = proxy(model)
    result = holds(run(p, tmp_path, QUERIES[0][0], "umi", *settings(*BOUNDS, f"max_run_seconds={UMI_SECONDS}"),
                       model=model), p, max_seconds=UMI_SECONDS)
    chats = [e for e in p.chats() if e.ok]
    if result["status"] != "time_limit":  # a run cut at its time limit may lose the usage of the call in flight
        usage_matches_server(result["usage"], p.chats())
    planned = [i for i, e in enumerate(chats) if e.decision]
    assert planned, "no planner request was held to a decision grammar"
    routed: list[str] = []
    for i in planned:
        e = chats[i]
        if e.finish_reason == "length":  # cut at max_tokens before its decision: the caller acts on the thought
            word = "caller"  # (the authors' rule)
        else:
            found = DECISION.search(e.reply_text)
            assert found, f"the planner's reply ends with no decision: {e.reply_text[-300:]!r}"
            word = {"conclusion": "summarizer"}.get(found.group(1), found.group(1))
        if word == "summarizer":  # only with an API result to answer from
            assert "Observation" in e.text, "the planner concluded before any observation"
        routed.append(word)
        if i + 1 < len(chats):  # the next request is the role the planner named
            after = role_of(chats[i + 1])
            assert after == word or (word == "give up" and after in ("planner", "other")), (word, after)
    assert routed and routed[0] == "caller", routed  # nothing to answer from, nothing failed: the caller's turn
    callers = [e for e in chats if role_of(e) == "caller"]
    timeline = [(role_of(e), round(e.seconds), e.prompt_tokens, e.completion_tokens) for e in chats]
    assert callers, ("the planner routed to the caller, and no caller request followed", result["status"], timeline)
    for e in callers:  # each caller reply (not cut at max_tokens) is one valid call of an offered function
        if e.finish_reason != "length":
            made = e.function_calls()
            assert len(made) == 1 and e.valid_calls() == 1, (e.reply_text[:300], sorted(e.offered)[:10])
    apis = [c for e in callers for c in e.function_calls() if c[0] not in ("Finish", "ask_user")]
    assert apis
    assert sum(int(a.get("api_calls") or 0) for a in result["solver_attempts"]) >= 1, (
        "the caller's call was not executed", result["status"], result.get("reason"), timeline)
    later = chats[chats.index(callers[0]) + 1:]  # none when the run's time limit came right after the call
    assert not later or any("Observation" in e.text for e in later), "the observation reached no later request"
    if result["status"] in ("solved", "unsolved"):  # an answer: the summarizer wrote it
        assert result["answer"] and any(role_of(e) == "summarizer" for e in chats)
