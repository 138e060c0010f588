"""LLM-simulated executor: a chat model imitates an API from its documentation, template and real examples.

Every observation is marked `simulated=True`. The simulator itself is not deterministic (the model may sample);
repeatable runs come from the pipeline's response cache, which stores the first simulated answer for each
API id + canonical arguments and serves it afterwards.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Callable
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from ...catalog.models import Api
from ...text import shorten_counted
from ..observation import Observation, Status
from .virtual import parse_maybe_json, status_for_message

SYSTEM_PROMPT = (
    "You imitate a real web API. Given its documentation and the arguments of one call, you reply with the response "
    "the real API would most plausibly return. You answer with JSON only."
)

PROMPT = """API documentation:
{documentation}

Response template (structure of a real response; "_list_length" tells how long a list was):
{template}

Real calls and their responses:
{examples}

Arguments of this call:
{arguments}

Reply with one JSON object and nothing else (no prose, no code fences):
{{"error": "", "response": <the API's response>}}
- Follow the template's structure when there is one; fill it with realistic, specific values consistent with the
  arguments and the examples.
- When the arguments are invalid for this API (a required value missing or malformed), set "error" to a short
  message such as "invalid parameter: ..." and "response" to "".
"""

Examples = Callable[[str], list[tuple[dict[str, Any], Any]]]

logger = logging.getLogger(__name__)

_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)```", re.DOTALL)
_MAX_CANDIDATES = 200


def extract_json(text: str) -> Any:
    """The first JSON object or array in `text` (inside code fences first, then anywhere). Raises ValueError."""
    decoder = json.JSONDecoder()
    sources = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    for source in sources:
        tried = 0
        for i, ch in enumerate(source):
            if ch not in "{[":
                continue
            try:
                value, _end = decoder.raw_decode(source, i)
            except ValueError:
                tried += 1
                if tried >= _MAX_CANDIDATES:
                    break
                continue
            return value
    raise ValueError("no JSON object or array found")


def message_text(message: BaseMessage) -> str:
    """The text of a chat message whose content is a string or a list of content blocks."""
    content = message.content
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict) and isinstance(block.get("text"), str):
            parts.append(block["text"])
    return "".join(parts)


def _clip(value: Any, limit: int) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return shorten_counted(text, limit)


class LLMSimulatedExecutor:
    """Asks `model` to produce the API's response; unparseable output → ERROR "simulator returned invalid JSON".

    `examples(api_id)` may return real `(arguments, response)` pairs; up to `max_examples` go into the prompt.
    """

    name = "llm_sim"

    def __init__(self, model: BaseChatModel, *, examples: Examples | None = None, max_examples: int = 3,
                 max_template_chars: int = 3000, max_example_chars: int = 1500) -> None:
        self.model = model
        self.examples = examples
        self.max_examples = max_examples
        self.max_template_chars = max_template_chars
        self.max_example_chars = max_example_chars

    def __repr__(self) -> str:
        return f"LLMSimulatedExecutor(model={type(self.model).__name__}, max_examples={self.max_examples})"

    def messages(self, api: Api, arguments: dict[str, Any]) -> list[BaseMessage]:
        """The prompt for one call."""
        details = api.details()
        details.pop("template_response", None)
        details["category"] = api.category
        template = _clip(api.template_response, self.max_template_chars) if api.template_response is not None \
            else "(none)"
        shown: list[str] = []
        if self.examples is not None and self.max_examples > 0:
            try:
                pairs = self.examples(api.id)[: self.max_examples]
            except Exception as exc:  # examples are a help, not a requirement
                logger.warning("examples for %s failed: %s", api.id, exc.__class__.__name__)
                pairs = []
            for args, response in pairs:
                shown.append(f"arguments: {_clip(args, 500)}\nresponse: {_clip(response, self.max_example_chars)}")
        text = PROMPT.format(
            documentation=json.dumps(details, ensure_ascii=False, indent=1, default=str),
            template=template,
            examples="\n\n".join(shown) if shown else "(none)",
            arguments=json.dumps(arguments, ensure_ascii=False, default=str),
        )
        return [SystemMessage(SYSTEM_PROMPT), HumanMessage(text)]

    async def aexecute(self, api: Api, arguments: dict[str, Any]) -> Observation:
        """One simulated call → Observation with `simulated=True` (never raises for call failures)."""
        start = time.perf_counter()
        obs = await self._execute(api, arguments)
        return Observation(api.id, obs.status, content=obs.content, error=obs.error, simulated=True,
                           latency_ms=(time.perf_counter() - start) * 1000, meta=obs.meta)

    async def _execute(self, api: Api, arguments: dict[str, Any]) -> Observation:
        try:
            reply = await self.model.ainvoke(self.messages(api, arguments))
        except Exception as exc:
            return Observation(api.id, Status.ERROR, error=f"simulator model failed: {exc.__class__.__name__}: {exc}")
        text = message_text(reply)
        try:
            data = extract_json(text)
        except ValueError:
            return Observation(api.id, Status.ERROR, content=_clip(text, 500) if text else None,
                               error="simulator returned invalid JSON")
        if isinstance(data, dict) and data.keys() <= {"error", "response"} and data:
            error = data.get("error") or ""
            error = error if isinstance(error, str) else json.dumps(error, default=str)
            content = parse_maybe_json(data.get("response"))
            content = None if content == "" else content
            if error.strip():
                return Observation(api.id, status_for_message(error), content=content, error=error)
            return Observation(api.id, Status.OK, content=content)
        return Observation(api.id, Status.OK, content=data)

    async def aclose(self) -> None:
        """Nothing to release (the model is owned by the caller)."""
