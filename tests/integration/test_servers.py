"""The loopback servers themselves: OpenAI chat API with ChatOpenAI (tool calls, retries, streaming), lifecycle."""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI

from tests.servers import ChatReply, OpenAIChatServer, RapidApiServer, tool_call


@tool
def get_weather(city: str) -> str:
    """Weather for a city."""
    return f"sunny in {city}"


def chat(server: OpenAIChatServer, **kwargs: object) -> ChatOpenAI:
    return ChatOpenAI(base_url=server.base_url, api_key="test-key", model="gpt-test", **kwargs)  # type: ignore[arg-type]


def test_chat_openai_gets_a_tool_call_and_the_server_sees_the_tools() -> None:
    with OpenAIChatServer([tool_call("get_weather", city="Oslo"), "It is sunny in Oslo."]) as srv:
        model = chat(srv, max_retries=0).bind_tools([get_weather])
        first = model.invoke("weather in Oslo?")
        assert first.tool_calls[0]["name"] == "get_weather" and first.tool_calls[0]["args"] == {"city": "Oslo"}
        assert first.usage_metadata is not None and first.usage_metadata["total_tokens"] > 0
        second = model.invoke("and now?")
        assert second.content == "It is sunny in Oslo." and not second.tool_calls
        sent = srv.chat_requests
        assert [t["function"]["name"] for t in sent[0]["tools"]] == ["get_weather"]
        assert sent[0]["messages"][-1]["content"] == "weather in Oslo?"
        assert srv.requests[0].headers["authorization"] == "Bearer test-key"


def test_chat_openai_retries_a_429() -> None:
    with OpenAIChatServer([tool_call("get_weather", city="Rome")]) as srv:
        srv.fail_chat(429, times=1, retry_after_ms=50)
        result = chat(srv, max_retries=2).bind_tools([get_weather]).invoke("weather in Rome?")
        assert result.tool_calls[0]["args"] == {"city": "Rome"}
        assert srv.request_count == 2


def test_chat_openai_gives_up_after_its_retries() -> None:
    import openai

    with OpenAIChatServer(["never reached"]) as srv:
        srv.fail_chat(500, times=5, retry_after_ms=10)
        with pytest.raises(openai.InternalServerError):
            chat(srv, max_retries=1).invoke("hi")
        assert srv.request_count == 2 and srv.remaining == 1


async def test_streaming_text_and_tool_calls() -> None:
    replies = [ChatReply(content="Let me check the weather for you, one moment."),
               ChatReply(tool_calls=[("get_weather", {"city": "Lima"}), ("get_weather", {"city": "Quito"})])]
    with OpenAIChatServer(replies) as srv:
        model = chat(srv, max_retries=0, streaming=True, stream_usage=True).bind_tools([get_weather])
        text = await model.ainvoke("hello")
        assert text.content == "Let me check the weather for you, one moment."
        calls = await model.ainvoke("weather?")
        assert [c["args"]["city"] for c in calls.tool_calls] == ["Lima", "Quito"]
        assert calls.usage_metadata is not None and calls.usage_metadata["total_tokens"] > 0
        assert all(r.get("stream") for r in srv.chat_requests)


def test_exhausted_script_is_a_clear_400() -> None:
    with OpenAIChatServer([]) as srv:
        r = httpx.post(srv.base_url + "/chat/completions", json={"model": "m", "messages": []})
        assert r.status_code == 400 and "no scripted response" in r.json()["error"]["message"]


def test_server_stops_and_self_stops() -> None:
    with RapidApiServer() as srv:
        url = srv.url
        assert httpx.get(url + "/ping").json()["path"] == "/ping"
    with pytest.raises(httpx.TransportError):
        httpx.get(url + "/ping", timeout=1)
    short = RapidApiServer(lifetime=0.3).start()
    time.sleep(0.8)
    with pytest.raises(httpx.TransportError):
        httpx.get(short.url + "/ping", timeout=1)
    short.stop()


async def test_many_concurrent_connections() -> None:
    with RapidApiServer(latency=0.05) as srv:
        async with httpx.AsyncClient(limits=httpx.Limits(max_connections=100), timeout=httpx.Timeout(20, pool=None)) as c:
            sem = asyncio.Semaphore(100)

            async def one(i: int) -> int:
                async with sem:
                    return (await c.get(f"{srv.url}/n/{i}")).status_code

            codes = await asyncio.gather(*[one(i) for i in range(150)])
        assert codes == [200] * 150
        assert srv.max_in_flight > 50  # handled concurrently, not one by one
