"""Code execution (a sandboxed Python runner) and static Python inspection."""

from __future__ import annotations

import ast
import json
import math
import secrets
import sys
from typing import Any

from ._common import as_float
from ._registry import ARRAY, NUMBER, STRING, ApiSpec, CategorySpec, P, ToolSpec
from ._sandbox import SandboxLimits, run_python, run_python_with_tests

MAX_CODE = 100_000


def _code(value: Any, name: str = "code") -> str:
    s = value if isinstance(value, str) else str(value)
    if not s.strip():
        raise ValueError(f"{name} must not be empty")
    if len(s) > MAX_CODE:
        raise ValueError(f"{name} is longer than {MAX_CODE} characters")
    return s


def _limits(timeout_seconds: float) -> SandboxLimits:
    t = as_float(timeout_seconds, "timeout_seconds")
    if not 0.1 <= t <= 30:
        raise ValueError("timeout_seconds must be between 0.1 and 30")
    return SandboxLimits(timeout_s=t, cpu_s=max(1, math.ceil(t)))


def _parse(code: str, mode: str = "exec") -> ast.AST:
    try:
        return ast.parse(code, mode=mode)
    except SyntaxError as exc:
        raise ValueError(f"syntax error at line {exc.lineno}, column {exc.offset}: {exc.msg}") from None
    except (RecursionError, MemoryError):
        raise ValueError("code is nested too deeply to parse") from None


# ------------------------------------------------------------------------------ sandbox
def run_python_code(code: str, stdin: str = "", timeout_seconds: float = 5.0) -> dict[str, Any]:
    """Run a Python 3 script in an isolated process (no network, CPU/memory/time limits)."""
    return run_python(_code(code), stdin=str(stdin), limits=_limits(timeout_seconds))


def evaluate_python_expression(expression: str, timeout_seconds: float = 5.0) -> dict[str, Any]:
    """Value (repr) and type of one Python expression, computed in the sandbox."""
    expr = _code(expression, "expression")
    _parse(expr, "eval")
    marker = secrets.token_hex(8)
    script = (f"import json as _json\n_value = (\n{expr}\n)\n"
              f"print({marker!r} + _json.dumps({{'type': type(_value).__name__, 'repr': repr(_value)}}))\n")
    run = run_python(script, limits=_limits(timeout_seconds))
    result: dict[str, Any] = {"ok": False, "type": "", "value": "", "error": "", "timed_out": run["timed_out"]}
    for line in run["stdout"].splitlines():
        if line.startswith(marker):
            data = json.loads(line[len(marker):])
            result.update(ok=True, type=data["type"], value=data["repr"])
    if not result["ok"]:
        result["error"] = run["stderr"].strip().splitlines()[-1] if run["stderr"].strip() else "no value produced"
    return result


def run_python_tests(code: str, tests: list[Any], timeout_seconds: float = 10.0) -> dict[str, Any]:
    """Run code, then each test snippet (e.g. 'assert f(2) == 4') separately; report which pass.

    The code runs afresh for each test (its output kept once) in one sandbox, the tests in another, which uses
    the code's objects through proxies (`_sandbox_rpc.py`): every verdict comes from a process the code never
    ran in, gathered by a harness that writes to a descriptor only it holds."""
    src = _code(code)
    if not isinstance(tests, list) or not tests or len(tests) > 100:
        raise ValueError("tests must be a list of 1-100 Python snippets such as 'assert add(1, 2) == 3'")
    snippets = []
    for i, t in enumerate(tests):
        body = _code(str(t), f"tests[{i}]")
        _parse(body)
        snippets.append(body)
    run = run_python_with_tests(src, snippets, limits=_limits(timeout_seconds))
    verdicts = run["verdicts"]
    results = []
    for i, body in enumerate(snippets):
        ok, err = verdicts.get(i, (False, "not run (the code crashed or timed out first)"))
        results.append({"test": body, "passed": ok, "error": err})
    passed = sum(1 for r in results if r["passed"])
    return {"passed": passed, "failed": len(results) - passed, "results": results,
            "stdout": run["stdout"], "stderr": run["stderr"], "timed_out": run["timed_out"]}


