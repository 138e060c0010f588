"""Run catalog APIs that wrap LangChain tools (`@tool` functions, `StructuredTool`s, MCP tools).

Every call goes through `tool.ainvoke(arguments)`: async-only tools (what `langchain-mcp-adapters` produces)
are awaited, sync-only tools run in LangChain's worker thread. The pipeline's blocking `call` runs executors on
its own loop, so async-only tools work from sync code too. Outcome mapping, as for `LocalExecutor`:
- a return value → `OK` (MCP content blocks are flattened to their text);
- `ValueError` / `KeyError` / pydantic `ValidationError` → `REJECTED` (the tool received the call and refused a
  value; the model may fix its arguments);
- any other exception (`ToolException` included) → `ERROR`; exceeding `timeout` → `TIMEOUT`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import anyio
from pydantic import ValidationError

from ...catalog.models import Api
from ..observation import Observation, Status
from .local import exception_text

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool


def tool_output(result: Any) -> Any:
    """A tool's return value as observation content: MCP/LangChain content blocks become their text."""
    from langchain_core.messages import ToolMessage

    if isinstance(result, ToolMessage):
        result = result.content
    if isinstance(result, tuple) and len(result) == 2:  # (content, artifact)
        result = result[0]
    if isinstance(result, list) and result and all(isinstance(b, dict) and "type" in b for b in result):
        texts = [str(b.get("text", "")) for b in result if b.get("type") == "text"]
        if len(texts) == len(result):
            return texts[0] if len(texts) == 1 else "\n".join(texts)
    return result


class LangChainToolExecutor:
    """Executes `tools[api.id].ainvoke(arguments)`."""

    name = "langchain"

    def __init__(self, tools: Mapping[str, BaseTool], *, timeout: float | None = 60.0) -> None:
        self._tools = dict(tools)
        self.timeout = timeout

    def __contains__(self, api_id: object) -> bool:
        return api_id in self._tools

    @property
    def api_ids(self) -> list[str]:
        return list(self._tools)

    def tool(self, api_id: str) -> BaseTool:
        return self._tools[api_id]

    async def aexecute(self, api: Api, arguments: dict[str, Any]) -> Observation:
        tool = self._tools.get(api.id)
        if tool is None:
            return Observation(api_id=api.id, status=Status.NOT_FOUND, error=f"no LangChain tool for API {api.id!r}")
        try:
            if self.timeout is None:
                result = await tool.ainvoke(dict(arguments))
            else:
                # an anyio cancel scope cancels every await until it is left (an MCP session's clean-up included);
                # asyncio.wait_for cancels once, and a clean-up that then waits on a stuck server waits for ever
                with anyio.fail_after(self.timeout):
                    result = await tool.ainvoke(dict(arguments))
        except TimeoutError:
            return Observation(api_id=api.id, status=Status.TIMEOUT,
                               error=f"the call did not finish within {self.timeout:g} s")
        except (ValueError, KeyError, ValidationError) as e:
            return Observation(api_id=api.id, status=Status.REJECTED, error=exception_text(e))
        except Exception as e:
            return Observation(api_id=api.id, status=Status.ERROR, error=exception_text(e),
                               meta={"executor": self.name, "tool": tool.name})
        return Observation(api_id=api.id, status=Status.OK, content=tool_output(result),
                           meta={"executor": self.name})

    async def aclose(self) -> None:
        return None
