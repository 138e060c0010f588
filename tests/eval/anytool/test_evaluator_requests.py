"""Issue 36 §1: the evaluator's requests carry ToolEval's completion settings in each protocol's call form.

The expected request is built here as ToolEval's `OpenAINormalizedEvaluator.function_call` builds it
(`toolbench/tooleval/evaluators/registered_cls/tooleval.py`): `completion_kwargs = deepcopy(completions_kwargs)` of
the evaluator's config.yaml, the function's schema with `required.append('reason')` and the `reason` property,
then AnyTool's copy (dyabel/AnyTool) sets `function_call={'name': f}` and `functions=[f]`, StableToolBench's pops
`functions` and sets `tools=[{'type': 'function', 'function': f}]` and `tool_choice={'type': 'function', 'function':
{'name': f}}`; `messages=[{'role': 'user', 'content': template.format(**func_args)}]`. What may differ is only the
documented table (docs/evaluation.md): `model` (the user's evaluator), `max_tokens` sent under ChatOpenAI's name
`max_completion_tokens`, `timeout` (a client setting, not a body field), and the streaming fields of a loopback call.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from langchain_openai import ChatOpenAI

from langgraph_anytool.cli.app import main
from langgraph_anytool.eval.anytool.convert import record_to_tooleval
from langgraph_anytool.nodes.judge.tooleval_request import TOOLEVAL_SETTINGS, request_for, with_settings
from langgraph_anytool.paper_prompts import tooleval_book
from langgraph_anytool.paper_prompts.testing import FAKE_SETTINGS, write_fake_checkout
from tests.eval.anytool.test_passrate import record
from tests.servers import ChatReply, OpenAIChatServer

EVALUATOR = "toolbench/tooleval/evaluators/tooleval_gpt-3.5-turbo_default"
TRANSPORT = {"model", "stream", "stream_options"}  # the user's model; a loopback call is streamed


def authors_request(root: Path, func_name: str, func_args: dict[str, Any], form: str) -> dict[str, Any]:
    """The request body ToolEval's `function_call(func_name, func_args, return_reason=True)` sends (module doc)."""
    config = yaml.safe_load((root / EVALUATOR / "config.yaml").read_text())
    template = (root / EVALUATOR / config["prompt_template"]).read_text()
    sections = {re.findall(r"<name>(.*?)</name>", f, re.DOTALL)[0]: re.findall(r"<description>(.*?)</description>",
                                                                               f, re.DOTALL)[0]
                for f in re.findall(r"<function>(.*?)</function>", template, re.DOTALL)}
    functions = {f["name"]: f for f in config["completions_kwargs"]["functions"]}
    completion_kwargs = copy.deepcopy(config["completions_kwargs"])
    func_description = copy.deepcopy(functions[func_name])
    func_description["parameters"]["required"].append("reason")
    func_description["parameters"]["properties"]["reason"] = dict(tooleval_book(root).data["reason_property"])
    if form == "functions":
        completion_kwargs["function_call"] = {"name": func_name}
        completion_kwargs["functions"] = [func_description]
        # AnyTool's copy: registered_cls/utils.py OpenaiPoolRequest.request → openai_utils.py call_gpt(messages,
        # **kwargs), which sends `seed=123`
        completion_kwargs["seed"] = 123
    else:
        completion_kwargs.pop("functions")
        completion_kwargs["tools"] = [{"type": "function", "function": func_description}]
        completion_kwargs["tool_choice"] = {"type": "function", "function": {"name": func_name}}
    completion_kwargs["messages"] = [{"role": "user", "content": str(sections[func_name]).format(**func_args)}]
    return completion_kwargs


def as_sent(authors: dict[str, Any]) -> dict[str, Any]:
    """The authors' body as our client sends it: the documented differences applied (module docstring)."""
    out = {k: v for k, v in authors.items() if k not in ("model", "timeout", "max_tokens")}
    if "max_tokens" in authors:
        out["max_completion_tokens"] = authors["max_tokens"]
    return out


