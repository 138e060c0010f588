"""Address checks for outgoing calls: refuse private, loopback, link-local and other non-public targets.

Catalog documents (OpenAPI specs, tool files) may come from third parties; without this check a spec whose base URL
points at `169.254.169.254` or `localhost` would let the model reach internal services. Every address a host name
resolves to is checked (an attacker-controlled name may resolve to one public and one private address), and IPv6
forms that embed an IPv4 address (IPv4-mapped, 6to4, NAT64, Teredo) are checked through the embedded address too.
The check runs before every request and redirect hop, and the name is resolved only there: `PinnedBackend` (the
httpcore network backend of the HTTP executor's clients) connects to an address that check approved, never to a
fresh lookup, so a name re-bound between the check and the connection (DNS rebinding with a zero TTL) still
reaches only the approved address. The URL keeps the name, so the Host header and the TLS server name (SNI, and
certificate checks) stay on the name.

`ANYTOOL_TEST_ALLOW_LOOPBACK=1` (for tests against loopback servers only) lets loopback addresses through while
every other non-public address stays refused.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Iterable, Mapping
from typing import Any

import httpcore

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_NAT64 = ipaddress.ip_network("64:ff9b::/96")
LOOPBACK_FOR_TESTS_ENV = "ANYTOOL_TEST_ALLOW_LOOPBACK"


def loopback_allowed_for_tests(environ: Mapping[str, str]) -> bool:
    """Whether `ANYTOOL_TEST_ALLOW_LOOPBACK=1` is set (tests against loopback servers; never in production)."""
    return environ.get(LOOPBACK_FOR_TESTS_ENV, "").strip() == "1"


def _is_loopback(ip: IPAddress) -> bool:
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped.is_loopback
    return ip.is_loopback


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    found: list[ipaddress.IPv4Address] = []
    if ip.ipv4_mapped is not None:
        found.append(ip.ipv4_mapped)
    if ip.sixtofour is not None:
        found.append(ip.sixtofour)
    if ip.teredo is not None:
        found.extend(ip.teredo)
    if ip in _NAT64:
        found.append(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
    return found


def classify_address(ip: IPAddress) -> str | None:
    """Why `ip` is not a public address ("loopback", "private", ...), or None when it is public."""
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        inner = classify_address(ip.ipv4_mapped)
        return f"IPv4-mapped {inner}" if inner else "IPv4-mapped"
    checks: list[tuple[bool, str]] = [
        (ip.is_unspecified, "unspecified"),
        (ip.is_loopback, "loopback"),
        (ip.is_link_local, "link-local"),
        (ip.is_multicast, "multicast"),
        (ip.is_private, "private"),
        (ip.is_reserved, "reserved"),
        (not ip.is_global, "non-global"),
    ]
    for bad, reason in checks:
        if bad:
            return reason
    if isinstance(ip, ipaddress.IPv6Address):
        for inner_ip in _embedded_ipv4(ip):
            inner = classify_address(inner_ip)
            if inner:
                return f"embeds {inner} IPv4 address {inner_ip}"
    return None


def parse_ip_literal(host: str) -> IPAddress | None:
    """The address if `host` is an IP literal (brackets and IPv6 zone ids allowed), else None."""
    text = host.strip().strip("[]").split("%", 1)[0]
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


async def resolve_addresses(host: str, port: int | None = None) -> list[IPAddress]:
    """Every address `host` resolves to (getaddrinfo runs in the loop's thread pool)."""
    literal = parse_ip_literal(host)
    if literal is not None:
        return [literal]
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    out: list[IPAddress] = []
    for _family, _type, _proto, _canon, sockaddr in infos:
        ip = parse_ip_literal(str(sockaddr[0]))
        if ip is not None and ip not in out:
            out.append(ip)
    return out


async def refusal_reason(host: str, port: int | None = None, *, allow_loopback: bool = False) -> str | None:
    """A sentence explaining why calling `host` is refused, or None when every address it resolves to is public.

    Raises `OSError` when the name cannot be resolved (the caller reports that as a connection failure).
    """
    try:
        await approved_addresses(host, port, allow_loopback=allow_loopback)
    except AddressRefused as exc:
        return exc.reason
    return None


class AddressRefused(Exception):
    """A host whose addresses are not all public (the message says which and why)."""

    def __init__(self, host: str, reason: str) -> None:
        super().__init__(reason)
        self.host = host
        self.reason = reason


async def approved_addresses(host: str, port: int | None = None, *, allow_loopback: bool = False) -> list[IPAddress]:
    """Resolve `host` once and return its addresses when every one is public (loopback too if `allow_loopback`).

    Raises `AddressRefused` naming the first address that is not, and `OSError` when the name does not resolve.
    """
    if not host:
        raise AddressRefused(host, "the URL has no host")
    literal = parse_ip_literal(host)
    addresses = await resolve_addresses(host, port)
    if not addresses:
        raise OSError(f"host {host!r} resolved to no address")
    for ip in addresses:
        if allow_loopback and _is_loopback(ip):
            continue
        reason = classify_address(ip)
        if reason:
            shown = host if literal is not None else f"{host} ({ip})"
            raise AddressRefused(host, f"host {shown} is not a public address ({reason})")
    return addresses


def _pin_key(host: str) -> str:
    return host.strip().strip("[]").lower()


class PinnedBackend(httpcore.AsyncNetworkBackend):
    """An httpcore network backend that connects only to addresses the guard approved for the host name.

    `pin(host, addresses)` records the addresses a check approved (the executor calls it right after
    `approved_addresses`); `connect_tcp(host, ...)` tries those addresses in order and never resolves the name
    again. A host that was never pinned (a connection the executor did not check) is resolved and checked here,
    once, and the connection goes to that checked address. The name stays in the URL, so the Host header and the
    TLS server name are the name.
    """

    def __init__(self, *, allow_loopback: bool = False, inner: httpcore.AsyncNetworkBackend | None = None) -> None:
        self.allow_loopback = allow_loopback
        self._inner = inner if inner is not None else httpcore.AnyIOBackend()
        self._pins: dict[str, tuple[IPAddress, ...]] = {}

    def pin(self, host: str, addresses: Iterable[IPAddress]) -> None:
        """Connections to `host` go to `addresses` (already approved) from now on."""
        self._pins[_pin_key(host)] = tuple(addresses)

    def pinned(self, host: str) -> tuple[IPAddress, ...]:
        """The approved addresses for `host` (empty when none were pinned)."""
        return self._pins.get(_pin_key(host), ())

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                          socket_options: Iterable[Any] | None = None) -> httpcore.AsyncNetworkStream:
        addresses = self.pinned(host)
        if not addresses:
            try:
                addresses = tuple(await approved_addresses(host, port, allow_loopback=self.allow_loopback))
            except AddressRefused as exc:
                raise httpcore.ConnectError(exc.reason) from None
            except OSError as exc:
                raise httpcore.ConnectError(f"cannot resolve host {host}: {exc.__class__.__name__}") from None
        last: Exception | None = None
        for ip in addresses:
            try:
                return await self._inner.connect_tcp(str(ip), port, timeout=timeout, local_address=local_address,
                                                     socket_options=socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                last = exc
        assert last is not None
        raise last

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: Iterable[Any] | None = None) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("unix sockets are not used by the HTTP executor")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)
