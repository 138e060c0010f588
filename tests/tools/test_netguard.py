"""The address guard (issue 11, section 6): every resolved address is checked, not only the first."""

from __future__ import annotations

import socket
from typing import Any

import pytest

from langgraph_anytool.tools import netguard


def _resolver(*addresses: str) -> Any:
    async def getaddrinfo(host: str, port: Any, **kwargs: Any) -> list[tuple[Any, ...]]:
        out = []
        for a in addresses:
            family = socket.AF_INET6 if ":" in a else socket.AF_INET
            out.append((family, socket.SOCK_STREAM, 6, "", (a, port or 0)))
        return out

    return getaddrinfo


@pytest.mark.parametrize(("addresses", "refused"), [
    (("8.8.8.8", "10.0.0.1"), "10.0.0.1"),  # a public first address must not hide a private second one
    (("10.0.0.1", "8.8.8.8"), "10.0.0.1"),
    (("8.8.8.8", "1.1.1.1", "::ffff:127.0.0.1"), "::ffff:127.0.0.1"),
    (("2001:4860:4860::8888", "fd00::1"), "fd00::1"),
])
async def test_any_private_address_among_several_refuses_the_host(monkeypatch: pytest.MonkeyPatch,
                                                                  addresses: tuple[str, ...], refused: str) -> None:
    import asyncio

    loop = asyncio.get_running_loop()
    monkeypatch.setattr(loop, "getaddrinfo", _resolver(*addresses))
    assert await netguard.resolve_addresses("multi.example", 443) == [netguard.parse_ip_literal(a) for a in addresses]
    reason = await netguard.refusal_reason("multi.example", 443)
    assert reason is not None and str(netguard.parse_ip_literal(refused)) in reason and "multi.example" in reason


async def test_all_public_addresses_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    monkeypatch.setattr(asyncio.get_running_loop(), "getaddrinfo", _resolver("8.8.8.8", "1.1.1.1"))
    assert await netguard.refusal_reason("public.example", 443) is None


async def test_unresolvable_and_hostless(monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    monkeypatch.setattr(asyncio.get_running_loop(), "getaddrinfo", _resolver())
    with pytest.raises(OSError, match="no address"):
        await netguard.refusal_reason("nothing.example", 80)
    assert await netguard.refusal_reason("", 80) == "the URL has no host"
    assert await netguard.refusal_reason("127.0.0.1", 80) == "host 127.0.0.1 is not a public address (loopback)"


@pytest.mark.parametrize(("ip", "reason"), [
    ("64:ff9b::808:808", "reserved"),  # NAT64 of 8.8.8.8: a reserved range, refused either way
    ("64:ff9b::a00:1", "reserved"),  # NAT64 of 10.0.0.1
    ("2002:a00:1::", "embeds private IPv4 address 10.0.0.1"),  # 6to4
    ("::ffff:10.0.0.1", "IPv4-mapped private"),
    ("169.254.169.254", "link-local"),
])
def test_embedded_ipv4_forms(ip: str, reason: str) -> None:
    parsed = netguard.parse_ip_literal(ip)
    assert parsed is not None
    got = netguard.classify_address(parsed)
    assert got is not None and reason in got
    assert netguard.parse_ip_literal("[fe80::1%eth0]") is not None and netguard.parse_ip_literal("host.example") is None


async def test_each_address_is_listed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    monkeypatch.setattr(asyncio.get_running_loop(), "getaddrinfo", _resolver("8.8.8.8", "8.8.8.8", "10.0.0.1"))
    got = await netguard.resolve_addresses("dup.example", 80)
    assert [str(ip) for ip in got] == ["8.8.8.8", "10.0.0.1"]
