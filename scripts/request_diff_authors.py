"""The authors' side of `scripts/request_diff.py`, run in an isolated child interpreter.

    python -I scripts/request_diff_authors.py CASE CLONE < inputs.json > result.json

`request_diff.py` starts this file with `python -I` (no environment variables, no user site, not even the
script's folder on `sys.path`), its working folder a fresh temporary one, and gives it one case's inputs as JSON on
stdin. Here, and only here, the authors' request-building code is taken from the clone's files (`ast`: a function
or method alone, its decorators dropped; module-level assignments and classes by name) and run, with their client
replaced by a recorder of what it would send. The result goes back on stdout as JSON ({"sent": [...], ...}).

What runs: source code from the clone named on the command line, and nothing else: never a model's output, an
evaluator's reply or a data file. This file imports the standard library alone (and `yaml`, `pydantic` where the
authors' files need them), never langgraph_anytool: each side's code runs in its own interpreter.
"""

from __future__ import annotations

import ast
import contextlib
import copy
import enum
import json
import os
import random
import re
import sys
import threading
import time
import types
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

# ------------------------------------------------------------------------------------------------ running their code


def function_node(tree: ast.Module, name: str) -> ast.FunctionDef:
    """The function (or "Class.method") `name` of `tree`, its decorators dropped (tenacity's retry: the request is
    built once here)."""
    scope: Any = tree
    for part in name.split("."):
        scope = next((n for n in scope.body if isinstance(n, ast.ClassDef | ast.FunctionDef) and n.name == part), None)
        if scope is None:
            raise LookupError(f"no function {name!r}")
    if not isinstance(scope, ast.FunctionDef):
        raise LookupError(f"{name!r} is not a function")
    node = copy.deepcopy(scope)
    node.decorator_list = []
    return node


