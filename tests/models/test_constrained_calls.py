"""Constrained function calls (issue 38 §1): where the protocol needs a call and a local server cannot force one
natively, the functions go into the prompt and the reply is held to a call by a `response_format` JSON schema,
then parsed into ordinary tool calls.

The graph tests run `anytool run` against a loopback llama-server (tests/model_servers.py) whose policy CHECKS each
request's `response_format` (one `oneOf` branch per offered function, the same functions the prompt lists, no
`tools`) and answers with the JSON a grammar-constrained model writes.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from langgraph_anytool.cli.app import main
from langgraph_anytool.models.constrained import (
    MAX_STRING_CHARS,
    ConstrainedToolRunnable,
    action_grammar,
    call_schema,
    choose_call_mode,
    constraint_kwargs,
    parse_call,
    response_format,
)
from langgraph_anytool.models.endpoint import Endpoints, ServerFacts, sent_request
from langgraph_anytool.models.fitting import fit_counted
from langgraph_anytool.models.profiles import ProfileError, check_overrides, profile_for
from langgraph_anytool.models.testing import ScriptedChatModel
from tests.model_servers import LlamaCppServer, ModelServer
from tests.real_model.recorder import text_functions

QUERY = "Convert 26.2 miles to kilometers."
SMOLLM = "openai:smollm2-135m"

CONVERT = {"type": "function", "function": {
    "name": "convert_units", "description": "Convert a value between units.",
    "parameters": {"type": "object", "properties": {
        "value": {"type": "NUMBER", "description": "the value", "format": "double"},
        "from_unit": {"type": "string", "example": "mi"}, "to_unit": {"type": "string", "enum": ["km", "m"]},
        "opts": {"type": "weird"}},
        "required": ["value", "from_unit", "nope"]}}}
FINISH = {"type": "function", "function": {"name": "Finish", "description": "Finish.", "parameters": {
    "type": "object", "properties": {"return_type": {"type": "string", "enum": ["give_answer", "give_up"]},
                                     "final_answer": {"type": "string"}}, "required": ["return_type"]}}}


# ------------------------------------------------------------------------------------------ the schema and parsing
def branches(schema: dict[str, Any]) -> list[dict[str, Any]]:
    return list(schema.get("oneOf") or [schema])


def test_the_schema_has_one_branch_per_function_with_its_parameters() -> None:
    schema = call_schema([CONVERT, FINISH])
    got = {b["properties"]["name"]["const"]: b for b in branches(schema)}
    assert list(got) == ["convert_units", "Finish"]
    for b in got.values():
        assert b["required"] == ["name", "arguments"] and b["additionalProperties"] is False
    args = got["convert_units"]["properties"]["arguments"]
    # reduced to what a grammar compiler takes: standard types, enums, no vendor keys, required kept where named
    assert args["properties"]["value"] == {"type": "number"}
    assert args["properties"]["from_unit"] == {"type": "string", "maxLength": MAX_STRING_CHARS}
    assert args["properties"]["to_unit"] == {"type": "string", "enum": ["km", "m"]}
    assert args["properties"]["opts"] == {}
    assert args["required"] == ["value", "from_unit"] and args["additionalProperties"] is False
    assert got["Finish"]["properties"]["arguments"]["properties"]["return_type"]["enum"] == ["give_answer", "give_up"]
    # one function: the branch itself
    assert branches(call_schema([FINISH]))[0]["properties"]["name"] == {"const": "Finish"}
    assert response_format([FINISH])["type"] == "json_schema"


@pytest.mark.parametrize("text, name, args", [
    ('{"name": "convert_units", "arguments": {"value": 26.2, "from_unit": "mi"}}', "convert_units",
     {"value": 26.2, "from_unit": "mi"}),
    ('  {"name": "Finish", "arguments": {}}\n', "Finish", {}),
])
def test_a_constrained_reply_is_an_ordinary_tool_call(text: str, name: str, args: dict[str, Any]) -> None:
    msg = parse_call(text)
    assert [(c["name"], c["args"]) for c in msg.tool_calls] == [(name, args)]
    assert msg.tool_calls[0]["id"] and not msg.invalid_tool_calls


@pytest.mark.parametrize("text", ['{"name": "convert_units", "arguments": {"value": 2',  # cut at max_tokens
                                  "I think you should convert", '{"name": 3, "arguments": {}}',
                                  '{"name": "x", "arguments": [1]}', "[]"])
def test_a_reply_that_is_no_call_is_an_invalid_call_with_its_reason(text: str) -> None:
    msg = parse_call(text)
    assert not msg.tool_calls and len(msg.invalid_tool_calls) == 1
    bad = msg.invalid_tool_calls[0]
    assert bad["args"] == text.strip() and bad["error"] and bad["id"]


def test_the_text_grammar_offers_each_function_with_its_own_parameters() -> None:
    grammar = action_grammar([CONVERT, FINISH])
    assert list(text_functions(grammar)) == ["convert_units", "Finish"]
    convert = next(line for line in grammar.splitlines() if line.startswith("call0 ::= "))
    assert '"\\"value\\"" ":" ws number' in convert and '( "\\"km\\"" | "\\"m\\"" ) ws' in convert
    assert '"\\"opts\\"" ":" ws value' in convert and "{0,3}" in convert  # 4 parameters: 1 + at most 3 more
    finish = next(line for line in grammar.splitlines() if line.startswith("call1 ::= "))
    assert '"\\"return_type\\"" ":" ws ( "\\"give_answer\\"" | "\\"give_up\\"" ) ws' in finish


def test_an_openai_compatible_client_sends_the_schema_in_its_body() -> None:
    from langchain_openai import ChatOpenAI

    chat = ChatOpenAI(model="smollm2", base_url="http://127.0.0.1:9/v1", api_key="x",  # type: ignore[arg-type]
                      extra_body={"cache_prompt": True})
    options = constraint_kwargs(chat, [FINISH])
    assert options == {"extra_body": {"cache_prompt": True, "response_format": response_format([FINISH])}}
    assert constraint_kwargs(ScriptedChatModel(), [FINISH]) == {"response_format": response_format([FINISH])}


# ------------------------------------------------------------------------------------------ choosing the mode
class FakeEndpoints(Endpoints):
    def __init__(self, server: str) -> None:
        super().__init__()
        self.server = server

    def facts(self, endpoint: Any) -> ServerFacts:
        return ServerFacts(self.server, 4096, "test", True)


@pytest.mark.parametrize("base_url, server, profile, mode", [
    ("http://127.0.0.1:8080/v1", "llama.cpp", {}, "constrained"),  # a local llama.cpp: constrained by default
    ("http://127.0.0.1:8080/v1", "llama.cpp", {"call_mode": "native"}, "native"),  # the profile wins
    ("http://127.0.0.1:8080/v1", "llama.cpp", {"tool_calling": False}, "text"),
    ("http://127.0.0.1:8000/v1", "vllm", {}, "native"),
    ("http://127.0.0.1:11434/v1", "ollama", {"call_mode": "constrained"}, "constrained"),
    ("https://api.openai.com/v1", "", {}, "native"),  # hosted providers keep native calls
    ("https://api.groq.com/openai/v1", "", {"call_mode": "text"}, "text"),
])
def test_the_call_mode_is_the_profiles_else_constrained_for_a_local_llama_cpp(
        base_url: str, server: str, profile: dict[str, Any], mode: str) -> None:
    from langchain_openai import ChatOpenAI

    chat = ChatOpenAI(model="smollm2", base_url=base_url, api_key="x")  # type: ignore[arg-type]
    chosen = choose_call_mode(chat, profile_for(chat, {"smollm2": profile} if profile else None),
                              FakeEndpoints(server))
    assert chosen == mode


def test_a_bad_call_mode_is_named_with_its_pattern() -> None:
    with pytest.raises(ProfileError, match=r"model_profiles\['smollm2'\]\.call_mode must be one of native, "
                                           r"constrained, text or null, got 'json'"):
        check_overrides({"smollm2": {"call_mode": "json"}})
    assert check_overrides({"smollm2": {"call_mode": None}}) == {"smollm2": {"call_mode": None}}


def test_the_functions_listed_in_the_prompt_are_what_the_server_counts_and_fitting_cuts() -> None:
    """The offered functions are prompt tokens in constrained mode: `sent_request` (what the server's tokenizer
    counts) holds them in the system message and sends no `tools`; fitting estimates them and cuts their
    descriptions when the room is short."""
    long = {"type": "function", "function": {**CONVERT["function"], "description": "Convert units. " + "x " * 2000}}
    runnable = ConstrainedToolRunnable(ScriptedChatModel(), [long, FINISH])
    prompt = [SystemMessage("You solve tasks."), HumanMessage(QUERY),
              AIMessage("", tool_calls=[{"name": "convert_units", "args": {"value": 1}, "id": "a"}]),
              ToolMessage('{"km": 1.6}', tool_call_id="a", name="convert_units")]
    sent, tools = sent_request(runnable, prompt)
    assert tools is None
    assert "convert_units" in sent[0]["content"] and '"Finish"' in sent[0]["content"]
    assert sent[2] == {"role": "assistant", "content": '{"name": "convert_units", "arguments": {"value": 1}}'}
    assert sent[3]["role"] == "user" and sent[3]["content"].startswith("Observation (convert_units)")
    wide = fit_counted(runnable, prompt, 100_000, None)
    assert wide.tokens > 1000  # the listing counts
    narrow = fit_counted(runnable, prompt, 600, None)
    assert "tools" in narrow.steps and narrow.tokens < 600


# ------------------------------------------------------------------------------------------ a run on a loopback server
def offered(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The branches of a request's constraint; the policy fails the request when it is not the documented shape."""
    fmt = (body.get("response_format") or {})
    assert fmt.get("type") == "json_schema", f"no json_schema response_format: {sorted(body)}"
    assert not body.get("tools"), "a constrained request sent `tools` too"
    found = branches(fmt["json_schema"]["schema"])
    system = str(body["messages"][0]["content"])
    for b in found:  # every constrained function is listed in the prompt
        assert f'"name": "{b["properties"]["name"]["const"]}"' in system
    return found


