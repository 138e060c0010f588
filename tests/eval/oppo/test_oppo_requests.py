"""The OPPO paper protocol sends what the authors' code sends and scores what it scores (repository
OPPO-Mente-Lab/agent_eval: `eval_scripts/agent_interface.py` builds the requests, `eval_scripts/eval_func.py` reads
the replies). The model under test is the real ChatOpenAI against a loopback OpenAI-compatible server that records
each request body and answers from a script; every expected body or score below is derived from the authors' code,
cited beside it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from langgraph_anytool import Catalog
from langgraph_anytool.eval.oppo.data import load_task
from langgraph_anytool.eval.oppo.judge import TaskEvaluator
from langgraph_anytool.eval.oppo.tasks import TaskRunner
from langgraph_anytool.tools.executors import make_executor
from langgraph_anytool.tools.pipeline import ApiExecutor
from tests.servers import ChatReply, OpenAIChatServer

DATA = Path(__file__).parents[2] / "data" / "oppo_tasks"
TOOLSET = Path(__file__).parents[2] / "data" / "oppo_toolset"

# the test toolset's documents as `convert_doc_to_openai_format` gives them (agent_interface.py: each property type
# lower-cased; "int" → integer; a type outside the JSON-schema names → string; every other key as in the file)
WEB_SEARCH = {"name": "web_search", "description": "Search web pages for a query.",
              "parameters": {"type": "object", "properties": {
                  "query": {"type": "string", "description": "what to look for"},
                  "count": {"type": "integer", "description": "how many results"}}, "required": ["query"]}}
IMAGE_SEARCH = {"name": "image_search", "description": "Search images for a query.",
                "parameters": {"type": "object", "properties": {
                    "query": {"type": "string", "description": "what to look for"}}, "required": ["query"]}}
LIST_CURRENCIES = {"name": "list_currencies", "description": "List the currency codes the service knows.",
                   "parameters": {"type": "object", "properties": {}, "required": []}}
DAYS_OF_MONTH = {"name": "days_of_month", "description": "Every day of a month with its weekday.",
                 "parameters": {"type": "object", "properties": {"year": {"type": "integer", "description": "year"},
                                                                 "month": {"type": "integer",
                                                                           "description": "month 1-12"}},
                                "required": ["year", "month"]}}
GET_CURRENT_TIME = {"name": "get_current_time", "description": "Now: date, time and weekday.",
                    "parameters": {"type": "object", "properties": {}, "required": []}}


@pytest.fixture(scope="module")
def cat() -> Catalog:
    return Catalog.load(TOOLSET)


def _chat(server: OpenAIChatServer, name: str = "model-under-test") -> Any:
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(model=name, base_url=server.base_url, api_key="sk-test", max_retries=0, timeout=10)


def _evaluator(server: OpenAIChatServer, tmp_path: Path, json_verdicts: bool = False) -> TaskEvaluator:
    variant: dict[str, Any] = {"json_verdicts": True} if json_verdicts else {}  # the default: the authors' reading
    return TaskEvaluator(_chat(server, "judge-test"), cache_dir=tmp_path / "cache", identity="judge-test", **variant)


def _executor(cat: Catalog) -> ApiExecutor:
    return ApiExecutor(cat, default=make_executor("template"), use_catalog_executors=True)


def _offered(body: dict[str, Any]) -> list[dict[str, Any]]:
    return list(body.get("functions") or [t["function"] for t in body.get("tools") or []])


def _legacy_or_two_calls(args: str) -> Any:
    """A model that answers a `functions=` request with one legacy call of the first function offered, and a
    `tools=` request with that call plus a second one whose arguments are cut off (not JSON)."""
    def reply(body: dict[str, Any]) -> ChatReply:
        offered = _offered(body)
        if "functions" in body:
            return ChatReply(function_call=(offered[0]["name"], args))
        return ChatReply(raw_tool_calls=[(offered[0]["name"], args), (offered[-1]["name"], '{"query": ')])
    return reply


def _toolset_copy(tmp_path: Path, extra: dict[str, Any], name: str) -> Path:
    """The test toolset plus one RapidAPI tool document `extra` (file `<name>.json`), turned on in config.yml."""
    root = tmp_path / "toolset"
    shutil.copytree(TOOLSET, root)
    (root / "rapidapi" / "docs" / f"{name}.json").write_text(json.dumps(extra, indent=2), encoding="utf-8")
    config = (root / "config.yml").read_text(encoding="utf-8")
    (root / "config.yml").write_text(config.replace("  - web_finder\n", f"  - web_finder\n  - {name}\n"),
                                     encoding="utf-8")
    return root


# ------------------------------------------------------------------------------------------- 1. functions=
def test_tasks_1_to_3_send_the_legacy_functions_parameter(cat: Catalog) -> None:
    """agent_interface.py perform_task1/2/3: `client.chat.completions.create(model=..., messages=[{"role": "user",
    "content": instruction}], stream=False, functions=api_doc_list)` — the legacy API, which returns at most one
    call (`function_call`). perform_task2 offers the right API first, then the similar ones in file order.
    eval_func.py evaluate_task2: the call parses and names the right API → 1. On `tools=` the same model also
    writes a second, cut-off call, which `_extract_func_calls`'s json.loads would refuse (0): it is never asked."""
    with OpenAIChatServer(policy=_legacy_or_two_calls('{"query": "tide pools"}')) as server:
        rep2 = TaskRunner(cat, _chat(server)).run(2, load_task(2, DATA))
        bodies = server.chat_requests
    assert [i.score for i in rep2.items] == [1.0, 1.0]  # the right function, arguments parse → 1 and 1
    assert rep2.metrics == pytest.approx({"accuracy": 1.0, "precision": 1.0, "tool_use_rate": 1.0})
    first = bodies[0]
    assert "tools" not in first and first["stream"] is False
    assert first["messages"] == [{"role": "user", "content": "Find articles about tide pools."}]
    assert first["functions"] == [WEB_SEARCH, IMAGE_SEARCH, LIST_CURRENCIES]  # right API first, then file order
    assert [f["name"] for f in bodies[1]["functions"]] == ["days_of_month", "get_current_time", "web_search"]
    assert "legacy functions= parameter" in rep2.table()

    with OpenAIChatServer(policy=lambda body: "Could you tell me the amount?") as server:
        TaskRunner(cat, _chat(server)).run(1, load_task(1, DATA)[:1])
        TaskRunner(cat, _chat(server)).run(3, load_task(3, DATA)[:1])
        one, three = server.chat_requests
    assert [f["name"] for f in one["functions"]] == ["convert"] and "tools" not in one  # perform_task1
    assert [f["name"] for f in three["functions"]] == ["convert"] and "tools" not in three  # perform_task3: no ask_user


