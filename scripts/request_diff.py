"""The request diff (issue 36): ours beside the authors' code, on the same input, for real clones of their
repositories; prints every difference and a summary.

    python scripts/request_diff.py --anytool PATH --stabletoolbench PATH --agent-eval PATH --multi-llm-agent PATH

Each clone is the user's own (e.g. `git clone https://github.com/dyabel/AnyTool`); nothing of it is copied into
this project. The authors' request-building functions are taken from the clone's files (`ast`: the function or
method alone, its decorators dropped) and run in an isolated child interpreter (`request_diff_authors.py`, see
`run_child`), with their client replaced by a recorder of what it would send; ours run here unchanged against a
loopback recorder (`ChatOpenAI`, as a user's run sends them). Both get the same solve and the same scripted
evaluator replies. Compared, request by request: the JSON body as sent (messages, functions or tools, settings).
The documented differences (docs/evaluation.md, "What the evaluator is sent") are applied before comparing and
listed: the model name; `timeout` (the authors' client option, never in the body: ours is set on a hosted
endpoint's client); `max_tokens`, which ChatOpenAI sends under the name `max_completion_tokens`;
`stream`/`stream_options` (our stall detection on a loopback server).

Covered, one function per case: the in-loop judge of `AnyToolConfig.paper()` (`judge_anytool`; dyabel/AnyTool:
`verifier.py check_solved_toolbench` → `convert_to_answer_format.py process_valid_data` → its tooleval `rtl.py
check_is_solved` → `tooleval.py function_call` → `utils.py OpenaiPoolRequest.request` → `openai_utils.py
call_gpt`), `paper()`'s solvability check (`solvable_check`; `verifier.py check_task_solvable_by_function` →
`call_gpt`), the first request of each of `paper()`'s retriever agents (`agents_anytool`; meta, category, tool:
main.py's classes and call_gpt, their database functions answered with ours' data), the pass-rate checks of `eval
passrate --protocol sopr|toolllm --prompts-from` (`passrate_stabletoolbench`; StableToolBench: `rtl.py
check_is_solved` → `tooleval.py function_call` → `OpenaiPoolRequest.request`), OPPO task 7's two evaluator prompts
(`oppo_task7`; `eval_func.py _check_answer`, `_extract_tools` → `_get_gpt_response`), and α-UMi's planner, caller
and summarizer inputs of `eval steps --mode multi --prompts-from` (`umi_infer`; Multi-LLM-Agent `infer_pipeline.py
build_infer_samples` and `infer`'s loops), the α-UMi solver's requests in a run with `umi_prompts_from`
(`umi_run`: two steps, planner → caller then planner → summarizer; ToolBench-multiLLM `collab_agent_model.py
CollbaAgentV3.parse` / `prediction`, `rapidapi.py api_json_to_openai_json`; our side with `probe_endpoints` off, so
that the recorder sees the chat requests alone), `paper()`'s DFSDT solver (`solver_anytool`: its first request, the
request after a call, the diversity request after a restart; `solver_seeded_anytool`: a solve seeded from the
previous chain; rapidapi.py, DFS.py, chatgpt_function_model.py → call_gpt) and ToolLLM's solvability check of `eval
passrate --protocol toolllm` (`toolllm_solvable`; StableToolBench `rtl.py check_task_solvable`). A case is a parent function here (ours, and the comparison) and, by the
same name or close, a function of `request_diff_authors.py` (theirs). Exit status 0 when no undocumented
difference is found, 1 otherwise.

What runs: the authors' functions and classes read from the clone paths given on the command line (that is how
their request building runs unchanged, beside ours), and nothing else: never a model's output, an evaluator's reply
or a data file. They run only in the child: `python -I` (no environment variables, no user site, not the script's
folder on `sys.path`), its working folder a fresh temporary one removed afterwards, the case's inputs as JSON on its
stdin and the recorded requests back as JSON on its stdout; the child imports none of this package. It is still
code from the clone running as you, outside any sandbox: point it only at clones you would run yourself. A
developer's tool in `scripts/`, not part of the package; `tests/scripts/test_request_diff.py` runs its machinery
on a hand-made fake clone.
"""

from __future__ import annotations

import argparse
import difflib
import importlib.util
import json
import sys
import tempfile
import threading
import types
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage
from langchain_openai import ChatOpenAI

from langgraph_anytool import AnyToolConfig
from langgraph_anytool.catalog import Catalog, Category
from langgraph_anytool.catalog.parse import parse_tool
from langgraph_anytool.eval.anytool.passrate import tooleval_inputs
from langgraph_anytool.eval.oppo import prompts as oppo_prompts
from langgraph_anytool.eval.oppo.judge import TaskEvaluator
from langgraph_anytool.models.guard import CallGuard
from langgraph_anytool.models.llm import ModelSet, call_role
from langgraph_anytool.nodes.judge.converted import converted_answer
from langgraph_anytool.nodes.judge.tooleval import check_is_solved
from langgraph_anytool.nodes.judge.tooleval_request import request_for, with_settings
from langgraph_anytool.nodes.tool_agent.handlers import authors_pool_listing, solvable_request
from langgraph_anytool.paper_prompts import anytool_book, oppo_book, tooleval_book
from langgraph_anytool.runtime import Deps, RunSignals

# documented differences (docs/evaluation.md): dropped from both bodies before comparing, or renamed
DROPPED = ("model", "timeout", "stream", "stream_options")
RENAMED = {"max_completion_tokens": "max_tokens"}

QUERY = "What is the weather in Paris, and is it raining?"
FUNCTION = "current_for_weather_now"
ARGS = {"city": "Paris"}
OBSERVATION = json.dumps({"error": "", "response": "{'city': 'Paris', 'temp_c': 21, 'rain': False}"})
FINISH_ARGS = {"return_type": "give_answer", "final_answer": "It is 21 C in Paris and it is not raining."}
AUTHORS_SIDE = Path(__file__).with_name("request_diff_authors.py")


