"""What must hold for a run against a real model, whatever the model says (the assertions of the tier)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from tests.real_model.harness import ENDED, WINDOW, Done
from tests.real_model.recorder import Exchange, RecordingProxy

# seconds a command may take past its run's `max_run_seconds` (the call in flight is cut at the limit): starting
# the interpreter, loading the catalog and its index, the run's closing steps
GRACE_SECONDS = 60.0
# replies in a row without a function call after which an agent finishes (issue 26)
NO_CALL_REPLIES = 3


def shown(exchanges: Iterable[Exchange], n: int = 5) -> str:
    rows = [f"  {e.model}: prompt {e.prompt_tokens} + max_tokens {e.max_tokens} (status {e.status}"
            + (f", {e.error[:200]}" if e.error else "") + ")" for e in exchanges]
    return "\n".join(rows[:n]) + (f"\n  ... {len(rows) - n} more" if len(rows) > n else "")


def ended_cleanly(done: Done) -> dict[str, Any]:
    """No traceback, exit status 0/1, JSON on stdout; the run's result."""
    output = done.out + done.err
    assert "Traceback (most recent call last)" not in output, output[-4000:]
    assert done.code in (0, 1), f"exit status {done.code}:\n{done.err[-3000:]}"
    result = done.json()
    assert isinstance(result, dict)
    return result


def documented_status(result: Mapping[str, Any]) -> None:
    """A status a run may end with on a healthy local server (an `error` is the client's fault here)."""
    assert result["status"] in ENDED, (f"status {result['status']} ({result.get('error_kind')}): "
                                       f"{str(result.get('reason'))[:600]}")


def within_window(proxy: RecordingProxy, window: int = WINDOW) -> None:
    """Every chat request was answered, and its prompt (as the server counted it) plus its max_tokens fit the
    window the client declared."""
    chats = proxy.chats()
    assert chats, "no model request reached the server"
    refused = [e for e in chats if not e.ok and not e.cut]
    assert not refused, f"the server refused {len(refused)} of {len(chats)} requests:\n{shown(refused)}"
    over = proxy.over_window(window)
    assert not over, (f"{len(over)} of {len(chats)} requests could pass the declared window of {window} tokens "
                      f"(or sent no max_tokens):\n{shown(over)}")


def role_totals(usage: Mapping[str, Any], roles: Iterable[str] | None = None) -> tuple[int, int, int, int]:
    """(model calls, input tokens, output tokens, estimated tokens) of a run's `usage` over `roles` (all)."""
    keep = set(roles) if roles is not None else None
    rows = [v for r, v in usage.items() if isinstance(v, Mapping) and "model_calls" in v
            and (keep is None or r in keep)]
    return (sum(int(v.get("model_calls", 0)) for v in rows), sum(int(v.get("input_tokens", 0)) for v in rows),
            sum(int(v.get("output_tokens", 0)) for v in rows), sum(int(v.get("estimated_tokens", 0)) for v in rows))


def usage_matches_server(usage: Mapping[str, Any], chats: list[Exchange], what: str = "the run") -> None:
    """The model calls and tokens `usage` records are the server's counts for `chats`, none estimated. A reply the
    client cut short (its run's time limit) has no count from the server: then the answered calls' counts are all
    recorded, and the cut calls may add at most an estimate each."""
    calls, tokens_in, tokens_out, estimated = role_totals(usage)
    answered = [e for e in chats if e.ok]
    server = (len(answered), sum(e.prompt_tokens or 0 for e in answered),
              sum(e.completion_tokens or 0 for e in answered))
    cut = [e for e in chats if e.cut]
    if cut:
        recorded = len(answered) <= calls <= len(answered) + len(cut)
        assert recorded and tokens_in >= server[1] and tokens_out >= server[2], (
            f"{what} recorded {calls} calls, {tokens_in} prompt and {tokens_out} completion tokens; the server "
            f"answered {server[0]} calls ({len(cut)} more cut) and counted {server[1]} and {server[2]}")
        return
    assert estimated == 0, f"{what} estimated {estimated} tokens instead of taking the server's usage"
    assert (calls, tokens_in, tokens_out) == server, (
        f"{what} recorded {calls} calls, {tokens_in} prompt and {tokens_out} completion tokens; the server "
        f"answered {server[0]} calls and counted {server[1]} and {server[2]}")


def within_bounds(done: Done, proxy: RecordingProxy, *, max_seconds: float, token_budget: int) -> None:
    """The run ended within its time limit (`max_run_seconds`, plus `GRACE_SECONDS`), and the server spent no
    more tokens on it than its token budget."""
    assert done.seconds <= max_seconds + GRACE_SECONDS, (
        f"the run took {done.seconds:.0f} s under max_run_seconds={max_seconds:g}")
    spent = sum((e.prompt_tokens or 0) + (e.completion_tokens or 0) for e in proxy.chats())
    assert spent <= token_budget, f"the server counted {spent} tokens under a budget of {token_budget}"


def agents_bounded(result: Mapping[str, Any], proxy: RecordingProxy) -> None:
    """An agent finishes after `NO_CALL_REPLIES` replies in a row without a function call (`max_turns_without_call`):
    its model calls are at most that per activation, plus (NO_CALL_REPLIES + 1) per function call the server saw
    in the whole run."""
    calls_seen = sum(e.called for e in proxy.chats())
    for name, agent in (result.get("agents") or {}).items():
        steps, activations = int(agent.get("steps") or 0), int(agent.get("activations") or 0)
        bound = NO_CALL_REPLIES * activations + (NO_CALL_REPLIES + 1) * calls_seen
        assert steps <= bound, (f"agent {name} made {steps} model calls in {activations} activation(s) with "
                                f"{calls_seen} function calls in the whole run (end: {agent.get('end_reason')}): "
                                f"replies without a function call are not bounded at {NO_CALL_REPLIES}")


def settings(*pairs: str) -> list[str]:
    return [a for p in pairs for a in ("--set", p)]


def dumps(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"))
