"""`AnyToolConfig`: limits, switches and per-role model choices of a run, validated on construction.

Which defaults are the paper's (AnyTool, Du et al. 2024) and which are ours:
- paper: `max_api_pool=64` (Table 6), `max_tools_per_agent=5` (Table 7), `max_api_calls=10` per solve and
  `token_budget=200_000` across all roles (Appendix A.1), DFSDT width 2 and `max_depth=12` counted as ToolLLM's
  `single_chain_max_step` (tree nodes: a thought, and an action plus its input per call), reflection until the
  budget is spent (the paper states no cap; Table 12 averages 5.1-5.7 reflections);
- ours: `max_reflections=50` (a safety cap far above the paper's averages), `agent_step_limit=20`,
  `seed_with_search=True` (the meta-agent sees the categories our search ranks highest). `AnyToolConfig.paper()`
  switches `seed_with_search` off; `small_category_shortcut` (a category with at most `max_tools_per_agent` tools
  gets its tool agent without a model call) is the authors' (`scripts/main.py` `Category_Agent.category_search`,
  `leaf_tool_number=5`) and stays on in both.

The authors' loop (dyabel/AnyTool `scripts/main.py`, `anytool/verifier.py`, `anytool/rapidapi.py`,
`toolbench/inference/Algorithms/DFS.py`) differs from ours in thirteen places, each a setting; `paper()` takes the
authors' value (`PAPER_SETTINGS`):
- `solvable_check`: "after_add" runs the solvability check by itself after every `add_apis_into_api_pool`
  (main.py `Tool_Agent.add_apis_into_api_pool`); ours ("on_request") leaves it to the agent's own call;
- `judge`: "anytool" is the authors' in-loop judge (main.py: the exclusion words, then `verifier.py
  check_solved_toolbench`: `judge_samples` ToolEval samples, passed >= failed); ours ("tooleval") is one sample;
- `call_limit`: "model_queries" counts the solver's model queries (DFS.py `query_count` against
  `max_query_count`; `max_solver_queries`, 10 as `rapidapi.py run_single_task` passes it), appends a note asking
  for Finish and goes on; ours ("api_calls") stops at `max_api_calls` API calls and offers one Finish-only turn;
- `reflect_when_pool_full`: False stops reflecting once the pool (failed APIs pruned) is full (main.py: `if
  len(global_api_list) >= max_api_number: break`); ours (True) reflects on;
- `failure_reason_to`: "reactivated" gives the failure reason to the re-activated agents only (main.py: `agent.
  failed_reason` of `agents_to_resume`); ours ("unfinished") to every unfinished agent;
- `round_gate`: "solvability_check" checks the pool after every re-activation round and solves only a pool
  judged solvable (or full), changed or not (main.py: `if not stop: check_if_request_solvable()`, then `if stop
  ...: solve_given_api_main`, else `failed_reason = status`); ours ("pool_changed") solves a changed pool;
- `prune_match`: "substring" prunes every pooled API whose function name occurs in the failure reason's text
  (main.py: `if standardized_api_name in str(failed_reason)`); ours ("whole_word") matches whole names;
- `failure_reason_form`: "verbatim" tells the agents what main.py's `failed_reason` holds (the Finish arguments
  as a whole after a give-up, the drawn judge sample's reason, the solvability status); ours ("summary") a reason;
- `small_category_finished`: False leaves a small category's agent unfinished, so that a re-activation finishes
  it without a model call (main.py `Category_Agent.category_search` returns without `finish_search`,
  `resume_search` ends at once); ours (True) finishes it when it makes its tool agent;
- `keep_diversity_prompt`: False sends DFSDT's diversity prompt with the one query it precedes (DFS.py marks it
  `"valid": False` after that query); ours (True) keeps it in the chain below it;
- `max_turns_without_call`: 21, one more than `agent_step_limit` (20), so replies without a function call never
  end a retriever agent's activation (nor a solve, which `max_depth` bounds first): main.py answers each with its nudge and goes on, up to 20 steps per
  activation (`for i in range(20)` in `Main_Search_Agent.assign_main`, `Category_Agent.category_search` and
  `resume_search`, `Tool_Agent.tool_search`); ours (3) ends a model that does not call functions early;
- `agent_functions`: "authors" offers each retriever agent what main.py offers it (the category agent no
  `get_tools_in_category`, the tool agent no `get_apis_in_tool` / `get_api_details`: commented out there);
  ours ("ours") keeps Table 8's browsing functions;
- `reply_caps`: "local" sends the retriever agents' and the solvability check's calls to a hosted endpoint
  without a reply limit, as the authors' `openai_utils.py call_gpt` sends none (the solver keeps 1024, as their
  `chatgpt_function_model.py chat_completion_request`), and keeps one where a local server's window needs it;
  ours ("always") caps every call (`models/fitting.py`).
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, Literal, get_args

from .models.profiles import ProfileError, check_overrides, load_overrides

SolverMode = Literal["dfsdt", "cot", "umi"]
UmiPrompts = Literal["default", "alpha_umi"]
ExecutionKind = Literal["auto", "local", "template", "http", "virtual", "llm"]
RetrieverMode = Literal["hierarchical", "flat", "search", "reference"]
ReflectionScope = Literal["all", "tool", "tool+category"]
Profile = Literal["default", "paper"]
SolvableCheck = Literal["on_request", "after_add"]
JudgeMode = Literal["tooleval", "anytool"]
CallLimit = Literal["api_calls", "model_queries"]
ReasonTo = Literal["unfinished", "reactivated"]
RoundGate = Literal["pool_changed", "solvability_check"]
PruneMatch = Literal["whole_word", "substring"]
ReasonForm = Literal["summary", "verbatim"]
ReplyCaps = Literal["always", "local"]
AgentFunctions = Literal["ours", "authors"]

ROLES: tuple[str, ...] = (
    "meta", "category", "tool", "solvable", "solver", "planner", "caller", "summarizer", "judge", "simulator",
    "router", "outline",
)

# the roles that call functions (and can write them as text instead): the solver, α-UMi's caller, the retriever agents
TEXT_MODE_ROLES: tuple[str, ...] = ("solver", "caller", "meta", "category", "tool")

_CHOICES: Mapping[str, tuple[str, ...]] = {
    "solver": get_args(SolverMode),
    "execution": get_args(ExecutionKind),
    "retriever": get_args(RetrieverMode),
    "reflection_scope": get_args(ReflectionScope),
    "solvable_check": get_args(SolvableCheck),
    "judge": get_args(JudgeMode),
    "call_limit": get_args(CallLimit),
    "failure_reason_to": get_args(ReasonTo),
    "round_gate": get_args(RoundGate),
    "prune_match": get_args(PruneMatch),
    "failure_reason_form": get_args(ReasonForm),
    "reply_caps": get_args(ReplyCaps),
    "agent_functions": get_args(AgentFunctions),
}

# `AnyToolConfig.paper()`: our addition (search hints) off, and the authors' loop in the thirteen places it differs
# from ours (see the module docstring; docs/configuration.md has the table)
PAPER_SETTINGS: Mapping[str, Any] = {
    "seed_with_search": False, "small_category_finished": False,
    "solvable_check": "after_add", "judge": "anytool", "call_limit": "model_queries",
    "reflect_when_pool_full": False, "failure_reason_to": "reactivated",
    "round_gate": "solvability_check", "prune_match": "substring", "failure_reason_form": "verbatim",
    "keep_diversity_prompt": False, "reply_caps": "local", "max_turns_without_call": 21,
    "agent_functions": "authors",
}

_ZERO_ALLOWED = frozenset({"max_reflections", "model_retries", "max_retries_per_run", "max_timeout_retries"})


class ConfigError(ValueError):
    """An invalid configuration value, naming the field."""


def unknown_field_message(name: str, known: list[str], what: str) -> str:
    """"unknown <what> 'x' (did you mean 'y'?); fields are a, b, ..." (the suggestion only when one is close)."""
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"unknown {what} {name!r}{hint}; fields are {', '.join(known)}"


# settings counted in seconds, each added to a clock (a deadline, a socket or lock timeout): beyond `MAX_SECONDS`
# they would overflow a timestamp or a timeout ("timestamp out of range", OverflowError) at the first call
SECONDS_FIELDS = frozenset({"max_seconds", "retry_max_wait", "request_timeout", "stall_timeout", "max_run_seconds"})
MAX_SECONDS = 1e9


@dataclass(frozen=True)
class AnyToolConfig:
    """Limits and switches of one AnyTool run (see the module docstring for which defaults are the paper's)."""

    max_api_pool: int = 64
    max_tools_per_agent: int = 5
    # a category with ≤ max_tools_per_agent tools: its tool agent without a model call (the authors' main.py
    # `Category_Agent.category_search`, `leaf_tool_number=5`)
    small_category_shortcut: bool = True
    # the shortcut's category agent is finished at once (ours); False (authors): it stays unfinished, and a
    # re-activation finishes it without a model call (main.py `Category_Agent.resume_search`)
    small_category_finished: bool = True
    agent_step_limit: int = 20  # model calls per agent activation
    max_concurrency: int = 8  # agent steps run per superstep
    retriever: RetrieverMode = "hierarchical"  # flat: one agent, no hierarchy (Table 3); search; reference
    solver: SolverMode = "dfsdt"
    dfsdt_width: int = 2  # children tried per tree node before backtracking further up
    # DFSDT's diversity prompt (a node's earlier children, "do something different") stays in the chain below it
    # (ours); False (authors' DFS.py, ToolLLM's): it goes with the one query it precedes (`"valid": False` after)
    keep_diversity_prompt: bool = True
    max_depth: int = 12  # chain length in ToolLLM tree nodes (its single_chain_max_step) before a forced backtrack
    max_api_calls: int = 10  # per solve (call_limit "api_calls"): a hard stop, followed by one Finish-only turn
    # "api_calls" (ours): the hard stop above; "model_queries" (the authors' DFS.py): once the solver has made
    # `max_solver_queries` model queries, every further turn is told to call Finish (answer, or give up without
    # restart) and the search goes on until it does (or the tree or a budget ends it). A query is one model
    # turn of the solver (DFS.py `self.llm.parse`), for α-UMi one step: the planner and its caller or summarizer
    # (α-UMi's `collab_agent_model.py parse` makes both inside one query).
    call_limit: CallLimit = "api_calls"
    max_solver_queries: int = 10  # the authors' anytool/rapidapi.py `run_single_task`: `max_query_count=10`
    # malformed model turns in a row (see faults.py) that end a solver attempt or a retriever agent's activation
    max_malformed_turns: int = 3
    max_reflections: int = 50
    reflection_scope: ReflectionScope = "all"  # which levels reflection may re-activate (Table 4)
    reflect_when_pool_full: bool = True  # False (authors): no reflection once the pool, failed APIs pruned, is full
    failure_reason_to: ReasonTo = "unfinished"  # who reads the failure reason: every unfinished agent, or only
    # the re-activated ones (authors)
    solvable_check: SolvableCheck = "on_request"  # "after_add" (authors): checked after every pool addition
    # after re-activated agents end: "pool_changed" (ours) solves a changed pool, else re-activates the next level
    # up; "solvability_check" (authors' main.py) checks the pool unless it was judged solvable this round, solves
    # it when judged solvable or full (changed or not), else re-activates the next level up with the check's reason
    round_gate: RoundGate = "pool_changed"
    # which pooled APIs a failure reason prunes: "whole_word" (ours: function or API names as whole words);
    # "substring" (authors' main.py: every function name that occurs anywhere in the reason's text)
    prune_match: PruneMatch = "whole_word"
    # the reply limit sent with each call: "always" (ours: the role's `max_tokens`, models/fitting.py); "local"
    # (the authors': none on a hosted endpoint, as their calls send none; kept for a loopback server, whose window
    # needs it, for a model that sets its own, and under a token budget)
    reply_caps: ReplyCaps = "always"
    # the functions each retriever agent is offered: "ours" (AnyTool Table 8, with the browsing functions the
    # authors commented out); "authors" (what scripts/main.py offers: `nodes/agents/roles.py AUTHORS_OFFER`)
    agent_functions: AgentFunctions = "ours"
    # what re-activated agents read: "summary" (ours: the judge's or the solver's reason); "verbatim" (authors'
    # main.py `failed_reason`: the Finish arguments as a whole when the solver gave up or the answer holds an
    # exclusion word, the reason of the judge sample `check_solved_toolbench` draws, the solvability status)
    failure_reason_form: ReasonForm = "summary"
    # the in-loop judge: "tooleval" = one ToolEval check (an Unsure is not Solved); "anytool" = the authors'
    # (an answer with an exclusion word is Unsolved; else `judge_samples` ToolEval samples, only a Solved sample
    # passes — an Unsure one fails, as in their check_solved_toolbench —, Solved when passed >= failed)
    judge: JudgeMode = "tooleval"
    judge_samples: int = 3  # judge "anytool" only: the authors' check_solved_toolbench takes 3
    token_budget: int = 200_000  # across all roles, from usage metadata
    # further per-query budgets (ours; None = no limit), checked before each model call like the token budget:
    # USD across all roles from the models' profile prices (a model without a known price is refused while it is
    # set: give its price with `model_profiles`), and wall-clock seconds since the run started (a resumed run
    # counts from its first start, kept in the state)
    max_cost: float | None = None
    max_seconds: float | None = None
    max_observation_chars: int = 2048
    search_k: int = 64  # retriever="search": the top-k APIs of our hybrid search go into the pool
    # executor when none is passed: "auto" = local for the builtin catalog, http otherwise;
    # "template" (offline simulation) is for tests and dry runs and is never chosen silently
    execution: ExecutionKind = "auto"
    seed_with_search: bool = True  # show the meta-agent the categories search ranks highest
    # abilities (issue 9; all off by default: benchmark runs keep the paper's always-retrieve, tool-only solver)
    route_tools: bool = False  # a "router" model call before retrieval: answer directly when no tool is needed
    ask_user: bool = False  # offer the solver (α-UMi: the caller) `ask_user(question)` (pauses with `interrupt`)
    batch: bool = False  # no user is present: `ask_user` is answered "no user is available" and the run goes on
    plan_only: bool = False  # outline mode: retrieve, then return a plan (`plan`) of API calls without calling any
    models: dict[str, Any] = field(default_factory=dict)  # role -> "provider:model" (strings only here)
    # roles whose model has no native function calling: calls are written as `Action:` / `Action Input:` text
    # (also chosen per role without being listed: a model whose profile says tool_calling=False, or an endpoint
    # that refuses `tools`, see nodes/solver/textmode.py)
    text_mode_roles: tuple[str, ...] = ()
    umi_prompts: UmiPrompts = "default"  # "alpha_umi": α-UMi's prompt formats (Next: caller./conclusion./give up.)
    # model name pattern -> profile fields (context_window, tool_calling, parallel_tool_calls, input_price,
    # output_price) over the table in profiles.py
    model_profiles: dict[str, Any] = field(default_factory=dict)
    # the model-call guard (guard.py): transport faults (429, 5xx, dropped connections, timeouts) are retried with
    # exponential backoff and full jitter, honouring Retry-After up to `retry_max_wait` seconds
    model_retries: int = 6  # retries of one model call (0: none)
    retry_max_wait: float = 60.0  # seconds: the longest wait before a retry
    max_retries_per_run: int = 50  # retries over all model calls of one run (0: none)
    request_timeout: float = 120.0  # seconds per request, for models made from "provider:model" strings
    # the path of the user's own clone of dyabel/AnyTool: the agents', the solvability check's, the solver's and the
    # judge's prompts are then the authors' constants, read from it with `ast` (never imported or executed; see
    # paper_prompts/anytool.py); None: our own prompts. Fixed when the graph is built.
    prompts_from: str | None = None
    # the path of the user's own clone of X-PLUG/Multi-LLM-Agent: the α-UMi solver's roles (`solver="umi"`) then
    # send the inputs and settings of its run-time pipeline (ToolBench-multiLLM `collab_agent_model.py`
    # `CollbaAgentV3`, prompts read with `ast` from its `Downstream_tasks/prompt_lib.py`; nodes/solver/umi_authors.py)
    umi_prompts_from: str | None = None
    # slow servers (guard.py): a call to a local (loopback) OpenAI-compatible server is streamed, so that a slow
    # one is waited for as long as it keeps sending and a silent one is told apart; `stall_timeout` is how long it
    # may send nothing (before its first token: reading the prompt; after it: between tokens)
    stream_local: bool = True
    stall_timeout: float = 300.0
    max_timeout_retries: int = 2  # retries of timed-out calls per run (a local server's are never sent again)
    # the hard wall-clock limit of one run (None: none): the call in flight is cut at it, the run ends with status
    # `time_limit`
    max_run_seconds: float | None = 1800.0
    # a retriever agent that replies this many times in a row without a function call finishes (end reason
    # "no_calls: ...")
    max_turns_without_call: int = 3
    probe_endpoints: bool = True  # ask a model's server for its window and token counts (endpoint.py)

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if f.type == "int":
                # 0 reflections: the paper's plain-agent ablation; 0 retries: fail on the first transport fault
                least = 0 if f.name in _ZERO_ALLOWED else 1
                if not isinstance(value, int) or isinstance(value, bool) or value < least:
                    raise ConfigError(f"AnyToolConfig.{f.name} must be an integer ≥ {least}, got {value!r}")
            elif f.type in ("float", "float | None"):
                if value is None and f.type == "float | None":
                    continue
                if not isinstance(value, int | float) or isinstance(value, bool) or not 0 < value < float("inf"):
                    raise ConfigError(f"AnyToolConfig.{f.name} must be a number > 0"
                                      + (" (or null: no limit)" if f.type == "float | None" else "")
                                      + f", got {value!r}")
                if f.name in SECONDS_FIELDS and value > MAX_SECONDS:  # a deadline or timeout past any clock
                    raise ConfigError(f"AnyToolConfig.{f.name} is a number of seconds: at most {MAX_SECONDS:g} "
                                      "(about 31 years)" + (", or null: no limit" if f.type == "float | None"
                                                            else "") + f"; got {value!r}")
                object.__setattr__(self, f.name, float(value))
            elif f.type == "bool" and not isinstance(value, bool):
                raise ConfigError(f"AnyToolConfig.{f.name} must be true or false, got {value!r}")
            elif f.name in _CHOICES and value not in _CHOICES[f.name]:
                raise ConfigError(f"AnyToolConfig.{f.name} must be one of {', '.join(_CHOICES[f.name])}, "
                                  f"got {value!r}")
        if self.prompts_from is not None:
            self._check_prompts_from()
        if self.umi_prompts_from is not None:
            self._check_umi_prompts_from()
        if not isinstance(self.models, Mapping):
            raise ConfigError("AnyToolConfig.models must map roles to 'provider:model' strings")
        object.__setattr__(self, "text_mode_roles", tuple(self.text_mode_roles))
        for role in self.text_mode_roles:
            if role not in TEXT_MODE_ROLES:
                raise ConfigError(f"AnyToolConfig.text_mode_roles: {role!r} does not call functions; "
                                  f"text mode applies to {', '.join(repr(r) for r in TEXT_MODE_ROLES)}")
        if self.umi_prompts not in ("default", "alpha_umi"):
            raise ConfigError(f"AnyToolConfig.umi_prompts must be 'default' or 'alpha_umi', got {self.umi_prompts!r}")
        try:
            checked = check_overrides(self.model_profiles, "AnyToolConfig.model_profiles")
        except ProfileError as exc:
            raise ConfigError(str(exc)) from None
        for pattern, values in checked.items():
            unknown = sorted(set(values.get("max_tokens") or {}) - set(ROLES)) \
                if isinstance(values.get("max_tokens"), Mapping) else []
            if unknown:
                raise ConfigError(f"AnyToolConfig.model_profiles[{pattern!r}].max_tokens: unknown role "
                                  f"{unknown[0]!r}; roles are {', '.join(ROLES)}")
        for role, spec in self.models.items():
            if role not in ROLES:
                raise ConfigError(f"AnyToolConfig.models: unknown role {role!r}; roles are {', '.join(ROLES)}")
            if not isinstance(spec, str):
                raise ConfigError(f"AnyToolConfig.models[{role!r}] must be a 'provider:model' string")

    def _check_prompts_from(self) -> None:
        """`prompts_from` must be a checkout of dyabel/AnyTool whose prompts all load (one line names what is wrong)."""
        from .paper_prompts import PromptSourceError, anytool_book

        value = self.prompts_from
        if isinstance(value, os.PathLike):
            value = os.fspath(value)
        if not isinstance(value, str) or not value.strip():
            raise ConfigError(f"AnyToolConfig.prompts_from must be the path of a clone of dyabel/AnyTool, got {value!r}")
        object.__setattr__(self, "prompts_from", value)
        try:
            anytool_book(value)
        except PromptSourceError as exc:
            raise ConfigError(f"AnyToolConfig.prompts_from: {exc}") from None

    def _check_umi_prompts_from(self) -> None:
        """`umi_prompts_from` must be a checkout of X-PLUG/Multi-LLM-Agent whose run-time prompts load."""
        from .paper_prompts import PromptSourceError, umi_run_book

        value = self.umi_prompts_from
        if isinstance(value, os.PathLike):
            value = os.fspath(value)
        if not isinstance(value, str) or not value.strip():
            raise ConfigError("AnyToolConfig.umi_prompts_from must be the path of a clone of X-PLUG/Multi-LLM-Agent, "
                              f"got {value!r}")
        object.__setattr__(self, "umi_prompts_from", value)
        try:
            umi_run_book(value)
        except PromptSourceError as exc:
            raise ConfigError(f"AnyToolConfig.umi_prompts_from: {exc}") from None

    @classmethod
    def paper(cls, **overrides: Any) -> AnyToolConfig:
        """The authors' setting: our search hints off and the authors' loop (`PAPER_SETTINGS`: solvability check
        after every addition and every re-activation round, their judge, the soft limit of 10 solver queries, no
        reflection on a full pool, the failure reason verbatim to the re-activated agents only, substring pruning,
        small categories' agents left unfinished)."""
        return cls(**{**PAPER_SETTINGS, **overrides})

    @classmethod
    def for_profile(cls, profile: str | None, **overrides: Any) -> AnyToolConfig:
        """`profile` "paper" → `paper()`, "default"/None → the defaults; `overrides` on top."""
        if profile in (None, "", "default"):
            return cls(**overrides)
        if profile == "paper":
            return cls.paper(**overrides)
        raise ConfigError(f"unknown profile {profile!r}; profiles are default, paper")

    def with_values(self, values: Mapping[str, Any]) -> AnyToolConfig:
        """A copy with `values` (field → value; strings from a command line or the environment are converted)."""
        names = {f.name: f for f in fields(self)}
        converted: dict[str, Any] = {}
        for key, raw in values.items():
            if key not in names:
                raise ConfigError(unknown_field_message(key, list(names), "AnyToolConfig field"))
            converted[key] = _convert(key, names[key].type, raw)
        return replace(self, **converted)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, prefix: str = "ANYTOOL_") -> AnyToolConfig:
        """The configuration from the environment: `ANYTOOL_PROFILE`, and `ANYTOOL_<FIELD>` for every field
        (e.g. ANYTOOL_MAX_API_POOL=32, ANYTOOL_EXECUTION=template). The one place environment fall-backs live."""
        return cls.layered(None, environ=environ, prefix=prefix)

    @classmethod
    def layered(cls, flags: Mapping[str, Any] | None = None, *, profile: str | None = None,
                environ: Mapping[str, str] | None = None, prefix: str = "ANYTOOL_") -> AnyToolConfig:
        """The configuration of a command: `flags` (field → value; strings are converted) over the environment's
        `ANYTOOL_<FIELD>` values over the profile's defaults. The profile is `profile` (a `--profile` flag) when
        given, else `ANYTOOL_PROFILE`, else "default". `model_profiles` merge (the flags' patterns over the
        environment's). A malformed environment value is a `ConfigError` naming the variable, even when a flag
        overrides it; a bad flag value one naming the field."""
        env_profile, env_values = env_settings(environ, prefix)
        config = cls.for_profile(profile or env_profile).with_values(env_values)
        values = dict(flags or {})
        if "model_profiles" in values and config.model_profiles:
            flagged = config.with_values({"model_profiles": values["model_profiles"]}).model_profiles
            values["model_profiles"] = {**config.model_profiles, **flagged}
        return config.with_values(values)

    def changed(self) -> dict[str, Any]:
        """The fields whose value differs from `AnyToolConfig()`'s: `AnyToolConfig(**config.changed())` is
        `config` (what a command sends on, e.g. as a served run's context)."""
        default = AnyToolConfig()
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) != getattr(default, f.name)}

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