def authors_code(path: Path, functions: list[str], namespace: dict[str, Any], assigns: tuple[str, ...] = (),
                 classes: tuple[str, ...] = ()) -> dict[str, Any]:
    """`functions` ("name" or "Class.method"), the module-level assignments `assigns` and the classes `classes` of
    the authors' file `path`, run in `namespace` (their imports replaced by what it holds); returns it, each
    function under its own name (a method under "Class.method")."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in tree.body:
        if (isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id in assigns for t in node.targets)) \
                or (isinstance(node, ast.ClassDef) and node.name in classes):
            if isinstance(node, ast.ClassDef):
                node.decorator_list = []
            exec(compile(ast.Module([node], []), str(path), "exec"), namespace)
    for name in functions:
        fn = function_node(tree, name)
        local: dict[str, Any] = {}
        exec(compile(ast.Module([fn], []), str(path), "exec"), namespace, local)
        namespace[name] = local[fn.name]
        if "." not in name:
            namespace[fn.name] = local[fn.name]
    return namespace


def statement(path: Path, function: str, test: Callable[[ast.stmt], bool]) -> ast.Module:
    """The first statement of `function` (at its top level) of the authors' file `path` for which `test` holds, as a
    module to run: a step of a long function (infer_pipeline.py `infer`'s loop over its samples) run alone."""
    fn = function_node(ast.parse(path.read_text(encoding="utf-8")), function)
    found = next((node for node in fn.body if test(node)), None)
    if found is None:
        raise LookupError(f"{path}: {function} has no such statement")
    return ast.Module([found], [])


# ------------------------------------------------------------------------------------------------ the recorder
# the scripted evaluator's replies to a forced check, by the function named (the same on both sides)
REPLIES = {"check_answer_status": {"answer_status": "Unsure", "reason": "the weather API's output must be read"},
           "parse_answer_status": {"answer_status": "Solved", "reason": "the answer gives both"},
           "check_task_solvable": {"task_status": "Solvable", "reason": "a weather API is offered"}}
EVALUATOR = "toolbench/tooleval/evaluators/tooleval_gpt-3.5-turbo_default"
REGISTERED = "toolbench/tooleval/evaluators/registered_cls"


def completion(body: Mapping[str, Any], reply: tuple[Any, ...] | str) -> dict[str, Any]:
    """An OpenAI chat completion answering `body` with `reply`: text, or a function call `(name, arguments)` or
    `(content, name, arguments)` (a call with a thought) in the form the request asked for (`functions=` →
    `function_call`, else `tool_calls`); an arguments string is sent as written (the model's own spacing)."""
    message: dict[str, Any] = {"role": "assistant", "content": None}
    finish = "stop"
    if isinstance(reply, tuple | list) and len(reply) == 3:
        message["content"] = reply[0]
        reply = tuple(reply[1:])
    if isinstance(reply, str):
        message["content"] = reply
    elif "functions" in body:
        arguments = reply[1] if isinstance(reply[1], str) else json.dumps(reply[1])
        message["function_call"] = {"name": reply[0], "arguments": arguments}
        finish = "function_call"
    else:
        message["tool_calls"] = [{"id": "call_1", "type": "function",
                                  "function": {"name": reply[0], "arguments": json.dumps(reply[1])}}]
        finish = "tool_calls"
    return {"id": "c", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


def forced_reply(body: Mapping[str, Any]) -> tuple[str, dict[str, Any]] | str:
    """The scripted evaluator reply to a forced check (by the function named), else a solvability Finish."""
    choice = body.get("tool_choice")
    name = ((choice.get("function") or {}).get("name") if isinstance(choice, dict) else None) or \
        (body.get("function_call") or {}).get("name")
    if name in REPLIES:
        return name, REPLIES[name]
    return "Finish", {"answer": "Solvable", "reason": "the pool has a weather API"}


class _Obj(types.SimpleNamespace):
    def get(self, key: str, default: Any = None) -> Any:
        return getattr(self, key, default)


def fake_response(kwargs: Mapping[str, Any], reply: Callable[[Mapping[str, Any]], Any] | None = None) -> Any:
    """The openai client's response object, built from the scripted reply to `kwargs` (what the authors read)."""
    data = completion(kwargs, (reply or forced_reply)(kwargs))
    msg = data["choices"][0]["message"]
    function_call = _Obj(**msg["function_call"]) if msg.get("function_call") else None
    tool_calls = [_Obj(id=t["id"], function=_Obj(**t["function"])) for t in msg.get("tool_calls") or []] or None
    message = _Obj(content=msg["content"], function_call=function_call, tool_calls=tool_calls, role="assistant")
    return _Obj(choices=[_Obj(message=message, finish_reason=data["choices"][0]["finish_reason"])],
                usage=_Obj(total_tokens=2), json=lambda: json.dumps(data))


class Client:
    """The openai client the authors' code calls: records `chat.completions.create(**kwargs)`."""

    def __init__(self, reply: Callable[[Mapping[str, Any]], Any] | None = None) -> None:
        self.sent: list[dict[str, Any]] = []
        self.reply = reply
        self.chat = _Obj(completions=_Obj(create=self.create))

    def create(self, **kwargs: Any) -> Any:
        self.sent.append(copy.deepcopy(kwargs))
        return fake_response(kwargs, self.reply)


def _quiet(*args: Any, **kwargs: Any) -> None:
    pass


def anytool_call_gpt(clone: Path, client: Client) -> Callable[..., Any]:
    """dyabel/AnyTool `openai_utils.py call_gpt`, its client the recorder (tenacity's retry a no-op)."""
    ns: dict[str, Any] = {"json": json, "time": time, "copy": copy, "deepcopy": copy.deepcopy, "client": client,
                          "model_name": "MODEL", "openai": types.SimpleNamespace(
                              BadRequestError=RuntimeError, RateLimitError=RuntimeError,
                              InternalServerError=RuntimeError),
                          "retry": lambda **_: (lambda f: f), "wait_random_exponential": lambda **_: None,
                          "stop_after_attempt": lambda *_: None, "colored": lambda s, *_: s,
                          "os": os, "output_dir": ".", "print": _quiet}
    authors_code(clone / "openai_utils.py", ["call_gpt"], ns, classes=("dotdict",))
    return ns["call_gpt"]  # type: ignore[no-any-return]


def tooleval_self(clone: Path, request: Callable[..., Any]) -> Any:
    """An `OpenAINormalizedEvaluator` as its `__init__` sets it up from the clone's evaluator directory: the
    config's `completions_kwargs`, the template's functions, `opr.request` → `request`."""
    import yaml

    config = yaml.safe_load((clone / EVALUATOR / "config.yaml").read_text(encoding="utf-8"))
    template = (clone / EVALUATOR / config["prompt_template"]).read_text(encoding="utf-8")
    parsed = {}
    for function in re.findall(r"<function>(.*?)</function>", template, re.DOTALL):
        name = re.findall(r"<name>(.*?)</name>", function, re.DOTALL)[0]
        parsed[name] = re.findall(r"<description>(.*?)</description>", function, re.DOTALL)[0]
    return types.SimpleNamespace(eval_config=config, parsed_function_templates=parsed,
                                 functions={f["name"]: f for f in config["completions_kwargs"]["functions"]},
                                 opr=types.SimpleNamespace(request=request))


def tooleval_code(clone: Path, evaluator: Any) -> dict[str, Any]:
    """The clone's `tooleval.py function_call` and `rtl.py check_is_solved` / `check_task_solvable` bound to
    `evaluator`."""
    ns: dict[str, Any] = {"deepcopy": copy.deepcopy, "json": json, "os": os, "re": re, "random": random,
                          "Enum": enum.Enum, "Dict": dict, "List": list, "Any": Any, "Union": Any,
                          "Optional": Any, "print": _quiet}
    authors_code(clone / REGISTERED / "tooleval.py", ["OpenAINormalizedEvaluator.function_call"], ns)
    authors_code(clone / REGISTERED / "rtl.py", ["ReinforceToolLearningEvaluator.check_is_solved",
                                                 "ReinforceToolLearningEvaluator.check_task_solvable"], ns,
                 classes=("AnswerStatus", "TaskStatus"))
    evaluator.function_call = types.MethodType(ns["OpenAINormalizedEvaluator.function_call"], evaluator)
    return {name: types.MethodType(ns[f"ReinforceToolLearningEvaluator.{name}"], evaluator)
            for name in ("check_is_solved", "check_task_solvable")}


def converted(clone: Path, method: str, generation: Mapping[str, Any]) -> dict[str, Any]:
    """`convert_to_answer_format.py process_valid_data(method, answer_generation)` of the clone, with its
    `evaluation/dataclass.py` (ExecutionGraph, ExecutionNode)."""
    module = types.ModuleType("authors_tooleval_dataclass")  # pydantic resolves the models' names in a module
    sys.modules[module.__name__] = module
    exec(compile((clone / "toolbench/tooleval/evaluation/dataclass.py").read_text(encoding="utf-8"),
                 "dataclass.py", "exec"), module.__dict__)
    ns: dict[str, Any] = {"random": random, **module.__dict__}
    authors_code(clone / "toolbench/tooleval/convert_to_answer_format.py",
                 ["generate_init_message_node", "process_valid_data"], ns)
    return ns["process_valid_data"](method, copy.deepcopy(dict(generation)))  # type: ignore[no-any-return]


# ------------------------------------------------------------------------------------------------ the cases
def anytool_judge(clone: Path, inputs: Mapping[str, Any]) -> dict[str, Any]:
    """paper()'s in-loop judge, one sample (dyabel/AnyTool: `verifier.py check_solved_toolbench` →
    `convert_to_answer_format.py process_valid_data` (method DFS_woFilter_w2) → its tooleval `rtl.py
    check_is_solved` → `tooleval.py function_call` → `utils.py OpenaiPoolRequest.request` → `call_gpt`)."""
    client = Client()
    ns: dict[str, Any] = {"call_gpt": anytool_call_gpt(clone, client), "model_name": "MODEL",
                          "openai": types.SimpleNamespace(APITimeoutError=RuntimeError), "time": time}
    authors_code(clone / REGISTERED / "utils.py", ["OpenaiPoolRequest.request"], ns)
    evaluator = tooleval_self(clone, lambda **kw: None)
    evaluator.opr = types.SimpleNamespace()
    evaluator.opr.request = types.MethodType(ns["OpenaiPoolRequest.request"], evaluator.opr)
    checks = tooleval_code(clone, evaluator)
    example = converted(clone, "DFS_woFilter_w2", inputs["generation"])
    checks["check_is_solved"]({"query": inputs["query"], "available_tools": example["available_tools"]},
                              example["answer"], return_reason=True)
    return {"sent": client.sent}


def anytool_solvable(clone: Path, inputs: Mapping[str, Any]) -> dict[str, Any]:
    """paper()'s solvability check after an addition (`verifier.py check_task_solvable_by_function` → `call_gpt`):
    their prompt constant as our book read it (`inputs["system"]`), the pool as main.py lists it."""
    client = Client()
    ns: dict[str, Any] = {"call_gpt": anytool_call_gpt(clone, client), "json": json,
                          "CHECK_SOLVABLE_BY_FUNCTION_PROMPT": inputs["system"]}
    authors_code(clone / "anytool/verifier.py", ["Finish", "check_task_solvable_by_function"], ns,
                 assigns=("solvable_finish_function",))
    ns["check_task_solvable_by_function"](inputs["query"], inputs["pool"])
    return {"sent": client.sent}


def recorded_tooleval(clone: Path, inputs: Mapping[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any],
                                                                         dict[str, Any]]:
    """The clone's ToolEval checks whose `OpenaiPoolRequest.request` records what it is sent (the list returned),
    and the sample in its converted form (`process_valid_data(inputs["method"], inputs["generation"])`)."""
    sent: list[dict[str, Any]] = []

    def request(**kwargs: Any) -> Any:
        sent.append(copy.deepcopy(kwargs))
        return fake_response(kwargs)

    checks = tooleval_code(clone, tooleval_self(clone, request))
    return sent, checks, converted(clone, inputs["method"], inputs["generation"])


def stabletoolbench_passrate(clone: Path, inputs: Mapping[str, Any]) -> dict[str, Any]:
    """One pass-rate sample's checks (THUNLP-MT/StableToolBench: `rtl.py check_is_solved` → `tooleval.py
    function_call` → `OpenaiPoolRequest.request`, whose create call is the recorder)."""
    sent, checks, example = recorded_tooleval(clone, inputs)
    checks["check_is_solved"]({"query": inputs["query"], "available_tools": example["available_tools"]},
                              example["answer"], return_reason=True)
    return {"sent": sent}


def oppo_task7(clone: Path, inputs: Mapping[str, Any]) -> dict[str, Any]:
    """OPPO task 7's evaluator prompts (`eval_func.py _check_answer`, `_extract_tools` → `_get_gpt_response`)."""
    client = Client(lambda body: "No, not solved.")
    ns: dict[str, Any] = {"json": json, "re": re, "time": time, "client": client, "print": _quiet}
    authors_code(clone / "eval_scripts/eval_func.py", ["_get_gpt_response", "_check_answer", "_extract_tools"], ns)
    ns["_check_answer"](copy.deepcopy(inputs["conversation"]))
    ns["_extract_tools"](copy.deepcopy(inputs["conversation"]))
    return {"sent": client.sent}


def anytool_agents(clone: Path, inputs: Mapping[str, Any]) -> dict[str, Any]:
    """paper()'s retriever agents, each one's first request (scripts/main.py `Main_Search_Agent.__init__` +
    `assign_main`'s call, `Category_Agent.__init__` + `category_search`, `Tool_Agent.__init__` + `tool_search`'s
    call, each `call_gpt(messages=self.messages, functions=self.functions)`): their classes, prompt constants
    (prompt_template.py) and function dicts (main.py, api_database_function.py) run from the clone; their database
    functions answer with what ours computed from the same catalog (`inputs`)."""
    client = Client(lambda body: ("Finish", {}))
    query = inputs["query"]
    ns: dict[str, Any] = {"leaf_tool_number": inputs["leaf_tool_number"], "call_gpt": anytool_call_gpt(clone, client),
                          "query_all_categories": lambda: inputs["categories"],
                          "get_tools_in_category": lambda c: inputs["tools_in_category"][c],
                          "query_all_tool_info": lambda c, ts: inputs["tool_info"],
                          "multi_thread": True, "sem": threading.Semaphore(9), "stop": False, "total_tokens": 0,
                          "call_cnt": 0, "counter_lock": threading.Lock(), "output_dir": ".",
                          "time": time, "json": json, "colored": lambda s, *_: s, "status": "",
                          "query_all_categories_function": None, "retrieve_context": None, "Finish": None,
                          "get_tools_descriptions": None, "get_apis_in_tool": None, "get_api_details": None,
                          "check_if_request_solvable": None}
    authors_code(clone / "anytool/prompt_template.py", [], ns,
                 assigns=("META_AGENT_PROMPT", "CATEGORY_AGENT_PROMPT", "TOOL_AGENT_PROMPT"))
    authors_code(clone / "anytool/api_database_function.py", [], ns, assigns=tuple(
        f"{n}_function" for n in ("get_tools_in_category", "get_tools_descriptions", "check_if_request_solvable",
                                  "add_apis_into_api_pool")))
    authors_code(clone / "scripts/main.py", [], ns, assigns=(
        "finish_function", "create_agent_category_level_function", "create_agent_tool_level_function"),
        classes=("Agent", "Main_Search_Agent", "Category_Agent", "Tool_Agent"))
    firsts: dict[str, dict[str, Any]] = {}
    main = ns["Main_Search_Agent"](query)
    ns["call_gpt"](messages=main.messages, functions=main.functions)  # main.py Main_Search_Agent.assign_main
    firsts["meta"] = client.sent[-1]
    category = ns["Category_Agent"](query, inputs["category"])
    ns["print"] = _quiet  # category_search's timing lines
    category.category_search()
    firsts["category"] = client.sent[-1]
    tool_agent = ns["Tool_Agent"](query, inputs["category"], inputs["tools"])
    ns["call_gpt"](messages=tool_agent.messages, functions=tool_agent.functions)  # Tool_Agent.tool_search
    firsts["tool"] = client.sent[-1]
    return {"firsts": firsts}


def oppo_task4(clone: Path, inputs: Mapping[str, Any]) -> dict[str, Any]:
    """OPPO task 4's two requests to the model under test (`agent_interface.py convert_doc_to_openai_format`,
    `perform_task4`: the first with `tools=`, then `# second turn` without): `api_docs` holds the release document's
    function as `toolset/dev_tools/__init__.py get_docs` reads it (`api['function']`), and `toolset.call_tool`
    answers with the result ours got (`inputs["result"]`). The scripted model calls the API, then answers."""
    from openai.types.chat import ChatCompletionMessage  # the reply object `msg.model_dump()` is called on

    replies = iter([(inputs["api"], inputs["args"]), "It is a Monday."])
    sent: list[dict[str, Any]] = []

    def create(**kwargs: Any) -> Any:
        sent.append(copy.deepcopy(kwargs))
        data = completion(kwargs, next(replies))
        message = ChatCompletionMessage.model_validate(data["choices"][0]["message"])
        return types.SimpleNamespace(choices=[types.SimpleNamespace(message=message)])

    client = types.SimpleNamespace(chat=types.SimpleNamespace(completions=types.SimpleNamespace(create=create)))
    ns: dict[str, Any] = {"json": json, "deepcopy": copy.deepcopy, "client": client,
                          "api_docs": {inputs["tool"]: {inputs["api"]: inputs["doc"]}},
                          "toolset": types.SimpleNamespace(call_tool=lambda tool, api, args: inputs["result"])}
    authors_code(clone / "eval_scripts/agent_interface.py", ["convert_doc_to_openai_format", "perform_task4"], ns)
    conv = ns["perform_task4"](inputs["tool"], inputs["api"], inputs["instruction"], llm_name="MODEL")
    return {"sent": sent, "conversation": conv}


def oppo_evaluators(clone: Path, inputs: Mapping[str, Any]) -> dict[str, Any]:
    """The evaluator's requests of OPPO tasks 3, 4, 5, 6 and 8 (`eval_func.py _check_clarification`,
    `_check_params_with_gpt4` with what `evaluate_task4` passes it — the conversation, the API document and
    `_extract_func_calls(conv)[0]` —, `_check_direct_response`, `_check_response_w_tool`, `_check_plan`, each →
    `_get_gpt_response`) on the conversations `inputs` holds, one request each, in that order."""
    client = Client(lambda body: "Yes.")
    ns: dict[str, Any] = {"json": json, "re": re, "time": time, "client": client}
    authors_code(clone / "eval_scripts/eval_func.py", [
        "_get_gpt_response", "_check_clarification", "_extract_func_calls", "_check_params_with_gpt4",
        "_check_direct_response", "_check_response_w_tool", "_check_plan"], ns)
    ns["_check_clarification"](copy.deepcopy(inputs["task3"]))
    conv4 = copy.deepcopy(inputs["task4"])
    ns["_check_params_with_gpt4"](conv4, inputs["task4_doc"], ns["_extract_func_calls"](conv4)[0])
    ns["_check_direct_response"](copy.deepcopy(inputs["task5"]))
    ns["_check_response_w_tool"](copy.deepcopy(inputs["task6"]))
    ns["_check_plan"](copy.deepcopy(inputs["task8"]))
    return {"sent": client.sent}


def umi_infer(clone: Path, inputs: Mapping[str, Any]) -> dict[str, Any]:
    """α-UMi's role inputs (X-PLUG/Multi-LLM-Agent GLPFT/inference_utils/toolbench/infer_pipeline.py):
    `build_infer_samples(data_args)` on the data file `inputs["data"]` (written here, in the child's own folder),
    each sample's planner input `model_input`; then `infer()`'s loop `for sample in infer_samples:` (run alone, its
    models left out) on the planner predictions `inputs["predictions"]` (one per sample, the scripted planner
    reply), which writes `model_input_for_caller` or `model_input_for_summarizer`. The prompts are
    `GLPFT/utils/prompt_lib.py` `prompt_dict`, run from the clone."""
    pipeline = clone / "GLPFT/inference_utils/toolbench/infer_pipeline.py"
    ns: dict[str, Any] = {"json": json, "os": os, "copy": copy, "print": lambda *a, **k: None,
                          "rank0_print": lambda *a, **k: None}
    authors_code(clone / "GLPFT/utils/prompt_lib.py", [], ns, assigns=("prompt_dict",))
    authors_code(pipeline, ["nested_load_test_data", "build_infer_samples"], ns)
    data = Path("umi_data.json")
    data.write_text(json.dumps(inputs["data"]), encoding="utf-8")
    args = types.SimpleNamespace(data_path=str(data), num_infer_samples=-1, max_input_length=1750,
                                 planner_prompt_type="toolbench_planner", caller_prompt_type="toolbench_caller",
                                 summarizer_prompt_type="toolbench_summarizer")
    samples = ns["build_infer_samples"](args)
    planner = [s["model_input"] for s in samples]
    predictions = list(inputs["predictions"])
    samples = samples[: len(predictions)]
    # infer()'s first loop over the planner's outputs (`for i, o in enumerate(outputs)`: the decoded text cleaned
    # up, stored as `predictions`), its tokenizer's `decode` giving the scripted text back
    tokenizer = types.SimpleNamespace(decode=lambda o, skip_special_tokens=True: o)
    run: dict[str, Any] = {**ns, "infer_samples": samples, "outputs": predictions, "planner_tokenizer": tokenizer,
                           "data_args": args, "infer_samples_planner": [], "infer_samples_caller": [],
                           "infer_samples_summarizer": []}
    cleanup = statement(pipeline, "infer", lambda node: isinstance(node, ast.For) and isinstance(node.target, ast.Tuple)
                        and isinstance(node.iter, ast.Call) and ast.unparse(node.iter) == "enumerate(outputs)")
    exec(compile(cleanup, str(pipeline), "exec"), run)
    loop = statement(pipeline, "infer", lambda node: isinstance(node, ast.For) and isinstance(node.target, ast.Name)
                     and node.target.id == "sample" and isinstance(node.iter, ast.Name) and node.iter.id == "infer_samples")
    exec(compile(loop, str(pipeline), "exec"), run)
    second = [s.get("model_input_for_caller", s.get("model_input_for_summarizer")) for s in samples]
    roles = ["caller" if "model_input_for_caller" in s else "summarizer" if "model_input_for_summarizer" in s else None
             for s in samples]
    return {"planner": planner, "second": second, "roles": roles}


# ------------------------------------------------------------------------------------------------ the DFSDT solver
class _SolverClient(Client):
    """The openai client chat_completion_request → call_gpt calls: the scripted legacy replies (content, function,
    arguments string) in order, the last one repeated; the response's JSON holds `tool_calls` as the openai
    client's does (chat_completion_request pops it)."""

    def __init__(self, replies: list[list[Any]]) -> None:
        super().__init__()
        self.replies = replies

    def create(self, **kwargs: Any) -> Any:
        self.sent.append(copy.deepcopy(kwargs))
        content, name, arguments = self.replies[min(len(self.sent), len(self.replies)) - 1]
        message = {"role": "assistant", "content": content, "function_call": {"name": name, "arguments": arguments},
                   "tool_calls": None}
        data = {"id": "c", "object": "chat.completion", "created": 0, "model": "m",
                "choices": [{"index": 0, "message": message, "finish_reason": "function_call"}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
        msg = _Obj(content=content, function_call=_Obj(name=name, arguments=arguments), tool_calls=None,
                   role="assistant")
        return _Obj(choices=[_Obj(message=msg, finish_reason="function_call")], usage=_Obj(total_tokens=2),
                    json=lambda: json.dumps(data))


def _writes_nowhere(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
    """`open` for the authors' code: their logs (`open(..., 'a')`) go nowhere; reads are real (the tool files)."""
    import builtins
    import io
    return io.StringIO() if mode in ("a", "w") else builtins.open(file, mode, *args, **kwargs)


def authors_solver_env(clone: Path, inputs: Mapping[str, Any], client: _SolverClient
                       ) -> tuple[dict[str, Any], Callable[[list[dict[str, Any]]], Any]]:
    """The clone's solver classes (namespace) and a maker of its `rapidapi_wrapper` for some of the tool document's
    APIs (as dfs_gt.py `solve_given_api_main` builds it), their call_gpt calling `client`. The tool document
    `inputs["tool"]` is written as ToolBench's tool folder (`tools/Weather/weather_now.json`) in the child's own
    working folder; the ToolBench server's reply is `inputs["observation"]`."""
    tool = inputs["tool"]
    root = Path("tools").resolve()
    (root / "Weather").mkdir(parents=True, exist_ok=True)
    (root / "Weather" / "weather_now.json").write_text(json.dumps(tool), encoding="utf-8")
    dfs_args = types.SimpleNamespace(tool_root_dir=str(root), toolbench_key="", rapidapi_key="",
                                     use_rapidapi_key=False, api_customization=False, max_observation_length=1024,
                                     observ_compress_method="truncate", use_original_prompt=False, solver="dfs")
    reply = types.SimpleNamespace(status_code=200, json=lambda: dict(inputs["observation"]))
    ns: dict[str, Any] = {"json": json, "os": os, "re": re, "random": random, "deepcopy": copy.deepcopy,
                          "time": types.SimpleNamespace(time=time.time, sleep=lambda *_: None),
                          "colored": lambda s, *_a, **_k: s, "open": _writes_nowhere, "print": _quiet,
                          "args": dfs_args, "file_name": "llama_io.txt", "model_name": "MODEL",
                          "requests": types.SimpleNamespace(post=lambda *a, **k: reply), "softmax_bias": None,
                          "np": None, "math": __import__("math"), "get_rapidapi_response": None}
    ns["call_gpt"] = anytool_call_gpt(clone, client)
    authors_code(clone / "toolbench/utils.py", ["standardize", "change_name"], ns)
    authors_code(clone / "toolbench/inference/Downstream_tasks/base_env.py", [], ns, classes=("base_env",))
    authors_code(clone / "toolbench/inference/Algorithms/base_search.py", [], ns, classes=("base_search_method",))
    authors_code(clone / "toolbench/inference/Tree/Tree.py", [], ns, classes=("my_tree", "tree_node"))
    authors_code(clone / "toolbench/inference/Prompts/ReAct_prompts.py", [], ns, assigns=(
        "FORMAT_INSTRUCTIONS_SYSTEM_FUNCTION", "FORMAT_INSTRUCTIONS_SYSTEM_FUNCTION_ADAPTED",
        "FORMAT_INSTRUCTIONS_USER_FUNCTION"))
    authors_code(clone / "toolbench/inference/Prompts/Tree_search_prompts.py", [], ns, assigns=("DIVERSITY_PROMPT",))
    authors_code(clone / "toolbench/inference/LLM/chatgpt_function_model.py", ["chat_completion_request"], ns,
                 classes=("GPT4Function",))
    authors_code(clone / "anytool/rapidapi.py", [], ns, assigns=("error_list",), classes=("rapidapi_wrapper",))
    authors_code(clone / "toolbench/inference/Algorithms/DFS.py", [], ns, classes=("DFS_tree_search",))

    def env(apis: list[dict[str, Any]]) -> Any:
        api_list = [{"category_name": "Weather", "tool_name": tool["tool_name"], "api_name": a["name"]}
                    for a in apis]  # main.py's global_api_list entries
        tool_des = [["weather_now", tool["tool_description"]] for _ in api_list]  # dfs_gt.py: contain(...)
        return ns["rapidapi_wrapper"]({"query": inputs["query"], "api_list": api_list}, tool_des, None, dfs_args)

    return ns, env


def anytool_solver(clone: Path, inputs: Mapping[str, Any]) -> dict[str, Any]:
    """The authors' DFSDT solve of `inputs["query"]` on the tool document's APIs (anytool/dfs_gt.py
    `solve_given_api_main` → rapidapi.py `pipeline_runner.run_single_task`: `rapidapi_wrapper(data_dict, tool_des,
    None, dfs_args)`, `GPT4Function`, `DFS_tree_search.start(single_chain_max_step=12, tree_beam_size=2,
    max_query_count=10, answer=1, with_filter=False)`): rapidapi.py, DFS.py, Tree.py, base_search.py, base_env.py,
    the prompts, chatgpt_function_model.py and call_gpt run from the clone; the model's replies are
    `inputs["replies"]`, the ToolBench server's `inputs["observation"]`."""
    client = _SolverClient(inputs["replies"])
    ns, env = authors_solver_env(clone, inputs, client)
    chain = ns["DFS_tree_search"](llm=ns["GPT4Function"](model="gpt-4-32k"), io_func=env(inputs["tool"]["api_list"]))
    chain.start(single_chain_max_step=12, tree_beam_size=2, max_query_count=10, answer=1, with_filter=False)
    return {"sent": client.sent}


def anytool_seeded_solver(clone: Path, inputs: Mapping[str, Any]) -> dict[str, Any]:
    """The authors' solve seeded from the previous one after a reflection removed the first API: rapidapi.py
    `run_single_task` writes `chain.to_json(answer=True, process=True)`; scripts/main.py reads it back and passes
    `dfs_data['answer_generation']['train_messages'][-1]` to the next `solve_given_api_main(..., messages)` (dfs_gt.py
    → rapidapi.py `method_converter` → `DFS_tree_search.start(..., messages=messages)`) with the APIs left. Returns
    the seeded solve's requests."""
    client = _SolverClient(inputs["replies"])
    ns, env = authors_solver_env(clone, inputs, client)
    apis = inputs["tool"]["api_list"]
    first = ns["DFS_tree_search"](llm=ns["GPT4Function"](model="gpt-4-32k"), io_func=env(apis))
    first.start(single_chain_max_step=12, tree_beam_size=2, max_query_count=10, answer=1, with_filter=False)
    data = json.loads(json.dumps(first.to_json(answer=True, process=False)))  # the JSON file main.py reads
    messages = data["answer_generation"]["train_messages"][-1]
    done = len(client.sent)
    seeded = ns["DFS_tree_search"](llm=ns["GPT4Function"](model="gpt-4-32k"), io_func=env(apis[1:]))
    seeded.start(single_chain_max_step=12, tree_beam_size=2, max_query_count=10, answer=1, with_filter=False,
                 messages=messages)
    return {"sent": client.sent[done:]}


def stabletoolbench_solvable(clone: Path, inputs: Mapping[str, Any]) -> dict[str, Any]:
    """ToolLLM's solvability check of a sample judged Unsure (`eval_pass_rate.py compute_pass_rate`):
    `check_task_solvable({'query', 'available_tools'}, has_been_solved=False, return_reason=True)` of the clone's
    rtl.py → tooleval.py `function_call` → `OpenaiPoolRequest.request` (the recorder), `available_tools` the
    converted answer's (`process_valid_data(inputs["method"], inputs["generation"])`)."""
    sent, checks, example = recorded_tooleval(clone, inputs)
    checks["check_task_solvable"]({"query": inputs["query"], "available_tools": example["available_tools"]},
                                  has_been_solved=False, return_reason=True)
    return {"sent": sent, "available_tools": example["available_tools"]}


def umi_run(clone: Path, inputs: Mapping[str, Any]) -> dict[str, Any]:
    """Two steps of α-UMi's run-time pipeline (X-PLUG/Multi-LLM-Agent ToolBench-multiLLM): the tools as
    `rapidapi.py` `rapidapi_wrapper.api_json_to_openai_json` makes `functions_for_input` from `inputs["api_list"]`;
    the conversation as DFS.py keeps it (`start`: the query as the user's message; after a step: the assistant's
    message, then the observation `inputs["observation"]`); each step `collab_agent_model.py`
    `CollbaAgentV3.parse` → `prediction`, `generate_stream` replaced by a recorder of its `gen_params` answering
    with `inputs["outputs"]` in order. The prompts are `Downstream_tasks/prompt_lib.py` `prompt_dict`, run from the
    clone; `prompt_type` names the entries `inputs["prompt_type"]` gives (rapidapi.py's dict has no "conclusion"
    key, which `prediction` reads for the summarizer)."""
    base = clone / "ToolBench-multiLLM/toolbench"
    ns: dict[str, Any] = {"json": json, "re": re, "time": time, "print": _quiet}
    authors_code(base / "inference/Downstream_tasks/prompt_lib.py", [], ns, assigns=("prompt_dict",))
    authors_code(base / "utils.py", ["standardize", "change_name"], ns)
    authors_code(base / "inference/utils.py", ["collab_agent_parser"], ns)
    authors_code(base / "inference/Downstream_tasks/rapidapi.py", ["rapidapi_wrapper.api_json_to_openai_json"], ns)
    authors_code(base / "inference/LLM/collab_agent_model.py", ["CollbaAgentV3.prediction", "CollbaAgentV3.parse"], ns)
    sent: list[dict[str, Any]] = []
    outputs = list(inputs["outputs"])

    def generate_stream(model: Any, tokenizer: Any, params: Mapping[str, Any], *args: Any, **kwargs: Any) -> Any:
        sent.append(dict(params))
        return outputs.pop(0), params["prompt"]

    ns["generate_stream"] = generate_stream
    agent = types.SimpleNamespace(planner_model=None, planner_tokenizer=lambda text: list(text), caller_model=None,
                                  caller_tokenizer=None, summarizer_model=None, summarizer_tokenizer=None,
                                  chatio=types.SimpleNamespace(return_output=lambda stream: stream))
    agent.prediction = types.MethodType(ns["CollbaAgentV3.prediction"], agent)
    wrapper = types.SimpleNamespace()
    functions, functions_for_input = [], []
    for api_json in inputs["api_list"]:
        made = ns["rapidapi_wrapper.api_json_to_openai_json"](wrapper, api_json, inputs["tool"])
        functions.append(made[0])
        functions_for_input.append(made[3])
    messages: list[dict[str, Any]] = [{"role": "user", "content": inputs["query"], "value": inputs["query"]}]
    for _step in range(inputs["steps"]):
        agent.conversation_history = messages
        message, _, _ = ns["CollbaAgentV3.parse"](agent, functions, functions_for_input, process_id=1,
                                                 prompt_type=inputs["prompt_type"])
        messages = [*messages, {k: v for k, v in message.items() if k != "model_input"}]
        messages.append({"role": "observation", "name": message["function_call"]["name"],
                         "content": inputs["observation"], "value": inputs["observation"]})
    return {"sent": sent, "functions_for_input": functions_for_input}


CASES: dict[str, Callable[[Path, Mapping[str, Any]], dict[str, Any]]] = {
    "anytool_judge": anytool_judge, "anytool_solvable": anytool_solvable, "anytool_agents": anytool_agents,
    "stabletoolbench_passrate": stabletoolbench_passrate, "oppo_task7": oppo_task7, "oppo_task4": oppo_task4,
    "oppo_evaluators": oppo_evaluators, "umi_infer": umi_infer, "umi_run": umi_run, "anytool_solver": anytool_solver,
    "anytool_seeded_solver": anytool_seeded_solver, "stabletoolbench_solvable": stabletoolbench_solvable}


def main(argv: list[str]) -> int:
    case, clone = argv[0], Path(argv[1])
    inputs = json.loads(sys.stdin.read() or "{}")
    try:
        with contextlib.redirect_stdout(sys.stderr):  # their prints stay out of the result
            result = CASES[case](clone, inputs)
    except Exception as exc:  # one line for the parent (their code, or a file that is not theirs)
        print(f"{type(exc).__name__}: {exc}".replace("\n", " "), file=sys.stderr)
        return 1
    json.dump(result, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