def _authors_side() -> types.ModuleType:
    """`request_diff_authors.py` imported for its plain helpers (the scripted replies, `completion`): importing it runs
    none of the authors' code, which only its cases run, in the child."""
    spec = importlib.util.spec_from_file_location("request_diff_authors", AUTHORS_SIDE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_SIDE = _authors_side()
REPLIES, completion, forced_reply = _SIDE.REPLIES, _SIDE.completion, _SIDE.forced_reply


# ------------------------------------------------------------------------------------------------ the recorder
class Recorder:
    """A loopback OpenAI chat server: records each request body, answers with `reply(body)` (a plain JSON
    completion: a function call in the form the request asked for, or text)."""

    def __init__(self, reply: Callable[[Mapping[str, Any]], tuple[str, dict[str, Any]] | str]) -> None:
        self.bodies: list[dict[str, Any]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                outer.bodies.append(body)
                done = completion(body, reply(body))
                data, kind = json.dumps(done).encode(), "application/json"
                if body.get("stream"):  # the same completion as one chunk, then its usage (server-sent events)
                    choice = done["choices"][0]
                    chunks = [{**done, "object": "chat.completion.chunk", "usage": None, "choices": [
                        {"index": 0, "delta": choice["message"], "finish_reason": choice["finish_reason"]}]},
                              {**done, "object": "chat.completion.chunk", "choices": []}]
                    for call in chunks[0]["choices"][0]["delta"].get("tool_calls") or []:
                        call["index"] = 0
                    data = "".join(f"data: {json.dumps(c)}\n\n" for c in [*chunks, "[DONE]"]).replace(
                        'data: "[DONE]"', "data: [DONE]").encode()
                    kind = "text/event-stream"
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> Recorder:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()


# ------------------------------------------------------------------------------------------------ the same solve
def offered_functions() -> list[dict[str, Any]]:
    return [{"name": FUNCTION, "description": "This is the subfunction for tool \"weather_now\".",
             "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"],
                            "optional": []}},
            {"name": "Finish", "description": "Finish.", "parameters": {"type": "object", "properties": {}}}]


def our_attempt() -> dict[str, Any]:
    """The solve as our solver's tree records it: the API call and its observation, then the Finish call."""
    tree = [{"id": 0, "parent": None, "messages": [], "calls": []},
            {"id": 1, "parent": 0, "calls": [{"tool_call_id": "c1", "function": FUNCTION, "arguments": ARGS,
                                              "status": "ok"}],
             "messages": [{"role": "assistant", "content": "Let me look.",
                           "tool_calls": [{"name": FUNCTION, "args": ARGS, "id": "c1"}]},
                          {"role": "tool", "content": OBSERVATION, "tool_call_id": "c1", "name": FUNCTION}]},
            {"id": 2, "parent": 1, "calls": [{"tool_call_id": "c2", "function": "Finish", "arguments": FINISH_ARGS,
                                              "status": "finish:give_answer"}],
             "messages": [{"role": "assistant", "content": "",
                           "tool_calls": [{"name": "Finish", "args": FINISH_ARGS, "id": "c2"}]},
                          {"role": "tool", "content": "{}", "tool_call_id": "c2", "name": "Finish"}]}]
    return {"attempt": 1, "round": 0, "mode": "dfsdt", "finish_type": "give_answer",
            "answer": FINISH_ARGS["final_answer"], "reason": "", "failed_functions": [], "failed_api_ids": [],
            "api_calls": 1, "tree": tree}


def authors_generation() -> dict[str, Any]:
    """The same solve as the authors' DFS.py `to_json(answer=True)` writes it: `train_messages` of the answer node
    (the model's arguments strings as our tree's `json.dumps` renders them), `function`, `final_answer`."""
    final = json.dumps(FINISH_ARGS)
    chain = [{"role": "system", "content": "SYSTEM"}, {"role": "user", "content": QUERY},
             {"role": "assistant", "content": "Let me look.",
              "function_call": {"name": FUNCTION, "arguments": json.dumps(ARGS)}},
             {"role": "function", "name": FUNCTION, "content": OBSERVATION},
             {"role": "assistant", "content": "", "function_call": {"name": "Finish", "arguments": final}},
             {"role": "function", "name": "Finish", "content": "{}"}]
    return {"query": QUERY, "function": offered_functions(), "final_answer": final, "train_messages": [chain]}


# ------------------------------------------------------------------------------------------------ comparing
def normal(body: Mapping[str, Any]) -> dict[str, Any]:
    out = {RENAMED.get(k, k): v for k, v in body.items() if k not in DROPPED}
    return json.loads(json.dumps(out))


class Report:
    def __init__(self) -> None:
        self.compared = 0
        self.differing: list[str] = []

    def compare(self, what: str, ours: list[dict[str, Any]], theirs: list[dict[str, Any]],
                ours_only: tuple[str, ...] = ()) -> None:
        """Compare request by request; `ours_only`: fields the docs list as sent by us alone (left out of ours)."""
        print(f"## {what}: {len(ours)} request(s) of ours, {len(theirs)} of the authors'")
        if ours_only:
            print(f"   documented: {', '.join(ours_only)} sent by us only")
            ours = [{k: v for k, v in b.items() if RENAMED.get(k, k) not in ours_only} for b in ours]
        if len(ours) != len(theirs):
            self.differing.append(f"{what}: {len(ours)} requests vs {len(theirs)}")
            print("   DIFFERENT number of requests")
        for i, (a, b) in enumerate(zip(ours, theirs, strict=False)):
            self.compared += 1
            left, right = normal(a), normal(b)
            if left == right:
                print(f"   request {i + 1}: equal ({', '.join(sorted(left))})")
                continue
            self.differing.append(f"{what}, request {i + 1}")
            print(f"   request {i + 1}: DIFFERENT")
            lines = difflib.unified_diff(json.dumps(right, indent=1, sort_keys=True, ensure_ascii=False).splitlines(),
                                         json.dumps(left, indent=1, sort_keys=True, ensure_ascii=False).splitlines(),
                                         "authors", "ours", lineterm="", n=1)
            for line in lines:
                print("   " + (line if len(line) < 400 else line[:400] + f"... ({len(line)} chars)"))


def chat(base_url: str) -> ChatOpenAI:
    return ChatOpenAI(model="MODEL", base_url=base_url, api_key="sk-loopback", max_retries=0)


