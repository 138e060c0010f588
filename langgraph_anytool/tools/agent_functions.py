"""The retriever agents' functions (AnyTool Table 8) as function-calling schemas, with argument validation.

Each function is an `AgentFunction`: a name, a description and a pydantic model of its arguments. `as_tool()`
gives the OpenAI-style tool dict every LangChain chat model's `bind_tools` accepts; `validate()` turns a model's
raw arguments into the typed model or a message naming the expected arguments (answered in-band, never raised).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator


class _Args(BaseModel):
    """Base of every argument model: unknown (hallucinated) arguments are errors."""

    model_config = ConfigDict(extra="forbid")


def _as_list(value: Any) -> Any:
    """A single name where a list is expected is taken as a one-element list."""
    return [value] if isinstance(value, str) else value


class NoArgs(_Args):
    """No arguments."""


class CategoryArgs(_Args):
    category_name: str = Field(description="The name of a category, exactly as listed.")


class ToolsDescriptionArgs(_Args):
    category_name: str = Field(description="The category the tools belong to.")
    tool_names: list[str] = Field(description="Names of tools in that category.")

    @field_validator("tool_names", mode="before")
    @classmethod
    def _one_name_is_a_list(cls, value: Any) -> Any:
        return _as_list(value)


class ToolNamesArgs(_Args):
    tool_names: list[str] = Field(description="Names of tools of your category (at most the allowed number).")

    @field_validator("tool_names", mode="before")
    @classmethod
    def _one_name_is_a_list(cls, value: Any) -> Any:
        return _as_list(value)


class ToolArgs(_Args):
    tool_name: str = Field(description="The name of one of your tools.")


class ApiDetailArgs(_Args):
    """Table 8's `get_API_details([API names])`: several APIs of one tool in one call (`api_name` for one)."""

    tool_name: str = Field(description="The name of one of your tools.")
    api_names: list[str] = Field(description="Names of APIs of that tool.")

    @model_validator(mode="before")
    @classmethod
    def _one_api_name(cls, value: Any) -> Any:
        if isinstance(value, dict) and "api_name" in value and "api_names" not in value:
            value = {**value, "api_names": value["api_name"]}
            del value["api_name"]
        return value

    @field_validator("api_names", mode="before")
    @classmethod
    def _one_name_is_a_list(cls, value: Any) -> Any:
        return _as_list(value)


class ApiRef(_Args):
    tool_name: str = Field(description="The tool the API belongs to.")
    api_name: str = Field(description="The API's name.")


class AddApisArgs(_Args):
    apis: list[ApiRef] = Field(description='APIs to add, e.g. [{"tool_name": "...", "api_name": "..."}].')


class CategoryToolArgs(_Args):
    category_name: str = Field(description="The category of the tool.")
    tool_name: str = Field(description="The name of a tool of that category.")


class CategoryApiDetailArgs(ApiDetailArgs):
    category_name: str = Field(description="The category of the tool.")


class CategoryApiRef(ApiRef):
    category_name: str = Field(description="The category of the tool.")


class FlatAddApisArgs(_Args):
    apis: list[CategoryApiRef] = Field(
        description='APIs to add, e.g. [{"category_name": "...", "tool_name": "...", "api_name": "..."}].')


@dataclass(frozen=True)
class AgentFunction:
    """One function an agent can call."""

    name: str
    description: str
    args: type[BaseModel]

    def as_tool(self) -> dict[str, Any]:
        """The OpenAI-style tool schema (what `bind_tools` takes)."""
        tool = convert_to_openai_tool(self.args)
        tool["function"]["name"] = self.name
        tool["function"]["description"] = self.description
        return tool

    def signature(self) -> str:
        """`name(arg1, arg2)` for error messages."""
        return f"{self.name}({', '.join(self.args.model_fields)})"

    def validate(self, raw: Any) -> BaseModel | str:
        """The parsed arguments, or a message saying what is wrong and what is expected."""
        if raw is None or raw == "":
            raw = {}
        if not isinstance(raw, dict):
            return f"Error: arguments of {self.name} must be a JSON object; expected {self.signature()}."
        try:
            return self.args.model_validate(raw)
        except ValidationError as exc:
            problems = "; ".join(_describe(err) for err in exc.errors())
            return f"Error: invalid arguments for {self.name}: {problems}. Expected {self.signature()}."


