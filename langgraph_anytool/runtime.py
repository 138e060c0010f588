"""What a compiled graph's nodes share: build-time dependencies, per-run settings and run-scoped signals."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from langgraph.runtime import Runtime

from .catalog import Catalog
from .config import ROLES, AnyToolConfig, ConfigError
from .context import context_values, resolve_settings
from .models.endpoint import Endpoints
from .models.guard import CallGuard, RetryBudget, RetryPolicy, UsageMeter
from .models.llm import ModelNotConfiguredError, ModelSet, RoleUsage, total_tokens
from .models.profiles import model_name, profile_for
from .paper_prompts import PromptBook, anytool_book

if TYPE_CHECKING:
    from .state import RunTally
    from .tools.pipeline import ApiExecutor


# Runs whose signals are kept at once; the least recently used run's entries go first. A run that finishes
# forgets its own; this bound is what keeps crashed runs (which never reach `finalize`) from piling up.
MAX_TRACKED_RUNS = 512


class RunSignals:
    """Run-scoped, in-process signals that the sequential phases share through the process, not through state.

    - the budget tallies: tokens and USD spent so far in the run, across all branches, and when the run started
      (wall-clock epoch seconds), checked against the budgets (`Deps.budget_stop`);
    - the roles whose endpoint refused `tools` in this run: they go on in text mode (`Action:` lines) for the rest
      of the run (after a resume the first refused call finds this out again).
    - the retry tally: model-call retries spent so far in the run (capped by `max_retries_per_run`, see guard.py).

    The retriever's parallel agent steps do not read live signals for what their siblings do (bulk-synchronous,
    see nodes/dispatch.py): the pool, the stop signal (`solvable_round`) and the budget tallies they check are the
    dispatcher's snapshot in their `Send` payload plus their own step's effects, so that which sibling's reply
    arrives first (wall-clock timing) cannot change what another one sees. The sequential solver and judge check
    the live tallies.

    Not checkpointed: the graph re-derives them from state (`usage`, `started_at`) at every dispatch, so a resumed
    run starts from the checkpoint's values. At most `max_runs` runs are tracked.
    """

    def __init__(self, max_runs: int = MAX_TRACKED_RUNS) -> None:
        self._lock = threading.Lock()
        self._max_runs = max_runs
        self._runs: OrderedDict[str, _RunEntry] = OrderedDict()

    def _entry(self, run_key: str) -> _RunEntry:
        """The run's entry (created on first use), marked most recently used. Call with the lock held."""
        entry = self._runs.get(run_key)
        if entry is None:
            entry = self._runs[run_key] = _RunEntry()
            while len(self._runs) > self._max_runs:
                self._runs.popitem(last=False)
        else:
            self._runs.move_to_end(run_key)
        return entry

    def tracked_runs(self) -> int:
        with self._lock:
            return len(self._runs)

    # the tallies (tokens, cost in USD, retries): seeded from checkpointed usage (never lowered), added to per call
    def _seed(self, run_key: str, name: str, value: float) -> None:
        with self._lock:
            tallies = self._entry(run_key).tallies
            tallies[name] = max(tallies.get(name, 0), value)

    def _add(self, run_key: str, name: str, value: float) -> float:
        with self._lock:
            tallies = self._entry(run_key).tallies
            tallies[name] = tallies.get(name, 0) + value
            return tallies[name]

    def _get(self, run_key: str, name: str) -> float:
        with self._lock:
            return self._entry(run_key).tallies.get(name, 0)

    def seed_tokens(self, run_key: str, tokens: int) -> None:
        self._seed(run_key, "tokens", tokens)

    def add_tokens(self, run_key: str, tokens: int) -> int:
        return int(self._add(run_key, "tokens", tokens))

    def tokens(self, run_key: str) -> int:
        return int(self._get(run_key, "tokens"))

    def seed_cost(self, run_key: str, cost: float) -> None:
        self._seed(run_key, "cost", cost)

    def add_cost(self, run_key: str, cost: float) -> float:
        return float(self._add(run_key, "cost", cost))

    def cost(self, run_key: str) -> float:
        return float(self._get(run_key, "cost"))

    def seed_start(self, run_key: str, started_at: float | None) -> None:
        """The run's start (epoch seconds, from its state): the earliest one seen counts."""
        if started_at is None:
            return
        with self._lock:
            entry = self._entry(run_key)
            entry.started_at = started_at if entry.started_at is None else min(entry.started_at, started_at)

    def started_at(self, run_key: str) -> float | None:
        with self._lock:
            return self._entry(run_key).started_at

    def use_text_mode(self, run_key: str, role: str) -> None:
        """Remember that `role`'s endpoint refused `tools` in this run."""
        with self._lock:
            self._entry(run_key).text_roles.add(role)

    def in_text_mode(self, run_key: str, role: str) -> bool:
        with self._lock:
            return role in self._entry(run_key).text_roles

    def take_retry(self, run_key: str, cap: int, budget: RetryBudget | None = None) -> str | None:
        """Grant one model-call retry of the run: None when granted, else the cap that refused it ("run" when the
        run's `cap` is spent, "batch" when the shared `budget` is)."""
        with self._lock:
            tallies = self._entry(run_key).tallies
            if tallies.get("retries", 0) >= cap:
                return "run"
            if budget is not None and not budget.take():
                return "batch"
            tallies["retries"] = tallies.get("retries", 0) + 1
            return None

    def take_timeout_retry(self, run_key: str, cap: int) -> str | None:
        """Grant one retry of a timed-out model call of the run: None when granted, else "timeout" (the run's
        `max_timeout_retries` is spent)."""
        with self._lock:
            tallies = self._entry(run_key).tallies
            if tallies.get("timeout_retries", 0) >= cap:
                return "timeout"
            tallies["timeout_retries"] = tallies.get("timeout_retries", 0) + 1
            return None

    def seed_retries(self, run_key: str, retries: int) -> None:
        self._seed(run_key, "retries", retries)

    def retries(self, run_key: str) -> int:
        return int(self._get(run_key, "retries"))

    def functions_refusal(self, run_key: str, role: str) -> FunctionsRefusal:
        """The run's memory of `role`'s provider refusing the legacy `functions=` (created on first use): once it
        holds a reason, the role's later requests of the run go with `tools=` at once."""
        with self._lock:
            return self._entry(run_key).refusals.setdefault(role, FunctionsRefusal())

    def forget(self, run_key: str) -> None:
        with self._lock:
            self._runs.pop(run_key, None)