def test_a_provider_refusing_functions_gets_tools_and_only_the_first_call_is_read(cat: Catalog) -> None:
    """Where a provider refuses `functions=`, the run offers `tools=` instead and reads the first call only, as the
    legacy API would have returned it (perform_task2): the cut-off second call is not read, so evaluate_task2
    scores the right first call 1 for both items."""
    with OpenAIChatServer(policy=_legacy_or_two_calls('{"query": "tide pools"}'), functions_supported=False) as server:
        rep = TaskRunner(cat, _chat(server)).run(2, load_task(2, DATA))
        bodies = server.chat_requests
    assert "functions" in bodies[0] and all("tools" in b and "functions" not in b for b in bodies[1:])
    assert len(bodies) == 3  # the refused request, then the item again and the second item
    assert rep.metrics["accuracy"] == 1.0 and rep.errors == 0
    assert "only the first call read" in rep.table() and "refused functions=" in rep.table()
    with OpenAIChatServer(policy=_legacy_or_two_calls('{"query": "tide pools"}'), functions_supported=False) as server:
        forced = TaskRunner(cat, _chat(server), functions_api="functions").run(2, load_task(2, DATA))
    assert forced.errors == 2 and forced.metrics["accuracy"] == 0.0  # no fall-back when functions= is asked for