def judge_anytool(clone: Path, report: Report) -> None:
    """paper()'s in-loop judge, one sample (check_solved_toolbench makes three alike)."""
    theirs = run_child("anytool_judge", clone, {"query": QUERY, "generation": authors_generation()})
    book = anytool_book(clone)
    request = request_for("functions", book)
    with Recorder(forced_reply) as rec:
        model, _ = with_settings(chat(rec.base_url), request.settings)
        found = converted_answer(our_attempt())  # type: ignore[arg-type]
        assert found is not None
        check_is_solved(model, QUERY, found[0], found[1], book=book, request=request)
    report.compare("paper()'s judge (dyabel/AnyTool: check_solved_toolbench → its tooleval → call_gpt)",
                   rec.bodies, theirs["sent"])


def solvable_check(clone: Path, report: Report) -> None:
    """paper()'s solvability check after an addition (verifier.py check_task_solvable_by_function)."""
    tool = parse_tool({"tool_name": "Weather Now", "tool_description": "Weather data. ",
                       "api_list": [{"name": "Current", "description": " ", "required_parameters": [
                           {"name": "city", "type": "STRING", "description": "the city"}]}]},
                      category="Weather", source="request_diff")
    catalog = Catalog([Category("Weather", tools=(tool,))])
    api = tool.apis[0]
    book = anytool_book(clone)
    theirs = run_child("anytool_solvable", clone, {  # their constant as our book read it, the pool as main.py lists it
        "query": QUERY, "system": book.templates["solvable_system"].text, "pool": authors_pool_listing([api])})
    with Recorder(forced_reply) as rec:
        deps = Deps(catalog=catalog, models=ModelSet(default=chat(rec.base_url), by_role={}), executor=None,  # type: ignore[arg-type]
                    config=AnyToolConfig.paper(prompts_from=str(clone)), signals=RunSignals())
        prompt, model, inputs, _ = solvable_request(deps, QUERY, [api.id])
        call_role(model, "solvable", prompt, None, inputs=inputs,
                  guard=CallGuard(reply_caps="local", is_local=lambda endpoint: False))
    report.compare("paper()'s solvability check (dyabel/AnyTool: check_task_solvable_by_function → call_gpt)",
                   rec.bodies, theirs["sent"])


def passrate_stabletoolbench(clone: Path, report: Report) -> None:
    """eval passrate --protocol sopr|toolllm --prompts-from: one sample's checks (StableToolBench)."""
    record = {"query": QUERY, "answer": FINISH_ARGS["final_answer"], "trajectory": [our_attempt()],
              "pool": [], "config": {"solver": "dfsdt"}}
    final, answer, _tools = tooleval_inputs(record)
    theirs = run_child("stabletoolbench_passrate", clone, {"query": QUERY, "method": str(answer["method"]),
                                                           "generation": authors_generation()})
    book = tooleval_book(clone)
    request_ = request_for("tools", book)
    with Recorder(forced_reply) as rec:
        model, _ = with_settings(chat(rec.base_url), request_.settings)
        check_is_solved(model, QUERY, final, answer, book=book, request=request_)
    report.compare("eval passrate (THUNLP-MT/StableToolBench: rtl.py check_is_solved → tooleval.py function_call)",
                   rec.bodies, theirs["sent"])


def oppo_task7(clone: Path, report: Report) -> None:
    """OPPO task 7's evaluator prompts (eval_func.py _check_answer, _extract_tools → _get_gpt_response)."""
    conv = [{"role": "system", "content": "You are a helpful assistant."}, {"role": "user", "content": QUERY},
            {"role": "assistant", "content": None, "function_call": {"name": "weather", "arguments": "{\"city\": "
                                                                      "\"Paris\"}"}},
            {"role": "function", "name": "weather", "content": "{'temp_c': 21}"},
            {"role": "assistant", "content": "It is 21 C in Paris."}]
    sent = run_child("oppo_task7", clone, {"conversation": conv})["sent"]
    book = oppo_book(clone)
    with Recorder(lambda body: "No, not solved.") as rec:
        evaluator = TaskEvaluator(chat(rec.base_url))
        evaluator.judge(7, oppo_prompts.solved_prompt(conv, book))
        evaluator.reply(7, "extract_tools", oppo_prompts.extract_tools_prompt(conv, book))
    # docs/evaluation.md, "The tasks": our evaluator calls carry the evaluator role's reply limit
    report.compare("OPPO task 7 (OPPO-Mente-Lab/agent_eval: _check_answer, _extract_tools)", rec.bodies, sent,
                   ours_only=("max_tokens",))


