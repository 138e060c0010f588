"""A deterministic "model" behind the OpenAI-compatible loopback server: answers chat-completion request bodies
for every role the AnyTool graph calls, seeing only what a real model sees — the request body.

`EndpointPolicy(seed, content_fault_rate)(body)` returns a `ChatReply` (or text). The role is read from the body:
the functions offered (`tools`: the meta-agent's, category agents' and tool agents' functions of AnyTool
Tables 14-16, or the solver's API functions plus `Finish`) or, without tools, the system prompt (the solvable
check, the ToolEval judge's stages). Decisions come from the user's query, the tool names offered and the JSON
of earlier tool results: categories, tools and APIs are picked by word overlap with the query, an API is called
with its required parameters filled from the query (quoted values, numbers) or the schema (enum, default, an
example in the description), the solver finishes after a few calls with an answer quoting the observations, and
the judge says "Solved" only when the answer quotes a successful observation covering most of the query.

It is a pure function of the request body (no counters; "randomness" is a hash of the body and the seed, with
tool-call ids left out since servers number them), so a retried request gets the same reply and a faulted run
can reach the same result as an unfaulted one. Every role ends: each step is chosen from the history in the
body, and calls are bounded (a finished agent calls `finish_search`, the solver `Finish` after `MAX_API_CALLS`).

Content faults (optional, `content_fault_rate > 0`): in a share of the queries (by hash of the query), a
conversation (its system and first user message) is picked by hash, and at one hashed turn its reply is malformed: arguments that are not JSON, a function name that
was not offered, or text with no function call. At most one per conversation, so it still ends.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langgraph_anytool.offline.clauses import split_clauses
from langgraph_anytool.offline.responses import describe_response
from langgraph_anytool.offline.text import content_words, stem_match
from tests.servers import ChatReply, prompt_tokens_of

MAX_API_CALLS = 3  # the solver's API calls before it finishes
MAX_CATEGORIES = 3  # category agents the meta-agent creates
MAX_TOOLS = 3  # tools per tool agent
MAX_APIS = 3  # APIs a tool agent adds to the pool

META_FUNCTIONS = frozenset({"create_agent_category_level"})
CATEGORY_FUNCTIONS = frozenset({"create_agent_tool_level"})
TOOL_FUNCTIONS = frozenset({"add_apis_into_api_pool"})
FINISH = "Finish"
FINISH_SEARCH = "finish_search"

_QUOTED = re.compile(r"['\"“‘]([^'\"”’]{1,60})['\"”’]")
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])")
_CAPITALISED = re.compile(r"\b([A-Z][a-z]+(?:\s+[A-Z][a-z]+)*)\b")
_EXAMPLE = re.compile(r"(?:e\.g\.|eg:|example:?|for example,?|such as)\s*[`'\"]?([\w\-./:@ ]{1,40}?)[`'\"]?[\s,.)]",
                      re.IGNORECASE)
_FAIL_WORDS = ("sorry", "cannot", "can't", "unable", "could not", "couldn't", "not available", "failed")


# ------------------------------------------------------------------------------------------------ the body
def text_of(content: Any) -> str:
    """A message's text (OpenAI content: a string or a list of parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p if isinstance(p, str) else str(p.get("text", "")) for p in content if isinstance(p, str | dict))
    return ""


def canonical(body: Mapping[str, Any]) -> str:
    """The body as the model's input, without what a server numbers (tool-call ids) or transport options."""
    msgs = []
    for m in body.get("messages") or []:
        m = {k: v for k, v in m.items() if k not in ("tool_call_id", "name")}
        if m.get("tool_calls"):
            m["tool_calls"] = [{"function": c.get("function")} for c in m["tool_calls"]]
        m["content"] = text_of(m.get("content"))
        msgs.append(m)
    tools = [t.get("function", {}).get("name") for t in body.get("tools") or []]
    return json.dumps({"messages": msgs, "tools": tools}, sort_keys=True, ensure_ascii=False)


def without_ids(body: Mapping[str, Any]) -> dict[str, Any]:
    """The body with tool-call ids blanked."""
    msgs = []
    for m in body.get("messages") or []:
        m = {**m, "tool_call_id": ""} if "tool_call_id" in m else dict(m)
        if m.get("tool_calls"):
            m["tool_calls"] = [{**c, "id": ""} for c in m["tool_calls"]]
        msgs.append(m)
    return {**body, "messages": msgs}


