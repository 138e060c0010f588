"""Fake checkouts for tests and examples: the files a `BookSpec` reads, laid out as in the authors' repository, each
constant holding a short text written here (never the authors') with exactly the placeholders the spec expects.

    root = write_fake_checkout(tmp_path / "AnyTool", "anytool")
    AnyToolConfig.paper(prompts_from=str(root))

Every text starts with `FAKE <slot>` and shows each placeholder as `name=<value>`, so a test can check that the text
reached the model and how its placeholders were filled, e.g. "FAKE meta_system categories=['Weather']".
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from .anytool import SPEC as ANYTOOL
from .book import BookSpec, Slot
from .oppo import SPEC as OPPO
from .tooleval import SPEC as TOOLEVAL
from .umi import RUN_SPEC as UMI_RUN
from .umi import SPEC as UMI

# a fake ToolEval config.yaml's completion settings: other values than the release's (1000, 0.2, 10), so a test
# tells the checkout's values from the built-in ones
FAKE_SETTINGS: Mapping[str, int | float] = {"max_tokens": 900, "temperature": 0.3, "timeout": 11}
SPECS: Mapping[str, BookSpec] = {"anytool": ANYTOOL, "oppo": OPPO, "tooleval": TOOLEVAL, "umi": UMI,
                           "umi_run": UMI_RUN}
_ROLE = re.compile(r"^(user|tool)\[(\d+)\]$")
_NTH = re.compile(r"^(.+)\[(\d+)\]$")  # return[i], target[i]
_SUBSCRIPT = re.compile(r"^([A-Za-z_]\w*)\[(['\"])(.*)\2\]$")


def fake_text(slot_name: str, slot: Slot) -> str:
    """The fake text of a slot: `FAKE <slot>` and `name={name}` per placeholder (the spec's form for its mode)."""
    words = [f"FAKE {slot_name}"]
    for authors, _ours in slot.names:
        words.append(f"{authors}={{{authors}}}")
    return " ".join(words)


def _py_string(text: str, fstring: bool) -> str:
    """Python source of `text`; an f-string keeps `{expr}` as expressions."""
    if not fstring:
        return repr(text)
    return "f" + repr(text)


class _Module:
    """Python source being put together: module-level assignments and functions/methods with their bodies."""

    def __init__(self) -> None:
        self.top: list[str] = []
        self.dicts: dict[str, dict[str, str]] = {}
        self.scopes: dict[str, list[str]] = {}  # "Class.method" / "function" -> body lines

    def scope(self, name: str) -> list[str]:
        return self.scopes.setdefault(name, [])

    def source(self) -> str:
        lines = ["# a fake checkout file written by langgraph_anytool.paper_prompts.testing (not the authors' text)"]
        lines += self.top
        for name, items in self.dicts.items():
            lines.append(f"{name} = {{" + ", ".join(f"{k!r}: {v}" for k, v in items.items()) + "}")
        classes: dict[str, list[tuple[str, list[str]]]] = {}
        for scope, body in self.scopes.items():
            cls, _, method = scope.rpartition(".")
            classes.setdefault(cls, []).append((method, body))
        for cls, methods in classes.items():
            indent = "    " if cls else ""
            if cls:
                lines.append(f"class {cls}:")
            for method, body in methods:
                lines.append(f"{indent}def {method}({'self, ' if cls else ''}*args, **kwargs):")
                lines += [f"{indent}    {b}" for b in body] or [f"{indent}    pass"]
        return "\n".join(lines) + "\n"


def _place(module: _Module, locator: str, value_src: str) -> None:
    scope, sep, what = locator.partition(":")
    if not sep:
        sub = _SUBSCRIPT.match(locator)
        if sub:
            module.dicts.setdefault(sub.group(1), {})[sub.group(3)] = value_src
        else:
            module.top.append(f"{locator} = {value_src}")
        return
    body = module.scope(scope)
    role, nth = _ROLE.match(what), _NTH.match(what)
    if role:
        line = "messages.append({'role': '" + role.group(1) + "', 'content': %s})"
        index = int(role.group(2))
    elif nth:
        line = "return %s" if nth.group(1) == "return" else nth.group(1) + " = %s"
        index = int(nth.group(2))
    else:
        body.append(f"{what} = {value_src}")
        return
    have = sum(1 for b in body if b.startswith(line.split("%s")[0]))
    if have > index:
        raise ValueError(f"{locator}: place a scope's indexed slots in increasing order")
    body += [line % "other"] * (index - have) + [line % value_src]


def write_fake_checkout(root: str | Path, repo: str, *, texts: Mapping[str, str] | None = None) -> Path:
    """Write a fake checkout of `repo` ("anytool", "oppo", "tooleval", "umi" or "umi_run") under `root` and return `root`.

    `texts` replaces the fake text of some slots (by slot name), e.g. to test a constant whose placeholders
    differ from the expected ones."""
    spec = SPECS[repo]
    base = Path(root)
    modules: dict[str, _Module] = {}
    evaluators: dict[str, dict[str, str]] = {}
    for slot_name, slot in spec.slots:
        text = (texts or {}).get(slot_name, fake_text(slot_name, slot))
        if slot.kind == "tooleval":
            evaluators.setdefault(slot.file, {})[slot.locator] = text
            continue
        fstring = slot.mode == "literal" and ":" in slot.locator
        module = modules.setdefault(slot.file, _Module())
        _place(module, slot.locator, _py_string(text, fstring))
    for name, rel, locator in spec.literals:
        value: Any = ({"type": "string", "description": "FAKE reason property"} if name == "reason_property" else
                      {"name": "Finish", "description": "FAKE solver_finish function",
                       "parameters": {"type": "object", "properties": {
                           "return_type": {"type": "string", "enum": ["give_answer", "give_up_and_restart", "give_up"]},
                           "final_answer": {"type": "string", "description": "FAKE final_answer"},
                           "reason": {"type": "string", "description": "FAKE reason"}},
                           "required": ["return_type"]}} if name == "solver_finish" else
                      {"name": "Finish" if name == "agent_finish" else locator.removesuffix("_function"),
                       "description": f"FAKE {name} function",
                       "parameters": {"type": "object", "properties": {"FAKE_arg": {"type": "null"}}}}
                      if name.startswith("agent_") else
                      {"name": "Finish", "description": "FAKE finish function",
                       "parameters": {"type": "object", "properties": {"answer": {"type": "string"},
                                                                       "reason": {"type": "string"}},
                                      "required": ["answer"]}})
        _place(modules.setdefault(rel, _Module()), locator, repr(value))
    for rel, module in modules.items():
        path = base / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(module.source(), encoding="utf-8")
    for directory, sections in evaluators.items():
        folder = base / directory
        folder.mkdir(parents=True, exist_ok=True)
        template = "\n".join(f"<function>\n<name>{name}</name>\n<description>\n{text}\n</description>\n</function>"
                             for name, text in sections.items())
        (folder / "template.txt").write_text(template + "\n", encoding="utf-8")
        labels = {"check_task_solvable": ("task_status", ["Unsure", "Unsolvable", "Solvable"])}
        functions = []
        for name in sections:
            key, enum = labels.get(name, ("answer_status", ["Unsure", "Unsolved", "Solved"]))
            functions.append({"name": name, "description": f"FAKE {name} function",
                              "parameters": {"type": "object", "properties": {key: {"type": "string", "enum": enum}},
                                             "required": [key]}})
        config = {"evaluator_name": folder.name, "registered_cls_name": "ReinforceToolLearningEvaluator",
                  "prompt_template": "template.txt", "completions_kwargs": {"model": "fake", **FAKE_SETTINGS, "functions": functions}}
        (folder / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    marker = base / spec.marker
    if not marker.exists():
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text("# marker of a fake checkout\n", encoding="utf-8")
    return base


__all__ = ["FAKE_SETTINGS", "SPECS", "fake_text", "write_fake_checkout"]