def agents_anytool(clone: Path, report: Report) -> None:
    """paper()'s retriever agents, each one's first request (scripts/main.py `Main_Search_Agent.__init__`,
    `Category_Agent.__init__` + `category_search`, `Tool_Agent.__init__`, each turn sent with `call_gpt(messages=
    self.messages, functions=self.functions)`): their classes, prompt constants (prompt_template.py) and function
    dicts (main.py, api_database_function.py) run from the clone. Their database functions (`query_all_categories`,
    `get_tools_in_category`, `query_all_tool_info`, which read the clone's preprocessing output) answer with what
    ours computed from the same catalog (meta_agent.authors_categories, category_agent.authors_tools,
    tool_agent.tools_info): compared are the templates as main.py fills them, the functions and their order, the
    call form and settings."""
    from langchain_core.messages import AIMessage as _AI

    from langgraph_anytool import create_anytool_graph
    from langgraph_anytool.models.testing import ScriptedChatModel
    from langgraph_anytool.nodes.agents import new_agent_record
    from langgraph_anytool.nodes.category_agent import authors_tools
    from langgraph_anytool.nodes.meta_agent import authors_categories
    from langgraph_anytool.nodes.tool_agent import tools_info

    tools = [parse_tool({"tool_name": name, "tool_description": f"{name} data. ",
                         "api_list": [{"name": "Current", "description": " ", "required_parameters": [
                             {"name": "city", "type": "STRING", "description": "the city"}]}]},
                        category="Weather", source="request_diff") for name in ("Weather Now", "Rain Radar")]
    catalog = Catalog([Category("Weather", tools=tuple(tools))])
    first: dict[str, tuple[str, dict[str, Any]]] = {
        "create_agent_category_level": ("create_agent_category_level", {"category": "Weather"}),
             "create_agent_tool_level": ("create_agent_tool_level", {"category": "Weather", "tools": ["Weather Now"]})}

    def reply(body: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
        names = [f["name"] for f in body.get("functions") or []]
        if not any(m.get("role") == "assistant" for m in body.get("messages") or []):
            for key, call in first.items():
                if key in names:
                    return call
        return "Finish", {}

    config = AnyToolConfig.paper(prompts_from=str(clone), small_category_shortcut=False, max_tools_per_agent=1,
                                 max_reflections=0)
    with Recorder(reply) as rec:
        model = chat(rec.base_url)
        graph = create_anytool_graph(catalog, ScriptedChatModel(replies=[_AI(content="no")] * 20), config=config,
                                     models={"meta": model, "category": model, "tool": model})
        try:
            graph.invoke({"query": QUERY})
        except Exception as exc:  # the run after the agents' first requests is not compared
            print(f"   (our run after the agents' requests: {type(exc).__name__})")
        firsts: dict[str, dict[str, Any]] = {}
        for body in rec.bodies:
            names = [f.get("function", f).get("name") for f in body.get("functions") or body.get("tools") or []]
            level = ("meta" if "create_agent_category_level" in names else "category"
                     if "create_agent_tool_level" in names else "tool" if "add_apis_into_api_pool" in names else "")
            if level and level not in firsts:
                firsts[level] = body
    deps = Deps(catalog=catalog, models=ModelSet(default=chat(rec.base_url), by_role={}), executor=None,  # type: ignore[arg-type]
                config=config, signals=RunSignals())
    book = anytool_book(clone)
    meta = new_agent_record("meta", "meta")
    meta["messages"] = [HumanMessage(book.fill("meta_first", query=QUERY))]
    tool = new_agent_record("meta/Weather/t1", "tool", category="Weather", tools=["Weather Now"])
    theirs = run_child("anytool_agents", clone, {
        "query": QUERY, "leaf_tool_number": config.max_tools_per_agent, "category": "Weather", "tools": ["Weather Now"],
        "categories": authors_categories(meta, deps),
        "tools_in_category": {"Weather": [t.name for t in authors_tools(deps, catalog.category("Weather"))]},
        "tool_info": tools_info(tool, deps)})["firsts"]
    for level in ("meta", "category", "tool"):
        # docs/configuration.md `reply_caps`: a loopback server (this recorder) keeps the role's reply limit
        report.compare(f"paper()'s {level} agent, its first request (dyabel/AnyTool scripts/main.py → call_gpt)",
                       [firsts[level]] if level in firsts else [], [theirs[level]], ours_only=("max_tokens",))


# ------------------------------------------------------------------------------------------------ the solver
# the pooled APIs of the solver's cases: two APIs of one tool, as ToolBench documents (a reserved-word parameter,
# a default, a description naming the API, a blank one)
SOLVER_TOOL = {"tool_name": "Weather Now", "tool_description": "Weather data for any city. ", "api_list": [
    {"name": "Current", "description": "Current weather of a city; Current is updated hourly.", "method": "GET",
     "required_parameters": [{"name": "city", "type": "STRING", "description": "the city", "default": "Paris"}],
     "optional_parameters": [{"name": "from", "type": "NUMBER", "description": "hours back", "default": ""}]},
    {"name": "Forecast", "description": " ", "method": "GET",
     "required_parameters": [{"name": "days", "type": "NUMBER", "description": "how many days", "default": 3}],
     "optional_parameters": []}]}
SOLVER_CALL = ("current_for_weather_now", '{"city": "Lyon",  "is_from": 2}')  # the model's own spacing
SOLVER_REPLIES: list[tuple[str | None, str, str]] = [  # (content, function, arguments) per query
    ("Let me look.", *SOLVER_CALL),
    (None, "Finish", json.dumps({"return_type": "give_up_and_restart", "reason": "current_for_weather_now failed"})),
    (None, "Finish", json.dumps({"return_type": "give_answer", "final_answer": "It is 21 C in Lyon."}))]
AUTHORS_OBSERVATION = {"error": "", "response": "{'temp_c': 21}"}  # the ToolBench server's reply (rapidapi.py _step)


def solver_anytool(clone: Path, report: Report) -> None:
    """paper(prompts_from)'s DFSDT solver on two pooled APIs: its first request, the request after one call and its
    observation, and the diversity request after a give_up_and_restart (DFS.py backs up to the root), beside the
    child's `anytool_solver` on the same tool document and the same replies. The observation's envelope is ours
    (the executor's `{"status", "response"}`) and the ToolBench server's there (`json.dumps({"error",
    "response"})`): documented, ours is read as theirs before comparing."""
    from langgraph_anytool.tools.executors.local import LocalExecutor
    from langgraph_anytool.tools.pipeline import ApiExecutor

    theirs = run_child("anytool_solver", clone, {"query": QUERY, "tool": SOLVER_TOOL, "replies": SOLVER_REPLIES,
                                                 "observation": AUTHORS_OBSERVATION})["sent"]
    tool = parse_tool(SOLVER_TOOL, category="Weather", source="request_diff", key="weather_now")
    catalog = Catalog([Category("Weather", tools=(tool,))])
    executor = ApiExecutor(catalog, default=LocalExecutor({tool.apis[0].id: lambda **_: {"temp_c": 21},
                                                           tool.apis[1].id: lambda **_: {}}))
    sent = iter(SOLVER_REPLIES)

    def reply(body: Mapping[str, Any]) -> tuple[str, dict[str, Any]] | str:
        if "messages" not in body:  # our discovery of a loopback server (not a chat request)
            return ""
        content, name, arguments = next(sent)
        return content, name, arguments  # type: ignore[return-value]  # the arguments string as the model wrote it

    with Recorder(reply) as rec:
        graph, pool = paper_solver(clone, catalog, tool, executor, rec.base_url)
        graph.invoke({"query": QUERY, "run_key": "r", "round": 0, "api_pool": pool, "previous_attempts": []})
    ours_obs = executor.render(executor.call(tool.apis[0].id, {"city": "Lyon"}))
    theirs_obs = json.dumps(AUTHORS_OBSERVATION)
    print(f"   documented: the observation's envelope, ours {ours_obs} read as the authors' {theirs_obs}")
    report.compare("paper()'s DFSDT solver: first request, after one call, diversity after a backtrack "
                   "(dyabel/AnyTool rapidapi.py, DFS.py, chatgpt_function_model.py → call_gpt)",
                   [_swapped(b, ours_obs, theirs_obs) for b in rec.bodies if "messages" in b], theirs)


# the seeded solve: the first solve calls both APIs (the model's own spacing) and answers; the reflection removes
# Current; the seeded solve's first request is compared
SEEDED_REPLIES: list[tuple[str | None, str, str]] = [
    ("Let me look.", *SOLVER_CALL), (None, "forecast_for_weather_now", '{"days":2}'),
    (None, "Finish", json.dumps({"return_type": "give_answer", "final_answer": "It is 21 C in Lyon."}))]


def solver_seeded_anytool(clone: Path, report: Report) -> None:
    """paper(prompts_from)'s DFSDT solver seeded from the previous attempt after a reflection removed one of the two
    pooled APIs: the seeded solve's first request, beside the child's `anytool_seeded_solver` on the same tool document and
    replies (our solver graph run twice, the second time with the first's attempt and the pool left). The
    observation's envelope is documented as in `solver_anytool`."""
    from langgraph_anytool.tools.executors.local import LocalExecutor
    from langgraph_anytool.tools.pipeline import ApiExecutor

    theirs = run_child("anytool_seeded_solver", clone, {"query": QUERY, "tool": SOLVER_TOOL,
                                                        "replies": SEEDED_REPLIES,
                                                        "observation": AUTHORS_OBSERVATION})["sent"]
    tool = parse_tool(SOLVER_TOOL, category="Weather", source="request_diff", key="weather_now")
    catalog = Catalog([Category("Weather", tools=(tool,))])
    executor = ApiExecutor(catalog, default=LocalExecutor({a.id: lambda **_: {"temp_c": 21} for a in tool.apis}))
    sent = iter([*SEEDED_REPLIES, SEEDED_REPLIES[-1]])

    def reply(body: Mapping[str, Any]) -> tuple[str, dict[str, Any]] | str:
        if "messages" not in body:  # our discovery of a loopback server (not a chat request)
            return ""
        return next(sent)  # type: ignore[return-value]  # (content, function, the arguments string as written)

    with Recorder(reply) as rec:
        graph, pool = paper_solver(clone, catalog, tool, executor, rec.base_url)
        out = graph.invoke({"query": QUERY, "run_key": "r", "round": 0, "api_pool": pool, "previous_attempts": []})
        done = len([b for b in rec.bodies if "messages" in b])
        graph.invoke({"query": QUERY, "run_key": "r", "round": 1, "api_pool": pool[1:],
                      "previous_attempts": out["solver_attempts"]})
    ours_obs = executor.render(executor.call(tool.apis[1].id, {"days": 2}))
    theirs_obs = json.dumps(AUTHORS_OBSERVATION)
    print(f"   documented: the observation's envelope, ours {ours_obs} read as the authors' {theirs_obs}")
    report.compare("paper()'s DFSDT solver: a seeded solve's first request after a reflection removed one API "
                   "(dyabel/AnyTool scripts/main.py → DFS.py start(messages=...))",
                   [_swapped(b, ours_obs, theirs_obs) for b in rec.bodies if "messages" in b][done:done + 1],
                   theirs[:1])


def paper_solver(clone: Path, catalog: Any, tool: Any, executor: Any, base_url: str) -> tuple[Any, list[Any]]:
    """Our DFSDT solver graph under `paper(prompts_from=clone)`, its model the recorder at `base_url`, and a pool of
    every API of `tool`."""
    from langgraph_anytool.graphs.solver import build_solver_graph
    from langgraph_anytool.state import PoolEntry

    deps = Deps(catalog=catalog, models=ModelSet(default=chat(base_url), by_role={}), executor=executor,
                config=AnyToolConfig.paper(prompts_from=str(clone)), signals=RunSignals())
    pool = [PoolEntry(api_id=a.id, category="Weather", tool=tool.name, api=a.name,
                      function_name=catalog.function_name(a.id), added_by="request_diff", round=0)
            for a in tool.apis]
    return build_solver_graph(deps), pool


def _swapped(value: Any, old: str, new: str) -> Any:
    """`value` with the string `old` replaced by `new` in every string, as written and JSON-escaped."""
    if isinstance(value, str):
        return value.replace(old, new).replace(json.dumps(old)[1:-1], json.dumps(new)[1:-1])
    if isinstance(value, list):
        return [_swapped(v, old, new) for v in value]
    if isinstance(value, dict):
        return {k: _swapped(v, old, new) for k, v in value.items()}
    return value


def toolllm_solvable(clone: Path, report: Report) -> None:
    """eval passrate --protocol toolllm --prompts-from: the solvability check of a sample judged Unsure (ToolBench's
    `eval_pass_rate.py compute_pass_rate`, as dyabel/AnyTool's copy `toolbench/tooleval/eval_pass_rate.py` has it:
    StableToolBench's own makes none): `check_task_solvable(task_description, has_been_solved=False,
    return_reason=True)` of the clone's rtl.py → `{'task': json.dumps(task_description)}` → tooleval.py
    `function_call` → `OpenaiPoolRequest.request`.
    `task_description` is `{'query', 'available_tools'}`: the authors' the functions their solver offered (the
    converted answer's `available_tools`, DFS.py `to_json` `function`), ours the record's pool as `--catalog`
    describes it, and our Finish (eval/anytool/convert.py `record_to_tooleval`): documented, ours is read as
    theirs before comparing."""
    from langgraph_anytool.nodes.judge.tooleval import check_task_solvable

    theirs = run_child("stabletoolbench_solvable", clone, {"query": QUERY, "method": "anytool-dfsdt",
                                                           "generation": authors_generation()})
    sent = theirs["sent"]
    tool = parse_tool({"tool_name": "Weather Now", "tool_description": "Weather data.", "api_list": [
        {"name": "Current", "description": "Current weather.", "required_parameters": [
            {"name": "city", "type": "STRING", "description": "the city"}]}]}, category="Weather",
        source="request_diff", key="weather_now")
    catalog = Catalog([Category("Weather", tools=(tool,))])
    record = {"query": QUERY, "answer": FINISH_ARGS["final_answer"], "trajectory": [our_attempt()],
              "pool": [tool.apis[0].id], "config": {"solver": "dfsdt"}}
    _final, _answer, tools = tooleval_inputs(record, catalog)
    book = tooleval_book(clone)
    request_ = request_for("tools", book)
    with Recorder(forced_reply) as rec:
        model, _ = with_settings(chat(rec.base_url), request_.settings)
        check_task_solvable(model, QUERY, tools, has_been_solved=False, book=book, request=request_)
    ours_tools, theirs_tools = json.dumps(tools), json.dumps(theirs["available_tools"])
    print(f"   documented: available_tools, ours ({len(ours_tools)} characters: the pool from --catalog and our "
          f"Finish) read as the authors' ({len(theirs_tools)}: the functions their solver offered)")
    report.compare("eval passrate --protocol toolllm: check_task_solvable (eval_pass_rate.py compute_pass_rate → "
                   "THUNLP-MT/StableToolBench rtl.py check_task_solvable → tooleval.py function_call)",
                   [_swapped(b, ours_tools, theirs_tools) for b in rec.bodies if "messages" in b], sent)


# ------------------------------------------------------------------------------------------------ the child


def run_child(case: str, clone: Path, inputs: Mapping[str, Any]) -> dict[str, Any]:
    """The authors' side of `case` (`request_diff_authors.py`) in an isolated child interpreter (`python -I`, its
    working folder a fresh temporary one): `inputs` as JSON on its stdin, its result as JSON on its stdout."""
    import subprocess

    with tempfile.TemporaryDirectory(prefix="request_diff_") as folder:
        done = subprocess.run([sys.executable, "-I", str(AUTHORS_SIDE), case, str(Path(clone).resolve())],
                              input=json.dumps(inputs), capture_output=True, text=True, cwd=folder, timeout=300)
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-1:] or ["(no output)"]
        raise RuntimeError(f"the authors' side of {case} failed (exit {done.returncode}): {tail[0]}")
    return json.loads(done.stdout)  # type: ignore[no-any-return]


