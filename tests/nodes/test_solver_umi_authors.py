"""`AnyToolConfig.umi_prompts_from`: the α-UMi solver's requests as the authors' run-time pipeline sends them
(X-PLUG/Multi-LLM-Agent ToolBench-multiLLM `toolbench/inference/LLM/collab_agent_model.py` `CollbaAgentV3`), on a
hand-made fake checkout (`write_fake_checkout(..., "umi_run")`) and a loopback server that records each request.
Every expected text below is written out by hand from the authors' rules cited beside it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_openai import ChatOpenAI

from langgraph_anytool.catalog.models import Api, Param
from langgraph_anytool.config import AnyToolConfig, ConfigError
from langgraph_anytool.graphs.solver import build_solver_graph
from langgraph_anytool.models.llm import ModelSet
from langgraph_anytool.nodes.solver import umi_authors
from langgraph_anytool.paper_prompts.testing import write_fake_checkout
from langgraph_anytool.runtime import Deps, RunSignals
from langgraph_anytool.tools.pipeline import ApiExecutor
from tests.nodes.test_solver import CAT, CURRENT, WEATHER_POOL
from tests.servers import OpenAIChatServer

# rapidapi.py `api_json_to_openai_json` `template_for_input` of the two pooled APIs (test catalog: "Current weather"
# "Current weather of a city", city string "City name" required; "Forecast" "Daily forecast of a city", city required,
# days integer optional): the API name in the description replaced by the function name; our "integer" (not
# ToolBench's NUMBER) → "string"
DOC = ('{"Name": "current_for_weatherly", "function": "current_for_weatherly of a city", '
       '"input": {"city": "string, City name"}}\n'
       '{"Name": "forecast_for_weatherly", "function": "Daily forecast of a city", '
       '"input": {"city": "string, City name", "days": "string, Number of days"}}\n')
NAMES = "current_for_weatherly, forecast_for_weatherly"


def _run(tmp_path: Path, script: list[str], **config: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    root = write_fake_checkout(tmp_path / "Multi-LLM-Agent", "umi_run")
    with OpenAIChatServer(script) as srv:
        model = ChatOpenAI(model="gpt-test", base_url=srv.base_url, api_key="sk-loopback", max_retries=0)
        deps = Deps(catalog=CAT, models=ModelSet(default=None, by_role={"planner": model, "caller": model,
                                                                        "summarizer": model}),
                    executor=ApiExecutor.for_catalog(CAT, kind="template"),
                    config=AnyToolConfig(solver="umi", umi_prompts_from=str(root), **config), signals=RunSignals())
        out = build_solver_graph(deps).invoke({"query": "Weather in Paris?", "run_key": "r", "round": 1,
                                               "api_pool": WEATHER_POOL, "previous_attempts": []})
        return out["solver_attempts"][0], srv.chat_requests


def _input(body: dict[str, Any]) -> str:
    """The request's one user message; the authors' sampling settings, no tools (collab_agent_model.py
    `prediction` `gen_params`: temperature 0.5, max_new_tokens 512, stop "</s>"; the caller's call is read from
    its text)."""
    assert [m["role"] for m in body["messages"]] == ["user"]
    assert (body["temperature"], body["max_completion_tokens"], body["stop"]) == (0.5, 512, ["</s>"])
    assert "tools" not in body and "functions" not in body
    return str(body["messages"][0]["content"])


def test_a_run_step_sends_the_authors_planner_caller_and_summarizer_inputs(tmp_path: Path) -> None:
    obs_call = f'Action: {CURRENT}\nAction Input: {{"city": "Paris"}}'
    attempt, bodies = _run(tmp_path, [f"  : I should call {CURRENT}.", obs_call, "Enough now. Next: conclusion. x",
                                      "It is sunny."])
    assert attempt["finish_type"] == "give_answer" and attempt["answer"] == "It is sunny."
    assert attempt["api_calls"] == 1 and len(bodies) == 4
    # planner: prompt_dict[...].replace('{doc}').replace('{tool_names}').replace('{history}') + " assistant: ";
    # the history "user: <query></s>" (DFS.py start; CollbaAgentV3.parse)
    assert _input(bodies[0]) == f"FAKE planner doc={DOC} history=user: Weather in Paris?</s> assistant: "
    # caller: the planner's prediction stripped, ": " dropped, " Next: caller." appended (leading space); the
    # history gets "assistant: <prediction></s>"; then " caller: "
    thought = f"I should call {CURRENT}. Next: caller."
    hist = f"user: Weather in Paris?</s>assistant: {thought}</s>"
    assert _input(bodies[1]) == (f"FAKE caller doc={DOC} history={hist} thought={thought} tool_names={NAMES}"
                                 " caller: ")
    # second planner: the whole earlier prediction as one assistant turn, then "observation: <value>" (no "</s>")
    observation = attempt["tree"][1]["messages"][2]["content"]
    hist2 = f"user: Weather in Paris?</s>assistant: {thought}</s>caller: {obs_call}</s>observation: {observation}"
    assert _input(bodies[2]) == f"FAKE planner doc={DOC} history={hist2} assistant: "
    # summarizer: the prediction cut after "Next: conclusion.", appended as the caller's is; " conclusion: "
    assert _input(bodies[3]) == (f"FAKE summarizer history={hist2}assistant: Enough now. Next: conclusion.</s>"
                                 " conclusion: ")


def test_the_planners_give_up_and_a_caller_text_without_a_call(tmp_path: Path) -> None:
    # "Next: give up." anywhere gives up (prediction); a caller text without "Action:" calls "none"
    # (collab_agent_parser), whose failure is the observation the next planner reads
    attempt, bodies = _run(tmp_path, ["Try it.", "I do not know.", "No way. Next: give up. more", "x Next: give up."],
                           max_solver_queries=4)
    assert len(bodies) >= 3
    second = _input(bodies[2])
    assert "caller: I do not know.</s>observation: " in second
    assert attempt["finish_type"] != "give_answer"


def test_without_umi_prompts_from_the_roles_keep_our_requests(tmp_path: Path) -> None:
    script = [f"I should call {CURRENT}. Next: caller", "", "Done. Next: summarizer", "It is sunny."]
    with OpenAIChatServer(script) as srv:
        model = ChatOpenAI(model="gpt-test", base_url=srv.base_url, api_key="sk-loopback", max_retries=0)
        deps = Deps(catalog=CAT, models=ModelSet(default=None, by_role={"planner": model, "caller": model,
                                                                        "summarizer": model}),
                    executor=ApiExecutor.for_catalog(CAT, kind="template"), config=AnyToolConfig(solver="umi"),
                    signals=RunSignals())
        build_solver_graph(deps).invoke({"query": "Weather in Paris?", "run_key": "r", "round": 1,
                                         "api_pool": WEATHER_POOL, "previous_attempts": []})
    first = srv.chat_requests[0]
    assert first["messages"][0]["role"] == "system" and "temperature" not in first and "stop" not in first


def test_tool_for_input_follows_rapidapi_template_for_input() -> None:
    long = "w" * 300 + " TheApi end"
    api = Api(id="C/t/a", name="TheApi", tool_key="t", tool_name="t", category="C", description=long,
              params=(Param("q", "number", "x" * 260 + "END", required=True), Param("flag", "boolean", " "),
                      Param("when", "date", "a date")))
    doc = umi_authors.tool_for_input(api, "theapi_for_t")
    assert doc["Name"] == "theapi_for_t" and doc["function"] == long[:256]  # cut after the name's replacement
    assert doc["input"] == {"q": "integer, " + ("x" * 260 + "END")[-256:], "flag": "boolean", "when": "string, a date"}
    named = Api(id="C/t/b", name="Get", tool_key="t", tool_name="t", category="C", description="  Get it ",
                params=(Param("o", "string", "opt"),))
    # no required parameter: no input at all (`if len(api_json["required_parameters"]) > 0`)
    assert umi_authors.tool_for_input(named, "get_for_t") == {"Name": "get_for_t", "function": "get_for_t it",
                                                              "input": {}}
    blank = Api(id="C/t/c", name="B", tool_key="t", tool_name="t", category="C", description="",
                written_description=" ")
    assert umi_authors.tool_for_input(blank, "b_for_t")["function"] == ""


@pytest.mark.parametrize(("text", "prediction", "choice"), [
    ("  : plan it", "plan it Next: caller.", "caller"),
    ("call now Next: caller. and more", "call now Next: caller.", "caller"),
    ("done Next: conclusion. extra", "done Next: conclusion.", "summarizer"),
    ("Next: conclusion. then Next: give up. z", "Next: conclusion. then Next: give up.", "give_up"),
    ("Next: caller", "Next: caller Next: caller.", "caller"),  # no full stop: not the marker
])
def test_the_planner_prediction_is_cut_and_routed_as_prediction_does(text: str, prediction: str,
                                                                     choice: str) -> None:
    assert umi_authors.read_plan(text) == (prediction, choice)


@pytest.mark.parametrize(("text", "name", "args"), [
    ('Action: f\nAction Input: {"a": 1}', "f", '{"a": 1}'),
    ("thinking\nAction: g", "g", "{}"),
    ("no call here", "none", "{}"),
    ('Action: a\nAction: b\nAction Input: {}\nAction Input: {"z": 2}', "b", '{"z": 2}'),
])
def test_read_call_follows_collab_agent_parser(text: str, name: str, args: str) -> None:
    assert umi_authors.read_call(text) == (name, args)
    message = umi_authors.caller_message(text)
    assert message.additional_kwargs[umi_authors.CALLER_TEXT] == text
    assert (message.tool_calls or message.invalid_tool_calls)[0]["name"] == name


def test_fill_replaces_one_placeholder_after_another(tmp_path: Path) -> None:
    root = write_fake_checkout(tmp_path / "M", "umi_run")
    book = umi_authors.umi_run_book(root)
    # a tool document holding "{history}" is replaced by the history too, as chained .replace calls do
    text = umi_authors.planner_input(book, "D{history}\n", "n", "H")
    assert text == "FAKE planner doc=DH\n history=H assistant: "


def test_a_path_that_is_not_a_checkout_is_refused_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as err:
        AnyToolConfig(solver="umi", umi_prompts_from=str(tmp_path))
    assert "umi_prompts_from" in str(err.value) and "\n" not in str(err.value)
    json.dumps(str(err.value))