ENV_MODEL_PROFILES = "ANYTOOL_MODEL_PROFILES"


def env_settings(environ: Mapping[str, str] | None = None,
                 prefix: str = "ANYTOOL_") -> tuple[str | None, dict[str, Any]]:
    """`(ANYTOOL_PROFILE or None, {field: value} for every ANYTOOL_<FIELD> that is set)`, each value converted and
    checked on its own: a malformed one (`ANYTOOL_MAX_API_POOL=abc`, `ANYTOOL_PROFILE=bogus`) is a `ConfigError`
    naming the variable. `models` has no variable (a mapping; per-role models come from the command line)."""
    env = os.environ if environ is None else environ
    profile = env.get(f"{prefix}PROFILE")
    if profile is not None and profile.strip() not in ("", "default", "paper"):
        raise ConfigError(f"{prefix}PROFILE={_shown(profile)}: unknown profile; profiles are default, paper")
    base = AnyToolConfig()
    values: dict[str, Any] = {}
    for f in fields(AnyToolConfig):
        var = f"{prefix}{f.name.upper()}"
        if f.name == "models" or var not in env:
            continue
        try:  # a malformed value is an error naming the variable, never ignored
            values[f.name] = _convert(f.name, f.type, env[var])
            base.with_values({f.name: values[f.name]})
        except ConfigError as exc:
            raise ConfigError(f"{var}={_shown(env[var])}: {exc}") from None
    return (profile.strip() or None) if profile is not None else None, values


