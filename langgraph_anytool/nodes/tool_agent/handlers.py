"""Tool-agent functions: browse its own tools' APIs, add APIs to the pool, ask whether the pool suffices."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from ...catalog import Api, Tool, UnknownNameError
from ...models.llm import ModelCallError
from ...state import PoolEntry
from ...text import shorten
from ...tools.agent_functions import AddApisArgs, ApiDetailArgs, NoArgs, ToolArgs
from ..agents.context import CallContext, FunctionResult, to_json
from ..judge.tooleval_request import refuses_functions, speaks_functions
from .prompts import SOLVABLE_HUMAN, SOLVABLE_SYSTEM

if TYPE_CHECKING:
    from ...runtime import Deps

API_DESCRIPTION_CHARS = 160  # per API in get_apis_in_tool
CHECK_DESCRIPTION_CHARS = 300  # per API in the solvable check's prompt

# ToolBench's task-solvability labels; "Unsure" counts as solvable (the check only stops the search when the pool
# is not clearly insufficient). Older replies say true/false, "not solvable", ...
_VERDICT = re.compile(r"\b(unsolvable|not solvable|cannot be solved|can ?not be solved|unsure|solvable|false|true)\b")
_JSON_FLAG = re.compile(r'"(?:solvable|is_solvable)"\s*:\s*(true|false)')
_JSON_LABEL = re.compile(r'"(?:label|answer_status|task_status|status)"\s*:\s*"(solvable|unsolvable|unsure)"')


def _short(text: str, limit: int) -> str:
    return shorten(text, limit)


def own_tool(ctx: CallContext, name: str) -> Tool | str:
    """One of this agent's tools by name, or a refusal listing them."""
    rec = ctx.record
    try:
        tool: Tool | None = ctx.deps.catalog.tool(rec["category"] or "", name)
    except UnknownNameError:
        tool = None
    if tool is None or tool.name not in rec["tools"]:
        return f"Error: {name!r} is not one of your tools. Your tools: {to_json(rec['tools'])}."
    return tool


def find_own_api(ctx: CallContext, tool: Tool, api_name: str) -> Api | str:
    """An API of one of this agent's tools, or a refusal listing the tool's API names."""
    try:
        return ctx.deps.catalog.find_api(tool.key, api_name, category=tool.category)
    except UnknownNameError:
        names = [a.name for a in tool.apis]
        return f"Error: the tool {tool.name!r} has no API {api_name!r}. Its APIs: {to_json(names)}."


def get_apis_in_tool(ctx: CallContext, args: ToolArgs) -> str:
    tool = own_tool(ctx, args.tool_name)
    if isinstance(tool, str):
        return tool
    return to_json([{"api_name": a.name, "description": _short(a.description, API_DESCRIPTION_CHARS)}
                    for a in tool.apis])


def get_api_details(ctx: CallContext, args: ApiDetailArgs) -> str:
    """The details of each named API of one tool (an unknown name is answered in place, listing the tool's APIs)."""
    tool = own_tool(ctx, args.tool_name)
    if isinstance(tool, str):
        return tool
    if not args.api_names:
        return "Error: give at least one API name in api_names."
    names = list(dict.fromkeys(args.api_names))
    if len(names) == 1:
        api = find_own_api(ctx, tool, names[0])
        return api if isinstance(api, str) else to_json(api.details())
    details: list[Any] = []
    for name in names:
        api = find_own_api(ctx, tool, name)
        details.append({"api_name": name, "error": api.removeprefix("Error: ")} if isinstance(api, str)
                       else api.details())
    return to_json(details)


