"""Per-query budgets the run obeys: tokens, cost (USD from the model's price) and wall time, each stopping the run
with `budget_exhausted`, a `stop_reason` and the figures; `max_cost` refuses a model without a known price."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver

from langgraph_anytool import AnyToolConfig, create_anytool_graph
from langgraph_anytool.cli.app import main
from langgraph_anytool.config import ConfigError
from langgraph_anytool.models.llm import ModelNotConfiguredError
from langgraph_anytool.models.testing import ScriptedChatModel, ai, call
from tests.graph_world import World, make_world, observations, solved_judge
from tests.servers import ChatReply, OpenAIChatServer

CFG: dict[str, Any] = {"seed_with_search": False}


class PricedScripted(ScriptedChatModel):
    """A scripted model carrying a real model name, so the profile table prices it (gpt-4o-mini)."""

    model_name: str = "gpt-4o-mini"


def looping_meta(_: list[BaseMessage]) -> AIMessage:
    """A meta-agent that never finishes: only a budget (or its step limit, 20 calls) ends it."""
    return ai("looking", call("get_tools_in_category", category_name="Finance"))


def test_token_budget_names_tokens_and_the_figures() -> None:
    catalog, executor = make_world()
    model = ScriptedChatModel(responder=World({"meta": looping_meta}))
    out = create_anytool_graph(catalog, model, config=AnyToolConfig(**CFG, token_budget=6000),
                               executor=executor).invoke({"query": "Price of AAPL? " * 50})
    assert out["status"] == "budget_exhausted" and out["stop_reason"] == "tokens"
    spent = out["usage"]["total_tokens"]
    assert 0 < spent <= 6000  # issue 21: the budget holds, counting the call about to be made (estimated)
    assert out["reason"] == ("token budget of 6000 tokens reached: the next model call (its prompt and reply, "
                             f"estimated) would have passed it ({spent} spent)")


def test_cost_budget_with_the_real_price_table_over_http() -> None:
    """ChatOpenAI against a loopback server: gpt-4o-mini's list price ($0.15 / $0.60 per 1M tokens) applies to the
    usage the server reports; each call costs $0.021, so a $0.05 budget stops the run after the third call."""
    catalog, executor = make_world()
    reply = ChatReply(tool_calls=[("get_tools_in_category", {"category_name": "Finance"})], usage=(100_000, 10_000))
    with OpenAIChatServer([reply] * 20) as server:
        # its own max_tokens (above the 10,000 output tokens each reply reports): no call carries a smaller cap
        model = ChatOpenAI(model="gpt-4o-mini", base_url=server.base_url, api_key="sk-test", max_retries=0,
                           timeout=10, max_tokens=16_000)
        cfg = AnyToolConfig(**CFG, token_budget=10_000_000, max_cost=0.05)
        out = create_anytool_graph(catalog, model, config=cfg, executor=executor).invoke({"query": "AAPL price?"})
        requests = len(server.chat_requests)
    assert requests == 3  # 0.021, 0.042 < 0.05; 0.063 ≥ 0.05: no fourth call
    assert out["status"] == "budget_exhausted" and out["stop_reason"] == "cost"
    assert out["reason"] == "cost budget of $0.05 reached ($0.0630 spent)"
    assert out["agents"]["meta"]["end_reason"] == "budget"


def test_cost_is_counted_across_roles_including_the_judge() -> None:
    """The judge's tokens are priced too: a budget the solve alone stays under is crossed by the judge's call."""
    catalog, executor = make_world()
    weather = catalog.function_name(catalog.find_api("Weather Now", "Current").id)

    def solver(messages: list[BaseMessage]) -> AIMessage:
        if not observations(messages):
            return ai("", call(weather, city="Paris"))
        return ai("", call("Finish", return_type="give_answer", final_answer="21°C"))

    model = PricedScripted(responder=World({"solver": solver, "judge": solved_judge}))
    api = catalog.find_api("Weather Now", "Current").id
    free = create_anytool_graph(catalog, model, config=AnyToolConfig(**CFG, retriever="reference"),
                                executor=executor).invoke({"query": "Temperature in Paris?", "api_ids": [api]})
    cost = sum(v.get("cost_usd", 0.0) for v in free["usage"].values() if isinstance(v, dict))
    judge_cost = free["usage"]["judge"]["cost_usd"]
    assert free["status"] == "solved" and judge_cost > 0 and cost > judge_cost
    assert isinstance(judge_cost, float)  # the judge's usage keeps its cost (not rounded to an int)


def test_max_cost_with_an_unpriced_model_fails_before_any_call() -> None:
    catalog, executor = make_world()
    model = ScriptedChatModel(responder=World({"meta": looping_meta}))
    with pytest.raises(ConfigError, match=r"price of model 'ScriptedChatModel \(no model name\)'.*model_profiles"):
        create_anytool_graph(catalog, model, config=AnyToolConfig(**CFG, max_cost=1.0), executor=executor)
    assert model.calls == []

    with OpenAIChatServer() as server:  # a vLLM / Ollama model the table does not know
        local = ChatOpenAI(model="my-finetune-7b", base_url=server.base_url, api_key="sk-test", max_retries=0)
        with pytest.raises(ConfigError) as err:
            create_anytool_graph(catalog, local, config=AnyToolConfig(**CFG, max_cost=1.0), executor=executor)
        assert server.chat_requests == []
    text = str(err.value)
    assert "'my-finetune-7b'" in text and "model_profiles" in text and "input_price" in text
    # given a price, the same model is accepted
    priced = AnyToolConfig(**CFG, max_cost=1.0,
                           model_profiles={"my-finetune-7b": {"input_price": 0.0, "output_price": 0.0}})
    create_anytool_graph(catalog, local, config=priced, executor=executor)


def test_max_cost_set_per_run_in_the_context_is_checked_too() -> None:
    catalog, executor = make_world()
    model = ScriptedChatModel(responder=World({"meta": looping_meta}))
    graph = create_anytool_graph(catalog, model, config=AnyToolConfig(**CFG), executor=executor)
    with pytest.raises(ConfigError, match="max_cost"):
        graph.invoke({"query": "q"}, context={"max_cost": 0.5})
    assert model.calls == []


def test_wall_time_budget_stops_retrieval() -> None:
    catalog, executor = make_world()
    model = ScriptedChatModel(responder=World({"meta": looping_meta}), latency=0.15)
    t0 = time.monotonic()
    out = create_anytool_graph(catalog, model, config=AnyToolConfig(**CFG, max_seconds=0.4),
                               executor=executor).invoke({"query": "AAPL price?"})
    assert time.monotonic() - t0 < 2.0
    assert out["status"] == "budget_exhausted" and out["stop_reason"] == "wall_time"
    m = re.fullmatch(r"wall-time budget of 0.4 s reached \((\d+\.\d) s since the run started\)", out["reason"])
    assert m is not None and float(m.group(1)) >= 0.4
    assert 2 <= len(model.calls) <= 4  # ~0.15 s each; without the budget the agent's step limit is 20 calls


def test_wall_time_budget_stops_the_solver() -> None:
    catalog, executor = make_world()
    weather = catalog.function_name(catalog.find_api("Weather Now", "Current").id)
    solver_calls = ScriptedChatModel(responder=World({"solver": lambda m: ai("", call(weather, city="Paris"))}),
                                     latency=0.1)
    api = catalog.find_api("Weather Now", "Current").id
    out = create_anytool_graph(catalog, solver_calls, config=AnyToolConfig(**CFG, retriever="reference",
                                                                           max_seconds=0.25),
                               executor=executor).invoke({"query": "Temperature in Paris?", "api_ids": [api]})
    assert out["status"] == "budget_exhausted" and out["stop_reason"] == "wall_time"
    (attempt,) = out["solver_attempts"]
    assert attempt["finish_type"] == "budget" and attempt["reason"].startswith("wall-time budget of 0.25 s")
    assert attempt["api_calls"] < 10  # the solver's own API-call cap (10) was not what stopped it


def test_a_resumed_run_counts_wall_time_from_its_first_start() -> None:
    """A run that crashed inside the solver is resumed later by a new graph (a new process: no in-memory
    signals): the time since the checkpointed start counts, so the resumed solve stops before any model call."""
    catalog, executor = make_world()
    weather = catalog.function_name(catalog.find_api("Weather Now", "Current").id)
    api = catalog.find_api("Weather Now", "Current").id
    crash = {"on": True}

    def solver(messages: list[BaseMessage]) -> AIMessage:
        if crash["on"]:
            raise ModelNotConfiguredError("simulated crash")  # escapes the graph, as a dying process would
        if not observations(messages):
            return ai("", call(weather, city="Paris"))
        return ai("", call("Finish", return_type="give_answer", final_answer="21°C"))

    saver = InMemorySaver()
    cfg = AnyToolConfig(**CFG, retriever="reference")
    config: Any = {"configurable": {"thread_id": "t"}}
    first = create_anytool_graph(catalog, ScriptedChatModel(responder=World({"solver": solver})), config=cfg,
                                 executor=executor, checkpointer=saver)
    with pytest.raises(ModelNotConfiguredError):
        first.invoke({"query": "Temperature in Paris?", "api_ids": [api]}, config)
    assert first.get_state(config).next == ("solver",)
    crash["on"] = False
    time.sleep(0.4)

    model = ScriptedChatModel(responder=World({"solver": solver, "judge": solved_judge}))
    resumed = create_anytool_graph(catalog, model, config=cfg, executor=executor, checkpointer=saver)
    out = resumed.invoke(None, config, context={"max_seconds": 0.3})
    assert out["status"] == "budget_exhausted" and out["stop_reason"] == "wall_time"
    assert model.calls == []
    # the same crash and resume with time left solves the query
    crash["on"], other = True, {"configurable": {"thread_id": "t2"}}
    with pytest.raises(ModelNotConfiguredError):
        first.invoke({"query": "Temperature in Paris?", "api_ids": [api]}, other)
    crash["on"] = False
    again = create_anytool_graph(catalog, ScriptedChatModel(responder=World({"solver": solver, "judge": solved_judge})),
                                 config=cfg, executor=executor, checkpointer=saver)
    assert again.get_state(other).next == ("solver",)
    assert again.invoke(None, other, context={"max_seconds": 30})["status"] == "solved"


def test_cli_budget_flags_reach_the_config(capsys: pytest.CaptureFixture[str]) -> None:
    from langgraph_anytool.cli.app import build_parser, run_settings

    args = build_parser().parse_args(["run", "q", "--max-tokens-per-query", "5000", "--max-cost", "0.25",
                                      "--max-seconds", "90"])
    cfg = run_settings(args)
    assert (cfg.token_budget, cfg.max_cost, cfg.max_seconds) == (5000, 0.25, 90.0)
    assert run_settings(build_parser().parse_args(["run", "q", "--token-budget", "7"])).token_budget == 7
    assert main(["run", "q", "--max-cost", "0"]) == 2
    assert "must be positive" in capsys.readouterr().err
    eval_args = build_parser().parse_args(["eval", "run", "--queries", "x.json", "--max-seconds", "2.5",
                                           "--max-tokens-per-query", "100"])
    assert (eval_args.max_seconds, eval_args.token_budget, eval_args.max_cost) == (2.5, 100, None)


def test_config_budget_values_are_validated() -> None:
    assert AnyToolConfig().with_values({"max_cost": "0.5", "max_seconds": "none"}).max_cost == 0.5
    for bad in ({"max_cost": 0}, {"max_seconds": -1.0}, {"max_cost": True}, {"max_seconds": "soon"}):
        with pytest.raises(ConfigError, match=next(iter(bad))):
            AnyToolConfig().with_values(bad)


def test_a_model_failing_for_good_is_an_error_even_when_the_wall_time_ran_out_meanwhile() -> None:
    """The run's status says what ended it: the rate-limited call (a resumed batch retries it), not the budget."""
    from langgraph_anytool.models.llm import ModelCallError

    catalog, executor = make_world()
    api = catalog.find_api("Weather Now", "Current").id

    def limited(_: list[BaseMessage]) -> AIMessage:
        time.sleep(0.3)  # e.g. the retries' waits
        raise ModelCallError("rate_limited", "429 after 6 retries", retries=6)

    out = create_anytool_graph(catalog, ScriptedChatModel(responder=World({"solver": limited})),
                               config=AnyToolConfig(**CFG, retriever="reference", max_seconds=0.1),
                               executor=executor).invoke({"query": "Temperature in Paris?", "api_ids": [api]})
    assert (out["status"], out["error_kind"], out["stop_reason"]) == ("error", "rate_limited", "")


