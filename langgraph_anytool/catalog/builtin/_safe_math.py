"""A safe arithmetic-expression evaluator: parse with `ast`, walk a whitelist of nodes, never run code."""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

MAX_LENGTH = 500
MAX_NODES = 300
MAX_INT_BITS = 14000  # every integer the expression computes (about 4,200 digits: printable under Python's limit)
MAX_FACTORIAL = 1000
MAX_ROUND_DIGITS = 400  # round(x, n): |n| (round(5, -10**9) computes 10**(10**9))

_BINARY: Mapping[type[ast.operator], Callable[[Any, Any], Any]] = MappingProxyType({
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
})
_UNARY: Mapping[type[ast.unaryop], Callable[[Any], Any]] = MappingProxyType({
    ast.UAdd: operator.pos, ast.USub: operator.neg,
})
CONSTANTS: Mapping[str, float] = MappingProxyType({
    "pi": math.pi, "e": math.e, "tau": math.tau, "phi": (1 + math.sqrt(5)) / 2,
})
_TRIG = frozenset({"sin", "cos", "tan"})
_INV_TRIG = frozenset({"asin", "acos", "atan", "atan2"})


def _factorial(x: Any) -> int:
    if isinstance(x, float) and x.is_integer():
        x = int(x)
    if not isinstance(x, int) or x < 0:
        raise ValueError("factorial needs a non-negative integer")
    if x > MAX_FACTORIAL:
        raise ValueError(f"factorial argument above {MAX_FACTORIAL} is not allowed")
    return math.factorial(x)


def _bounded(func: Callable[..., int]) -> Callable[..., int]:
    def call(n: Any, k: Any = None) -> int:
        if not isinstance(n, int) or (k is not None and not isinstance(k, int)):
            raise ValueError(f"{func.__name__} needs integers")
        if n > 10000:
            raise ValueError(f"{func.__name__} argument above 10000 is not allowed")
        return func(n) if k is None else func(n, k)

    return call


def _round(x: Any, ndigits: Any = None) -> Any:
    if ndigits is None:
        return round(x)
    if not isinstance(ndigits, int) or abs(ndigits) > MAX_ROUND_DIGITS:
        raise ValueError(f"round() takes a whole number of digits between -{MAX_ROUND_DIGITS} and {MAX_ROUND_DIGITS}")
    return round(x, ndigits)


def _log(x: float, base: float | None = None) -> float:
    return math.log(x) if base is None else math.log(x, base)


def _functions() -> dict[str, Callable[..., Any]]:
    return {
        "sqrt": math.sqrt, "cbrt": lambda x: math.copysign(abs(x) ** (1 / 3), x), "abs": abs, "round": _round,
        "floor": math.floor, "ceil": math.ceil, "trunc": math.trunc, "exp": math.exp, "ln": math.log, "log": _log,
        "log10": math.log10, "log2": math.log2, "sin": math.sin, "cos": math.cos, "tan": math.tan,
        "asin": math.asin, "acos": math.acos, "atan": math.atan, "atan2": math.atan2, "sinh": math.sinh,
        "cosh": math.cosh, "tanh": math.tanh, "degrees": math.degrees, "radians": math.radians,
        "factorial": _factorial, "gcd": math.gcd, "lcm": math.lcm, "min": min, "max": max, "hypot": math.hypot,
        "comb": _bounded(math.comb), "perm": _bounded(math.perm),
    }


FUNCTION_NAMES: tuple[str, ...] = tuple(sorted(_functions()))


def _check_pow(base: Any, exp: Any) -> None:
    if isinstance(base, int) and isinstance(exp, int) and exp > 0 and abs(base) > 1:
        if exp * math.log2(abs(base)) > MAX_INT_BITS:
            raise ValueError("result of ** is too large")
    elif isinstance(exp, (int, float)) and abs(exp) > 10000 and isinstance(base, (int, float)) and abs(base) > 1:
        raise ValueError("exponent is too large")


class _Evaluator:
    def __init__(self, degrees: bool, variables: dict[str, float]) -> None:
        self.degrees = degrees
        self.names = {**CONSTANTS, **variables}
        self.functions = _functions()

    def visit(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Expression):
            return self.visit(node.body)
        if isinstance(node, ast.Constant):
            if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
                raise ValueError(f"only numbers are allowed, not {node.value!r}")
            return node.value
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            left, right = self.visit(node.left), self.visit(node.right)
            if isinstance(node.op, ast.Pow):
                _check_pow(left, right)
            if isinstance(node.op, (ast.Div, ast.FloorDiv, ast.Mod)) and right == 0:
                raise ValueError("division by zero")
            result = _BINARY[type(node.op)](left, right)
            if isinstance(result, complex):
                raise ValueError("the result is a complex number")
            if isinstance(result, int) and result.bit_length() > MAX_INT_BITS:
                raise ValueError("intermediate result is too large")
            return result
        if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
            return _UNARY[type(node.op)](self.visit(node.operand))
        if isinstance(node, ast.Name):
            if node.id in self.names:
                return self.names[node.id]
            raise ValueError(f"name {node.id!r} is not allowed; known constants: {', '.join(sorted(self.names))}")
        if isinstance(node, ast.Call):
            return self._call(node)
        raise ValueError(f"{type(node).__name__} is not allowed in an arithmetic expression")

    def _call(self, node: ast.Call) -> Any:
        if not isinstance(node.func, ast.Name) or node.func.id not in self.functions:
            shown = node.func.id if isinstance(node.func, ast.Name) else type(node.func).__name__
            raise ValueError(f"function {shown!r} is not allowed; allowed: {', '.join(FUNCTION_NAMES)}")
        if node.keywords:
            raise ValueError("keyword arguments are not allowed")
        name = node.func.id
        args = [self.visit(a) for a in node.args]
        if self.degrees and name in _TRIG:
            args = [math.radians(a) for a in args]
        try:
            result = self.functions[name](*args)
        except TypeError as exc:
            raise ValueError(f"{name}(): {exc}") from None
        if self.degrees and name in _INV_TRIG:
            result = math.degrees(result)
        if isinstance(result, int) and result.bit_length() > MAX_INT_BITS:
            raise ValueError(f"the result of {name}() is too large")
        return result


def evaluate(expression: str, *, degrees: bool = False, variables: dict[str, float] | None = None) -> int | float:
    """Value of an arithmetic expression (numbers, + - * / // % **, ^ as power, whitelisted functions)."""
    text = str(expression).strip().replace("^", "**").replace("×", "*").replace("÷", "/")
    if not text:
        raise ValueError("expression is empty")
    if len(text) > MAX_LENGTH:
        raise ValueError(f"expression longer than {MAX_LENGTH} characters")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise ValueError(f"invalid expression: {exc.msg}") from None
    if sum(1 for _ in ast.walk(tree)) > MAX_NODES:
        raise ValueError("expression is too complex")
    try:
        result = _Evaluator(degrees, dict(variables or {})).visit(tree)
    except (OverflowError, ZeroDivisionError) as exc:
        raise ValueError(f"cannot compute: {exc}") from None
    except (ValueError, ArithmeticError) as exc:
        raise ValueError(str(exc)) from None
    if isinstance(result, float) and not math.isfinite(result):
        raise ValueError("the result is not a finite number")
    return result
