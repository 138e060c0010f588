"""`AnyToolConfig`: limits and per-role model choices, validated on construction."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any, Literal

SolverMode = Literal["dfsdt", "cot", "umi"]
UmiPrompts = Literal["default", "alpha_umi"]
ExecutionKind = Literal["auto", "local", "template", "http", "virtual", "llm"]

ROLES: tuple[str, ...] = (
    "meta", "category", "tool", "solvable", "solver", "planner", "caller", "summarizer", "judge", "simulator",
)


class ConfigError(ValueError):
    """An invalid configuration value, naming the field."""


@dataclass(frozen=True)
class AnyToolConfig:
    """Limits of one AnyTool run. Defaults follow the paper (Appendix A.1, Tables 6-7)."""

    max_api_pool: int = 64
    max_tools_per_agent: int = 5
    direct_tool_agent_max_tools: int = 5  # a category with at most this many tools gets its tool agent without a model call
    agent_step_limit: int = 20  # model calls per agent activation
    max_concurrency: int = 8  # agents started per superstep
    solver: SolverMode = "dfsdt"
    dfsdt_width: int = 2  # children tried per tree node before backtracking further up
    max_depth: int = 12  # tree depth (model turns in one chain) before forced backtrack
    max_api_calls: int = 10  # per solve; a hard stop
    max_reflections: int = 5
    token_budget: int = 200_000  # across all roles, from usage metadata
    max_observation_chars: int = 2048
    # executor when none is passed: "auto" = local for the builtin catalog, http otherwise;
    # "template" (offline simulation) is for tests and dry runs and is never chosen silently
    execution: ExecutionKind = "auto"
    seed_with_search: bool = True  # show the meta-agent the categories search ranks highest
    models: dict[str, Any] = field(default_factory=dict)  # role -> "provider:model" (strings only here)
    # roles whose model has no native function calling: calls are written as `Action:` / `Action Input:` text
    text_mode_roles: tuple[str, ...] = ()
    umi_prompts: UmiPrompts = "default"  # "alpha_umi": α-UMi's prompt formats (Next: caller./conclusion./give up.)

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            least = 0 if f.name == "max_reflections" else 1  # 0 reflections: the paper's plain-agent ablation
            if f.type == "int" and (not isinstance(value, int) or isinstance(value, bool) or value < least):
                raise ConfigError(f"AnyToolConfig.{f.name} must be an integer ≥ {least}, got {value!r}")
        if self.solver not in ("dfsdt", "cot", "umi"):
            raise ConfigError(f"AnyToolConfig.solver must be 'dfsdt', 'cot' or 'umi', got {self.solver!r}")
        if self.execution not in ("auto", "local", "template", "http", "virtual", "llm"):
            raise ConfigError(f"AnyToolConfig.execution: unknown executor kind {self.execution!r}")
        object.__setattr__(self, "text_mode_roles", tuple(self.text_mode_roles))
        for role in self.text_mode_roles:
            if role not in ("solver", "caller"):
                raise ConfigError(f"AnyToolConfig.text_mode_roles: {role!r} does not call functions; "
                                  "text mode applies to 'solver' and 'caller'")
        if self.umi_prompts not in ("default", "alpha_umi"):
            raise ConfigError(f"AnyToolConfig.umi_prompts must be 'default' or 'alpha_umi', got {self.umi_prompts!r}")
        for role, spec in self.models.items():
            if role not in ROLES:
                raise ConfigError(f"AnyToolConfig.models: unknown role {role!r}; roles are {', '.join(ROLES)}")
            if not isinstance(spec, str):
                raise ConfigError(f"AnyToolConfig.models[{role!r}] must be a 'provider:model' string")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