# ------------------------------------------------------------------------------------------- 2. raw arguments
def test_empty_arguments_fail_json_loads_as_in_the_authors_code(cat: Catalog) -> None:
    """A call whose arguments string is "" (LangChain reads it as {}): the raw string is what is scored.
    - task 2, eval_func.py _extract_func_calls: json.loads("") raises → "function call is not parsed successfully",
      0; the reply did call a function (_check_tool_use_decision) → accuracy 0, precision 0/2, tool-use rate 2/2;
    - task 4, agent_interface.py perform_task4: json.loads(func_call.arguments) raises → run_task4 records the
      exception and run_eval.ipynb leaves the row out: both rows excluded, nothing scored;
    - task 7, perform_task7: the same json.loads raises → both rows excluded; progress over none → 0."""
    def empty(body: dict[str, Any]) -> ChatReply:
        name = _offered(body)[0]["name"]
        return ChatReply(function_call=(name, "")) if "functions" in body else ChatReply(raw_tool_calls=[(name, "")])

    executor = _executor(cat)
    try:
        with OpenAIChatServer(policy=empty) as server:
            rep2 = TaskRunner(cat, _chat(server)).run(2, load_task(2, DATA))
            rep4 = TaskRunner(cat, _chat(server), executor=executor).run(4, load_task(4, DATA))
            rep7 = TaskRunner(cat, _chat(server), executor=executor).run(7, load_task(7, DATA))
    finally:
        executor.close()
    assert [i.reason for i in rep2.items] == ["function call is not parsed successfully"] * 2
    assert rep2.metrics == pytest.approx({"accuracy": 0.0, "precision": 0.0, "tool_use_rate": 1.0})
    assert [i.status for i in rep4.items] == ["excluded", "excluded"]
    assert rep4.metrics == {"precision": 0.0, "score": 0.0, "strict_correct_rate": 0.0}
    assert [i.status for i in rep7.items] == ["excluded", "excluded"] and rep7.metrics["progress"] == 0.0
    assert "are not JSON" in rep7.items[0].reason


# ------------------------------------------------------------------------------------------- 3. duplicate names
def test_functions_sharing_a_name_are_sent_as_they_are(cat: Catalog, tmp_path: Path) -> None:
    """perform_task2 offers `[right doc] + [doc of each similar API][:5]` with each document's own name, so two APIs
    named `web_search` go out as two functions named `web_search` (45 of the release's 326 task-2 rows offer such
    a pair). evaluate_task2 compares names only: a call of `web_search` is right → 1. run_task2 passes the model
    name where perform_task2 takes `simi_api_num` (a crash); a working version offers the right API and 5 similar
    ones, so the sixth similar API listed is not offered."""
    other = {"tool_name": "web_finder_two", "tool_description": "Another search engine.",
             "APIs": [{"type": "function", "function": {
                 "name": "web_search", "description": "Search the whole web.",
                 "parameters": {"type": "object", "properties": {"q": {"type": "STRING", "description": "words"}},
                                "required": ["q"]}}}]}
    root = _toolset_copy(tmp_path, other, "web_finder_two")
    similar = ["web_finder_two##web_search", "web_finder##image_search", "fx_rates##list_currencies",
               "fx_rates##convert", "calendar##days_of_month", "agent_equipments##get_current_time"]
    data = tmp_path / "data"
    data.mkdir()
    (data / "task2.csv").write_text(",did,tool_name,api_name,simi_apis,instruction,instruction_type\n"
                                    f"0,90,web_finder,web_search,\"{chr(10).join(similar)}\",Find tide pools.,2\n",
                                    encoding="utf-8")
    dup_cat = Catalog.load(root)
    with OpenAIChatServer(policy=_legacy_or_two_calls('{"query": "tide pools"}')) as server:
        rep = TaskRunner(dup_cat, _chat(server)).run(2, load_task(2, data))
        [sent] = server.chat_requests
    names = [f["name"] for f in sent["functions"]]
    assert names == ["web_search", "web_search", "image_search", "list_currencies", "convert", "days_of_month"]
    assert sent["functions"][1] == {"name": "web_search", "description": "Search the whole web.",
                                    "parameters": {"type": "object", "properties": {
                                        "q": {"type": "string", "description": "words"}}, "required": ["q"]}}
    assert rep.items[0].score == 1.0 and rep.items[0].prediction["offered"] == names
    # ours, named: the later one renamed to its catalog function name
    with OpenAIChatServer(policy=_legacy_or_two_calls('{"query": "tide pools"}')) as server:
        renamed = TaskRunner(dup_cat, _chat(server), rename_duplicates=True).run(2, load_task(2, data))
        [sent_renamed] = server.chat_requests
    later = dup_cat.function_name(dup_cat.find_api("web_finder_two", "web_search").id)
    assert [f["name"] for f in sent_renamed["functions"]][:2] == ["web_search", later] and later != "web_search"
    assert renamed.items[0].score == 1.0