def add_to_pool(ctx: CallContext, args: AddApisArgs) -> dict[str, Any] | str:
    """Add APIs of this agent's tools; each is reported added, already in the pool, or refused (with why); a
    refusal of the whole call is a string.

    The pool and its cap are as this step sees them (the pool at dispatch plus this step's additions): siblings of
    the same superstep add beside it, and the `api_pool` reducer caps their additions together in dispatch order."""
    cap, catalog = ctx.deps.config.max_api_pool, ctx.deps.catalog
    view = ctx.pool_ids()
    added: list[str] = []
    already: list[str] = []
    refused: list[dict[str, str]] = []
    if not args.apis:
        return 'Error: give at least one API, e.g. apis=[{"tool_name": "...", "api_name": "..."}].'
    for ref in args.apis:
        tool = own_tool(ctx, ref.tool_name)
        api = tool if isinstance(tool, str) else find_own_api(ctx, tool, ref.api_name)
        label = f"{ref.tool_name}: {ref.api_name}"
        if isinstance(api, str):
            refused.append({"api": label, "reason": api.removeprefix("Error: ")})
        elif api.id in view:
            already.append(label)
        elif len(view) >= cap:
            refused.append({"api": label, "reason": f"the API pool is full ({cap} APIs)"})
        elif api.id in ctx.removed:
            refused.append({"api": label, "reason": "this API failed the solver before and was removed; pick another"})
        else:
            entry: PoolEntry = {"api_id": api.id, "category": api.category, "tool": api.tool_name, "api": api.name,
                                "function_name": catalog.function_name(api.id), "added_by": ctx.record["id"],
                                "round": ctx.round}
            ctx.adds.append(entry)
            view.append(api.id)
            added.append(f"{api.tool_name}: {api.name}")
    result: dict[str, Any] = {"added": added}
    if already:
        result["already_in_pool"] = already
    if refused:
        result["refused"] = refused
    result["pool_size"] = len(view)
    return result


def add_apis_into_api_pool(ctx: CallContext, args: AddApisArgs) -> FunctionResult | str:
    """`add_apis_into_api_pool`: the additions' report; with `solvable_check="after_add"` the solvability check
    follows by itself (`after_add_check`).

    With the authors' prompts the answer is their text (dyabel/AnyTool `scripts/main.py`
    `Tool_Agent.add_apis_into_api_pool`), and an addition that would pass the cap is refused whole, without a
    check, as there (`if len(global_api_list) + len(api_list) > max_api_number: return ...`)."""
    book, cap = ctx.deps.paper_prompts, ctx.deps.config.max_api_pool
    if book is not None and len(ctx.pool_ids()) + len(args.apis) > cap:
        return book.fill("agent_add_over_cap", max_pool=cap, pool_size=len(ctx.pool_ids()), count=len(args.apis))
    report = add_to_pool(ctx, args)
    return report if isinstance(report, str) else after_add_check(ctx, to_json(report))


def after_add_check(ctx: CallContext, report: str) -> FunctionResult | str:
    """With `solvable_check="after_add"` (the authors' loop): the solvability check after a pool addition.

    dyabel/AnyTool `scripts/main.py`, `Tool_Agent.add_apis_into_api_pool`: after the APIs are added, while the
    search is not stopped, `check_task_solvable_by_function` runs on the pool; any verdict but "Unsolvable" stops
    the whole search, and so does "Unsolvable" on a full pool (here the dispatcher's `pool_full` stop). The
    agent reads the additions' report, not the verdict (as there). With "on_request" the report is returned as is.

    With the authors' prompts the agent reads their answer instead of our report, one per case (main.py: the
    pool's size and cap, with a final '.' after an "Unsolvable" verdict, without one after any other verdict or
    when no check is made)."""
    book = ctx.deps.paper_prompts
    sizes = {"pool_size": len(ctx.pool_ids()), "max_pool": ctx.deps.config.max_api_pool}
    if ctx.deps.config.solvable_check != "after_add" or not ctx.pool_ids() or ctx.budget_stop() is not None:
        return book.fill("agent_add_unchecked", **sizes) if book is not None else report
    label, _reason, count = judge_pool(ctx)
    if label == "Unsolvable":
        return book.fill("agent_add_unsolvable", **sizes) if book is not None else report
    ctx.solvable = True
    text = book.fill("agent_add_solvable", **sizes) if book is not None else \
        f"{report}\nThe {count} APIs in the pool can solve the query. The search stops."
    return FunctionResult(text, end="stopped", end_reason="pool_solvable")


