"""The object protocol of `Run Python Tests`: the tests run in a process the submitted code never ran in.

`run_python_with_tests` (`_sandbox.py`) starts two sandboxes joined by one socket pair per test: a *code server*
that runs the submitted code and then answers requests about its objects, and a *tester* that runs each test
snippet with the code's names bound to proxies. Every operation on a proxy (a call, an attribute, an operator,
`len`, `iter`, `==`...) is a request to the code server; values come back as plain data (numbers, strings, bytes,
lists, tuples, dicts, sets, fractions, decimals, dates) or as references to objects that stay in the code server.
So `assert f(2) == 4` compares, in the tester, a number the code computed with 4: the code chooses what its
functions return, never what the tester concludes. Nothing the code does in its own process (patching `runpy`,
`AssertionError` or `os._exit`, writing to descriptors, walking stacks) reaches the tester, and only the tester's
harness holds the verdict channel.

The tester may pass plain data, objects the code returned, builtins (`len`, `int`...) and functions, which the code
may only call: any other request about a tester object is refused. A list, dict, set or bytearray passed to a call
goes by value and is updated in place after the call (an in-place sort shows). The code's top-level names are bound
when a test starts: numbers, strings and other immutable values as they were after the code ran, containers and
every other object as live references. `with obj:` calls the object's `__exit__` with no exception details.

This module is copied into both sandboxes (standard library only). Messages are length-prefixed JSON.
"""

from __future__ import annotations

import builtins
import datetime
import decimal
import fractions
import json
import math
import operator
import os
import struct
from collections.abc import Callable
from typing import Any

MAX_MESSAGE = 16 << 20  # bytes of one message
MAX_DEPTH = 64  # nesting sent by value; the code server sends deeper structures as references

_HEADER = struct.Struct(">I")
_SCALARS = (type(None), bool, int, str)
_SEQUENCES: dict[type, str] = {list: "list", tuple: "tuple", set: "set", frozenset: "frozenset"}
_MUTABLE = (list, dict, set, bytearray)
OPERATORS = frozenset({
    "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "lshift", "rshift", "and_", "or_", "xor",
    "iadd", "isub", "imul", "itruediv", "ifloordiv", "imod", "ipow", "imatmul", "ilshift", "irshift", "iand", "ior",
    "ixor", "eq", "ne", "lt", "le", "gt", "ge", "neg", "pos", "abs", "invert", "contains", "getitem", "setitem",
    "delitem", "index",
})
_BUILTINS: dict[str, Callable[..., Any]] = {
    "len": len, "hash": hash, "bool": bool, "str": str, "repr": repr, "iter": iter, "next": next, "int": int,
    "float": float, "complex": complex, "round": round, "format": format, "reversed": reversed, "bytes": bytes,
    "dir": dir, "isinstance": isinstance, "issubclass": issubclass, "divmod": divmod, "trunc": math.trunc,
    "floor": math.floor, "ceil": math.ceil, "getattr": getattr, "setattr": setattr, "delattr": delattr,
}
CALLS = frozenset({"call"})  # what the tester serves: calls of the functions it passed
EVERYTHING = frozenset({"call", "operator", "builtin", "names"})  # what the code server serves


class ProtocolError(RuntimeError):
    """The other side sent something that is not a message of this protocol, or went away."""