def arguments_for(branch: dict[str, Any]) -> dict[str, Any]:
    """Values of the right type for a branch's required arguments (an enum's first value)."""
    params = branch["properties"]["arguments"]
    out: dict[str, Any] = {}
    for key in params.get("required", []):
        prop = params["properties"].get(key, {})
        kind = prop.get("type")
        out[key] = (prop["enum"][0] if "enum" in prop else 26.2 if kind in ("number", "integer")
                    else True if kind == "boolean" else [] if kind == "array" else {} if kind == "object" else "mi")
    return out


PLAIN = "Solved: the answer gives the distance in kilometers."


class Policy:
    """Calls the first offered API, then Finish with an answer once an observation is in the prompt; every reply
    the JSON a grammar-constrained model writes."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []

    def __call__(self, body: dict[str, Any]) -> str:
        self.requests.append(body)
        if not body.get("response_format"):  # a plain reply (the judge's verdict)
            return PLAIN
        found = {b["properties"]["name"]["const"]: b for b in offered(body)}
        observed = any(str(m.get("content") or "").startswith("Observation (") for m in body["messages"])
        if "Finish" in found and observed:
            return json.dumps({"name": "Finish", "arguments": {"return_type": "give_answer",
                                                              "final_answer": "26.2 miles are 42.16 km."}})
        name = next(n for n in found if n != "Finish")
        return json.dumps({"name": name, "arguments": arguments_for(found[name])})


def anytool_run(server: ModelServer, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                *settings: str) -> dict[str, Any]:
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    args = ["run", QUERY, "--model", SMOLLM, "--json", "--quiet", "--no-cache"]
    for s in settings:
        args += ["--set", s]
    main(args)
    return dict(json.loads(capsys.readouterr().out))


@pytest.mark.parametrize("solver", ["dfsdt", "cot", "umi"])
def test_a_local_llama_cpp_solver_makes_constrained_calls_that_are_executed(
        solver: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: the functions were sent as `tools` (which SmolLM2's template drops) and the reply was free text.
    Now each calling request is constrained; the reply's call is executed against the builtin catalog (its
    observation is in the next request), Finish ends the solve with the answer, and the usage is the server's."""
    policy = Policy()
    with LlamaCppServer(policy=policy, n_ctx=8192, chars_per_token=3.3) as server:
        out = anytool_run(server, monkeypatch, capsys, "retriever=search", f"solver={solver}", "max_reflections=0")
        chats = list(server.chats)
    assert out["status"] != "error", out["reason"]
    calling = [i for i, b in enumerate(policy.requests) if b.get("response_format")]
    assert len(calling) >= 2 if solver != "umi" else calling
    later = [json.dumps(b["messages"]) for b in policy.requests[calling[0] + 1:]]
    # the executed call's observation reaches the model (a ToolMessage shown as text; α-UMi's history)
    assert any("Observation (" in t or "Observation:" in t for t in later), "no observation reached the model"
    if solver == "umi":  # the summarizer's plain reply is the answer
        assert out["answer"] == PLAIN
    else:
        assert out["solver_attempts"][-1]["finish_type"] == "give_answer", out["solver_attempts"]
        assert out["answer"] == "26.2 miles are 42.16 km."
    recorded = sum(int(v.get("model_calls", 0)) for v in out["usage"].values() if isinstance(v, dict))
    prompt = sum(int(v.get("input_tokens", 0)) for v in out["usage"].values() if isinstance(v, dict))
    assert (recorded, prompt) == (len(chats), sum(c.prompt_tokens for c in chats))


