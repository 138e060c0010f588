"""The authors' side of `scripts/request_diff.py`, run in an isolated child interpreter.

    python -I scripts/request_diff_authors.py CASE CLONE < inputs.json > result.json

`request_diff.py` starts this file with `python -I` (no environment variables, no user site, not even the
script's folder on `sys.path`), its working folder a fresh temporary one, and gives it one case's inputs as JSON on
stdin. Here, and only here, the authors' request-building code is taken from the clone's files (`ast`: a function
or method alone, its decorators dropped; module-level assignments and classes by name) and run, with their client
replaced by a recorder of what it would send. The result goes back on stdout as JSON ({"sent": [...], ...}).

What runs: source code from the clone named on the command line, and nothing else: never a model's output, an
evaluator's reply or a data file. This file imports the standard library alone (and `yaml`, `pydantic` where the
authors' files need them), never langgraph_anytool: each side's code runs in its own interpreter.
"""

from __future__ import annotations

import ast
import copy
import json
import os
import sys
import types
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

# ------------------------------------------------------------------------------------------------ running their code


def function_node(tree: ast.Module, name: str) -> ast.FunctionDef:
    """The function (or "Class.method") `name` of `tree`, its decorators dropped (tenacity's retry: the request is
    built once here)."""
    scope: Any = tree
    for part in name.split("."):
        scope = next((n for n in scope.body if isinstance(n, ast.ClassDef | ast.FunctionDef) and n.name == part), None)
        if scope is None:
            raise LookupError(f"no function {name!r}")
    if not isinstance(scope, ast.FunctionDef):
        raise LookupError(f"{name!r} is not a function")
    node = copy.deepcopy(scope)
    node.decorator_list = []
    return node


def authors_code(path: Path, functions: list[str], namespace: dict[str, Any], assigns: tuple[str, ...] = (),
                 classes: tuple[str, ...] = ()) -> dict[str, Any]:
    """`functions` ("name" or "Class.method"), the module-level assignments `assigns` and the classes `classes` of
    the authors' file `path`, run in `namespace` (their imports replaced by what it holds); returns it, each
    function under its own name (a method under "Class.method")."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in tree.body:
        if (isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id in assigns for t in node.targets)) \
                or (isinstance(node, ast.ClassDef) and node.name in classes):
            if isinstance(node, ast.ClassDef):
                node.decorator_list = []
            exec(compile(ast.Module([node], []), str(path), "exec"), namespace)
    for name in functions:
        fn = function_node(tree, name)
        local: dict[str, Any] = {}
        exec(compile(ast.Module([fn], []), str(path), "exec"), namespace, local)
        namespace[name] = local[fn.name]
        if "." not in name:
            namespace[fn.name] = local[fn.name]
    return namespace


def statement(path: Path, function: str, test: Callable[[ast.stmt], bool]) -> ast.Module:
    """The first statement of `function` (at its top level) of the authors' file `path` for which `test` holds, as a
    module to run: a step of a long function (infer_pipeline.py `infer`'s loop over its samples) run alone."""
    fn = function_node(ast.parse(path.read_text(encoding="utf-8")), function)
    found = next((node for node in fn.body if test(node)), None)
    if found is None:
        raise LookupError(f"{path}: {function} has no such statement")
    return ast.Module([found], [])


# ------------------------------------------------------------------------------------------------ the cases
def umi_infer(clone: Path, inputs: Mapping[str, Any]) -> dict[str, Any]:
    """α-UMi's role inputs (X-PLUG/Multi-LLM-Agent GLPFT/inference_utils/toolbench/infer_pipeline.py):
    `build_infer_samples(data_args)` on the data file `inputs["data"]` (written here, in the child's own folder),
    each sample's planner input `model_input`; then `infer()`'s loop `for sample in infer_samples:` (run alone, its
    models left out) on the planner predictions `inputs["predictions"]` (one per sample, the scripted planner
    reply), which writes `model_input_for_caller` or `model_input_for_summarizer`. The prompts are
    `GLPFT/utils/prompt_lib.py` `prompt_dict`, run from the clone."""
    pipeline = clone / "GLPFT/inference_utils/toolbench/infer_pipeline.py"
    ns: dict[str, Any] = {"json": json, "os": os, "copy": copy, "print": lambda *a, **k: None,
                          "rank0_print": lambda *a, **k: None}
    authors_code(clone / "GLPFT/utils/prompt_lib.py", [], ns, assigns=("prompt_dict",))
    authors_code(pipeline, ["nested_load_test_data", "build_infer_samples"], ns)
    data = Path("umi_data.json")
    data.write_text(json.dumps(inputs["data"]), encoding="utf-8")
    args = types.SimpleNamespace(data_path=str(data), num_infer_samples=-1, max_input_length=1750,
                                 planner_prompt_type="toolbench_planner", caller_prompt_type="toolbench_caller",
                                 summarizer_prompt_type="toolbench_summarizer")
    samples = ns["build_infer_samples"](args)
    planner = [s["model_input"] for s in samples]
    predictions = list(inputs["predictions"])
    samples = samples[: len(predictions)]
    # infer()'s first loop over the planner's outputs (`for i, o in enumerate(outputs)`: the decoded text cleaned
    # up, stored as `predictions`), its tokenizer's `decode` giving the scripted text back
    tokenizer = types.SimpleNamespace(decode=lambda o, skip_special_tokens=True: o)
    run: dict[str, Any] = {**ns, "infer_samples": samples, "outputs": predictions, "planner_tokenizer": tokenizer,
                           "data_args": args, "infer_samples_planner": [], "infer_samples_caller": [],
                           "infer_samples_summarizer": []}
    cleanup = statement(pipeline, "infer", lambda node: isinstance(node, ast.For) and isinstance(node.target, ast.Tuple)
                        and isinstance(node.iter, ast.Call) and ast.unparse(node.iter) == "enumerate(outputs)")
    exec(compile(cleanup, str(pipeline), "exec"), run)
    loop = statement(pipeline, "infer", lambda node: isinstance(node, ast.For) and isinstance(node.target, ast.Name)
                     and node.target.id == "sample" and isinstance(node.iter, ast.Name) and node.iter.id == "infer_samples")
    exec(compile(loop, str(pipeline), "exec"), run)
    second = [s.get("model_input_for_caller", s.get("model_input_for_summarizer")) for s in samples]
    roles = ["caller" if "model_input_for_caller" in s else "summarizer" if "model_input_for_summarizer" in s else None
             for s in samples]
    return {"planner": planner, "second": second, "roles": roles}


CASES: dict[str, Callable[[Path, Mapping[str, Any]], dict[str, Any]]] = {"umi_infer": umi_infer}


def main(argv: list[str]) -> int:
    case, clone = argv[0], Path(argv[1])
    inputs = json.loads(sys.stdin.read() or "{}")
    try:
        result = CASES[case](clone, inputs)
    except Exception as exc:  # one line for the parent (their code, or a file that is not theirs)
        print(f"{type(exc).__name__}: {exc}".replace("\n", " "), file=sys.stderr)
        return 1
    json.dump(result, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