class Peer:
    """One end of a socket: sends requests, and serves the other side's requests while it waits for a reply.

    The code server serves `EVERYTHING` about its objects (and `names`, its top-level names: `namespace`, or
    `load_error` when the code failed); the tester serves only `CALLS`."""

    def __init__(self, fd: int, *, serves: frozenset[str], namespace: dict[str, Any] | None = None,
                 load_error: BaseException | None = None) -> None:
        self.fd = fd
        self.serves = serves
        self.namespace = namespace
        self.load_error = load_error
        self._number = 0
        self._objects: dict[int, Any] = {}  # this side's objects the other side holds references to
        self._refs: dict[int, int] = {}  # id(object) → its reference number
        self._proxies: dict[int, Any] = {}  # the other side's objects, by reference number
        self._classes: dict[str, type] = {}
        self._exceptions: dict[int, type[BaseException]] = {}

    @property
    def tester(self) -> bool:
        return self.serves == CALLS

    # ------------------------------------------------------------------------------------------ transport
    def send(self, message: dict[str, Any]) -> None:
        data = json.dumps(message, separators=(",", ":")).encode("utf-8", "surrogatepass")
        if len(data) > MAX_MESSAGE:
            raise ProtocolError(f"a value of {len(data):,} bytes is larger than the {MAX_MESSAGE:,}-byte limit")
        view = memoryview(_HEADER.pack(len(data)) + data)
        try:
            while view:
                view = view[os.write(self.fd, view):]
        except OSError as exc:
            raise self._ended() from exc

    def _ended(self) -> ProtocolError:
        return ProtocolError("the code under test's process ended" if self.tester else "the tester ended")

    def _read(self, size: int) -> bytes:
        chunks, left = [], size
        while left:
            try:
                chunk = os.read(self.fd, min(left, 1 << 20))
            except OSError as exc:
                raise self._ended() from exc
            if not chunk:
                raise self._ended()
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def receive(self) -> dict[str, Any]:
        (size,) = _HEADER.unpack(self._read(_HEADER.size))
        if size > MAX_MESSAGE:
            raise ProtocolError(f"a message of {size:,} bytes is larger than the {MAX_MESSAGE:,}-byte limit")
        try:
            message = json.loads(self._read(size).decode("utf-8", "surrogatepass"))
        except (ValueError, RecursionError) as exc:
            raise ProtocolError(f"not a message ({type(exc).__name__})") from None
        if not isinstance(message, dict):
            raise ProtocolError("not a message")
        return message

    # ------------------------------------------------------------------------------------------ requests
    def request(self, op: str, *, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None,
                **fields: Any) -> Any:
        """Ask the other side for `op` on `args` (values of this side); serve its requests until the reply comes.
        Returns the value, or raises the exception the operation raised over there."""
        kwargs = kwargs or {}
        self._number += 1
        number = self._number
        self.send({"id": number, "op": op, **fields, "args": [self.encode(a) for a in args],
                   "kwargs": {str(k): self.encode(v) for k, v in kwargs.items()}})
        while True:
            message = self.receive()
            if "op" in message:
                self.serve_one(message)
                continue
            if message.get("re") != number:
                raise ProtocolError("a reply to another request")
            if "raise" in message:
                raise self._exception(message["raise"])
            sync = message.get("sync")
            for key, value in (sync.items() if isinstance(sync, dict) else ()):
                original = args[int(key)] if key.isdigit() and int(key) < len(args) else kwargs.get(key)
                _update(original, self.decode(value))
            return self.decode(message.get("ok"))

    def serve_forever(self) -> None:
        """Answer requests until the other side closes the socket."""
        while True:
            try:
                message = self.receive()
            except ProtocolError:
                return
            self.serve_one(message)

    def serve_one(self, message: dict[str, Any]) -> None:
        op = str(message.get("op"))
        try:
            if op not in self.serves:
                raise PermissionError(f"a request for {op!r} is refused here")
            reply: dict[str, Any] = self._answer(op, message)
        except ProtocolError:
            raise
        except BaseException as exc:  # the requester gets whatever the operation raised (SystemExit included)
            reply = {"raise": self._exception_data(exc)}
        self.send({"re": message.get("id"), **reply})

    def _answer(self, op: str, message: dict[str, Any]) -> dict[str, Any]:
        raw_args, raw_kwargs = message.get("args"), message.get("kwargs")
        args = [self.decode(a) for a in (raw_args if isinstance(raw_args, list) else [])]
        kwargs = {str(k): self.decode(v) for k, v in (raw_kwargs.items() if isinstance(raw_kwargs, dict) else ())}
        if op == "names":
            if self.load_error is not None:
                raise self.load_error
            names = (self.namespace or {}).items()
            return {"ok": {"dict": [[k, self._name_value(v)] for k, v in names if not k.startswith("__")]}}
        if op == "call":
            result = self._own(message.get("ref"))(*args, **kwargs)
            sync = {str(i): self.encode(a) for i, a in enumerate(args) if type(a) in _MUTABLE}
            sync.update({k: self.encode(v) for k, v in kwargs.items() if type(v) in _MUTABLE})
            return {"ok": self.encode(result), "sync": sync}
        name = str(message.get("name"))
        if op == "operator" and name in OPERATORS:
            return {"ok": self.encode(getattr(operator, name)(*args))}
        if op == "builtin" and name in _BUILTINS:
            return {"ok": self.encode(_BUILTINS[name](*args))}
        raise PermissionError(f"no {op} {name!r}")

    def _name_value(self, value: Any) -> Any:
        """A top-level name: containers (and every non-plain object) by reference, so that changes show."""
        return self._reference(value) if type(value) in _MUTABLE else self.encode(value)

    # ------------------------------------------------------------------------------------------ values
    def encode(self, value: Any, depth: int = 0) -> Any:
        """JSON data for `value`: plain data by value, this side's other objects as references, the other side's
        objects (proxies) as references back to them."""
        kind = type(value)
        if kind in _SCALARS:
            return value
        if kind is float:
            return value if math.isfinite(value) else {"float": repr(value)}
        back = _reference_of(value)
        if back is not None:
            return {"own": back}
        if depth <= MAX_DEPTH:
            if kind in _SEQUENCES:
                return {_SEQUENCES[kind]: [self.encode(v, depth + 1) for v in value]}
            if kind is dict:
                return {"dict": [[self.encode(k, depth + 1), self.encode(v, depth + 1)] for k, v in value.items()]}
            simple = _simple(value)
            if simple is not None:
                return simple
        if self.tester:
            return self._tester_value(value, depth)
        return self._reference(value)

    def _tester_value(self, value: Any, depth: int) -> Any:
        name = getattr(value, "__name__", None)
        if isinstance(name, str) and getattr(builtins, name, None) is value:
            return {"builtin": name}
        for base in (*_SEQUENCES, dict, bool, int, float, str, bytes):
            if isinstance(value, base) and depth <= MAX_DEPTH:  # a subclass (Counter, a named tuple...): its base
                return self.encode(base(value), depth)
        if not callable(value):
            raise TypeError(f"a test can pass plain data, objects the code returned and functions to the code under "
                            f"test, not a {type(value).__name__}")
        return self._reference(value)

    def _reference(self, value: Any) -> dict[str, Any]:
        ref = self._refs.get(id(value))
        if ref is None or self._objects.get(ref) is not value:
            ref = len(self._objects) + 1
            self._objects[ref] = value
            self._refs[id(value)] = ref
        out: dict[str, Any] = {"ref": ref, "type": type(value).__name__}
        if isinstance(value, type) and issubclass(value, BaseException):
            out["exception"] = {"name": value.__name__, "builtin": value.__module__ == "builtins",
                                "bases": [c.__name__ for c in value.__mro__[1:] if c.__module__ == "builtins"]}
        return out

    def _own(self, ref: Any) -> Any:
        if not isinstance(ref, int) or ref not in self._objects:
            raise ProtocolError("a reference to no object of this side")
        return self._objects[ref]

    def decode(self, data: Any) -> Any:
        if type(data) in _SCALARS or type(data) is float:
            return data
        if not isinstance(data, dict) or not data:
            raise ProtocolError("not a value")
        if "own" in data:
            return self._own(data["own"])
        if "ref" in data:
            return self._proxy(data)
        if len(data) != 1:
            raise ProtocolError("not a value")
        ((tag, body),) = data.items()
        if tag == "builtin" and not self.tester:
            return getattr(builtins, str(body))
        if tag in ("list", "tuple", "set", "frozenset"):
            kind: Callable[[list[Any]], Any] = {"list": list, "tuple": tuple, "set": set, "frozenset": frozenset}[tag]
            return kind([self.decode(v) for v in _items(body)])
        if tag == "dict":
            return {self.decode(k): self.decode(v) for k, v in (_pair(p) for p in _items(body))}
        return _unsimple(tag, body)

    def _proxy(self, data: dict[str, Any]) -> Any:
        ref = data["ref"]
        if not isinstance(ref, int):
            raise ProtocolError("not a reference")
        if not self.tester:
            return self._proxies.setdefault(ref, _new_proxy(Callback, self, ref))
        if isinstance(data.get("exception"), dict):
            return self._exception_class(ref, data["exception"])
        if ref not in self._proxies:
            name = data.get("type")
            name = name if isinstance(name, str) and name.isidentifier() else "Remote"
            if name not in self._classes:
                self._classes[name] = type(name, (Remote,), {"__slots__": ()})
            self._proxies[ref] = _new_proxy(self._classes[name], self, ref)
        return self._proxies[ref]

    def _exception_class(self, ref: int, info: dict[str, Any]) -> type[BaseException]:
        """A local class standing for one of the code's exception classes (same name, its builtin bases), so that
        `except TheCodesError:` catches what the code raises; a builtin exception class is itself."""
        if ref not in self._exceptions:
            name = str(info.get("name"))
            cls = _builtin_exception(name) if info.get("builtin") else None
            if cls is None:
                bases = [b for b in (_builtin_exception(str(n)) for n in info.get("bases") or []) if b is not None]
                cls = type(name if name.isidentifier() else "RemoteError", (bases[0] if bases else Exception,),
                           {"_anytool_ref": ref})
            self._exceptions[ref] = cls
        return self._exceptions[ref]

    def _exception_data(self, exc: BaseException) -> dict[str, Any]:
        try:
            args = self.encode(list(exc.args))
        except (TypeError, ValueError):
            args = {"list": [str(exc)]}
        if self.tester:
            return {"name": type(exc).__name__, "args": args}
        return {"class": self._reference(type(exc)), "args": args}

    def _exception(self, data: Any) -> BaseException:
        try:
            args = self.decode(data["args"])
            if self.tester:
                cls = self.decode(data["class"])
            else:
                cls = _builtin_exception(str(data["name"])) or RuntimeError
                args = args if cls is not RuntimeError else [f"{data['name']}: {', '.join(map(str, args))}"]
            if not (isinstance(cls, type) and issubclass(cls, BaseException)):
                raise TypeError("not an exception class")
            return cls(*args)
        except (ProtocolError, KeyError, TypeError) as exc:
            return ProtocolError(f"a malformed exception from the other side ({exc})")