def test_a_profile_keeps_native_calls_on_llama_cpp(monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """`call_mode: "native"` sends the functions as `tools` with no constraint, as before."""
    seen: list[dict[str, Any]] = []

    def native(body: dict[str, Any]) -> str:
        seen.append(body)
        return "I am not sure."

    with LlamaCppServer(policy=native, n_ctx=8192, chars_per_token=3.3) as server:
        anytool_run(server, monkeypatch, capsys, "retriever=search", "max_reflections=0",
                    'model_profiles={"smollm2": {"call_mode": "native"}}')
    assert seen and all("response_format" not in b for b in seen)
    assert any(b.get("tools") for b in seen)


def test_text_mode_on_llama_cpp_is_held_to_one_action_by_a_grammar(monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """A text-mode profile (`tool_calling: false`) on a llama.cpp server: each solver request carries a GBNF
    `grammar` whose `name` rule offers exactly the functions the prompt lists (after fitting dropped some), the
    reply is parsed as a text call and executed."""
    grammars: list[str] = []

    def text(body: dict[str, Any]) -> str:
        grammar = body.get("grammar")
        if not grammar:
            return PLAIN
        assert "response_format" not in body and not body.get("tools")
        grammars.append(grammar)
        names = list(text_functions(grammar))
        system = str(body["messages"][0]["content"])
        assert names and all(f'"name": "{n}"' in system for n in names)
        observed = any(str(m.get("content") or "").startswith("Observation (") for m in body["messages"])
        if observed:
            return ('Thought: done\nAction: Finish\nAction Input: {"return_type": "give_answer", '
                    '"final_answer": "26.2 miles are 42.16 km."}')
        api = next(n for n in names if n.startswith("convert_units"))
        return f'Thought: convert\nAction: {api}\nAction Input: {{"value": 26.2, "from_unit": "mi", "to_unit": "km"}}'

    with LlamaCppServer(policy=text, n_ctx=8192, chars_per_token=3.3) as server:
        out = anytool_run(server, monkeypatch, capsys, "retriever=search", "max_reflections=0",
                          'model_profiles={"smollm2": {"tool_calling": false}}')
    assert len(grammars) >= 2 and out["answer"] == "26.2 miles are 42.16 km.", out["reason"]
    assert out["solver_attempts"][-1]["api_calls"] >= 1
    grammar = grammars[0]
    assert grammar.startswith('root ::= "Thought: "') and '"\\nAction Input: " "{"' in grammar


# ------------------------------------------------------------------------------------------ α-UMi's planner
def decisions_of(grammar: str) -> tuple[str, list[str], str]:
    """(what comes before the decision word, the words the grammar allows, what follows) of a planner grammar's
    root rule: the reply a grammar-held model can write ends with one of them."""
    root = next(line for line in grammar.splitlines() if line.startswith("root ::= "))
    match = re.search(r'"((?:\\n)[^"]*)" \( ((?:"[^"]+"(?: \| )?)+) \)(?: "([^"]*)")?$', root)
    assert match, root
    return (match.group(1).replace("\\n", "\n"), re.findall(r'"([^"]+)"', match.group(2)), match.group(3) or "")


def failing_call(body: dict[str, Any]) -> str:
    """A held caller's call whose arguments the API refuses (a string where its schema wants a number): an error
    observation."""
    branch = next(b for b in offered(body) if b["properties"]["name"]["const"] != "Finish")
    args = {k: "many" for k in branch["properties"]["arguments"].get("required", [])}
    return json.dumps({"name": branch["properties"]["name"]["const"], "arguments": args})


@pytest.mark.parametrize("profile, word, route", [
    ("default", "caller", "caller"), ("default", "summarizer", "summarizer"), ("default", "give up", "give_up"),
    ("alpha_umi", "caller", "caller"), ("alpha_umi", "conclusion", "summarizer"), ("alpha_umi", "give up", "give_up"),
])
def test_the_planner_on_llama_cpp_is_held_to_the_decisions_its_state_allows(
        profile: str, word: str, route: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Before: α-UMi's planner wrote plain text, and SmolLM2 echoed the prompt's format line ('followed by "Next:
    caller", ... or "Next: give up"') and never routed to its caller; then, held to any of the three decisions, it
    chose the summarizer at its first step, which answered from no API result. Now every planner request to a local
    llama.cpp server carries a GBNF grammar whose reply ends with a line of the profile's decision (the authors' "
    Next: caller." form under "alpha_umi"), and the decisions it allows follow the protocol's state: only the caller
    before any observation, the summarizer once there is one, give up only after a failed call. The planner here
    takes `word` whenever its grammar allows it (else the first decision allowed), so a model that would rather
    conclude or give up at once still routes to its caller first, whose call is executed."""
    planner: list[dict[str, Any]] = []
    allowed: list[list[str]] = []

    def policy(body: dict[str, Any]) -> str:
        system = str(body["messages"][0]["content"])
        if body.get("response_format"):  # the caller, constrained to a call
            return failing_call(body) if route == "give_up" else Policy()(body)
        if system.startswith(("You have access to the following APIs", "These APIs are available")):  # the planner
            planner.append(body)
            assert not body.get("tools") and "response_format" not in body
            lead, words, end = decisions_of(str(body.get("grammar")))
            allowed.append(words)
            observed = "Observation (" in system
            chosen = word if word in words and (route != "caller" or not observed) else words[-1]
            return f'I think of it; the prompt said "Next: give up" or "Next: caller".{lead}{chosen}{end}'
        return PLAIN  # the summarizer, the judge

    with LlamaCppServer(policy=policy, n_ctx=8192, chars_per_token=3.3) as server:
        out = anytool_run(server, monkeypatch, capsys, "retriever=search", "solver=umi", "max_reflections=0",
                          f"umi_prompts={profile}", "dfsdt_width=1", "max_api_calls=2")
    assert planner, "no planner request"
    assert all(body.get("grammar") for body in planner), "a planner request was not held to a grammar"
    conclude = "conclusion" if profile == "alpha_umi" else "summarizer"
    assert allowed[0] == ["caller"], allowed  # the first step: nothing to answer from, nothing failed
    assert all(words[0] == "caller" for words in allowed), allowed  # calls remain in the budget at every step
    later = [json.dumps(b["messages"]) for b in planner[1:]]
    assert later and "Observation (" in later[0], "the first caller's call was not executed"
    assert all(conclude in words for words in allowed[1:]), allowed  # an observation to answer from
    nodes = out["solver_attempts"][0]
    assert nodes["api_calls"] >= 1, out["solver_attempts"]
    if route == "give_up":  # give up only once a call failed; then the planner's give-up closes the step
        assert all("give up" in words for words in allowed[1:]), allowed
        assert nodes["finish_type"] == "give_up", out["solver_attempts"]
    else:  # the calls succeeded: no give-up offered; the summarizer's plain reply is the answer
        assert not any("give up" in words for words in allowed), allowed
        assert out["answer"] == PLAIN and nodes["finish_type"] == "give_answer", out["solver_attempts"]