# ------------------------------------------------------------------------------------------------ OPPO tasks 3-6, 8
CALENDAR = {"tool_name": "calendar", "tool_description": "Month calendars.", "APIs": [
    {"type": "function", "function": {"name": "weekday_of", "description": "The weekday of a date.",
                                      "parameters": {"type": "object", "properties": {
                                          "year": {"type": "INT", "description": "year"},
                                          "month": {"type": "Int", "description": "month 1-12"},
                                          "day": {"type": "DATE", "description": "day of the month"}},
                                          "required": ["year", "month", "day"]}}}]}
TASK4_ARGS = {"year": 2024, "month": 7, "day": 1}
TASK4_RESULT = {"weekday": "Monday", "date": "2024-07-01"}


def oppo_toolset() -> Path:
    """A hand-made toolset in the release's layout (`toolset/config.yml`, `dev_tools/docs/<tool>.json`), one API
    whose parameter types the authors' `convert_doc_to_openai_format` rewrites (INT → integer, Int → integer, DATE →
    string)."""
    root = Path(tempfile.mkdtemp(prefix="request_diff_oppo")) / "toolset"
    (root / "dev_tools" / "docs").mkdir(parents=True)
    (root / "config.yml").write_text('X-RapidAPI-Key: ""\nDEV_TOOLS:\n  - calendar\nFILE_DIR: ""\n', encoding="utf-8")
    (root / "dev_tools" / "docs" / "calendar.json").write_text(json.dumps(CALENDAR), encoding="utf-8")
    return root


