"""LLMSimulatedExecutor with scripted chat models: fenced JSON, plain JSON, garbage, errors, prompt contents."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from langgraph_anytool.catalog.models import Api, Param
from langgraph_anytool.tools.executors.base import Executor
from langgraph_anytool.tools.executors.llm_sim import LLMSimulatedExecutor, extract_json
from langgraph_anytool.tools.observation import Status

API = Api(id="Weather/forecast_pro/daily", name="Daily Forecast", tool_key="forecast_pro", tool_name="Forecast Pro",
          category="Weather", description="Daily forecast for a city", method="GET",
          params=(Param("city", required=True, description="city name"), Param("days", "integer")),
          template_response={"city": "str", "days": [{"temp_c": "float", "_list_length": 3}]})


class RecordingModel(BaseChatModel):
    """Replies with the given texts in order and keeps every prompt it was sent."""

    replies: list[str]
    prompts: list[list[BaseMessage]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "recording"

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        self.prompts.append(list(messages))
        return ChatResult(generations=[ChatGeneration(message=AIMessage(self.replies.pop(0)))])


class FailingModel(BaseChatModel):
    @property
    def _llm_type(self) -> str:
        return "failing"

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        raise ConnectionError("model endpoint down")


def fake(*texts: str) -> GenericFakeChatModel:
    return GenericFakeChatModel(messages=iter([AIMessage(t) for t in texts]))


def test_satisfies_executor_protocol() -> None:
    assert isinstance(LLMSimulatedExecutor(fake()), Executor)


@pytest.mark.parametrize(("reply", "expected"), [
    ('```json\n{"error": "", "response": {"city": "Oslo", "days": [{"temp_c": 3.5}]}}\n```',
     {"city": "Oslo", "days": [{"temp_c": 3.5}]}),
    ('{"error": "", "response": {"city": "Oslo"}}', {"city": "Oslo"}),
    ('Sure! Here is the response:\n{"city": "Oslo", "note": "a {brace} inside"} Hope it helps {',
     {"city": "Oslo", "note": "a {brace} inside"}),
    ('[{"temp_c": 1}, {"temp_c": 2}]', [{"temp_c": 1}, {"temp_c": 2}]),
    ('{"error": "", "response": "{\\"city\\": \\"Oslo\\"}"}', {"city": "Oslo"}),
])
async def test_parses_json_replies(reply: str, expected: Any) -> None:
    obs = await LLMSimulatedExecutor(fake(reply)).aexecute(API, {"city": "Oslo"})
    assert obs.status is Status.OK, obs
    assert obs.content == expected
    assert obs.simulated is True


@pytest.mark.parametrize("reply", ["I cannot do that.", "{not json at all", "", "```json\n{'single': 'quotes'}\n```"])
async def test_garbage_is_an_error(reply: str) -> None:
    obs = await LLMSimulatedExecutor(fake(reply)).aexecute(API, {"city": "Oslo"})
    assert obs.status is Status.ERROR and obs.error == "simulator returned invalid JSON"
    assert obs.simulated is True


async def test_simulated_error_field_is_classified() -> None:
    obs = await LLMSimulatedExecutor(fake('{"error": "invalid parameter: city is empty", "response": ""}')).aexecute(
        API, {"city": ""})
    assert obs.status is Status.REJECTED and "city" in obs.error and obs.content is None


async def test_model_failure_is_an_observation() -> None:
    obs = await LLMSimulatedExecutor(FailingModel()).aexecute(API, {"city": "Oslo"})
    assert obs.status is Status.ERROR and "ConnectionError" in obs.error and obs.simulated


async def test_prompt_has_documentation_template_arguments_and_capped_examples() -> None:
    model = RecordingModel(replies=['{"error": "", "response": {"city": "Rome"}}'])
    seen: list[str] = []

    def examples(api_id: str) -> list[tuple[dict[str, Any], Any]]:
        seen.append(api_id)
        return [({"city": f"C{i}"}, {"city": f"C{i}", "days": [{"temp_c": i}]}) for i in range(5)]

    obs = await LLMSimulatedExecutor(model, examples=examples, max_examples=2).aexecute(API, {"city": "Rome", "days": 2})
    assert obs.ok and obs.content == {"city": "Rome"}
    assert seen == [API.id]
    prompt = "\n".join(str(m.content) for m in model.prompts[0])
    for needle in ("Daily Forecast", "Daily forecast for a city", "city name", "_list_length", '"days": 2', "GET"):
        assert needle in prompt, needle
    assert '"C0"' in prompt and '"C1"' in prompt and '"C2"' not in prompt


def test_extract_json_prefers_fenced_blocks() -> None:
    assert extract_json('prefix {"a": 1} ```json\n{"b": 2}\n```') == {"b": 2}
    with pytest.raises(ValueError):
        extract_json("no json here")