def solvable_label(text: str) -> tuple[str | None, str]:
    """(label, reason) of a solvability reply: "Solvable", "Unsolvable" or "Unsure" (ToolBench's labels; older
    replies say true/false, "not solvable", ...), None when the reply gives no verdict (the reason says so)."""
    low = text.strip().lower()
    label = _JSON_LABEL.search(low)
    flag = _JSON_FLAG.search(low)
    if label or flag:
        if label and label.group(1) != "unsolvable":
            return label.group(1).capitalize(), ""
        if flag and flag.group(1) == "true":
            return "Solvable", ""
        try:
            data = json.loads(text.strip().strip("`").removeprefix("json").strip())
            reason = str(data.get("reason") or "") if isinstance(data, dict) else ""
        except ValueError:
            reason = ""
        return "Unsolvable", reason or "judged unsolvable"
    match = _VERDICT.search(low)
    if match is None:
        return None, f"unclear judgement: {_short(text.strip(), 200)}" if text.strip() else "no judgement given"
    word = match.group(1)
    if word in ("solvable", "true"):
        return "Solvable", ""
    if word == "unsure":
        return "Unsure", ""
    reason = text.strip()[match.end():].lstrip(" :.-—\n*`\"'").strip()
    return "Unsolvable", reason or "judged unsolvable"


def parse_solvable(text: str) -> tuple[bool, str]:
    """`(True, "")` for a "Solvable" or "Unsure" verdict (ToolBench's semantics), `(False, reason)` for
    "Unsolvable"; text with no verdict counts as unsolvable (the reason says so)."""
    label, reason = solvable_label(text)
    return (True, "") if label in ("Solvable", "Unsure") else (False, reason)


def _api_summary(api: Api) -> dict[str, Any]:
    return {"tool": api.tool_name, "api": api.name, "description": _short(api.description, CHECK_DESCRIPTION_CHARS),
            "required_parameters": [p.name for p in api.required_params],
            "optional_parameters": [p.name for p in api.optional_params]}


def authors_pool_listing(apis: list[Api]) -> list[dict[str, str]]:
    """The pool as main.py's `global_api_list_detailed` holds it for `check_task_solvable_by_function`: category,
    tool and API names, the tool description and the API description (cut at 100 characters, as the authors'
    `api_details.json` stores it, as the tool document writes it). The tool description is always '' there: `add_apis_into_api_pool` reads
    `tool_details['tool_description'] if isinstance(tool_details, dict) else ''`, and `get_tool_description`
    returns the description string, not a dict."""
    return [{"category_name": a.category, "tool_name": a.tool_name, "api_name": a.name, "tool_description": "",
             "api_description": a.as_written[:100]} for a in apis]


def authors_verdict(reply: AIMessage) -> tuple[str | None, str]:
    """(answer, reason) of the authors' `Finish(answer, reason)` call (verifier.py `check_task_solvable_by_function`:
    the answer string as given; only exactly "Unsolvable" goes on), else the reply's text as `solvable_label` reads
    it (the authors ask again up to five times and then answer "Unsure")."""
    legacy = reply.additional_kwargs.get("function_call")  # a reply to `functions=` (call_gpt's form)
    calls: list[dict[str, Any]] = [dict(tc) for tc in reply.tool_calls]
    if isinstance(legacy, dict):
        with contextlib.suppress(ValueError):
            calls.append({"name": str(legacy.get("name") or ""), "args": json.loads(str(legacy.get("arguments")))})
    for tc in calls:
        if str(tc.get("name", "")).lower() == "finish" and isinstance(tc.get("args"), dict):
            args = tc["args"]
            if "answer" in args:
                return str(args["answer"]), str(args.get("reason") or "")
    return solvable_label(reply.text)


def solvable_request(deps: Deps, query: str, api_ids: Sequence[str], form: str = "functions"
                     ) -> tuple[list[BaseMessage], Any, dict[str, Any], int]:
    """The `solvable` model's prompt on these pooled APIs, the model to call, its structured inputs and the number
    of APIs listed. With the authors' prompts (`prompts_from`): their system and user messages and their `Finish`
    function offered as verifier.py `check_task_solvable_by_function` offers it (`call_gpt(messages=...,
    functions=[solvable_finish_function])`, not forced): the legacy `functions=` to an OpenAI-compatible client
    (`form="tools"`, or another client: `tools=`)."""
    apis = [deps.catalog.api(i) for i in api_ids if i in deps.catalog]
    inputs = {"query": query, "api_ids": [a.id for a in apis]}
    model: Any = deps.models.for_role("solvable")
    book = deps.paper_prompts
    if book is not None:
        prompt: list[BaseMessage] = [
            SystemMessage(book.fill("solvable_system")),
            HumanMessage(book.fill("solvable_user", query=query, apis=str(authors_pool_listing(apis))))]
        schema = dict(book.data["solvable_finish"])
        model = model.bind(functions=[schema]) if form == "functions" and speaks_functions(model) else \
            model.bind_tools([{"type": "function", "function": schema}])
    else:
        listing = "\n".join(to_json(_api_summary(a)) for a in apis)
        prompt = [SystemMessage(SOLVABLE_SYSTEM), HumanMessage(SOLVABLE_HUMAN.format(query=query, apis=listing))]
    return prompt, model, inputs, len(apis)