def env_note(environ: Mapping[str, str] | None = None) -> str:
    """A note naming the `ANYTOOL_PROFILE` / `ANYTOOL_<FIELD>` variables that a command's settings take ("" when
    none is set)."""
    profile, values = env_settings(environ)
    names = ([f"ANYTOOL_PROFILE={profile}"] if profile else []) + [f"ANYTOOL_{k.upper()}" for k in values]
    return (f"settings from the environment: {', '.join(names)} (command-line options take precedence)"
            if names else "")


def _shown(raw: str, limit: int = 60) -> str:
    from .text import shorten

    return repr(shorten(raw, limit + 1))


def env_model_profiles(environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """`ANYTOOL_MODEL_PROFILES` (a JSON object of pattern → profile fields, or the path of a JSON file holding one),
    which the command line applies under its `--set model_profiles=...`; {} when unset. A malformed value, a
    missing file or a bad field is a `ConfigError` naming the variable."""
    env = os.environ if environ is None else environ
    raw = env.get(ENV_MODEL_PROFILES, "")
    if not raw.strip():
        return {}
    try:
        value = _convert("model_profiles", "dict[str, Any]", raw)
        check_overrides(value, ENV_MODEL_PROFILES)
    except (ConfigError, ProfileError) as exc:
        detail = str(exc).removeprefix("AnyToolConfig.model_profiles: ")
        raise ConfigError(f"{ENV_MODEL_PROFILES}={_shown(raw)}: {detail}") from None
    return dict(value)


def _convert(name: str, type_: Any, raw: Any) -> Any:
    """A field value from a string (or the value itself when it is not a string)."""
    if not isinstance(raw, str):
        return raw
    text = raw.strip()
    if type_ == "int":
        try:
            return int(text)
        except ValueError:
            raise ConfigError(f"AnyToolConfig.{name} must be an integer, got {raw!r}") from None
    if type_ == "str | None":
        return None if text.lower() in ("", "none", "null", "off") else text
    if type_ in ("float", "float | None"):
        if type_ == "float | None" and text.lower() in ("", "none", "null", "off"):
            return None
        try:
            return float(text)
        except ValueError:
            raise ConfigError(f"AnyToolConfig.{name} must be a number, got {raw!r}") from None
    if type_ == "bool":
        low = text.lower()
        if low in ("1", "true", "yes", "on"):
            return True
        if low in ("0", "false", "no", "off"):
            return False
        raise ConfigError(f"AnyToolConfig.{name} must be true or false, got {raw!r}")
    if isinstance(type_, str) and type_.startswith("tuple"):  # a comma-separated list
        return tuple(part.strip() for part in text.split(",") if part.strip())
    if name == "models":  # a JSON object of role → "provider:model" (`--set 'models={"judge": "openai:gpt-4o"}'`)
        import json

        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"AnyToolConfig.models must be a JSON object of role → 'provider:model', e.g. "
                              f"{{\"judge\": \"openai:gpt-4o\"}}; got {_shown(raw)} ({exc.msg})") from None
        if not isinstance(value, dict):
            raise ConfigError(f"AnyToolConfig.models must be a JSON object of role → 'provider:model', got {_shown(raw)}")
        return value
    if name == "model_profiles":  # a JSON object, or the path of a JSON file holding one
        from .sanitize.files import DataFileError, loads_json

        try:
            value = loads_json(text, source="the value") if text.startswith(("{", "[")) else load_overrides(text)
        except DataFileError as exc:  # not JSON, too deep, a number out of range
            raise ConfigError(f"AnyToolConfig.model_profiles: {exc.message}") from None
        except ProfileError as exc:
            raise ConfigError(f"AnyToolConfig.model_profiles: {exc}") from None
        if not isinstance(value, Mapping):
            raise ConfigError("AnyToolConfig.model_profiles: must be a JSON object of model pattern → profile fields")
        return value
    return text