class _Executor:
    """The API's result, as a successful call of the toolset returns it (ours and theirs get the same)."""

    def call(self, api_id: str, args: Mapping[str, Any]) -> Any:
        return types.SimpleNamespace(ok=True, content=dict(TASK4_RESULT), error="")


def oppo_task4(clone: Path, report: Report) -> None:
    """OPPO task 4's two requests to the model under test (agent_interface.py perform_task4), ours through
    `eval/oppo/agent.py fill_parameters` (paper protocol) on the same toolset document and API result."""
    from langgraph_anytool.eval.oppo import agent
    from langgraph_anytool.eval.oppo.wire import authors_result

    catalog = Catalog.load(oppo_toolset())
    api_id = catalog.find_api("calendar", "weekday_of").id
    instruction = "Which weekday was 1 July 2024?"

    def reply(body: Mapping[str, Any]) -> tuple[str, dict[str, Any]] | str:
        return ("weekday_of", TASK4_ARGS) if "tools" in body else "It is a Monday."

    with Recorder(reply) as rec:
        fill = agent.fill_parameters(chat(rec.base_url), catalog, instruction, api_id, _Executor(),  # type: ignore[arg-type]
                                     paper=True)
    theirs = run_child("oppo_task4", clone, {
        "tool": "calendar", "api": "weekday_of", "instruction": instruction, "args": TASK4_ARGS,
        "doc": CALENDAR["APIs"][0]["function"], "result": authors_result(True, dict(TASK4_RESULT), "")})
    # docs/evaluation.md, "The tasks": the model under test's requests carry its role's reply limit
    report.compare("OPPO task 4, the model under test (OPPO-Mente-Lab/agent_eval: perform_task4, both turns)",
                   rec.bodies, theirs["sent"], ours_only=("max_tokens",))
    oppo_evaluators(clone, report, instruction, theirs["conversation"], fill)