@dataclass
class FunctionsRefusal:
    """A provider's refusal of the legacy `functions=` parameter, remembered (its reason; None: not refused). Shared
    by the requests it covers: the judge's checks (`nodes/judge/tooleval_request.ToolEvalRequest`) and, for a run,
    each role of `paper(prompts_from)`'s retriever agents and solvability check."""

    reason: str | None = None
    lock: threading.Lock = field(default_factory=threading.Lock, compare=False, repr=False)

    def refuse(self, reason: str) -> bool:
        """Remember the refusal (the first reason is kept); True the first time only (it is recorded once)."""
        with self.lock:
            first = self.reason is None
            self.reason = self.reason or reason
            return first


@dataclass
class _RunEntry:
    tallies: dict[str, float] = field(default_factory=dict)  # "tokens", "cost" (USD), "retries", "timeout_retries"
    started_at: float | None = None  # epoch seconds (None: not seen yet, so no wall-time check)
    text_roles: set[str] = field(default_factory=set)  # roles that fell back to text mode (the endpoint refused tools)
    refusals: dict[str, FunctionsRefusal] = field(default_factory=dict)  # role → its provider's refusal of functions=


@dataclass(frozen=True)
class Deps:
    """Everything a node needs besides its state; captured by the node factories.

    `config` and `models` are the build-time defaults; a node calls `for_run(runtime.context)` to get the
    settings and models of the run it serves (the run-time context overrides them field by field).
    `retry_budget`, when given, caps the model-call retries of every run of the graph together (e.g. a batch).
    """

    catalog: Catalog
    models: ModelSet
    executor: ApiExecutor
    config: AnyToolConfig
    signals: RunSignals = field(default_factory=RunSignals)
    retry_budget: RetryBudget | None = None
    endpoints: Endpoints = field(default_factory=Endpoints, compare=False)  # what the models' servers said
    _model_sets: dict[Any, ModelSet] = field(default_factory=dict, compare=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, compare=False, repr=False)

    def for_run(self, context: Any) -> Deps:
        """These dependencies with one run's settings and models (self when the context sets nothing)."""
        values = context_values(context)
        if not values:
            return self
        settings = resolve_settings(self.config, values)
        model, models = values.get("model"), dict(values.get("models") or {})
        model_set = self.models
        if model is not None or models:
            key = (model, tuple(sorted(models.items())))
            with self._lock:
                if key not in self._model_sets:
                    self._model_sets[key] = self.models.with_overrides(
                        *offline_resolved(model, models, self.catalog, env=False), catalog=self.catalog)
                model_set = self._model_sets[key]
        return replace(self, config=settings, models=model_set, _model_sets=self._model_sets, _lock=self._lock)

    def meter(self, run_key: str, tally: RunTally | None = None,
              own: Callable[[], int] | None = None) -> Callable[[RoleUsage], None]:
        """The `on_usage` callback of a model call made for `run_key`: adds its usage to the run's tallies, and
        carries the run's `guard` (so `call_role` retries under the run's settings and caps). `tally` and `own`:
        a parallel agent step's snapshot (with its `share` of the token budget) and its own tokens so far."""

        def add(used: RoleUsage) -> None:
            self.signals.add_tokens(run_key, int(used.get("input_tokens", 0)) + int(used.get("output_tokens", 0)))
            if used.get("cost_usd"):
                self.signals.add_cost(run_key, float(used.get("cost_usd", 0.0)))

        return UsageMeter(add, self.guard(run_key, tally, own))

    def guard(self, run_key: str, tally: RunTally | None = None, own: Callable[[], int] | None = None) -> CallGuard:
        """The retry guard of a model call made for `run_key`: the run's policy (`model_retries`,
        `retry_max_wait`), its retry cap (`max_retries_per_run`), the shared `retry_budget`, and the run's wall-time
        budget (`max_seconds`: waits are cut to the time left, and no retry starts once it is spent)."""
        cfg = self.config
        policy = RetryPolicy(retries=cfg.model_retries, max_wait=cfg.retry_max_wait)
        signals, budget, cap = self.signals, self.retry_budget, cfg.max_retries_per_run

        def time_left() -> float | None:  # seconds of the run's `max_seconds` left (None: no wall-time budget)
            started = signals.started_at(run_key)
            return None if cfg.max_seconds is None or started is None else started + cfg.max_seconds - time.time()

        def gate() -> str | None:
            left = time_left()
            if left is not None and left <= 0:
                return "wall-time"  # no retry once the run's time is spent
            return signals.take_retry(run_key, cap, budget)

        def sleep(seconds: float) -> None:  # a wait never outlasts the run's wall-time budget
            left = time_left()
            time.sleep(seconds if left is None else max(0.0, min(seconds, left)))

        def room() -> int | None:  # tokens the budget has left for the next call, as this caller sees it
            if tally is not None and own is not None:
                # an agent step: its view (the tally at dispatch and its own usage), and with `share` its part of
                # what was left at dispatch (siblings never see each other's spending, so each keeps to its share
                # and together they keep to the budget)
                if "share" in tally:
                    return int(tally["share"]) - own()
                return cfg.token_budget - int(tally["tokens"]) - own()
            return cfg.token_budget - signals.tokens(run_key)

        def admit(tokens: int) -> str | None:  # the token budget counts the call about to be made
            left = room()
            if left is None or tokens <= left:
                return None
            if tally is not None and own is not None:
                return (f"token budget of {cfg.token_budget} tokens reached: the next call would take about "
                        f"{tokens} tokens (estimated: its prompt and its reply) and this agent step has "
                        f"{max(0, left)} left (the run had spent {int(tally['tokens'])} at dispatch)")
            return (f"token budget of {cfg.token_budget} tokens reached: the next call would take about {tokens} "
                    f"tokens (estimated: its prompt and its reply) and {cfg.token_budget - left} are spent")

        def deadline() -> float | None:  # the run's hard wall-clock limit (`max_run_seconds`), epoch seconds
            started = signals.started_at(run_key)
            return None if cfg.max_run_seconds is None or started is None else started + cfg.max_run_seconds

        def timeout_gate() -> str | None:
            return signals.take_timeout_retry(run_key, cfg.max_timeout_retries)

        return CallGuard(policy=policy, gate=gate, sleep=sleep, admit=admit, room=room,
                         token_budget=cfg.token_budget, endpoints=self.endpoints if cfg.probe_endpoints else None,
                         stream_local=cfg.stream_local, stall_timeout=cfg.stall_timeout, deadline=deadline,
                         timeout_gate=timeout_gate, reply_caps=cfg.reply_caps)

    def sync_run(self, run_key: str, state: Mapping[str, Any]) -> None:
        """Seed the run's tallies from its checkpointed state: the budgets' (tokens, USD, start time) and the
        retries spent (so that a resumed run keeps counting them)."""
        usage = state.get("usage") or {}
        self.signals.seed_tokens(run_key, total_tokens(usage))
        self.signals.seed_cost(run_key, total_cost(usage))
        self.signals.seed_start(run_key, state.get("started_at"))
        self.signals.seed_retries(run_key, sum(int(v.get("retries", 0)) for v in usage.values()
                                               if isinstance(v, Mapping)))

    @property
    def paper_prompts(self) -> PromptBook | None:
        """The authors' prompts read from `config.prompts_from` (a clone of dyabel/AnyTool), or None: ours."""
        path = self.config.prompts_from
        return anytool_book(path) if path else None

    def budget_stop(self, run_key: str, tally: RunTally | None = None) -> BudgetStop | None:
        """Which budget of the run is spent (tokens, then cost, then wall time), with the figures; None if none.

        `tally`: the tokens and USD to check (a parallel agent step's: the dispatcher's snapshot plus its own
        usage); by default the run's live tallies. Wall time is always the clock's."""
        cfg = self.config
        over = self.time_limit(run_key)
        if over is not None:
            return over
        tokens = self.signals.tokens(run_key) if tally is None else int(tally["tokens"])
        if tokens >= cfg.token_budget:
            return BudgetStop("tokens", f"token budget of {cfg.token_budget} tokens reached ({tokens} spent)")
        if cfg.max_cost is not None:
            cost = self.signals.cost(run_key) if tally is None else float(tally["cost"])
            if cost >= cfg.max_cost:
                return BudgetStop("cost", f"cost budget of ${cfg.max_cost:g} reached (${cost:.4f} spent)")
        if cfg.max_seconds is not None:
            started = self.signals.started_at(run_key)
            if started is not None and (elapsed := time.time() - started) >= cfg.max_seconds:
                return BudgetStop("wall_time", f"wall-time budget of {cfg.max_seconds:g} s reached "
                                               f"({elapsed:.1f} s since the run started)")
        return None

    def time_limit(self, run_key: str) -> BudgetStop | None:
        """The run's hard wall-clock limit (`max_run_seconds`) when it has passed (kind "time_limit"), else None."""
        limit = self.config.max_run_seconds
        started = self.signals.started_at(run_key)
        if limit is None or started is None or (elapsed := time.time() - started) < limit:
            return None
        return BudgetStop("time_limit", f"time limit of {limit:g} s reached ({elapsed:.1f} s since the run started; "
                                        "max_run_seconds)")

    def over_budget(self, run_key: str, tally: RunTally | None = None) -> bool:
        """Whether any budget of the run (tokens, `max_cost`, `max_seconds`) is spent: no further model call."""
        return self.budget_stop(run_key, tally) is not None

    def tally(self, run_key: str) -> RunTally:
        """The run's live budget tallies (tokens, USD), e.g. the snapshot a dispatcher hands its agent steps."""
        return {"tokens": self.signals.tokens(run_key), "cost": self.signals.cost(run_key)}

    def check_prices(self) -> None:
        """With `max_cost` set, every role's model must have a known price (see `check_prices`)."""
        check_prices(self.models, self.config)


