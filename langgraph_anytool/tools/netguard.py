"""Address checks for outgoing calls: refuse private, loopback, link-local and other non-public targets.

Catalog documents (OpenAPI specs, tool files) may come from third parties; without this check a spec whose base URL
points at `169.254.169.254` or `localhost` would let the model reach internal services. Every address a host name
resolves to is checked (an attacker-controlled name may resolve to one public and one private address), and IPv6
forms that embed an IPv4 address (IPv4-mapped, 6to4, NAT64, Teredo) are checked through the embedded address too.
The check runs before every request and redirect hop; the HTTP client then resolves the name again to connect, so
a name re-bound between the two lookups (DNS rebinding with a zero TTL) is not covered.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_NAT64 = ipaddress.ip_network("64:ff9b::/96")


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


async def refusal_reason(host: str, port: int | None = None) -> str | None:
    """A sentence explaining why calling `host` is refused, or None when every address it resolves to is public.

    Raises `OSError` when the name cannot be resolved (the caller reports that as a connection failure).
    """
    if not host:
        return "the URL has no host"
    literal = parse_ip_literal(host)
    addresses = await resolve_addresses(host, port)
    if not addresses:
        raise OSError(f"host {host!r} resolved to no address")
    for ip in addresses:
        reason = classify_address(ip)
        if reason:
            shown = host if literal is not None else f"{host} ({ip})"
            return f"host {shown} is not a public address ({reason})"
    return None