def oppo_evaluators(clone: Path, report: Report, instruction: str, conv4: list[dict[str, Any]], fill: Any) -> None:
    """The evaluator's requests of OPPO tasks 3, 4, 5, 6 and 8 (eval_func.py `_check_clarification`,
    `_check_params_with_gpt4`, `_check_direct_response`, `_check_response_w_tool`, `_check_plan`): theirs on the
    item's conversation, ours from the prompt builders with the values `eval/oppo/tasks.py` computes for them
    (`_task3`: the reply's content; `_task4`, paper: `authors_task4_inputs` of the conversation `fill_parameters`
    returned (`oppo_task4`'s), the offered document; `_task5`: the
    instruction and the answer; `_task6`, paper: the user's content, `json.dumps` of the `function_call`, the tool
    message's content, the reply; `_task8`: the task text and the outline); task 4's is the conversation of
    `oppo_task4`. The prompts are the clone's (`--prompts-from`)."""
    book = oppo_book(clone)
    ask = "Which city do you mean?"
    answer = "Paris is the capital of France."
    call6 = {"name": "weekday_of", "arguments": json.dumps(TASK4_ARGS)}
    conv6 = [{"role": "user", "content": instruction},
             {"role": "assistant", "content": None, "function_call": call6},
             {"role": "tool", "name": "weekday_of", "content": str(TASK4_RESULT)},
             {"role": "assistant", "content": "It is a Monday."}]
    task8, plan = "Plan: which weekday was 1 July 2024?\n1. weekday_of", "1. Call weekday_of with 2024-07-01."
    inputs = {"task3": [{"role": "user", "content": "What is the weather like there?"},
                        {"role": "assistant", "content": ask}],
              "task4": conv4, "task4_doc": fill.offer.functions[0],
              "task5": [{"role": "user", "content": "What is the capital of France?"},
                        {"role": "assistant", "content": answer}],
              "task6": conv6, "task8": [{"role": "user", "content": task8}, {"role": "assistant", "content": plan}]}
    theirs = run_child("oppo_evaluators", clone, inputs)["sent"]
    task4 = oppo_prompts.authors_task4_inputs(fill.conversation)
    assert task4 is not None
    with Recorder(lambda body: "Yes.") as rec:
        evaluator = TaskEvaluator(chat(rec.base_url))
        evaluator.judge(3, oppo_prompts.clarification_prompt(ask, book))
        evaluator.judge(4, oppo_prompts.call_check_prompt(task4[0], inputs["task4_doc"], task4[1], book))
        evaluator.judge(5, oppo_prompts.direct_answer_prompt("What is the capital of France?", answer, book))
        evaluator.judge(6, oppo_prompts.tool_answer_prompt(instruction, json.dumps(call6, ensure_ascii=False),
                                                           str(TASK4_RESULT), "It is a Monday.", book))
        evaluator.judge(8, oppo_prompts.plan_check_prompt(task8, plan, book))
    # docs/evaluation.md, "The tasks": our evaluator calls carry the evaluator role's reply limit
    report.compare("OPPO tasks 3, 4, 5, 6, 8, the evaluator (OPPO-Mente-Lab/agent_eval: _check_clarification, "
                   "_check_params_with_gpt4, _check_direct_response, _check_response_w_tool, _check_plan)",
                   rec.bodies, theirs, ours_only=("max_tokens",))


# ------------------------------------------------------------------------------------------------ α-UMi
def umi_data() -> list[dict[str, Any]]:
    """A hand-made conversation in the layout of α-UMi's data files (`tools` with `Name`, `function`, `input`;
    `conversations` of user / assistant / caller / observation / conclusion turns): each assistant turn as
    `prepro_raw_stage_2.py` writes it (the thought, a newline, then " Next: ..."), a trailing newline kept, a
    turn without a decision, a second tool and a non-ASCII description (`json.dumps` escapes it)."""
    tools = [{"Name": "current_for_weather_now", "function": "Current weather of a city — °C.",
              "input": {"city": "string, the city"}},
             {"Name": "radar_for_rain_radar", "function": "Rain radar.", "input": {}}]
    return [{"tools": tools, "instruction": QUERY, "conversations": [
        {"from": "user", "value": QUERY},
        {"from": "assistant", "value": "I should ask the weather API for Paris.\n Next: caller."},
        {"from": "caller", "value": 'Action: current_for_weather_now\nAction Input: {"city": "Paris"}'},
        {"from": "observation", "value": "{'city': 'Paris', 'temp_c': 21, 'rain': False}\n"},
        {"from": "assistant", "value": "Let me think about it.\n"},
        {"from": "assistant", "value": "I have the weather.\n Next: conclusion."},
        {"from": "conclusion", "value": "It is 21 C in Paris and it is not raining.\n"}]},
            # the instruction is not the user's turn as written (a trailing newline): build_infer_samples puts the
            # turn in the history
            {"tools": tools[1:], "instruction": "Is it raining in Paris?", "conversations": [
                {"from": "user", "value": "Is it raining in Paris?\n"},
                {"from": "assistant", "value": "The radar shows rain.\n Next: caller."},
                {"from": "caller", "value": "Action: radar_for_rain_radar\nAction Input: {}"},
                {"from": "observation", "value": "{'rain': False}"},
                {"from": "assistant", "value": "Nothing helps.\n Next: give up."}]}]


# the scripted planner's predictions, one per step of `umi_data` in order: a reference turn, a conclusion, one
# without a decision and with the leading ": " infer_pipeline.py drops (it appends "Next: caller."), a give-up (no
# second role)
UMI_PREDICTIONS = ["I should ask the weather API for Paris.\n Next: caller.", "I have the weather.\n Next: conclusion.",
                   ": I will look at the radar.\n", "Nothing helps.\n Next: give up."]


def umi_infer(clone: Path, report: Report) -> None:
    """`anytool eval steps --mode multi --prompts-from` (α-UMi's role inputs) beside X-PLUG/Multi-LLM-Agent
    `GLPFT/inference_utils/toolbench/infer_pipeline.py` (`build_infer_samples`, then `infer()`'s loop that builds
    the caller's and the summarizer's inputs), run in the child on the same data file and the same planner
    predictions. Compared: each role's whole input, the one user message ours sends (the authors give the same
    string to their model's tokenizer; no chat settings to compare)."""
    from langgraph_anytool.eval.umi.data import load_umi_test
    from langgraph_anytool.eval.umi.steps import evaluate_steps
    from langgraph_anytool.paper_prompts import umi_book

    data = umi_data()
    folder = Path(tempfile.mkdtemp(prefix="request_diff_umi"))
    (folder / "umi.json").write_text(json.dumps(data), encoding="utf-8")
    cases, _ = load_umi_test(folder / "umi.json")
    predictions = UMI_PREDICTIONS
    queue = list(predictions)

    def reply(body: Mapping[str, Any]) -> str:
        text = body["messages"][-1]["content"]
        if text.endswith(" assistant: "):
            return queue.pop(0)
        return 'Action: current_for_weather_now\nAction Input: {"city": "Paris"}' if text.endswith(" caller: ") \
            else "It is 21 C in Paris."

    with Recorder(reply) as rec:
        model = chat(rec.base_url)
        evaluate_steps(cases, lambda catalog: ModelSet(default=model, by_role={}), mode="multi",
                       config=AnyToolConfig(), prompts=umi_book(clone))
    theirs = run_child("umi_infer", clone, {"data": data, "predictions": predictions})
    authors = []
    for planner, second in zip(theirs["planner"], theirs["second"], strict=False):
        authors += [{"messages": [{"role": "user", "content": planner}]},
                    *([{"messages": [{"role": "user", "content": second}]}] if second is not None else [])]
    ours = [{"messages": b["messages"]} for b in rec.bodies]
    report.compare("eval steps --mode multi: α-UMi's planner / caller / summarizer inputs (X-PLUG/Multi-LLM-Agent "
                   "infer_pipeline.py build_infer_samples, infer)", ours, authors)