def unit(*parts: str) -> float:
    """A number in [0, 1) from a hash of `parts` (the policy's only randomness)."""
    digest = hashlib.sha256("\x00".join(parts).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2 ** 64


def first_user_text(body: Mapping[str, Any]) -> str:
    return next((text_of(m.get("content")) for m in body.get("messages") or [] if m.get("role") == "user"), "")


def system_text(body: Mapping[str, Any]) -> str:
    return next((text_of(m.get("content")) for m in body.get("messages") or [] if m.get("role") == "system"), "")


def query_of(body: Mapping[str, Any]) -> str:
    """The user's request as each role's first user message carries it ("Query: ...", "Request:\\n...",
    "...\\nBegin!")."""
    text = first_user_text(body)
    if text.startswith("Query: "):
        text = text[len("Query: "):]
        for end in ("\nYour category:", "\n\nAPIs in the candidate pool:", "\nA keyword search over the catalog"):
            text = text.split(end)[0]
        return text.strip()
    if text.startswith("Request:\n"):
        return text[len("Request:\n"):].split("\n\nFinal answer:")[0].split("\n\nWorking (")[0].split(
            "\n\nAvailable tools:")[0].strip()
    return text.removesuffix("Begin!").strip()


@dataclass
class Step:
    """One function call the model made earlier in the conversation and the result it got."""

    name: str
    arguments: Any
    result: str | None


def history(body: Mapping[str, Any]) -> list[Step]:
    """The function calls in the conversation, in order, each with its tool message's content (None if absent)."""
    msgs = body.get("messages") or []
    results: dict[str, str] = {m.get("tool_call_id", ""): text_of(m.get("content")) for m in msgs
                               if m.get("role") == "tool"}
    steps = []
    for m in msgs:
        for call in m.get("tool_calls") or [] if m.get("role") == "assistant" else []:
            fn = call.get("function") or {}
            try:
                args = json.loads(fn.get("arguments") or "{}")
            except ValueError:
                args = fn.get("arguments")
            steps.append(Step(str(fn.get("name", "")), args, results.get(call.get("id", ""))))
    return steps


def user_texts(body: Mapping[str, Any]) -> list[str]:
    return [text_of(m.get("content")) for m in body.get("messages") or [] if m.get("role") == "user"]


def reactivated(body: Mapping[str, Any]) -> bool:
    """Whether a later user message says the gathered APIs did not solve the query (AnyTool's re-activation)."""
    return any("did not solve the query" in t for t in user_texts(body)[1:])


def since_reactivation(body: Mapping[str, Any]) -> list[Step]:
    """The calls made after the last re-activation message (all calls if there was none)."""
    msgs = list(body.get("messages") or [])
    last = max((i for i, m in enumerate(msgs) if m.get("role") == "user"
                and "did not solve the query" in text_of(m.get("content"))), default=-1)
    return history({"messages": msgs[last + 1:]}) if last >= 0 else history(body)


def load(text: str | None) -> Any:
    try:
        return json.loads(text or "")
    except ValueError:
        return None


# ------------------------------------------------------------------------------------------------ relevance
def words(text: str) -> set[str]:
    return content_words(re.sub(r"[_/\-]", " ", re.sub(r"([a-z])([A-Z])", r"\1 \2", text)))


def overlap(query_words: set[str], text: str) -> int:
    """How many of the query's content words appear (crudely stemmed) in `text`."""
    other = words(text)
    return sum(1 for w in query_words if any(stem_match(w, o) for o in other))


def ranked(query: str, items: Sequence[tuple[str, str]]) -> list[tuple[int, str]]:
    """`(score, name)` of `(name, text)` items by word overlap with the query, best first (ties by name)."""
    qw = words(query)
    return sorted(((overlap(qw, f"{name} {text}"), name) for name, text in items), key=lambda s: (-s[0], s[1]))


# ------------------------------------------------------------------------------------------------ replies
def calls(*items: tuple[str, dict[str, Any]], thought: str = "") -> ChatReply:
    return ChatReply(content=thought, tool_calls=list(items))


def finish_search(thought: str) -> ChatReply:
    return calls((FINISH_SEARCH, {}), thought=thought)


def meta_reply(body: Mapping[str, Any]) -> ChatReply:
    """Meta-agent (Table 14): start agents for the categories the hint and word overlap favour, then finish."""
    query, system = query_of(body), system_text(body)
    listed = re.search(r"split into these categories: (.*?)\. Your job", system, re.DOTALL)
    categories = [c.strip() for c in listed.group(1).split(",")] if listed else []
    hint = re.search(r"ranks these categories highest for the query \(.*?\): (.*?)\.\s*$", first_user_text(body),
                     re.DOTALL)
    hinted = [c.strip() for c in hint.group(1).split(",")] if hint else []
    done = {str((s.arguments or {}).get("category_name")) for s in history(body)
            if s.name == "create_agent_category_level" and isinstance(s.arguments, dict)}
    scored = [name for score, name in ranked(query, [(c, c) for c in categories]) if score > 0]
    order = list(dict.fromkeys([*hinted[:2], *scored, *hinted[2:]]))
    todo = [c for c in order if c not in done]
    if reactivated(body):
        if any(s.name == "create_agent_category_level" for s in since_reactivation(body)) or not todo:
            return finish_search("No other category looks promising.")
        return calls(("create_agent_category_level", {"category_name": todo[0]}),
                     thought=f"The category {todo[0]} is not assigned yet; I start an agent for it.")
    if done or not todo:
        return finish_search("Every promising category has its agent.")
    picks = todo[:MAX_CATEGORIES]
    return calls(*[("create_agent_category_level", {"category_name": c}) for c in picks],
                 thought=f"The request touches {', '.join(picks)}; I start one agent per category.")


def category_reply(body: Mapping[str, Any]) -> ChatReply:
    """Category agent (Table 15): list the tools, read the likely ones' descriptions, assign the best, finish."""
    query = query_of(body)
    own = re.search(r"\nYour category: (.*) \(\d+ tools\)\.", first_user_text(body))
    category = own.group(1) if own else ""
    steps = history(body)
    listed = next((load(s.result) for s in steps if s.name == "get_tools_in_category"), None)
    if not isinstance(listed, list):
        if any(s.name == "get_tools_in_category" for s in steps):
            return finish_search("I cannot list this category's tools.")
        return calls(("get_tools_in_category", {"category_name": category}),
                     thought=f"I list the tools of {category}.")
    names = [str(n) for n in listed]
    described: dict[str, str] = {}
    for s in steps:
        if s.name == "get_tools_descriptions" and isinstance(d := load(s.result), dict):
            described.update({str(k): str(v) for k, v in d.items()})
    if not any(s.name == "get_tools_descriptions" for s in steps):
        first = [n for _, n in ranked(query, [(n, "") for n in names])][:8]
        return calls(("get_tools_descriptions", {"category_name": category, "tool_names": first}),
                     thought="I read what the most promising tools do.")
    assigned = {str(t) for s in steps if s.name == "create_agent_tool_level" and isinstance(s.arguments, dict)
                for t in s.arguments.get("tool_names") or []}
    scored = [(score, n) for score, n in ranked(query, [(n, described.get(n, "")) for n in names]) if score > 0]
    todo = [n for _, n in scored if n not in assigned]
    acted = any(s.name == "create_agent_tool_level" for s in since_reactivation(body))
    if acted or not todo or (assigned and not reactivated(body)):
        return finish_search("Every tool that may help is assigned." if assigned else "Nothing here fits the request.")
    return calls(("create_agent_tool_level", {"tool_names": todo[:MAX_TOOLS]}),
                 thought=f"{', '.join(todo[:MAX_TOOLS])} may help; one tool agent takes them.")


def tool_reply(body: Mapping[str, Any]) -> ChatReply:
    """Tool agent (Table 16): list its tools' APIs, add the relevant ones to the pool, check it, finish."""
    query, system = query_of(body), system_text(body)
    own = re.search(r"You search the tools (.*?) of the '", system, re.DOTALL)
    tools = [t.strip() for t in own.group(1).split(", ")] if own else []
    steps = history(body)
    seen = {str(s.arguments.get("tool_name")) for s in steps if s.name == "get_apis_in_tool"
            and isinstance(s.arguments, dict)}
    unseen = [t for t in tools if t not in seen]
    if unseen and not steps:
        return calls(*[("get_apis_in_tool", {"tool_name": t}) for t in unseen],
                     thought="I list the APIs of my tools.")
    apis: list[tuple[str, str, str]] = []  # (tool, api, description)
    for s in steps:
        if s.name == "get_apis_in_tool" and isinstance(s.arguments, dict) and isinstance(got := load(s.result), list):
            apis += [(str(s.arguments.get("tool_name")), str(a.get("api_name")), str(a.get("description", "")))
                     for a in got if isinstance(a, dict)]
    added = {(str(a.get("tool_name")), str(a.get("api_name"))) for s in steps if s.name == "add_apis_into_api_pool"
             and isinstance(s.arguments, dict) for a in s.arguments.get("apis") or [] if isinstance(a, dict)}
    recent = since_reactivation(body)
    last = recent[-1] if recent else None
    if last is not None and last.name == "check_if_request_solvable":
        return finish_search("The pool has been checked; my search is done.")
    if last is not None and last.name == "add_apis_into_api_pool":
        return calls(("check_if_request_solvable", {}), thought="I ask whether the pool now covers the request.")
    qw = words(query)
    scored = sorted(((overlap(qw, f"{t} {a} {d}"), t, a) for t, a, d in apis), key=lambda s: (-s[0], s[1], s[2]))
    todo = [(t, a) for score, t, a in scored if score > 0 and (t, a) not in added]
    if not todo:
        return finish_search("None of my tools' other APIs fits the request.")
    take = todo[:MAX_APIS] if not added else todo[:1]
    return calls(("add_apis_into_api_pool", {"apis": [{"tool_name": t, "api_name": a} for t, a in take]}),
                 thought="These APIs match the request; I add them to the pool.")


def solvable_reply(body: Mapping[str, Any]) -> str:
    """The pool check: every part of the query needs an API sharing its words."""
    query, text = query_of(body), first_user_text(body)
    apis = [load(line) for line in text.split("APIs in the candidate pool:\n", 1)[-1].splitlines()]
    docs = [f"{a.get('tool', '')} {a.get('api', '')} {a.get('description', '')}" for a in apis if isinstance(a, dict)]
    parts = split_clauses(query)
    missing = [p for p in parts if not any(overlap(words(p), d) >= 2 for d in docs)]
    if not missing:
        return "Solvable"
    if len(missing) < len(parts):
        return "Unsure"
    return f"Unsolvable: no API in the pool covers {missing[0][:120]!r}"


# ---------------------------------------------------------------------------------------------- the solver
def fill_arguments(schema: Mapping[str, Any], query: str) -> dict[str, Any]:
    """Required parameters from the query (quoted values, numbers, names) or the schema (enum, default, example)."""
    params = schema.get("parameters") or {}
    props: Mapping[str, Any] = params.get("properties") or {}
    quoted = _QUOTED.findall(query)
    numbers = _NUMBER.findall(query)
    names = [n for n in _CAPITALISED.findall(query) if n.lower() not in ("i", "i'm", "can", "could", "please")]
    out: dict[str, Any] = {}
    for name in params.get("required") or []:
        spec = props.get(name) or {}
        kind = spec.get("type", "string")
        desc = str(spec.get("description", ""))
        if "default" in spec and spec["default"] not in (None, ""):
            out[name] = spec["default"]
        elif spec.get("enum"):
            out[name] = next((e for e in spec["enum"] if str(e).lower() in query.lower()), spec["enum"][0])
        elif kind in ("integer", "number"):
            value = float(numbers[0]) if numbers else 1.0
            out[name] = int(value) if kind == "integer" or value.is_integer() else value
        elif kind == "boolean":
            out[name] = True
        elif kind == "array":
            out[name] = [quoted[0]] if quoted else []
        elif quoted:
            out[name] = quoted.pop(0) if len(quoted) > 1 else quoted[0]
        elif (example := _EXAMPLE.search(desc + " ")) is not None:
            out[name] = example.group(1).strip()
        elif names:
            out[name] = names[0]
        else:
            out[name] = sorted(words(query) or {"test"})[0]
    return out


_PAIR = re.compile(r'"(\w+)":("[^"]{0,80}"|-?\d+(?:\.\d+)?|true|false)')


def observation_ok(result: str | None) -> tuple[bool, Any]:
    """Whether a tool result is a successful observation, and its response (of a truncated result: the scalar
    fields that survived the cut)."""
    data = load(result)
    if isinstance(data, dict):
        return data.get("status") == "ok" and not data.get("error"), data.get("response")
    text = result or ""
    if not text.startswith('{"status":"ok"') or '"error":' in text[:120]:
        return False, None
    body = text.split('"response":', 1)[-1]
    fields = {k: json.loads(v) for k, v in _PAIR.findall(body)[:8]}
    return True, fields or body[:200]


SEED_MARK = "come from an earlier attempt"  # the solver's note after the steps of an earlier attempt


def solver_reply(body: Mapping[str, Any]) -> ChatReply:
    """DFSDT solver: call the functions that fit the query and were not tried yet (best first, at most
    `MAX_API_CALLS` per attempt), then `Finish` with an answer quoting what they returned, or give up naming the
    functions that failed. Steps of an earlier attempt (before the seed note) count as tried, not as this
    attempt's calls."""
    query = query_of(body)
    schemas = {t["function"]["name"]: t["function"] for t in body.get("tools") or [] if t.get("function")}
    functions = [n for n in schemas if n != FINISH]
    msgs = list(body.get("messages") or [])
    seed_at = max((i for i, m in enumerate(msgs) if m.get("role") == "user" and SEED_MARK in text_of(m.get("content"))),
                  default=-1)
    seeded = [s for s in history({"messages": msgs[:seed_at]}) if s.name != FINISH] if seed_at >= 0 else []
    steps = [s for s in history({"messages": msgs[seed_at + 1:]}) if s.name != FINISH]
    limit_hit = any("no more functions will run" in t for t in user_texts(body))
    tried = {s.name for s in seeded + steps}
    order = ranked(query, [(n, str(schemas[n].get("description", ""))) for n in functions])
    todo = [n for score, n in order if n not in tried and (score > 0 or not steps)]
    if todo and len(steps) < MAX_API_CALLS and not limit_hit:
        name = todo[0]
        return calls((name, fill_arguments(schemas[name], query)),
                     thought=f"{name} looks like what the request needs; I call it.")
    good = [(s.name, resp) for s in steps for ok, resp in [observation_ok(s.result)] if ok] or [
        (s.name, resp) for s in seeded for ok, resp in [observation_ok(s.result)] if ok]
    if good:
        answer = " ".join(f"{name.split('_for_')[0].replace('_', ' ')}: {describe_response(resp)}."
                          for name, resp in good)
        return calls((FINISH, {"return_type": "give_answer", "final_answer": answer}),
                     thought="I have the results; I give the answer.")
    failed = sorted({s.name for s in steps})
    return calls((FINISH, {"return_type": "give_up", "reason": "the functions I tried returned errors" if failed
                           else "no function fits the request", "failed_functions": failed}),
                 thought="Nothing worked; I give up.")


# ----------------------------------------------------------------------------------------------- the judge
def label(value: str, reason: str) -> str:
    return json.dumps({"reason": reason, "label": value})


def judge_reply(body: Mapping[str, Any]) -> str:
    """ToolEval's stages: the answer alone is "Unsure" unless it apologises; the process decides "Solved" when
    the answer quotes successful API outputs whose functions share words with every part of the query."""
    system, text = system_text(body), first_user_text(body)
    query = query_of(body)
    answer = text.split("\n\nFinal answer:\n", 1)[-1].strip() if "\n\nFinal answer:\n" in text else ""
    if system.startswith("You decide whether a user's request can be resolved"):
        return label("Solvable", "The tools cover the request.")
    if "from its whole" not in system:
        if not answer or any(w in answer.lower() for w in _FAIL_WORDS):
            return label("Unsolved", "The answer does not resolve the request.")
        return label("Unsure", "The answer alone does not show whether it is right.")
    working = text.split("\n\nWorking (API calls and their results):\n", 1)[-1].split("\n\nFinal answer:\n")[0]
    ok_calls = re.findall(r"^- (\S+) → ok\n  arguments: .*\n  output: (.*)$", working, re.MULTILINE)
    if not ok_calls:
        return label("Unsolved", "Every API call failed.")
    quoted = [fn for fn, out in ok_calls if fn.split("_for_")[0].replace("_", " ") in answer]
    if not quoted:
        return label("Unsolved", "The answer is not supported by the API results.")
    parts = split_clauses(query)
    covered = [p for p in parts if any(overlap(words(p), fn) > 0 for fn in quoted)]
    if len(covered) == len(parts):
        return label("Solved", f"The answer uses {', '.join(quoted)}, covering every part of the request.")
    return label("Unsolved", f"Only {len(covered)} of {len(parts)} parts of the request are answered")


# -------------------------------------------------------------------------------------------------- policy
def role_of(body: Mapping[str, Any]) -> str:
    """The role a request plays, from the functions offered or (without tools) the system prompt."""
    names = {t.get("function", {}).get("name") for t in body.get("tools") or []}
    if names & META_FUNCTIONS:
        return "meta"
    if names & CATEGORY_FUNCTIONS:
        return "category"
    if names & TOOL_FUNCTIONS:
        return "tool"
    if FINISH in names:
        return "solver"
    system = system_text(body)
    if system.startswith("Decide whether a user query can be solved"):
        return "solvable"
    if system.startswith(("You grade whether an AI assistant", "You decide whether a user's request")):
        return "judge"
    return "other"


CONTENT_FAULTS = ("bad_json", "unknown_function", "no_call")


# the reply of each role the request body reveals (`role_of`)
ROLE_REPLIES: dict[str, Callable[[dict[str, Any]], ChatReply | str]] = {
    "meta": meta_reply, "category": category_reply, "tool": tool_reply, "solver": solver_reply,
    "solvable": solvable_reply, "judge": judge_reply,
}


@dataclass(frozen=True)
class EndpointPolicy:
    """The policy as a callable of the request body (`OpenAIChatServer(policy=EndpointPolicy(...))`)."""

    seed: int = 0
    content_fault_rate: float = 0.0  # share of conversations with one malformed reply (in the picked queries)
    content_query_share: float = 1.0  # share of the queries (by hash of the query) whose conversations may get one

    def content_fault(self, body: Mapping[str, Any]) -> str | None:
        """The content fault this body's reply carries (None for most), from a hash of its conversation."""
        if self.content_fault_rate <= 0 or not body.get("tools"):
            return None
        convo = system_text(body) + "\x00" + first_user_text(body)
        if unit(str(self.seed), "query", query_of(body)) >= self.content_query_share:
            return None
        if unit(str(self.seed), "content", convo) >= self.content_fault_rate:
            return None
        turns = sum(1 for m in body.get("messages") or [] if m.get("role") == "assistant")
        if turns != int(unit(str(self.seed), "turn", convo) * 3):
            return None
        return CONTENT_FAULTS[int(unit(str(self.seed), "kind", convo) * len(CONTENT_FAULTS))]

    def __call__(self, body: dict[str, Any]) -> ChatReply:
        """The reply, with token usage counted on the body without its tool-call ids (a server numbers them, so
        their length would make the count, and a token budget's cut-off, depend on the server's history)."""
        reply = self.reply(body)
        if isinstance(reply, str):
            reply = ChatReply(content=reply)
        encoded = sum(len(json.dumps(args)) for _, args in reply.tool_calls) + sum(
            len(text) for _, text in reply.raw_tool_calls)
        reply.usage = (prompt_tokens_of(without_ids(body)), max(1, (len(reply.content) + encoded) // 4))
        return reply

    def reply(self, body: dict[str, Any]) -> ChatReply | str:
        """The reply to a request body (content faults included)."""
        answer = ROLE_REPLIES.get(role_of(body))
        reply = answer(body) if answer is not None else "I cannot help with that."
        kind = self.content_fault(body)
        if kind is None or not isinstance(reply, ChatReply) or not reply.tool_calls:
            return reply
        name, args = reply.tool_calls[0]
        if kind == "bad_json":
            return ChatReply(content=reply.content, raw_tool_calls=[(name, json.dumps(args)[:-1] + ",")])
        if kind == "unknown_function":
            return ChatReply(content=reply.content, tool_calls=[(name + "_v2", args)])
        return ChatReply(content=reply.content or "I think I should call a function next.")