def _replies(form_seen: list[str]) -> Any:
    """Answers every check in the form it was asked: Unsure first (so the second stage runs), then Unsolved; the
    solvability check Solvable."""

    def reply(body: dict[str, Any]) -> ChatReply:
        legacy = "functions" in body
        name = body["function_call"]["name"] if legacy else body["tool_choice"]["function"]["name"]
        form_seen.append("functions" if legacy else "tools")
        args = {"check_answer_status": {"answer_status": "Unsure"}, "parse_answer_status": {"answer_status":
                                                                                            "Unsolved"},
                "check_task_solvable": {"task_status": "Solvable"}}[name]
        args = {**args, "reason": f"why {name}"}
        return ChatReply(function_call=(name, json.dumps(args))) if legacy else ChatReply(tool_calls=[(name, args)])

    return reply


def _record() -> dict[str, Any]:
    """A record whose solve called `f` (failed), then Finish with the model's own key order and a reason."""
    rec = {**record("q1", "It is 21 degrees.", [("f", "error", "HTTP 500 upstream")]), "model": "x"}
    finish = {"final_answer": "It is 21 degrees.", "return_type": "give_answer", "reason": "from the forecast"}
    rec["trajectory"][0]["tree"][0]["calls"].append({"tool_call_id": "c9", "function": "Finish",
                                                     "arguments": finish, "status": "finish:give_answer"})
    return rec


def _run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], server: Any,
         *extra: str) -> dict[str, Any]:
    rec = _record()
    res = tmp_path / "r.jsonl"
    res.write_text(json.dumps(rec) + "\n")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    assert main(["eval", "passrate", str(res), "--evaluator", "openai:gpt-test", "--samples", "1", "--no-cache",
                 "--json", *extra]) == 0
    return dict(json.loads(capsys.readouterr().out))


@pytest.mark.parametrize(("protocol", "form"), [("anytool", "functions"), ("toolllm", "tools"), ("sopr", "tools")])
def test_each_protocols_checks_are_the_authors_requests(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str], protocol: str,
                                                        form: str) -> None:
    root = write_fake_checkout(tmp_path / "checkout", "tooleval")
    seen: list[str] = []
    with OpenAIChatServer(policy=_replies(seen)) as server:
        data = _run(tmp_path, monkeypatch, capsys, server, "--protocol", protocol, "--prompts-from", str(root))
        bodies = server.chat_requests
    names = ["check_answer_status", "parse_answer_status"] + (["check_task_solvable"] if protocol == "toolllm" else [])
    assert len(bodies) == len(names) and set(seen) == {form}
    # what rtl.py passes (§2): answer['final_answer'] (the Finish arguments as the model wrote them: its key
    # order), json.dumps(answer) of the converted answer, json.dumps({'query', 'available_tools'})
    query, converted = "question q1", record_to_tooleval(_record())
    finish = '{"final_answer": "It is 21 degrees.", "return_type": "give_answer", "reason": "from the forecast"}'
    assert converted["answer"]["final_answer"] == finish
    args = {"check_answer_status": {"query": query, "answer": finish},
            "parse_answer_status": {"query": query, "answer": json.dumps(converted["answer"])},
            "check_task_solvable": {"task": json.dumps({"query": query,
                                                        "available_tools": converted["available_tools"]})}}
    for body, name in zip(bodies, names, strict=True):
        expected = as_sent(authors_request(root, name, args[name], form))
        assert {k: v for k, v in body.items() if k not in TRANSPORT} == expected, name
        # the checkout's settings (the fake config's, not the release's), value for value
        assert body["temperature"] == FAKE_SETTINGS["temperature"] != TOOLEVAL_SETTINGS["temperature"]
        assert body["max_completion_tokens"] == FAKE_SETTINGS["max_tokens"]
    request = data["evaluator_request"]
    assert request["call_form"] == request["sent_form"] == form and request["functions_refused"] is None
    assert request["settings"] == dict(FAKE_SETTINGS) and str(root.resolve()) in request["settings_from"]
    # a loopback evaluator keeps its own stall timeout: the config's timeout is for a hosted client
    assert request["set_on"] == {"temperature": 0.3, "max_tokens": 900}