# α-UMi's run-time pipeline: one hand-made ToolBench tool (ToolBench's layout: `api_list` entries with `name`,
# `description`, typed parameters), the same observation given to both sides' history, the scripted outputs of the
# two steps' model calls (planner without a decision → caller; planner "Next: conclusion." → summarizer)
UMI_TOOL = {"tool_name": "Weather Now", "standardized_name": "weather_now", "tool_description": "Weather data. ",
            "api_list": [{"name": "Current weather", "description": " Current weather of a city — °C. ",
                          "required_parameters": [{"name": "city", "type": "STRING", "description": "the city",
                                                   "default": ""}],
                          "optional_parameters": [{"name": "days", "type": "NUMBER", "description": " ",
                                                   "default": ""}]},
                         {"name": "Radar", "description": "", "required_parameters": [],
                          "optional_parameters": [{"name": "zoom", "type": "BOOLEAN", "description": "zoom level",
                                                   "default": ""}]}]}
UMI_OUTPUTS = [": I should ask the weather API for Paris.",
               'Action: current_weather_for_weather_now\nAction Input: {"city": "Paris"}',
               "I have the weather. Next: conclusion. more", "It is 21 C in Paris."]


def umi_run(clone: Path, report: Report) -> None:
    """`--set solver=umi --set umi_prompts_from=CLONE`: one run's two α-UMi steps (planner → caller, then planner →
    summarizer) beside X-PLUG/Multi-LLM-Agent ToolBench-multiLLM `collab_agent_model.py` `CollbaAgentV3.parse` /
    `prediction` (tools by `rapidapi.py api_json_to_openai_json`, the conversation as DFS.py keeps it), run in the
    child on the same tool, outputs and observation. Compared: each request's one user message (the authors' whole
    `prompt`) and its settings (`temperature`, `max_new_tokens` read as `max_tokens`, `stop` as a one-element
    list)."""
    from langgraph_anytool.graphs.solver import build_solver_graph
    from langgraph_anytool.tools.pipeline import ApiExecutor

    tool = parse_tool(UMI_TOOL, category="Weather", source="request_diff")
    catalog = Catalog([Category("Weather", tools=(tool,))])
    pool = [{"api_id": api.id, "function_name": catalog.function_name(api.id), "tool": tool.name,
             "category": "Weather", "score": 1.0} for api in tool.apis]
    outputs = list(UMI_OUTPUTS)
    with Recorder(lambda body: outputs.pop(0) if "messages" in body else "") as rec:
        deps = Deps(catalog=catalog, models=ModelSet(default=chat(rec.base_url), by_role={}),
                    executor=ApiExecutor.for_catalog(catalog, kind="template"),
                    config=AnyToolConfig(solver="umi", umi_prompts_from=str(clone), probe_endpoints=False),
                    signals=RunSignals())
        out = build_solver_graph(deps).invoke({"query": QUERY, "run_key": "r", "round": 1, "api_pool": pool,
                                               "previous_attempts": []})
    tree = out["solver_attempts"][0]["tree"]
    observation = next(m["content"] for n in tree for m in n["messages"] if m["role"] == "tool")
    api_list = [{"api_name": a["name"], "api_description": a["description"], "category_name": "Weather",
                 "required_parameters": a["required_parameters"], "optional_parameters": a["optional_parameters"]}
                for a in UMI_TOOL["api_list"]]
    theirs = run_child("umi_run", clone, {
        "api_list": api_list, "tool": UMI_TOOL["standardized_name"], "query": QUERY, "outputs": UMI_OUTPUTS,
        "observation": observation, "steps": 2,
        # qa_pipeline.py's defaults name entries Downstream_tasks/prompt_lib.py lacks; these hold GLPFT's texts
        "prompt_type": {"planner": "v9_assistant", "caller": "v9_caller", "conclusion": "v9_conclusion"}})
    authors = [{"messages": [{"role": "user", "content": g["prompt"]}], "temperature": g["temperature"],
                "max_tokens": g["max_new_tokens"], "stop": [g["stop"]]} for g in theirs["sent"]]
    report.compare("run --set solver=umi --set umi_prompts_from: α-UMi's planner / caller / planner / summarizer "
                   "(X-PLUG/Multi-LLM-Agent ToolBench-multiLLM collab_agent_model.py CollbaAgentV3)",
                   rec.bodies, authors)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--anytool", type=Path, help="a clone of dyabel/AnyTool")
    parser.add_argument("--stabletoolbench", type=Path, help="a clone of THUNLP-MT/StableToolBench")
    parser.add_argument("--agent-eval", type=Path, help="a clone of OPPO-Mente-Lab/agent_eval")
    parser.add_argument("--multi-llm-agent", type=Path, help="a clone of X-PLUG/Multi-LLM-Agent")
    args = parser.parse_args(argv)
    report = Report()
    if args.anytool:
        judge_anytool(args.anytool, report)
        solvable_check(args.anytool, report)
        agents_anytool(args.anytool, report)
        solver_anytool(args.anytool, report)
        solver_seeded_anytool(args.anytool, report)
    if args.stabletoolbench:
        passrate_stabletoolbench(args.stabletoolbench, report)
        toolllm_solvable(args.stabletoolbench, report)
    if args.agent_eval:
        oppo_task7(args.agent_eval, report)
        oppo_task4(args.agent_eval, report)
    if args.multi_llm_agent:
        umi_infer(args.multi_llm_agent, report)
        umi_run(args.multi_llm_agent, report)
    print(f"\n{report.compared} request(s) compared; {len(report.differing)} with undocumented differences"
          + (": " + "; ".join(report.differing) if report.differing else ""))
    print(f"documented differences applied: dropped {', '.join(DROPPED)}; "
          + ", ".join(f"{a} read as {b}" for a, b in RENAMED.items()))
    return 1 if report.differing else 0


if __name__ == "__main__":
    sys.exit(main())
