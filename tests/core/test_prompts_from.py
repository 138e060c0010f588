"""`prompts_from` (issue 27 §3): the authors' prompt constants read from the user's checkout with `ast`, mapped onto
ours, refused in one line when missing or different, and recorded in the results.

Every checkout here is fake (`paper_prompts.testing.write_fake_checkout`, or files written below): constants written
for the test, never the authors' text. What each check expects follows how the authors' code fills and places the
text (cited beside each test): dyabel/AnyTool `scripts/main.py`, `anytool/verifier.py`, `anytool/rapidapi.py`,
`toolbench/inference/Algorithms/DFS.py`, ToolEval's `registered_cls/tooleval.py` / `rtl.py`.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_openai import ChatOpenAI

from langgraph_anytool import AnyToolConfig, create_anytool_graph
from langgraph_anytool.config import ConfigError
from langgraph_anytool.context import resolve_settings
from langgraph_anytool.nodes.draws import seeded_sample
from langgraph_anytool.nodes.reflection import reactivation_prompt
from langgraph_anytool.paper_prompts import PromptSourceError, anytool_book, load_book, umi_book
from langgraph_anytool.paper_prompts.book import BookSpec, Slot
from langgraph_anytool.paper_prompts.source import Checkout
from langgraph_anytool.paper_prompts.testing import write_fake_checkout
from tests.fakes import ScriptedChatModel, ai, call
from tests.graph_world import make_world, scope_of, turns
from tests.servers import ChatReply, OpenAIChatServer

QUERY = "What is the weather in Paris?"


# ------------------------------------------------------------------------------------------------ the reader
def _spec(file: str, locator: str, mode: Any, names: tuple[str, ...]) -> BookSpec:
    return BookSpec("test/repo", file, (("x", Slot(file, locator, mode, tuple((n, n) for n in names))),))


def test_replace_mode_fills_as_the_authors_replace_does(tmp_path: Path) -> None:
    # main.py: REFIND_API_PROMPT.replace('{failed_reason}', str(self.failed_reason)) on a text written with
    # `{{failed_reason}}`: the authors' model sees the reason between braces
    text = "The result is: {{failed_reason}}. Try {other}."
    (tmp_path / "p.py").write_text(f"P = {text!r}\n")
    book = load_book(_spec("p.py", "P", "replace", ("failed_reason", "other")), tmp_path)
    assert book.templates["x"].fill({"failed_reason": "R", "other": "O"}) == \
        text.replace("{failed_reason}", "R").replace("{other}", "O") == "The result is: {R}. Try O."


def test_static_replace_calls_and_run_time_replacements(tmp_path: Path) -> None:
    # prompt_template.py: CATEGORY_AGENT_PROMPT = """...""".replace('{leaf_tool_number}', str(leaf_tool_number)) —
    # a value computed at run time stays a placeholder; a constant replacement is applied here
    (tmp_path / "p.py").write_text(
        "n = 5\nP = '''at most {leaf_tool_number} tools, mail {email} in {category}'''"
        ".replace('{leaf_tool_number}', str(n)).replace('{email}', 'x@y.z')\n")
    book = load_book(_spec("p.py", "P", "replace", ("leaf_tool_number", "category")), tmp_path)
    assert book.templates["x"].fill({"leaf_tool_number": 7, "category": "C"}) == "at most 7 tools, mail x@y.z in C"


def test_format_mode_reads_str_format_braces(tmp_path: Path) -> None:
    (tmp_path / "p.py").write_text("P = 'JSON like {{\"a\": 1}} for {query}'\n")
    book = load_book(_spec("p.py", "P", "format", ("query",)), tmp_path)
    assert book.templates["x"].fill({"query": "Q"}) == "JSON like {\"a\": 1} for Q" == \
        'JSON like {{"a": 1}} for {query}'.format(query="Q")


def test_fstrings_in_functions_methods_and_dict_entries(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(
        "class A:\n"
        "    def run(self):\n"
        "        msgs = [{'role': 'user', 'content': 'first'}]\n"
        "        msgs.append({'role': 'user', 'content': f'Task: {self.query}. Tools: {tools}'})\n"
        "def check(x):\n"
        "    prompt = f'''Is it sound?\\nPlan:\\n{plan}''' + doc_text\n"
        "D = {'planner': '{doc} and {history}', 'other': 'x'}\n")
    book = load_book(BookSpec("t", "m.py", (
        ("user", Slot("m.py", "A.run:user[1]", "literal", (("self.query", "query"), ("tools", "tools")))),
        ("check", Slot("m.py", "check:prompt", "literal", (("plan", "plan"), ("doc_text", "doc")))),
        ("planner", Slot("m.py", "D['planner']", "replace", (("doc", "doc"), ("history", "history")))),
    )), tmp_path)
    assert book.fill("user", query="Q", tools=["a"]) == "Task: Q. Tools: ['a']"
    assert book.fill("check", plan="P", doc=" + docs") == "Is it sound?\nPlan:\nP + docs"
    assert book.fill("planner", doc="D", history="H") == "D and H"


def test_files_are_parsed_never_imported_or_run(tmp_path: Path) -> None:
    sentinel = tmp_path / "RAN"
    (tmp_path / "p.py").write_text(f"open({str(sentinel)!r}, 'w').write('imported')\nP = 'text {{query}}'\n"
                                   "raise SystemExit('executed')\n")
    book = load_book(_spec("p.py", "P", "replace", ("query",)), tmp_path)
    assert book.fill("x", query="Q") == "text Q" and not sentinel.exists()


def test_the_fake_checkouts_load_for_all_four_repositories(tmp_path: Path) -> None:
    from langgraph_anytool.paper_prompts import oppo_book, tooleval_book

    for repo, load in (("anytool", anytool_book), ("oppo", oppo_book), ("tooleval", tooleval_book),
                       ("umi", umi_book)):
        book = load(write_fake_checkout(tmp_path / repo, repo))
        assert book.templates and all(t.text.lstrip().startswith("FAKE") for t in book.templates.values())


# ------------------------------------------------------------------------------------------------ refusals
def _one_line(exc: BaseException) -> str:
    text = str(exc)
    assert "\n" not in text, text
    return text


def test_a_missing_constant_is_refused_in_one_line_naming_file_and_constant(tmp_path: Path) -> None:
    root = write_fake_checkout(tmp_path / "AnyTool", "anytool")
    path = root / "anytool/prompt_template.py"
    path.write_text("\n".join(line for line in path.read_text().splitlines()
                              if not line.startswith("META_AGENT_PROMPT")) + "\n")
    with pytest.raises(ConfigError) as err:
        AnyToolConfig.paper(prompts_from=str(root))
    assert _one_line(err.value) == (f"AnyToolConfig.prompts_from: {path}: META_AGENT_PROMPT: no module-level "
                                    "constant META_AGENT_PROMPT")


def test_different_placeholders_are_refused(tmp_path: Path) -> None:
    root = write_fake_checkout(tmp_path / "AnyTool", "anytool",
                               texts={"tool_first": "Task: {self.query} with {self.tools}"})
    with pytest.raises(ConfigError) as err:
        AnyToolConfig.paper(prompts_from=str(root))
    assert _one_line(err.value) == (
        f"AnyToolConfig.prompts_from: {root.resolve() / 'scripts/main.py'}: Tool_Agent.__init__:user[0]: placeholders "
        "{self.query}, {self.tools} differ from the expected {self.query}, {tools_info}")


def test_a_file_that_is_not_valid_python_is_refused(tmp_path: Path) -> None:
    root = write_fake_checkout(tmp_path / "AnyTool", "anytool")
    (root / "anytool/verifier.py").write_text("def check(:\n")
    with pytest.raises(PromptSourceError) as err:
        anytool_book(root)
    assert _one_line(err.value).startswith(f"{root.resolve() / 'anytool/verifier.py'}: not valid Python (line 1: ")
    assert _one_line(err.value).endswith("so check_task_solvable_by_function:user[0] cannot be read")


@pytest.mark.parametrize("case", ["missing", "file", "no_marker", "empty"])
def test_a_path_that_is_not_a_checkout_is_refused(tmp_path: Path, case: str) -> None:
    target = {"missing": tmp_path / "nowhere", "file": tmp_path / "f.txt", "no_marker": tmp_path,
              "empty": ""}[case]
    (tmp_path / "f.txt").write_text("x")
    with pytest.raises(ConfigError) as err:
        AnyToolConfig.paper(prompts_from=str(target))
    message = _one_line(err.value)
    assert message == {
        "missing": f"AnyToolConfig.prompts_from: {target}: not a directory (expected a clone of dyabel/AnyTool)",
        "file": f"AnyToolConfig.prompts_from: {target}: not a directory (expected a clone of dyabel/AnyTool)",
        "no_marker": f"AnyToolConfig.prompts_from: {target}: not a checkout of dyabel/AnyTool (no "
                     "anytool/prompt_template.py)",
        "empty": "AnyToolConfig.prompts_from must be the path of a clone of dyabel/AnyTool, got ''",
    }[case]


def test_a_missing_file_and_a_non_string_constant_are_refused(tmp_path: Path) -> None:
    root = write_fake_checkout(tmp_path / "AnyTool", "anytool")
    (root / "toolbench/inference/Prompts/Tree_search_prompts.py").unlink()
    with pytest.raises(PromptSourceError) as err:
        anytool_book(root)
    assert _one_line(err.value) == (f"{root.resolve() / 'toolbench/inference/Prompts/Tree_search_prompts.py'}: no "
                                    "such file (the checkout has no toolbench/inference/Prompts/Tree_search_prompts.py)")
    (tmp_path / "p.py").write_text("P = make_prompt()\n")
    with pytest.raises(PromptSourceError) as err:
        load_book(_spec("p.py", "P", "replace", ()), tmp_path)
    assert _one_line(err.value) == f"{tmp_path.resolve() / 'p.py'}: P: not a string constant (line 1: make_prompt())"


# ------------------------------------------------------------------------------------------------ config
def test_prompts_from_is_a_setting_from_code_env_and_command_line(tmp_path: Path) -> None:
    root = str(write_fake_checkout(tmp_path / "AnyTool", "anytool"))
    assert AnyToolConfig.paper(prompts_from=root).prompts_from == root
    assert AnyToolConfig(prompts_from=Path(root)).prompts_from == root  # type: ignore[arg-type]
    assert AnyToolConfig.from_env({"ANYTOOL_PROFILE": "paper", "ANYTOOL_PROMPTS_FROM": root}).prompts_from == root
    assert AnyToolConfig().with_values({"prompts_from": root}).with_values({"prompts_from": ""}).prompts_from is None
    with pytest.raises(ConfigError, match=r"ANYTOOL_PROMPTS_FROM=.*not a directory"):
        AnyToolConfig.from_env({"ANYTOOL_PROMPTS_FROM": str(tmp_path / "nowhere")})
    with pytest.raises(ConfigError, match="prompts_from cannot change per run"):  # a checkout of the build machine
        resolve_settings(AnyToolConfig(), {"prompts_from": root})


# ------------------------------------------------------------------------------------------------ a whole run
class _Script:
    """The scripted models of one paper() run: meta picks Weather (first turn: no call, to see the nudge), the
    category agent hands over its tool, the tool agent adds `Current`, the solvability check says Solvable, the
    solver calls, restarts, calls again and answers."""

    def __init__(self) -> None:
        self.solver_calls = 0

    def __call__(self, messages: list[BaseMessage], tools: list[str], meta: dict[str, Any]) -> AIMessage:
        scope = scope_of(messages, tools, meta)
        n = turns(messages)
        if scope == "meta":
            return [ai("thinking"), ai("", call("create_agent_category_level", category_name="Weather"))][n] \
                if n < 2 else ai("", call("finish_search"))
        if scope.startswith("category"):
            return ai("", call("create_agent_tool_level", tool_names=["Weather Now"])) if n == 0 else \
                ai("", call("finish_search"))
        if scope.startswith("tool"):
            return ai("", call("add_apis_into_api_pool", apis=[{"tool_name": "Weather Now", "api_name": "Current"}]))
        if scope == "solvable":
            return ai("", call("Finish", answer="Solvable"))
        if scope == "solver":
            self.solver_calls += 1
            fn = next(t for t in tools if t != "Finish")
            if self.solver_calls == 1:
                return ai("try", call(fn, city="Paris"))
            if self.solver_calls == 2:
                return ai("", call("Finish", return_type="give_up_and_restart", reason="try again"))
            if self.solver_calls == 3:
                return ai("again", call(fn, city="Paris"))
            return ai("", call("Finish", return_type="give_answer", final_answer="It is 21 C in Paris."))
        raise AssertionError(f"unexpected call {scope}")


def _calls(model: ScriptedChatModel, scope: str) -> list[dict[str, Any]]:
    return [c for c in model.calls if scope_of(c["messages"], c["tools"], c).startswith(scope)]


def _system(c: dict[str, Any]) -> str:
    return next(str(m.content) for m in c["messages"] if isinstance(m, SystemMessage))


def _humans(c: dict[str, Any]) -> list[str]:
    return [str(m.content) for m in c["messages"] if isinstance(m, HumanMessage)]


def test_a_paper_run_sends_the_checkouts_prompts_where_the_authors_code_does(tmp_path: Path) -> None:
    root = write_fake_checkout(tmp_path / "AnyTool", "anytool")
    catalog, executor = make_world()
    model = ScriptedChatModel(responder=_Script())
    judge_reply = ChatReply(function_call=("check_answer_status", json.dumps({"answer_status": "Solved",
                                                                             "reason": "gives the temperature"})))
    with OpenAIChatServer([judge_reply] * 3) as server:
        judge = ChatOpenAI(model="gpt-test", base_url=server.base_url, api_key="sk-loopback", max_retries=0)
        config = AnyToolConfig.paper(prompts_from=str(root), small_category_shortcut=False, max_solver_queries=3)
        graph = create_anytool_graph(catalog, model, models={"judge": judge}, config=config, executor=executor)
        out = graph.invoke({"query": QUERY})
        judge_requests = server.chat_requests
    assert out["status"] == "solved", out.get("reason")
    # meta-agent (main.py Main_Search_Agent.__init__): system = META_AGENT_PROMPT.replace('{categories}',
    # str(query_all_categories())), api_database_function.py: random.sample(list(database.keys()), len(...)) — every
    # category once, in a drawn order (ours seeded by the query, the same at every call of the run); the first user
    # message is the f-string with the query
    cats = seeded_sample(list(catalog.categories), "query_all_categories", f"FAKE meta_first query={QUERY}")
    assert sorted(cats) == sorted(catalog.categories) and cats != list(catalog.categories)
    meta = _calls(model, "meta")
    assert {_system(c) for c in meta} == {f"FAKE meta_system categories={cats}"}
    assert _humans(meta[0]) == [f"FAKE meta_first query={QUERY}"]
    assert _humans(meta[1])[-1] == "FAKE agent_nudge"  # a turn without a function call (main.py assign_main)
    # category agent (Category_Agent.category_search): {category} and the run's leaf_tool_number; the tools as a list
    cat = _calls(model, "category")[0]
    assert _system(cat) == "FAKE category_system category=Weather leaf_tool_number=5"
    assert _humans(cat) == [f"FAKE category_first self.query={QUERY} self.tools=['Weather Now']"]
    # tool agent (Tool_Agent.__init__): str(category), str(tools), and query_all_tool_info's dict
    tool = _calls(model, "tool")[0]
    assert _system(tool) == "FAKE tool_system category=Weather tools=['Weather Now']"
    info = {"Weather Now": {"api_list": [{"name": "Current", "description": "Current of Weather Now",
                                          "required_parameters": ["city"], "optional_parameters": []}],
                            "description": "Weather Now: weather data"}}
    assert _humans(tool) == [f"FAKE tool_first self.query={QUERY} tools_info={info}"]
    # the solvability check (verifier.py check_task_solvable_by_function): system, user message with
    # global_api_list_detailed (tool_description always '' there), and the authors' Finish function offered
    check = _calls(model, "solvable")[0]
    pool = [{"category_name": "Weather", "tool_name": "Weather Now", "api_name": "Current", "tool_description": "",
             "api_description": "Current of Weather Now"}]
    assert _system(check) == "FAKE solvable_system"
    assert _humans(check) == [f"FAKE solvable_user query={QUERY} functions={pool}"]
    assert [s["function"]["description"] for s in check["tool_schemas"]] == ["FAKE finish function"]
    # the solver (DFS.py start; rapidapi.py task description and its tool list "1.<standard name>: <description>")
    solver = _calls(model, "solver")
    assert _system(solver[0]) == ("FAKE solver_system task_description=FAKE solver_task"
                                  "1.weather_now: Weather Now: weather data\n")
    assert _humans(solver[0]) == [f"FAKE solver_user input_description={QUERY}"]
    later = [h for c in solver[1:] for h in _humans(c)]
    diversity = [h for h in later if h.startswith("FAKE solver_diversity previous_candidate=")]
    # DFS.py DFS_tree_search.DFS (issue 36 §3): js_list of {"name", "arguments" (the call's arguments string),
    # "function_output" (the child's observation), "mento-carlo-action-value" (Tree.py compute_weight: 0.0)},
    # json.dumps(js_list, indent=2) + "\n"; the root has no observation, so no "again, your former observation"
    observed = next(str(m.content) for c in solver[1:] for m in c["messages"] if isinstance(m, ToolMessage))
    js_list = [{"name": "current_for_weather_now", "arguments": json.dumps({"city": "Paris"}),
                "function_output": observed, "mento-carlo-action-value": 0.0}]
    assert diversity and diversity[0] == f"FAKE solver_diversity previous_candidate={json.dumps(js_list, indent=2)}\n"
    assert "FAKE solver_query_limit" in _humans(solver[3])  # after max_solver_queries=3 queries (DFS.py DFS)
    # the judge: three ToolEval samples (check_solved_toolbench), each one user message with the template filled by
    # .format, check_answer_status forced with the reason property added, in AnyTool's copy's call form
    # (dyabel/AnyTool toolbench/tooleval/evaluators/registered_cls/tooleval.py function_call: functions= and
    # function_call={"name": ...}) with its config.yaml's completions_kwargs (the fake's 900 tokens, temperature 0.3)
    assert len(judge_requests) == 3
    body = judge_requests[0]
    # the answer is the converted answer's final_answer: the Finish call's arguments (rtl.py check_is_solved;
    # DFS.py to_json; tests/core/test_paper_judge_answer.py)
    final = json.dumps({"return_type": "give_answer", "final_answer": "It is 21 C in Paris."})
    assert body["messages"] == [{"role": "user", "content": f"\nFAKE judge_answer query={QUERY} answer={final}\n"}]
    assert body["function_call"] == {"name": "check_answer_status"} and "tools" not in body
    assert body["seed"] == 123  # AnyTool's copy sends through openai_utils.py call_gpt: seed=123
    assert body["temperature"] == 0.3 and body["max_completion_tokens"] == 900
    (fn,) = body["functions"]
    assert fn["description"] == "FAKE check_answer_status function"
    assert fn["parameters"]["properties"]["reason"] == {"type": "string", "description": "FAKE reason property"}
    assert fn["parameters"]["required"] == ["answer_status", "reason"]
    # which prompts ran: the checkout's files and their sha256
    files = out["prompts"]["files"]
    assert out["prompts"]["repo"] == "dyabel/AnyTool" and out["prompts"]["path"] == str(root.resolve())
    assert files["anytool/prompt_template.py"] == hashlib.sha256(
        (root / "anytool/prompt_template.py").read_bytes()).hexdigest()
    assert set(files) >= {"scripts/main.py", "anytool/verifier.py",
                          "toolbench/tooleval/evaluators/tooleval_gpt-3.5-turbo_default/template.txt"}


def test_a_default_run_records_our_prompts_and_sends_no_authors_text() -> None:
    catalog, executor = make_world()
    model = ScriptedChatModel(responder=lambda m, t: ai("", call("finish_search")))
    out = create_anytool_graph(catalog, model, executor=executor).invoke({"query": QUERY})
    assert out["prompts"] == {"repo": "langgraph-anytool", "path": None, "files": {}}
    assert not any("FAKE" in str(m.content) for c in model.calls for m in c["messages"])


def test_reactivation_messages_fill_failed_reason_as_main_py_does(tmp_path: Path) -> None:
    # main.py resume_search: REFIND_CATEGORY (meta), REFIND_TOOL (category), REFIND_API (tool), each
    # .replace('{failed_reason}', str(failed_reason)) on the constant's text
    texts = {"tool_reactivate": "FAKE The result is: {{failed_reason}}. Find more.",
             "category_reactivate": "FAKE more tools: {failed_reason}",
             "meta_reactivate": "FAKE more categories: {failed_reason}",
             "flat_reactivate": "FAKE no hierarchy: {failed_reason}"}
    book = anytool_book(write_fake_checkout(tmp_path / "AnyTool", "anytool", texts=texts))
    why = "{'return_type': 'give_up', 'reason': 'weather_now failed'}"
    assert reactivation_prompt("tool", why, book) == texts["tool_reactivate"].replace("{failed_reason}", why)
    assert reactivation_prompt("tool", why, book) == f"FAKE The result is: {{{why}}}. Find more."
    assert reactivation_prompt("category", why, book) == f"FAKE more tools: {why}"
    assert reactivation_prompt("meta", why, book) == f"FAKE more categories: {why}"
    assert reactivation_prompt("flat", why, book) == f"FAKE no hierarchy: {why}"
    assert "FAKE" not in reactivation_prompt("tool", why)  # ours without a book


def test_an_edited_checkout_is_read_again(tmp_path: Path) -> None:
    root = write_fake_checkout(tmp_path / "AnyTool", "anytool")
    first = anytool_book(root)
    path = root / "anytool/prompt_template.py"
    path.write_text(path.read_text().replace("FAKE meta_system", "FAKE edited meta_system"))
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 1_000_000))
    second = anytool_book(root)
    assert second.fill("meta_system", categories="[]").startswith("FAKE edited")
    assert first.key != second.key and first.files != second.files


def test_provenance_and_checkout_hashes(tmp_path: Path) -> None:
    root = write_fake_checkout(tmp_path / "Multi-LLM-Agent", "umi")
    book = umi_book(root)
    raw = (root / "GLPFT/utils/prompt_lib.py").read_bytes()
    assert book.provenance() == {"repo": "X-PLUG/Multi-LLM-Agent", "path": str(root.resolve()),
                                 "files": {"GLPFT/utils/prompt_lib.py": hashlib.sha256(raw).hexdigest()}}
    checkout = Checkout.open(root, "X-PLUG/Multi-LLM-Agent", "GLPFT/utils/prompt_lib.py")
    checkout.text("GLPFT/utils/prompt_lib.py")
    assert checkout.provenance()["files"] == book.provenance()["files"]
    assert json.loads(json.dumps(book.provenance())) == book.provenance()  # plain data for a results file


def test_a_tooleval_config_that_is_not_yaml_or_lacks_a_function_is_refused(tmp_path: Path) -> None:
    from langgraph_anytool.paper_prompts import tooleval_book

    root = write_fake_checkout(tmp_path / "StableToolBench", "tooleval")
    folder = root / "toolbench/tooleval/evaluators/tooleval_gpt-3.5-turbo_default"
    config = folder / "config.yaml"
    good = config.read_text()
    config.write_text("prompt_template: [template.txt\n")
    with pytest.raises(PromptSourceError) as err:
        tooleval_book(root)
    assert _one_line(err.value).startswith(f"{config.resolve()}: invalid YAML at line ")
    config.write_text(good)
    template = folder / "template.txt"
    template.write_text(template.read_text().replace("<name>parse_answer_status</name>", "<name>parse</name>"))
    with pytest.raises(PromptSourceError) as err:
        tooleval_book(root)
    assert _one_line(err.value) == (f"{template.resolve()}: <function> parse_answer_status: no such function in the "
                                    "template")