def read_solvable(deps: Deps, reply: AIMessage) -> tuple[str | None, str]:
    """(label, reason) of a `solvable` reply: the authors' `Finish` call with their prompts, else our text form."""
    return authors_verdict(reply) if deps.paper_prompts is not None else solvable_label(reply.text)


def ask_solvable(deps: Deps, query: str, api_ids: Sequence[str],
                 call: Callable[[list[BaseMessage], Any, dict[str, Any]], Any], run_key: str = "") -> tuple[Any, int]:
    """`call(prompt, model, inputs)` on the `solvable_request`, and the number of APIs listed; a provider that
    refuses the authors' `functions=` (a 400 naming it) is asked again with `tools=`, and so is every later check of
    the run `run_key` at once (`RunSignals.functions_refusal`)."""
    refusal = deps.signals.functions_refusal(run_key, "solvable")
    form = "tools" if refusal.reason is not None else "functions"
    prompt, model, inputs, count = solvable_request(deps, query, api_ids, form=form)
    try:
        return call(prompt, model, inputs), count
    except ModelCallError as exc:
        if deps.paper_prompts is None or form == "tools" or not refuses_functions(exc):
            raise
        refusal.refuse(shorten(str(exc), 200))
        _, model, _, _ = solvable_request(deps, query, api_ids, form="tools")
        return call(prompt, model, inputs), count


def judge_pool(ctx: CallContext) -> tuple[str | None, str, int]:
    """One call of the `solvable` model on the pool as this step sees it: (label, reason, number of APIs), the
    label as `solvable_label` reads it (`solvable_request`, `read_solvable`)."""
    reply, count = ask_solvable(ctx.deps, ctx.query, ctx.pool_ids(),
                                lambda prompt, model, inputs: ctx.call_model("solvable", model, prompt, inputs),
                                ctx.run_key)
    label, reason = read_solvable(ctx.deps, reply)
    ctx.verdicts.append({"label": label or "none", "reason": reason, "apis": count})
    return label, reason, count


def check_if_request_solvable(ctx: CallContext, args: NoArgs) -> FunctionResult | str:
    """Ask the `solvable` model whether the pool (as this step sees it) suffices; True ends this agent at once and
    sets `solvable_round`, which stops every other agent before its next step (at the next dispatch).

    Solvable and Unsure stop the search. A reply without a verdict: with `solvable_check="after_add"` (the
    authors' rule, main.py `check_if_request_solvable`: only "Unsolvable" goes on; their verifier answers
    "Unsure" after five replies without one) it stops too; otherwise it counts as unsolvable."""
    if not [i for i in ctx.pool_ids() if i in ctx.deps.catalog]:
        return "False: the API pool is empty. Add relevant APIs first."
    if (stop := ctx.budget_stop()) is not None:
        return f"Not checked: the run's {stop.reason}."
    label, reason, count = judge_pool(ctx)
    authors = ctx.deps.config.solvable_check == "after_add"
    book = ctx.deps.paper_prompts  # with the authors' prompts, their answers (main.py check_if_request_solvable)
    sizes = {"pool_size": len(ctx.pool_ids()), "max_pool": ctx.deps.config.max_api_pool}
    if label == "Unsolvable" or (label is None and not authors):
        return book.fill("agent_check_unsolvable", reason=reason, **sizes) if book is not None else f"False: {reason}"
    ctx.solvable = True
    text = book.fill("agent_check_solvable", **sizes) if book is not None else \
        f"True: the {count} APIs in the pool can solve the query. The search stops."
    return FunctionResult(text, end="stopped", end_reason="pool_solvable")