def test_profiles_match_at_name_boundaries_and_hosted_names_are_not_free() -> None:
    """A pattern names a model only up to a version or tag boundary, and a local model's name served by a paid host
    has no price (so a cost cap refuses it rather than counting it free)."""
    from langgraph_anytool.models.profiles import profile_for

    assert profile_for("openai:gpt-4o-mini-2024-07-18").pattern == "gpt-4o-mini"
    assert profile_for("ollama:llama3.1:8b").pattern == "llama3.1"
    assert profile_for("gpt-4.5-preview").pattern == ""  # not "gpt-4": unknown, not a wrong window and price
    assert not profile_for("groq:llama-3.1-70b-versatile").priced
    assert profile_for("llama3.1", {"llama3.1": {"input_price": 0, "output_price": 0}}).cost(1000, 1000) == 0


def test_the_retriever_graph_and_the_hierarchical_selector_obey_max_cost_and_wall_time() -> None:
    """The retriever alone (also behind AnyToolSelectorMiddleware's hierarchical mode) refuses an unpriced model
    under max_cost like the whole graph does, and counts wall time from its own start."""
    from langgraph_anytool import Catalog
    from langgraph_anytool.graphs.retriever import create_retriever_graph
    from langgraph_anytool.integrations.selector import AnyToolSelectorMiddleware

    cat = Catalog.builtin()
    with pytest.raises(ConfigError, match="max_cost is set"):
        create_retriever_graph(cat, ScriptedChatModel(replies=[]), AnyToolConfig(max_cost=0.01))
    with pytest.raises(ConfigError, match="max_cost is set"):
        AnyToolSelectorMiddleware(catalog=cat, mode="hierarchical", model=ScriptedChatModel(replies=[]),
                                  config=AnyToolConfig(max_cost=0.01))
    out = create_retriever_graph(cat, "offline", AnyToolConfig(max_seconds=1e-9)).invoke({"query": "17 * 23?"})
    assert out["api_pool"] == [] and out["agents"]["meta"]["end_reason"] == "budget"
