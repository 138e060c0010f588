"""VirtualServerExecutor against a loopback StableToolBench-style virtual server."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest

from langgraph_anytool.catalog.models import Api, Param
from langgraph_anytool.tools.executors.base import Executor
from langgraph_anytool.tools.executors.virtual import (
    VirtualServerExecutor,
    status_for_message,
    toolbench_standardize,
)
from langgraph_anytool.tools.observation import Status
from tests.servers import VirtualApiServer

TB_KEY = "tb-5d1c0e9a7b3f42e68c0d"

SEARCH = Api(id="Movies/imdb_search/search_title", name="Search Title", tool_key="imdb_search", tool_name="IMDb Search",
             category="Movies", params=(Param("title", required=True), Param("year", "integer")))
RANK = Api(id="Sports/league_table/2022_rankings", name="2022 Rankings", tool_key="league_table",
           tool_name="League Table", category="Sports")


def search_response(tool_input: dict[str, Any]) -> dict[str, Any]:
    return {"results": [{"title": tool_input["title"].title(), "year": tool_input.get("year", 1999)}]}


@pytest.fixture
def server() -> Iterator[VirtualApiServer]:
    responses = {("Movies", "imdb_search", "search_title"): search_response,
                 ("Sports", "league_table", "get_2022_rankings"): "plain text standings"}
    errors = {("Movies", "imdb_search", "is_id"): "Rate limit per minute exceeded",
              ("Movies", "imdb_search", "actor"): "This endpoint is not subscribed: Unsubscribed error",
              ("Movies", "imdb_search", "slow"): "Timeout error...HTTPSConnectionPool read timed out",
              ("Movies", "imdb_search", "broken"): "The API is not working"}
    with VirtualApiServer(responses, errors=errors, toolbench_key=TB_KEY) as srv:
        yield srv


def make(name: str) -> Api:
    return Api(id=f"Movies/imdb_search/{name}", name=name, tool_key="imdb_search", tool_name="IMDb Search",
               category="Movies")


def test_protocol_and_names() -> None:
    assert isinstance(VirtualServerExecutor("http://127.0.0.1:1"), Executor)
    assert toolbench_standardize("Search Title") == "search_title"
    assert toolbench_standardize("2022 Rankings!!") == "get_2022_rankings"
    assert toolbench_standardize("ID") == "is_id"
    assert toolbench_standardize("  Get--the  (best) ") == "get_the_best"


async def test_round_trip_sends_the_protocol_and_parses_the_json_string(server: VirtualApiServer) -> None:
    ex = VirtualServerExecutor(server.url + "/virtual", toolbench_key=TB_KEY)
    obs = await ex.aexecute(SEARCH, {"title": "the matrix", "year": 1999})
    await ex.aclose()
    assert obs.status is Status.OK, obs
    assert obs.content == {"results": [{"title": "The Matrix", "year": 1999}]}
    assert obs.simulated is True
    sent = server.requests[-1].json()
    assert sent == {"category": "Movies", "tool_name": "imdb_search", "api_name": "search_title",
                    "tool_input": {"title": "the matrix", "year": 1999}, "strip": "", "toolbench_key": TB_KEY}


async def test_real_option_and_plain_text_response(server: VirtualApiServer) -> None:
    ex = VirtualServerExecutor(server.url, toolbench_key=TB_KEY, real=True)
    obs = await ex.aexecute(RANK, {})
    await ex.aclose()
    assert obs.ok and obs.content == "plain text standings" and obs.simulated is False


@pytest.mark.parametrize(("api_name", "status"), [
    ("ID", Status.RATE_LIMITED), ("actor", Status.UNAUTHORIZED), ("slow", Status.TIMEOUT),
    ("unknown_api", Status.NOT_FOUND), ("broken", Status.ERROR)])
async def test_error_field_maps_to_status(server: VirtualApiServer, api_name: str, status: Status) -> None:
    ex = VirtualServerExecutor(server.url, toolbench_key=TB_KEY)
    obs = await ex.aexecute(make(api_name), {})
    await ex.aclose()
    assert obs.status is status and obs.error


async def test_key_from_environment_and_wrong_key(server: VirtualApiServer) -> None:
    ex = VirtualServerExecutor(server.url, environ={"TOOLBENCH_KEY": TB_KEY})
    assert (await ex.aexecute(SEARCH, {"title": "x"})).ok
    wrong = VirtualServerExecutor(server.url, environ={})
    obs = await wrong.aexecute(SEARCH, {"title": "x"})
    assert obs.status is Status.UNAUTHORIZED
    await ex.aclose()
    await wrong.aclose()


async def test_http_failures_are_retried(server: VirtualApiServer) -> None:
    server.fail_next("/", 503, times=2, retry_after="0")
    ex = VirtualServerExecutor(server.url + "/", toolbench_key=TB_KEY, retries=2, backoff=0.01)
    obs = await ex.aexecute(SEARCH, {"title": "x"})
    assert obs.ok and obs.meta["attempts"] == 3
    server.fail_next("/", 500, times=5)
    obs = await ex.aexecute(SEARCH, {"title": "x"})
    await ex.aclose()
    assert obs.status is Status.SERVER_ERROR and obs.meta["attempts"] == 3


async def test_timeout(server: VirtualApiServer) -> None:
    server.latency = 2.0
    ex = VirtualServerExecutor(server.url, toolbench_key=TB_KEY, timeout=0.2)
    obs = await ex.aexecute(SEARCH, {"title": "x"})
    await ex.aclose()
    assert obs.status is Status.TIMEOUT


async def test_key_never_in_observations_or_logs(server: VirtualApiServer, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    server.responses[("Movies", "imdb_search", "leak")] = lambda tool_input: {"echo": tool_input}
    server.errors[("Movies", "imdb_search", "leak_error")] = f"bad key {TB_KEY}: not subscribed"
    ex = VirtualServerExecutor(server.url, toolbench_key=TB_KEY)
    texts = [repr(ex)]
    for api, args in ((make("leak"), {"q": TB_KEY}), (make("leak_error"), {}), (SEARCH, {"title": "x"})):
        obs = await ex.aexecute(api, args)
        texts += [json.dumps(obs.to_dict()), obs.for_model()]
    await ex.aclose()
    texts.append(caplog.text)
    assert TB_KEY not in "\n".join(texts)
    assert "***" in texts[1]


def test_status_for_message() -> None:
    assert status_for_message("You have exceeded the rate limit per second") is Status.RATE_LIMITED
    assert status_for_message("Unauthorized error...") is Status.UNAUTHORIZED
    assert status_for_message("missing required parameter 'q'") is Status.REJECTED  # the server refused it
    assert status_for_message("something odd") is Status.ERROR