def _builtin_exception(name: str) -> type[BaseException] | None:
    cls = getattr(builtins, name, None)
    return cls if isinstance(cls, type) and issubclass(cls, BaseException) else None


def _reference_of(value: Any) -> int | None:
    """The reference number of the other side's object that `value` stands for, or None."""
    if isinstance(value, (Remote, Callback)):
        return int(object.__getattribute__(value, "_anytool_ref"))
    if isinstance(value, type) and "_anytool_ref" in value.__dict__:
        return int(value.__dict__["_anytool_ref"])
    return None


def _items(body: Any) -> list[Any]:
    if not isinstance(body, list):
        raise ProtocolError("not a list")
    return body


def _pair(item: Any) -> tuple[Any, Any]:
    if not isinstance(item, list) or len(item) != 2:
        raise ProtocolError("not a key and a value")
    return item[0], item[1]


def _simple(value: Any) -> dict[str, Any] | None:
    """Tagged data for the standard library's value types; None for anything else."""
    kind = type(value)
    if kind is bytes or kind is bytearray:
        return {kind.__name__: value.hex()}
    if kind is complex:
        return {"complex": [repr(value.real), repr(value.imag)]}
    if kind is fractions.Fraction:
        return {"fraction": str(value)}
    if kind is decimal.Decimal:
        return {"decimal": str(value)}
    if kind in (datetime.datetime, datetime.date, datetime.time):
        return {kind.__name__: value.isoformat()}
    if kind is datetime.timedelta:
        return {"timedelta": [value.days, value.seconds, value.microseconds]}
    if kind is range:
        return {"range": [value.start, value.stop, value.step]}
    return None