@dataclass(frozen=True)
class BudgetStop:
    """A spent budget: which one (`kind`: "tokens" | "cost" | "wall_time"; "time_limit" for the run's hard limit,
    `max_run_seconds`, which ends it with status `time_limit`) and a reason with the figures."""

    kind: str
    reason: str


def offline_resolved(model: Any, models: Mapping[str, Any], catalog: Any, *,
                     env: bool = True) -> tuple[Any, dict[str, Any]]:
    """`model` (else, with `env`, $ANYTOOL_MODEL) and per-role `models` with each "offline" replaced by the
    offline policy model over `catalog` (models/llm.py does not know offline/; the runtime wires it)."""
    import os

    from langgraph_anytool.models.llm import OFFLINE

    def one(spec: Any) -> Any:
        if isinstance(spec, str) and spec.strip() == OFFLINE:
            from langgraph_anytool.offline import OfflinePolicyModel

            return OfflinePolicyModel(catalog=catalog)
        return spec

    spec = model if model is not None or not env else (os.environ.get("ANYTOOL_MODEL") or None)
    return one(spec), {role: one(m) for role, m in models.items()}


def resolve_models(model: Any, models: Mapping[str, Any] | None, config: AnyToolConfig, catalog: Catalog, *,
                   defer: bool = False) -> ModelSet:
    """The models of a graph built with `config`: `model` and per-role `models` over `config.models`, with the
    config's request timeout; with `max_cost` set, every role's price must be known (`check_prices`). `defer`: a
    model that cannot be made now (a missing key) is reported by the first run that needs it (`ModelSet`)."""
    model, role_models = offline_resolved(model, {**config.models, **dict(models or {})}, catalog)
    try:
        model_set = ModelSet.resolve(model, role_models, catalog=catalog,
                                     request_timeout=config.request_timeout, defer=defer)
    except ModelNotConfiguredError as exc:  # the user's call and this line, not the resolver's frames
        raise exc.with_traceback(None) from None
    check_prices(model_set, config)  # max_cost needs every role's price: fail before any call
    return model_set