def _describe(err: Any) -> str:
    where = ".".join(str(p) for p in err.get("loc", ())) or "arguments"
    kind = err.get("type", "")
    if kind == "extra_forbidden":
        return f"unknown argument {where!r}"
    if kind == "missing":
        return f"missing argument {where!r}"
    return f"{where}: {err.get('msg', kind)}"


GET_TOOLS_IN_CATEGORY = AgentFunction(
    "get_tools_in_category", "Get the names of the tools in a category.", CategoryArgs)
GET_TOOLS_DESCRIPTIONS = AgentFunction(
    "get_tools_descriptions", "Get the description of each of the given tools of a category.", ToolsDescriptionArgs)
CREATE_AGENT_CATEGORY_LEVEL = AgentFunction(
    "create_agent_category_level",
    "Create a category agent that searches the given category for tools relevant to the query "
    "(one agent per category).",
    CategoryArgs,
)
CREATE_AGENT_TOOL_LEVEL = AgentFunction(
    "create_agent_tool_level",
    "Create a tool agent that searches the given tools of your category for relevant APIs "
    "(a few similar tools per agent).",
    ToolNamesArgs,
)
GET_APIS_IN_TOOL = AgentFunction(
    "get_apis_in_tool", "Get the names (and short descriptions) of the APIs of one of your tools.", ToolArgs)
GET_API_DETAILS = AgentFunction(
    "get_api_details",
    "Get the details of APIs of one of your tools: description, method, required and optional parameters.",
    ApiDetailArgs)
ADD_APIS_INTO_API_POOL = AgentFunction(
    "add_apis_into_api_pool", "Add APIs of your tools to the API-candidate pool used to solve the query.",
    AddApisArgs)
CHECK_IF_REQUEST_SOLVABLE = AgentFunction(
    "check_if_request_solvable",
    "Check whether the query can be solved with the APIs now in the candidate pool. Returns True or False "
    "(with the reason).",
    NoArgs,
)
FINISH_SEARCH = AgentFunction(
    "finish_search", "Send the finish signal: call it once your search is complete or nothing relevant is left.",
    NoArgs)

META_FUNCTIONS: tuple[AgentFunction, ...] = (
    GET_TOOLS_IN_CATEGORY, GET_TOOLS_DESCRIPTIONS, CREATE_AGENT_CATEGORY_LEVEL, FINISH_SEARCH)
CATEGORY_FUNCTIONS: tuple[AgentFunction, ...] = (
    GET_TOOLS_IN_CATEGORY, GET_TOOLS_DESCRIPTIONS, CREATE_AGENT_TOOL_LEVEL, FINISH_SEARCH)
TOOL_FUNCTIONS: tuple[AgentFunction, ...] = (
    GET_APIS_IN_TOOL, GET_API_DETAILS, ADD_APIS_INTO_API_POOL, CHECK_IF_REQUEST_SOLVABLE, FINISH_SEARCH)

# The flat retriever (Table 3's "-hierarchy" ablation): one agent with every level's browsing functions.
FLAT_FUNCTIONS: tuple[AgentFunction, ...] = (
    GET_TOOLS_IN_CATEGORY, GET_TOOLS_DESCRIPTIONS,
    AgentFunction("get_apis_in_tool", "Get the names (and short descriptions) of the APIs of a tool.", CategoryToolArgs),
    AgentFunction("get_api_details", "Get the details of APIs of a tool: description, method, parameters.",
                  CategoryApiDetailArgs),
    AgentFunction("add_apis_into_api_pool", "Add APIs to the API-candidate pool used to solve the query.",
                  FlatAddApisArgs),
    CHECK_IF_REQUEST_SOLVABLE, FINISH_SEARCH,
)