def _unsimple(tag: str, body: Any) -> Any:
    try:
        if tag == "float":
            return float(str(body))
        if tag in ("bytes", "bytearray"):
            return (bytes if tag == "bytes" else bytearray).fromhex(str(body))
        if tag == "complex":
            return complex(float(body[0]), float(body[1]))
        if tag == "fraction":
            return fractions.Fraction(str(body))
        if tag == "decimal":
            return decimal.Decimal(str(body))
        if tag in ("datetime", "date", "time"):
            return getattr(datetime, tag).fromisoformat(str(body))
        if tag == "timedelta":
            return datetime.timedelta(int(body[0]), int(body[1]), int(body[2]))
        if tag == "range":
            return range(int(body[0]), int(body[1]), int(body[2]))
    except (ValueError, TypeError, IndexError, KeyError, ArithmeticError) as exc:
        raise ProtocolError(f"a malformed {tag} ({exc})") from None
    raise ProtocolError(f"an unknown kind of value {tag!r}")


def _update(original: Any, new: Any) -> None:
    """A container the tester passed by value, changed by the code: the same changes, in place."""
    if isinstance(original, (list, bytearray)) and isinstance(new, type(original)):
        original[:] = new
    elif isinstance(original, (dict, set)) and isinstance(new, type(original)):
        original.clear()
        original.update(new)


