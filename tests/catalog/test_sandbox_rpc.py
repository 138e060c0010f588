"""The object protocol of `Run Python Tests` (issue 28, point 7), in one process: a code-server peer serves this
module's objects on one end of a socket pair (in a thread), a tester peer uses them through proxies on the other.
What a test can do with the code's objects, what comes back by value, and what the tester refuses."""

from __future__ import annotations

import datetime
import decimal
import fractions
import json
import math
import os
import socket
import struct
import threading
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from langgraph_anytool.catalog.builtin._sandbox_rpc import (
    CALLS,
    EVERYTHING,
    MAX_DEPTH,
    Peer,
    ProtocolError,
    Remote,
)


class TooBig(ValueError):
    pass


class Box:
    def __init__(self, value: int) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Box) and other.value == self.value

    def __hash__(self) -> int:
        return hash(self.value)

    def __add__(self, other: Any) -> Box:
        return Box(self.value + (other.value if isinstance(other, Box) else other))

    def __radd__(self, other: Any) -> Box:
        return Box(other + self.value)

    def __len__(self) -> int:
        return self.value

    def __repr__(self) -> str:
        return f"Box({self.value})"


def check(n: int) -> int:
    if n > 10:
        raise TooBig(f"{n} is too big")
    return n


def squares(n: int) -> Iterator[int]:
    yield from (i * i for i in range(n))


def sort_in_place(xs: list[int], *, extra: dict[str, int]) -> None:
    xs.sort()
    extra["sorted"] = len(xs)


def apply(fn: Any, *args: Any) -> Any:
    return fn(*args)


def peek(fn: Any) -> Any:
    return fn.__globals__  # a tester function may only be called


def values() -> list[Any]:
    return [fractions.Fraction(1, 3), decimal.Decimal("1.50"), datetime.date(2024, 2, 29), b"\x00\xff", 2 + 3j,
            math.inf, {1, 2}, (1, (2, [3])), {(1, 2): {"a": None}}, range(0, 10, 2),
            datetime.timedelta(days=1, seconds=5)]


def deep() -> list[Any]:
    out: list[Any] = []
    for _ in range(MAX_DEPTH + 10):
        out = [out]
    return out


NAMESPACE = {"check": check, "squares": squares, "sort_in_place": sort_in_place, "apply": apply, "peek": peek,
             "values": values, "deep": deep, "Box": Box, "TooBig": TooBig, "limit": 10, "seen": [1, 2],
             "__hidden__": 1}


@pytest.fixture
def names() -> Iterator[dict[str, Any]]:
    tester_end, code_end = socket.socketpair()
    server = Peer(code_end.fileno(), serves=EVERYTHING, namespace=dict(NAMESPACE))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Peer(tester_end.fileno(), serves=CALLS).request("names")
    finally:
        tester_end.close()
        thread.join(5)
        code_end.close()


def test_names_calls_and_values(names: dict[str, Any]) -> None:
    assert "__hidden__" not in names and names["limit"] == 10
    assert names["check"](3) == 3 and names["values"]() == values()
    seen = names["seen"]  # a container: a live reference, so the code's later changes show
    assert isinstance(seen, Remote) and len(seen) == 2 and 2 in seen and seen == [1, 2]
    assert isinstance(names["deep"](), list)  # deeper than MAX_DEPTH: the inner part is a reference


def test_objects_the_code_returns(names: dict[str, Any]) -> None:
    Box_ = names["Box"]
    b = Box_(2)
    assert type(b).__name__ == "Box" and isinstance(b, Box_) and not isinstance(3, Box_)
    assert b.value == 2 and len(b) == 2 and repr(b) == "Box(2)" and f"{b}" == "Box(2)"
    assert b + 1 == Box_(3) and 1 + b == Box_(3) and b != Box_(5)
    assert {b: "x"}[Box_(2)] == "x"
    b.value = 7
    assert b.value == 7
    assert list(names["squares"](4)) == [0, 1, 4, 9] and sum(names["squares"](3)) == 5


def test_exceptions_keep_their_class(names: dict[str, Any]) -> None:
    with pytest.raises(names["TooBig"], match="11 is too big") as caught:
        names["check"](11)
    assert isinstance(caught.value, ValueError) and names["TooBig"].__name__ == "TooBig"
    with pytest.raises(TypeError):
        names["check"]("a")  # a builtin exception is the builtin class
    with pytest.raises(AttributeError):
        names["Box"](1).missing  # noqa: B018


def test_in_place_changes_come_back_and_functions_may_only_be_called(names: dict[str, Any]) -> None:
    xs, extra = [3, 1, 2], {"kept": 1}
    assert names["sort_in_place"](xs, extra=extra) is None
    assert xs == [1, 2, 3] and extra == {"kept": 1, "sorted": 3}
    assert names["apply"](lambda a, b: a * b, 6, 7) == 42
    assert names["apply"](len, [1, 2]) == 2 and names["apply"](str.upper, "a") == "A"
    assert names["apply"](Counter, "aab") == {"a": 2, "b": 1}  # a builtin-like class: the code calls it back
    with pytest.raises(AttributeError, match="Callback"):
        names["peek"](lambda: 1)  # the code holds a call-only proxy of the test's function
    with pytest.raises(TypeError, match="not a object"):
        names["apply"](print, object())


def _raw(message: bytes) -> Peer:
    """A tester peer whose other side sends `message`, then nothing more (its end stays open for our request)."""
    ours, theirs = socket.socketpair()
    theirs.sendall(message)
    theirs.shutdown(socket.SHUT_WR)
    peer = Peer(os.dup(ours.fileno()), serves=CALLS)
    peer.keep_alive = (ours, theirs)  # type: ignore[attr-defined]
    return peer


@pytest.mark.parametrize(("message", "needle"), [
    (b"", "process ended"),
    (struct.pack(">I", 1 << 30), "larger than"),
    (struct.pack(">I", 4) + b"nope", "not a message"),
    (struct.pack(">I", 2) + b"[]", "not a message"),
])
def test_what_is_not_a_message_fails_the_test(message: bytes, needle: str) -> None:
    with pytest.raises(ProtocolError, match=needle):
        _raw(message).request("names")


@pytest.mark.parametrize("reply", [
    {"re": 1, "ok": {"pickle": "x"}}, {"re": 1, "ok": {"own": 5}}, {"re": 1, "ok": {"builtin": "exec"}},
    {"re": 1, "ok": {"ref": "x"}}, {"re": 2, "ok": 1}, {"re": 1, "ok": {"fraction": "1/0"}},
])
def test_a_forged_reply_is_refused(reply: dict[str, Any]) -> None:
    data = json.dumps(reply).encode()
    with pytest.raises(ProtocolError):
        _raw(struct.pack(">I", len(data)) + data).request("names")


def test_a_tester_serves_nothing_but_calls() -> None:
    ours, theirs = socket.socketpair()
    tester = Peer(ours.fileno(), serves=CALLS)
    for op in ("builtin", "operator", "names"):
        tester.serve_one({"id": 1, "op": op, "name": "getattr", "args": [{"builtin": "print"}, "__globals__"]})
        size = struct.unpack(">I", theirs.recv(4))[0]
        reply = json.loads(theirs.recv(size))
        assert reply["re"] == 1 and reply["raise"]["name"] == "PermissionError"
    ours.close()
    theirs.close()