def check_python_syntax(code: str) -> dict[str, Any]:
    """Whether code parses as Python 3 (nothing is run), with the error position otherwise."""
    src = _code(code)
    try:
        ast.parse(src)
    except SyntaxError as exc:
        return {"valid": False, "line": exc.lineno or 0, "column": exc.offset or 0, "message": exc.msg,
                "python_version": sys.version.split()[0]}
    except (RecursionError, MemoryError):
        return {"valid": False, "line": 0, "column": 0, "message": "nested too deeply",
                "python_version": sys.version.split()[0]}
    return {"valid": True, "line": 0, "column": 0, "message": "", "python_version": sys.version.split()[0]}


# ------------------------------------------------------------------------------ static inspection
_BLOCKS = (ast.If, ast.For, ast.While, ast.With, ast.Try, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
           ast.AsyncFor, ast.AsyncWith, ast.Match)


def _depth(tree: ast.AST) -> int:
    """Deepest block nesting, walked with an explicit stack (a deep expression that parses must not overflow
    the interpreter's recursion limit here)."""
    deepest = 0
    stack: list[tuple[ast.AST, int]] = [(tree, 0)]
    while stack:
        node, level = stack.pop()
        deepest = max(deepest, level)
        stack.extend((child, level + 1 if isinstance(child, _BLOCKS) else level)
                     for child in ast.iter_child_nodes(node))
    return deepest


def code_statistics(code: str) -> dict[str, Any]:
    """Line counts, numbers of functions/classes/imports and maximum block nesting of Python code."""
    src = _code(code)
    tree = _parse(src)
    lines = src.splitlines()
    nodes = list(ast.walk(tree))
    return {"lines": len(lines), "blank_lines": sum(1 for x in lines if not x.strip()),
            "comment_lines": sum(1 for x in lines if x.strip().startswith("#")),
            "functions": sum(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) for n in nodes),
            "classes": sum(isinstance(n, ast.ClassDef) for n in nodes),
            "imports": sum(isinstance(n, (ast.Import, ast.ImportFrom)) for n in nodes),
            "max_nesting": _depth(tree)}


def list_definitions(code: str) -> dict[str, Any]:
    """Functions and classes defined in Python code, with line, arguments and docstring summary."""
    tree = _parse(_code(code))
    items = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            doc = ast.get_docstring(node) or ""
            args = [a.arg for a in node.args.args] if not isinstance(node, ast.ClassDef) else []
            items.append({"name": node.name, "kind": "class" if isinstance(node, ast.ClassDef) else "function",
                          "line": node.lineno, "arguments": args, "docstring": doc.split("\n", 1)[0]})
    items.sort(key=lambda d: d["line"])
    return {"count": len(items), "definitions": items}