# ---------------------------------------------------------------------------------------------------- proxies
def _new_proxy(cls: type, peer: Peer, ref: int) -> Any:
    proxy: Any = object.__new__(cls)
    object.__setattr__(proxy, "_anytool_peer", peer)
    object.__setattr__(proxy, "_anytool_ref", ref)
    return proxy


def _peer(proxy: Any) -> Peer:
    peer: Peer = object.__getattribute__(proxy, "_anytool_peer")
    return peer


def _call(self: Any, *args: Any, **kwargs: Any) -> Any:
    return _peer(self).request("call", ref=object.__getattribute__(self, "_anytool_ref"), args=args, kwargs=kwargs)


def _operator(name: str, reflected: bool = False) -> Callable[..., Any]:
    def method(self: Any, *args: Any) -> Any:
        return _peer(self).request("operator", name=name, args=(*args, self) if reflected else (self, *args))

    return method


def _builtin(name: str, reflected: bool = False) -> Callable[..., Any]:
    def method(self: Any, *args: Any) -> Any:
        return _peer(self).request("builtin", name=name, args=(*args, self) if reflected else (self, *args))

    return method


def _enter(self: Any) -> Any:
    return _builtin("getattr")(self, "__enter__")()


def _exit(self: Any, *exc_info: Any) -> Any:
    return _builtin("getattr")(self, "__exit__")(None, None, None)


class Remote:
    """A proxy, in the tester, of an object of the code under test: every operation is a request."""

    __slots__ = ("_anytool_peer", "_anytool_ref")

    __call__ = _call
    __getattr__ = _builtin("getattr")
    __setattr__ = _builtin("setattr")
    __delattr__ = _builtin("delattr")
    __repr__ = _builtin("repr")
    __str__ = _builtin("str")
    __format__ = _builtin("format")
    __bytes__ = _builtin("bytes")
    __hash__ = _builtin("hash")
    __bool__ = _builtin("bool")
    __len__ = _builtin("len")
    __iter__ = _builtin("iter")
    __next__ = _builtin("next")
    __reversed__ = _builtin("reversed")
    __dir__ = _builtin("dir")
    __int__ = _builtin("int")
    __float__ = _builtin("float")
    __complex__ = _builtin("complex")
    __round__ = _builtin("round")
    __trunc__ = _builtin("trunc")
    __floor__ = _builtin("floor")
    __ceil__ = _builtin("ceil")
    __divmod__ = _builtin("divmod")
    __rdivmod__ = _builtin("divmod", reflected=True)
    __instancecheck__ = _builtin("isinstance", reflected=True)
    __subclasscheck__ = _builtin("issubclass", reflected=True)
    __contains__ = _operator("contains")
    __getitem__ = _operator("getitem")
    __setitem__ = _operator("setitem")
    __delitem__ = _operator("delitem")
    __index__ = _operator("index")
    __eq__ = _operator("eq")
    __ne__ = _operator("ne")
    __lt__ = _operator("lt")
    __le__ = _operator("le")
    __gt__ = _operator("gt")
    __ge__ = _operator("ge")
    __neg__ = _operator("neg")
    __pos__ = _operator("pos")
    __abs__ = _operator("abs")
    __invert__ = _operator("invert")
    __enter__ = _enter
    __exit__ = _exit


for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "lshift", "rshift", "and_", "or_",
              "xor"):
    _bare = _name.rstrip("_")
    setattr(Remote, f"__{_bare}__", _operator(_name))
    setattr(Remote, f"__r{_bare}__", _operator(_name, reflected=True))
    setattr(Remote, f"__i{_bare}__", _operator(f"i{_bare}"))


class Callback:
    """A proxy, in the code server, of a function the tester passed: the code may call it, nothing else."""

    __slots__ = ("_anytool_peer", "_anytool_ref")

    __call__ = _call

    def __repr__(self) -> str:
        return "<a function of the test>"