# ------------------------------------------------------------------------------------------- 4. task 5 verdicts
def test_task5_counts_only_a_reply_that_starts_with_yes(cat: Catalog, tmp_path: Path) -> None:
    """eval_func.py _check_direct_response: `resp.lower().startswith("yes")` → 1, anything else 0 — a JSON verdict
    `{"label": "pass"}` too. Our JSON form is the named variant json_verdicts=True (the cached replies are read
    again under it: no new evaluator call). perform_task5 sends the instruction as the only message."""
    with OpenAIChatServer(policy=lambda body: "Because of Rayleigh scattering.") as model_server, \
            OpenAIChatServer(['{"label": "pass", "reason": "accurate"}', "Yes, that is right."]) as judge:
        model = _chat(model_server)
        paper = TaskRunner(cat, model, evaluator=_evaluator(judge, tmp_path)).run(5, load_task(5, DATA))
        assert [i.score for i in paper.items] == [0.0, 1.0] and paper.metrics["pass_rate"] == 0.5
        ours = TaskRunner(cat, model, evaluator=_evaluator(judge, tmp_path, json_verdicts=True)).run(
            5, load_task(5, DATA))
        asked = model_server.chat_requests[0]
        judged = len(judge.chat_requests)
    assert [i.score for i in ours.items] == [1.0, 1.0] and ours.evaluator_cache_hits == 2 and judged == 2
    assert asked["messages"] == [{"role": "user", "content": load_task(5, DATA)[0].instruction}]
    assert "tools" not in asked and "functions" not in asked


