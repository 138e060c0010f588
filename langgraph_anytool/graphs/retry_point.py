"""Resuming a run that ended in a transport error (a server that died, refused or kept failing): from the last
checkpoint before the failed model call, with the usage the failed branch spent kept.

A run whose model call failed for good ends as status `error` with its `error_kind`; when that kind is a transport
one (`llm.TRANSPORT_KINDS`: the endpoint may answer later), its thread's checkpoints still hold the state before
the call. `retry_point` finds that checkpoint — the parent of the first checkpoint (on the thread's current branch)
whose state records a transport failure (`"<kind>: <role> model: ..."`, as `llm.ModelCallError` writes them) —
and what the run spent after it (its retries, the calls of tasks that ran beside the failed one): `resume_input`
continues the run from there (LangGraph forks the thread at that checkpoint), adding that usage to the state first,
so the resumed run's usage is the whole run's, as a run resumed after a kill keeps its checkpointed usage.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.types import Command

from ..models.llm import TRANSPORT_KINDS, total_tokens

# how a transport failure is recorded in the state (a solver attempt's or the verdict's reason, an agent's end
# reason): `ModelCallError`'s text, "<kind>: <role> model: ..."
_FAILURE = re.compile(r"\b(?:" + "|".join(sorted(TRANSPORT_KINDS)) + r"): [A-Za-z_]+ model: ")
USAGE_KEY = "usage"


@dataclass(frozen=True)
class RetryPoint:
    """Where a run ended by a transport error resumes: `config` addresses the checkpoint before the failed call,
    `kind` and `reason` are the run's error, `carried` the usage spent after that checkpoint (kept)."""

    config: RunnableConfig
    kind: str
    reason: str
    carried: dict[str, Any] = field(default_factory=dict)

    def resume_input(self) -> Command[Any]:
        """The input that continues the run from the checkpoint, with the carried usage added to its state."""
        return Command(update={USAGE_KEY: self.carried})

    def describe(self) -> str:
        """What the resume keeps, for the line `anytool run` prints."""
        retries = sum(int(v.get("retries", 0)) for v in self.carried.values() if isinstance(v, Mapping))
        spent = total_tokens(self.carried)
        return f"{spent} tokens and {retries} retries spent after it are kept in the usage"


def _records_failure(values: Mapping[str, Any]) -> bool:
    return _FAILURE.search(json.dumps(values, default=str, ensure_ascii=False)) is not None


def _usage_delta(after: Mapping[str, Any], before: Mapping[str, Any]) -> dict[str, Any]:
    """Per-role numeric counters of `after` less those of `before` (the run total `total_tokens` left out: the
    resumed run's `finalize` counts it again)."""
    out: dict[str, Any] = {}
    for role, counters in after.items():
        if not isinstance(counters, Mapping):
            continue
        earlier = before.get(role) if isinstance(before.get(role), Mapping) else {}
        diff = {k: v - earlier.get(k, 0) for k, v in counters.items()  # type: ignore[union-attr]
                if isinstance(v, int | float) and not isinstance(v, bool) and v != earlier.get(k, 0)}  # type: ignore[union-attr]
        if diff:
            out[role] = diff
    return out


def _branch(snapshots: Iterable[Any]) -> list[Any]:
    """The thread's current branch, oldest first: the latest checkpoint and its ancestors (a thread forked by an
    earlier resume also holds the abandoned branch's checkpoints)."""
    by_id = {s.config["configurable"]["checkpoint_id"]: s for s in snapshots}
    if not by_id:
        return []
    latest = max(by_id.values(), key=lambda s: s.config["configurable"]["checkpoint_id"])
    chain, seen = [latest], {latest.config["configurable"]["checkpoint_id"]}
    while chain[-1].parent_config is not None:
        parent = by_id.get(chain[-1].parent_config["configurable"].get("checkpoint_id"))
        if parent is None or parent.config["configurable"]["checkpoint_id"] in seen:
            break
        seen.add(parent.config["configurable"]["checkpoint_id"])
        chain.append(parent)
    return chain[::-1]


def find_retry_point(snapshots: Iterable[Any]) -> RetryPoint | None:
    """The `RetryPoint` of a thread whose latest state is a run ended by a transport error (None otherwise, or
    when no checkpoint before the failure is kept, e.g. a compacted thread)."""
    branch = _branch(snapshots)
    if not branch:
        return None
    final = branch[-1].values
    kind = final.get("error_kind")
    if final.get("status") != "error" or kind not in TRANSPORT_KINDS or branch[-1].next:
        return None
    first = next((i for i, s in enumerate(branch) if _records_failure(s.values)), None)
    if not first:  # none (the reason is not in the state), or already in the first checkpoint
        return None
    before = branch[first - 1]
    carried = _usage_delta(final.get(USAGE_KEY) or {}, before.values.get(USAGE_KEY) or {})
    return RetryPoint(config=before.config, kind=str(kind), reason=str(final.get("reason") or ""), carried=carried)


def retry_point(graph: Any, config: RunnableConfig) -> RetryPoint | None:
    """`find_retry_point` over the thread of `config` (a graph compiled with a checkpointer)."""
    return find_retry_point(graph.get_state_history(config))


async def aretry_point(graph: Any, config: RunnableConfig) -> RetryPoint | None:
    """`retry_point` for asynchronous checkpointers."""
    return find_retry_point([s async for s in graph.aget_state_history(config)])