def test_without_a_checkout_the_settings_are_tooleval_s_and_ours_are_a_named_option(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    ours = ChatReply(content=json.dumps({"label": "Solved", "reason": "ours"}))
    with OpenAIChatServer(policy=lambda body: ours) as server:
        data = _run(tmp_path, monkeypatch, capsys, server, "--protocol", "sopr")
        (body,) = server.chat_requests
        # config.yaml completions_kwargs of StableToolBench and dyabel/AnyTool: max_tokens 1000, temperature 0.2
        assert body["temperature"] == 0.2 and body["max_completion_tokens"] == 1000
        assert data["evaluator_request"]["settings"] == {"max_tokens": 1000, "temperature": 0.2, "timeout": 10}
        assert data["evaluator_identity"]["sampling"] == {"max_tokens": 1000, "temperature": 0.2}  # in the cache key
        named = _run(tmp_path, monkeypatch, capsys, server, "--protocol", "sopr", "--evaluator-settings", "ours")
        body = server.chat_requests[-1]
        assert "temperature" not in body and body["max_completion_tokens"] == 768  # the judge role's reply limit
        assert named["evaluator_request"]["settings"] == {}


def test_a_provider_refusing_functions_is_sent_tools_from_then_on_and_the_report_says_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    root = write_fake_checkout(tmp_path / "checkout", "tooleval")
    seen: list[str] = []
    with OpenAIChatServer(policy=_replies(seen), functions_supported=False) as server:
        data = _run(tmp_path, monkeypatch, capsys, server, "--protocol", "anytool", "--prompts-from", str(root),
                    "--samples", "2")
        bodies = server.chat_requests
    # one refused request, then every check with tools= (two samples × two stages)
    assert ["functions" in b for b in bodies] == [True, False, False, False, False]
    assert seen == ["tools"] * 4 and data["overall"]["solved"] == 0
    request = data["evaluator_request"]
    assert request["call_form"] == "functions" and request["sent_form"] == "tools"
    assert "functions" in request["functions_refused"]


def test_settings_go_on_the_fields_the_client_has_and_the_timeout_on_a_hosted_client_only(tmp_path: Path) -> None:
    root = write_fake_checkout(tmp_path / "checkout", "tooleval")
    request = request_for("functions", tooleval_book(root))
    hosted = ChatOpenAI(model="gpt-test", base_url="https://api.example.invalid/v1", api_key="sk-none")
    model, applied = with_settings(hosted.bind(stop=["x"]), request.settings)
    assert applied == {"temperature": 0.3, "max_tokens": 900, "request_timeout": 11.0}
    assert model.kwargs == {"stop": ["x"]} and model.bound.temperature == 0.3 and model.bound.request_timeout == 11.0
    assert hosted.temperature is None  # the user's model is left as it was
    local = ChatOpenAI(model="m", base_url="http://127.0.0.1:9/v1", api_key="sk-none")
    assert "request_timeout" not in with_settings(local, request.settings)[1]


def test_a_checkout_setting_we_cannot_send_is_refused_in_one_line(tmp_path: Path) -> None:
    from langgraph_anytool.paper_prompts import PromptSourceError

    root = write_fake_checkout(tmp_path / "checkout", "tooleval")
    path = root / EVALUATOR / "config.yaml"
    config = yaml.safe_load(path.read_text())
    config["completions_kwargs"]["top_p"] = 0.5
    path.write_text(yaml.safe_dump(config))
    with pytest.raises(PromptSourceError, match=r"config.yaml: completions_kwargs: top_p: not a setting") as exc:
        tooleval_book(root)
    assert "\n" not in str(exc.value)
    config["completions_kwargs"].pop("top_p")
    config["completions_kwargs"]["temperature"] = "hot"
    path.write_text(yaml.safe_dump(config))
    with pytest.raises(PromptSourceError, match=r"temperature: 'hot' is not a valid value"):
        tooleval_book(root)


def test_the_solvability_check_reads_the_offered_apis_full_schemas_from_the_catalog(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """§2: `check_task_solvable` gets `json.dumps(task_description)` with the offered functions' schemas (ToolEval's
    converted `available_tools`: the functions the solver was given, and Finish), not their names."""
    from langgraph_anytool.catalog.catalog import Catalog

    root = write_fake_checkout(tmp_path / "checkout", "tooleval")
    source = str(Path(__file__).parents[2] / "data" / "openapi" / "petstore.yaml")
    catalog = Catalog.load(source)
    api = next(iter(catalog))
    rec = {**_record(), "pool": [api.id]}
    res = tmp_path / "r.jsonl"
    res.write_text(json.dumps(rec) + "\n")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
    with OpenAIChatServer(policy=_replies([])) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        assert main(["eval", "passrate", str(res), "--evaluator", "openai:gpt-test", "--samples", "1", "--no-cache",
                     "--json", "--protocol", "toolllm", "--prompts-from", str(root), "--catalog", source]) == 0
        capsys.readouterr()
        task = server.chat_requests[-1]["messages"][0]["content"].split("task=", 1)[1].rstrip("\n")
    tools = json.loads(task)["available_tools"]
    assert tools == record_to_tooleval(rec, catalog)["available_tools"]
    assert tools[0]["name"] == catalog.function_name(api.id) and tools[0]["description"] == api.description
    assert [t["name"] for t in tools][-1] == "Finish"


def test_a_client_that_is_not_openai_compatible_gets_tools_and_the_record_says_why(tmp_path: Path) -> None:
    """The legacy `functions=` only means something to an OpenAI-compatible client (as the OPPO tasks' "auto")."""
    from langgraph_anytool.models.testing import ScriptedChatModel, ai, call
    from langgraph_anytool.nodes.judge.tooleval import check_is_solved

    book = tooleval_book(write_fake_checkout(tmp_path / "checkout", "tooleval"))
    request = request_for("functions", book)
    model = ScriptedChatModel(replies=[ai("", call("check_answer_status", answer_status="Solved", reason="ok"))])
    result = check_is_solved(model, "q", "an answer", [], book=book, request=request)
    assert result.label == "Solved" and model.calls[0]["tools"] == ["check_answer_status"]
    record = request.record()
    assert record["sent_form"] == "tools" and "not an OpenAI-compatible client" in record["functions_refused"]


def test_the_converted_answer_is_the_form_convert_to_dict_writes() -> None:
    """toolbench/tooleval/evaluation/dataclass.py `ExecutionGraph.convert_to_dict`: every node is {'role',
    'message', 'next'} and the system and user nodes carry the message '' (`node.message if node.role != 'system'
    and node.role != 'user' else ''`); convert_to_answer_format.py `process_valid_data`: `total_steps` is
    `eg.node_count`, system and user nodes included; a call's node {'name', 'arguments', 'response'}, Finish's
    response ''."""
    answer = record_to_tooleval(_record())["answer"]
    finish = answer["final_answer"]
    assert answer["answer_details"] == [{"role": "system", "message": "", "next": [{"role": "user", "message": "", "next": [
        {"role": "tool", "message": {"name": "f", "arguments": json.dumps({}), "response": "HTTP 500 upstream"},
         "next": [{"role": "tool", "message": {"name": "Finish", "arguments": finish, "response": ""}, "next": []}]}]}]}]
    assert answer["total_steps"] == 4