# ------------------------------------------------------------------------------------------- 5, 6. task 7
def test_task7_requests_as_perform_task7_sends_them(cat: Catalog, tmp_path: Path) -> None:
    """agent_interface.py perform_task7: `tools=[{"type": "function", "function": doc}]` (the main API, then its
    dependencies) with `parallel_tool_calls=False`; each reply is appended as `msg.model_dump()` (its arguments as
    the model wrote them) and each result as `{"role": "tool", "name": <function>, "content": str(tool_ret),
    "tool_call_id": <id>}` — `str()` of the toolset's dict, Python's repr (a non-dict result wrapped as
    `{"status": "ok", "data": ...}`, toolset/dev_tools/__init__.py __call__). eval_func.py _check_answer shows the
    evaluator `json.dumps(conv, ensure_ascii=False, indent=2)`; its "Yes" → 1."""
    from openai.types.chat import ChatCompletionMessage

    script = [ChatReply(raw_tool_calls=[("get_current_time", "{}")]),
              ChatReply(raw_tool_calls=[("days_of_month", '{"year":2025,"month":3}')]),
              ChatReply(content="The first day of the month is a Saturday.")]
    executor = _executor(cat)
    try:
        with OpenAIChatServer(script) as server, OpenAIChatServer(["Yes, solved."]) as judge:
            rep = TaskRunner(cat, _chat(server), evaluator=_evaluator(judge, tmp_path), executor=executor).run(
                7, load_task(7, DATA)[:1])
            bodies, judged = server.chat_requests, judge.chat_requests[0]["messages"][0]["content"]
    finally:
        executor.close()
    assert rep.items[0].score == 1.0
    first, _, third = bodies
    assert first["parallel_tool_calls"] is False and "functions" not in first
    assert first["tools"] == [{"type": "function", "function": DAYS_OF_MONTH},
                              {"type": "function", "function": GET_CURRENT_TIME}]
    dumped = [ChatCompletionMessage.model_validate({  # the server's replies, as msg.model_dump() gives them
        "role": "assistant", "content": None,
        "tool_calls": [{"id": f"call_{n}_0", "type": "function", "function": {"name": name, "arguments": args}}]
    }).model_dump() for n, name, args in [(1, "get_current_time", "{}"), (2, "days_of_month",
                                                                          '{"year":2025,"month":3}')]]
    user, reply1, tool1, reply2, tool2 = third["messages"]
    assert user == {"role": "user", "content": "Which weekday is the first day of the current month?"}
    assert (reply1, reply2) == (dumped[0], dumped[1])  # '{"year":2025,"month":3}' as written, not re-serialised
    assert tool1["content"].startswith("{'current_time': '") and tool1["name"] == "get_current_time"
    week = ["Saturday", "Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]  # 1 March 2025: Saturday
    days = [f"2025-03-{d:02d} {w}" for d, w in zip(range(1, 32), (week * 5)[:31], strict=True)]
    assert tool2 == {"role": "tool", "name": "days_of_month", "content": str({"status": "ok", "data": days}),
                     "tool_call_id": "call_2_0"}
    final = ChatCompletionMessage.model_validate(
        {"role": "assistant", "content": "The first day of the month is a Saturday."}).model_dump()
    conv = [*third["messages"], final]
    assert json.dumps(conv, ensure_ascii=False, indent=2) in judged


# ------------------------------------------------------------------------------------------- 6. task 6, task 8
def test_task6_sends_the_release_conversation_and_evaluates_as_the_authors(cat: Catalog, tmp_path: Path) -> None:
    """agent_interface.py perform_task6: `messages=conv_history`, the row's conversation as json.loads gives it
    (here, as in the release, the arguments indented and null fields kept). eval_func.py _check_response_w_tool:
    USER is the user's content, ASSISTANT `json.dumps(function_call)` when a dict, else the value itself — the
    release's null reads "None" —, FUNCTION the tool message's content as the release has it, then the reply's
    content; the evaluator's "yes" → 1."""
    conv: list[dict[str, Any]] = [{"role": "user", "content": "Find me a page about tide pools."},
            {"content": None, "refusal": None, "role": "assistant", "function_call": None,
             "tool_calls": [{"id": "call_b2", "function": {"arguments": '{\n  "query": "tide pools"\n}',
                                                           "name": "web_search"},
                             "type": "function", "index": None}], "tool_call_id": None, "name": None},
            {"role": "tool", "name": "web_search", "tool_call_id": "call_b2",
             "content": "{'status': 'ok', 'data': [{'title': 'Tide pools', 'url': 'https://example.org/tide'}]}"}]
    data = tmp_path / "data"
    data.mkdir()
    cell = json.dumps(conv, ensure_ascii=False, indent=2).replace('"', '""')
    (data / "task6.csv").write_text(f',did,tool_name,api_name,instruction,conv\n0,51,web_finder,web_search,'
                                    f'Find me a page about tide pools.,"{cell}"\n', encoding="utf-8")
    answer = "There is one: Tide pools (example.org). "
    with OpenAIChatServer([answer]) as server, OpenAIChatServer(["YES"]) as judge:
        rep = TaskRunner(cat, _chat(server), evaluator=_evaluator(judge, tmp_path)).run(6, load_task(6, data))
        sent, judged = server.chat_requests[0], judge.chat_requests[0]["messages"][0]["content"]
    assert sent["messages"] == conv and "tools" not in sent
    assert rep.items[0].score == 1.0
    assert "\nUSER: Find me a page about tide pools.\nASSISTANT: None\nFUNCTION: " + conv[2]["content"] + \
        f"\nASSISTANT: {answer}\n" in judged


def test_task6_failed_evaluator_scores_0_with_a_warning(cat: Catalog, tmp_path: Path) -> None:
    """eval_func.py _check_response_w_tool: a failed evaluator call should return (0, "WARNING: fail to check.
    Exception: ...") but raises NameError (`str(ret)`, never assigned), ending the whole evaluation; a working
    version scores the item 0 and goes on (ours: with failed_as_zero, `--failed-as-zero`). Item 1 passes the URL rule and loses its verdict (0); item 2's reply
    carries a 49-character URL the tool result lacks → 0 by the URL rule, no evaluator call. pass_rate 0/2."""
    replies = ["I am in Porto.", "See https://example.org/guides/tide-pools-for-experts"]
    with OpenAIChatServer(replies) as server, OpenAIChatServer([]) as judge:  # every evaluator request: a 400
        rep = TaskRunner(cat, _chat(server), evaluator=_evaluator(judge, tmp_path),
                         failed_as_zero=True).run(6, load_task(6, DATA))  # the authors' count, on request
    assert rep.items[0].reason.startswith("WARNING: fail to check. Exception:") and rep.errors == 0
    assert rep.evaluator_faults == 1 and "1 of 2 items were not scored by the evaluator" in rep.table()
    assert rep.items[1].reason.startswith("Found URL") and rep.metrics["pass_rate"] == 0.0


def test_task8_prompt_carries_the_release_documents(cat: Catalog, tmp_path: Path) -> None:
    """agent_interface.py perform_task8: one user message; after the problem, "Tools:" and per API of `comb`
    `f"{i+1}. " + json.dumps(convert_doc_to_openai_format(doc), ensure_ascii=False).replace("\\n", " ")` — the
    document's own key order (here "description" before "type", as in the release's dev tool docs), types
    converted (INT → integer), non-ASCII kept."""
    doc = {"tool_name": "weather_now", "tool_description": "Weather.",
           "APIs": [{"type": "function", "function": {
               "name": "current_weather", "description": "Weather now in a city (°C).",
               "parameters": {"type": "object", "properties": {
                   "city": {"description": "city name", "type": "STRING"},
                   "days": {"description": "how many days\nahead", "type": "INT"}}, "required": ["city"]}}}]}
    root = _toolset_copy(tmp_path, doc, "weather_now")
    data = tmp_path / "data"
    data.mkdir()
    (data / "task8.csv").write_text(',did,comb,instruction\n0,70,"agent_equipments/get_my_location\n'
                                    'weather_now/current_weather",Should I take an umbrella today?\n',
                                    encoding="utf-8")
    converted = {"name": "current_weather", "description": "Weather now in a city (°C).",
                 "parameters": {"type": "object", "properties": {
                     "city": {"description": "city name", "type": "string"},
                     "days": {"description": "how many days\nahead", "type": "integer"}}, "required": ["city"]}}
    location = {"name": "get_my_location", "description": "Where the assistant is.",
                "parameters": {"type": "object", "properties": {}, "required": []}}
    with OpenAIChatServer(["1. get_my_location\n2. current_weather"]) as server:
        TaskRunner(Catalog.load(root), _chat(server)).run(8, load_task(8, data))
        sent = server.chat_requests[0]
    [message] = sent["messages"]
    assert message["role"] == "user" and "tools" not in sent and "functions" not in sent
    lines = [f"{i + 1}. " + json.dumps(d, ensure_ascii=False).replace("\n", " ") for i, d in enumerate([location,
                                                                                                       converted])]
    assert message["content"].endswith("\n\nTools:\n" + "\n".join(lines))
    assert "Should I take an umbrella today?\n\nTools:\n" in message["content"]


# ------------------------------------------------------------------------------------------- the command line
def test_cli_options_reach_the_requests(capsys: Any, monkeypatch: Any, tmp_path: Path) -> None:
    """`anytool eval tasks` passes --functions-api, --rename-duplicates and --json-verdicts on: with `tools`, task 2
    sends `tools=` and reads the first call only (the second, cut-off one is ignored → 1 and 1); with
    --json-verdicts a JSON "pass" counts in task 5 (without it, 0)."""
    from langgraph_anytool.cli.app import main

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    base = ["eval", "tasks", "--data", str(DATA), "--catalog", str(TOOLSET), "--model", "openai:model-under-test",
            "--json", "--evaluator-cache", str(tmp_path / "c")]
    with OpenAIChatServer(policy=_legacy_or_two_calls('{"query": "tide pools"}')) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        assert main([*base, "--task", "2", "--functions-api", "tools", "--rename-duplicates"]) == 0
        assert all("tools" in b and "functions" not in b for b in server.chat_requests)
    report = json.loads(capsys.readouterr().out)[0]
    assert report["metrics"]["accuracy"] == 1.0 and "only the first call read" in report["notes"][-1]

    def answer_or_verdict(body: dict[str, Any]) -> str:
        return '{"label": "pass"}' if body["model"] == "judge" else "Blue light scatters most."

    with OpenAIChatServer(policy=answer_or_verdict) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        judged = [*base, "--task", "5", "--evaluator", "openai:judge"]
        assert main(judged) == 0
        assert json.loads(capsys.readouterr().out)[0]["metrics"]["pass_rate"] == 0.0
        assert main([*judged, "--json-verdicts"]) == 0
        assert json.loads(capsys.readouterr().out)[0]["metrics"]["pass_rate"] == 1.0


def test_task4_evaluator_gets_the_conversation_and_the_call_as_evaluate_task4_passes_them(cat: Catalog,
                                                                                          tmp_path: Path) -> None:
    """eval_func.py evaluate_task4: `func_call = _extract_func_calls(conv_msgs)[0]` parses every call's `arguments`
    string of the conversation in place (`json.loads`), then `_check_params_with_gpt4(conv_msgs, api_doc, func_call)`
    — `user_instruction` is the whole conversation perform_task4 returned ([the user message, `msg.model_dump()` of
    the reply, the tool message, `msg.model_dump()` of the second turn's reply]), formatted by the f-string as
    Python's `str()` of the list; `func_call_text` is `json.dumps` of the first call's `function` dict as the dump
    holds it (`arguments` before `name`), its newlines removed. The old code sent the instruction and
    {"name", "arguments"} (issue 36 §4; found by scripts/request_diff.py)."""
    from openai.types.chat import ChatCompletionMessage

    script = [ChatReply(raw_tool_calls=[("days_of_month", '{"year":2024,"month":3}')]),
              ChatReply(content="March 2024 has 31 days.")]
    executor = _executor(cat)
    try:
        with OpenAIChatServer(script) as server, OpenAIChatServer(policy=lambda body: "YES") as judge:
            TaskRunner(cat, _chat(server), evaluator=_evaluator(judge, tmp_path), executor=executor).run(
                4, load_task(4, DATA)[:1])
            second, judged = server.chat_requests[1], judge.chat_requests[0]["messages"][0]["content"]
    finally:
        executor.close()
    reply1 = ChatCompletionMessage.model_validate({"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1_0", "type": "function", "function": {"name": "days_of_month",
                                                            "arguments": '{"year":2024,"month":3}'}}]}).model_dump()
    reply1["tool_calls"][0]["function"]["arguments"] = {"year": 2024, "month": 3}  # _extract_func_calls, in place
    reply2 = ChatCompletionMessage.model_validate({"role": "assistant", "content": "March 2024 has 31 days."}
                                                  ).model_dump()
    user, _, tool = second["messages"]
    assert user == {"role": "user", "content": load_task(4, DATA)[0].instruction} and tool["role"] == "tool"
    conv = [user, reply1, tool, reply2]
    assert f"Instruction: {conv}\n\nAPI specification: " in judged
    assert 'Function call: {"arguments": {"year": 2024, "month": 3}, "name": "days_of_month"}' in judged