def check_prices(models: ModelSet, config: AnyToolConfig) -> None:
    """With `config.max_cost` set, every role's model must have a known price; else `ConfigError` naming the model
    and how to give its price."""
    if config.max_cost is None:
        return
    for role in roles_in_use(config):
        try:
            model = models.for_role(role)
        except ModelNotConfiguredError:
            continue  # no model at all: the first call says how to configure one
        if not profile_for(model, config.model_profiles).priced:
            name = model_name(model) or f"{type(model).__name__} (no model name)"
            raise ConfigError(
                f"max_cost is set (${config.max_cost:g} per query) but the price of model {name!r} (role {role!r}) "
                f"is unknown, so its cost cannot be counted; give it with model_profiles, e.g. --set "
                f"'model_profiles={{\"{name}\": {{\"input_price\": 0.15, \"output_price\": 0.6}}}}' (USD per 1M "
                "input / output tokens; a JSON file of such entries works too), or unset max_cost")


def total_cost(usage: Mapping[str, Any]) -> float:
    """USD over every role of a usage dict (calls without a known price count 0)."""
    return sum(float(v.get("cost_usd", 0.0)) for v in usage.values() if isinstance(v, Mapping))


def roles_in_use(config: AnyToolConfig) -> list[str]:
    """The model roles a run with `config` may call and meters (the switched-off abilities' roles left out; the
    LLM executor's "simulator" plays the APIs and is not counted in the run's budgets)."""
    skip = {"simulator"} | (set() if config.solver == "umi" else {"planner", "caller", "summarizer"})
    skip |= {"solver"} if config.solver == "umi" else set()
    skip |= set() if config.route_tools else {"router"}
    skip |= set() if config.plan_only else {"outline"}
    if config.retriever in ("reference", "search"):
        skip |= {"meta", "category", "tool", "solvable"}
    return [r for r in ROLES if r not in skip]


def per_run(make: Callable[[Deps], Callable[[Any], Any]], base: Deps) -> Any:
    """A graph node (or edge) built per run: `make(deps)` with the run's settings, called on the state."""

    def node(state: Any, runtime: Runtime[Any]) -> Any:
        return make(base.for_run(runtime.context))(state)

    node.__name__ = getattr(make, "__name__", "node").removeprefix("make_")
    return node