def find_imports(code: str) -> dict[str, Any]:
    """Modules imported by Python code, marking which belong to the standard library."""
    tree = _parse(_code(code))
    mods: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            mods.extend(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            mods.append(node.module)
    unique = list(dict.fromkeys(mods))
    stdlib = sys.stdlib_module_names
    return {"imports": [{"module": m, "top_level": m.split(".")[0], "stdlib": m.split(".")[0] in stdlib}
                        for m in unique],
            "third_party": sorted({m.split(".")[0] for m in unique if m.split(".")[0] not in stdlib})}


# ------------------------------------------------------------------------------ declarations
_SAMPLE = '''import math
from collections import Counter


def area(r):
    """Area of a circle."""
    return math.pi * r ** 2


class Shape:
    def scale(self, k):
        for _ in range(k):
            if k > 1:
                pass
'''


def category() -> CategorySpec:
    """The Code_Execution category."""
    timeout = P("timeout_seconds", NUMBER, "Wall-clock limit in seconds (0.1-30).")
    sandbox = ToolSpec(
        name="Python Sandbox",
        key="python_sandbox",
        description="Executes Python 3 code in an OS sandbox (bubblewrap): no network, no host files, limited "
                    "CPU time, memory (512 MB), processes, output and run time. Returns stdout, stderr, exit code and whether it timed out. "
                    "Also evaluates single expressions, runs assert-style tests and checks syntax.",
        apis=(
            ApiSpec(run_python_code, "Run Python Code",
                    "Run a Python script (print results to stdout); optional text on stdin.",
                    (P("code", STRING, "Python source.",
                       "import statistics\nprint(statistics.median([3, 1, 4, 1, 5]))"),
                     P("stdin", STRING, "Text given on standard input."), timeout),
                    {"stdout": "str", "stderr": "str", "exit_code": "int", "timed_out": "bool", "signal": "str",
                     "duration_s": "float", "stdout_truncated": "bool", "stderr_truncated": "bool"}, method="POST", max_argument_chars=MAX_CODE + 1000,
                    deterministic=False, needs_sandbox=True),
            ApiSpec(evaluate_python_expression, "Evaluate Python Expression",
                    "Compute one Python expression (e.g. 'sorted({3, 1, 2})' or 'sum(i*i for i in range(10))') "
                    "in the sandbox and return its repr and type.",
                    (P("expression", STRING, "Python expression.", "sum(i * i for i in range(10))"), timeout),
                    {"ok": "bool", "type": "str", "value": "str", "error": "str", "timed_out": "bool"},
                    method="POST", max_argument_chars=MAX_CODE + 1000, deterministic=False, needs_sandbox=True),
            ApiSpec(run_python_tests, "Run Python Tests",
                    "Run code defining functions, then each test snippet (e.g. 'assert add(2, 3) == 5') separately; "
                    "reports which tests pass.",
                    (P("code", STRING, "Python source under test.", "def add(a, b):\n    return a + b"),
                     P("tests", ARRAY, "Test snippets.", ["assert add(2, 3) == 5", "assert add(-1, 1) == 0"]),
                     P("timeout_seconds", NUMBER, "Wall-clock limit for the whole run (0.1-30).")),
                    {"passed": "int", "failed": "int",
                     "results": [{"test": "str", "passed": "bool", "error": "str", "_list_length": 2}],
                     "stdout": "str", "stderr": "str", "timed_out": "bool"}, method="POST", max_argument_chars=MAX_CODE + 1000,
                    deterministic=False, needs_sandbox=True),
            ApiSpec(check_python_syntax, "Check Python Syntax",
                    "Check whether code is syntactically valid Python without running it.",
                    (P("code", STRING, "Python source.", "def f(x):\n    return x +\n"),),
                    {"valid": "bool", "line": "int", "column": "int", "message": "str", "python_version": "str"},
                    method="POST", max_argument_chars=MAX_CODE + 1000),
        ),
    )
    inspector = ToolSpec(
        name="Python Code Inspector",
        key="python_code_inspector",
        description="Static analysis of Python source (never executed): line and definition counts, nesting "
                    "depth, functions and classes with their arguments and docstrings, imported modules.",
        apis=(
            ApiSpec(code_statistics, "Code Statistics",
                    "Lines, blank and comment lines, functions, classes, imports and maximum nesting depth.",
                    (P("code", STRING, "Python source.", _SAMPLE),),
                    {"lines": "int", "blank_lines": "int", "comment_lines": "int", "functions": "int", "classes": "int",
                     "imports": "int", "max_nesting": "int"}, method="POST", max_argument_chars=MAX_CODE + 1000),
            ApiSpec(list_definitions, "List Definitions",
                    "Functions and classes with line numbers, argument names and first docstring line.",
                    (P("code", STRING, "Python source.", _SAMPLE),),
                    {"count": "int", "definitions": [{"name": "str", "kind": "str", "line": "int",
                                                      "arguments": ["list of str with length 1"], "docstring": "str",
                                                      "_list_length": 3}]}, method="POST", max_argument_chars=MAX_CODE + 1000),
            ApiSpec(find_imports, "Find Imports", "Modules a piece of Python code imports; stdlib vs third-party.",
                    (P("code", STRING, "Python source.",
                       "import numpy as np\nimport os.path\nfrom requests import get"),),
                    {"imports": [{"module": "str", "top_level": "str", "stdlib": "bool", "_list_length": 3}],
                     "third_party": ["list of str with length 2"]}, method="POST", max_argument_chars=MAX_CODE + 1000),
        ),
    )
    return CategorySpec(name="Code_Execution", description="Sandboxed Python execution and static code inspection.",
                        tools=(sandbox, inspector))
