"""A `PromptBook`: the authors' prompts of one repository, loaded from the user's checkout by a `BookSpec` (which
constant feeds which of our prompts, and which of our values fills each of its placeholders).

A book is loaded once per checkout state: the cache key holds every file's path, size and modification time, so an
edited file is read again. Loading refuses, in one line naming the file and the constant, a path that is not a
checkout, a missing file or constant, a file that is not valid Python, and a constant whose placeholders differ
from the ones the spec expects.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from ..sanitize.files import DataFileError, loads_yaml
from .source import Checkout, Mode, PromptSourceError, Template, expect_placeholders, template_from_text

Kind = Literal["python", "tooleval"]


@dataclass(frozen=True)
class Slot:
    """Where one of our prompts comes from in the checkout, and how its placeholders map to our values.

    kind "python": `locator` in the Python file `file` (`source.PythonFile.node`); kind "tooleval": the
    `<function>` named `locator` in the template of the ToolEval evaluator directory `file` (its `config.yaml`
    names the template). `names` maps each of the authors' placeholders to the name of our value."""

    file: str
    locator: str
    mode: Mode
    names: tuple[tuple[str, str], ...] = ()
    use: str = ""  # where the text goes (for the docs and errors)
    kind: Kind = "python"


@dataclass(frozen=True)
class BookSpec:
    """One repository's prompts: the slots, and literal data (function schemas) read beside them."""

    repo: str
    marker: str  # a file every clone has (else the path is not a checkout)
    slots: tuple[tuple[str, Slot], ...]
    literals: tuple[tuple[str, str, str], ...] = ()  # (name, file, locator), read with ast.literal_eval


@dataclass(frozen=True)
class PromptBook:
    """The authors' prompts of one checkout, ready to fill with our values."""

    repo: str
    root: str
    templates: Mapping[str, Template]
    names: Mapping[str, Mapping[str, str]]  # slot -> the authors' placeholder -> our value name
    data: Mapping[str, Any]  # literal data: function schemas of the spec, ToolEval's functions
    files: Mapping[str, str]  # relative path -> sha256

    def fill(self, slot: str, **values: object) -> str:
        """The slot's text with its placeholders filled from our `values` (by our names)."""
        mapping = self.names[slot]
        return self.templates[slot].fill({authors: values[ours] for authors, ours in mapping.items()})

    def provenance(self) -> dict[str, Any]:
        """{"repo", "path", "files": {relative path: sha256}}: which prompt files ran."""
        return {"repo": self.repo, "path": self.root, "files": dict(self.files)}

    @property
    def key(self) -> str:
        """A fingerprint of the prompt files (repo and each file's sha256), for cache keys."""
        return hashlib.sha256(json.dumps([self.repo, sorted(self.files.items())]).encode()).hexdigest()


def ours_provenance() -> dict[str, Any]:
    """The provenance record of a run with our own prompts."""
    return {"repo": "langgraph-anytool", "path": None, "files": {}}


# ------------------------------------------------------------------------------------------------ ToolEval
_FUNCTION = re.compile(r"<function>(.*?)</function>", re.DOTALL)
_NAME = re.compile(r"<name>(.*?)</name>", re.DOTALL)
_DESCRIPTION = re.compile(r"<description>(.*?)</description>", re.DOTALL)


def tooleval_evaluator(checkout: Checkout, directory: str) -> tuple[dict[str, str], dict[str, Any], str]:
    """A ToolEval evaluator directory as `OpenAINormalizedEvaluator.__init__` reads it (StableToolBench / ToolBench
    `toolbench/tooleval/evaluators/registered_cls/tooleval.py`): `config.yaml` (YAML, read as data) names the
    template file, whose `<function><name>N</name><description>D</description></function>` sections are the
    prompts (D as written); the functions' schemas are `completions_kwargs.functions`. Returns (name → text,
    name → schema, the template's relative path)."""
    cfg_rel = f"{directory}/config.yaml"
    try:
        config = loads_yaml(checkout.text(cfg_rel), source=str(checkout.root / cfg_rel))
    except DataFileError as exc:
        raise PromptSourceError(str(exc)) from None
    if not isinstance(config, Mapping) or not isinstance(config.get("prompt_template"), str):
        raise PromptSourceError(f"{checkout.root / cfg_rel}: no prompt_template")
    template_rel = f"{directory}/{config['prompt_template']}"
    text = checkout.text(template_rel)
    sections: dict[str, str] = {}
    for body in _FUNCTION.findall(text):
        name, description = _NAME.findall(body), _DESCRIPTION.findall(body)
        if name and description:
            sections[name[0]] = description[0]
    kwargs = config.get("completions_kwargs") if isinstance(config.get("completions_kwargs"), Mapping) else {}
    schemas = {str(f.get("name")): dict(f) for f in (kwargs or {}).get("functions") or [] if isinstance(f, Mapping)}
    schemas[SETTINGS_KEY] = completion_settings(kwargs or {}, f"{checkout.root / cfg_rel}: completions_kwargs")
    return sections, schemas, template_rel


# `completions_kwargs` entries sent with every evaluator request besides `model` (the user's evaluator picks it)
# and `functions` (the forced function's): `registered_cls/tooleval.py OpenAINormalizedEvaluator.function_call`,
# `completion_kwargs = deepcopy(self.eval_config['completions_kwargs'])`, then `self.opr.request(**completion_kwargs)`
SETTINGS_KEY = "completion_settings"
SETTING_FIELDS: Mapping[str, tuple[type, ...]] = MappingProxyType(
    {"max_tokens": (int,), "temperature": (int, float), "timeout": (int, float)})


def completion_settings(kwargs: Mapping[str, Any], where: str) -> dict[str, int | float]:
    """The settings of a ToolEval `completions_kwargs` mapping (`SETTING_FIELDS` that are present: an absent one
    is not sent, as the authors' request then lacks it), refused in one line when one is not a non-negative number
    (a positive one for `max_tokens` and `timeout`) or when an entry we cannot send is present."""
    out: dict[str, int | float] = {}
    unknown = sorted(str(k) for k in kwargs if k not in SETTING_FIELDS and k not in ("model", "functions"))
    if unknown:
        raise PromptSourceError(f"{where}: {', '.join(unknown)}: not a setting this evaluator can send (known: "
                                f"{', '.join(SETTING_FIELDS)}, model, functions)")
    for name, types in SETTING_FIELDS.items():
        if name not in kwargs:
            continue
        value = kwargs[name]
        if isinstance(value, bool) or not isinstance(value, int | float) or not isinstance(value, types) \
                or value < 0 or (name != "temperature" and value == 0):
            raise PromptSourceError(f"{where}: {name}: {value!r} is not a valid value")
        out[name] = value
    return out


# ------------------------------------------------------------------------------------------------ loading
def _stamp(root: Path, spec: BookSpec) -> tuple[tuple[str, int, int], ...]:
    files = {spec.marker, *(s.file for _, s in spec.slots if s.kind == "python"), *(f for _, f, _ in spec.literals)}
    dirs = {s.file for _, s in spec.slots if s.kind == "tooleval"}
    paths = sorted(files | {f"{d}/{n}" for d in dirs for n in ("config.yaml", "template.txt")})
    out = []
    for rel in paths:
        try:
            st = (root / rel).stat()
            out.append((rel, st.st_mtime_ns, st.st_size))
        except OSError:
            out.append((rel, -1, -1))
    return tuple(out)


def load_book(spec: BookSpec, root: str | Path) -> PromptBook:
    """The book of `spec` from the checkout at `root` (cached while its files are unchanged)."""
    path = Path(root).expanduser()
    resolved = path.resolve() if path.is_dir() else path
    return _load(spec, str(resolved), _stamp(resolved, spec))


@functools.lru_cache(maxsize=16)
def _load(spec: BookSpec, root: str, stamp: tuple[tuple[str, int, int], ...]) -> PromptBook:
    checkout = Checkout.open(root, spec.repo, spec.marker)
    templates: dict[str, Template] = {}
    names: dict[str, Mapping[str, str]] = {}
    data: dict[str, Any] = {}
    evaluators: dict[str, tuple[dict[str, str], dict[str, Any], str]] = {}
    for slot_name, slot in spec.slots:
        if slot.kind == "tooleval":
            if slot.file not in evaluators:
                evaluators[slot.file] = tooleval_evaluator(checkout, slot.file)
            sections, schemas, template_rel = evaluators[slot.file]
            where = f"{checkout.root / template_rel}: <function> {slot.locator}"
            if slot.locator not in sections:
                raise PromptSourceError(f"{where}: no such function in the template")
            if slot.locator not in schemas:
                raise PromptSourceError(f"{checkout.root / slot.file / 'config.yaml'}: completions_kwargs.functions "
                                        f"has no {slot.locator}")
            template = template_from_text(sections[slot.locator], slot.mode, where)
            data[f"function:{slot.locator}"] = schemas[slot.locator]
            data[SETTINGS_KEY] = MappingProxyType(schemas[SETTINGS_KEY])
        else:
            template = checkout.python(slot.file, slot.locator).template(slot.locator, slot.mode)
        templates[slot_name] = expect_placeholders(template, [a for a, _ in slot.names])
        names[slot_name] = MappingProxyType(dict(slot.names))
    for name, rel, locator in spec.literals:
        data[name] = checkout.python(rel, locator).literal(locator)
    return PromptBook(spec.repo, str(checkout.root), MappingProxyType(templates), MappingProxyType(names),
                      MappingProxyType(data), MappingProxyType(dict(sorted(checkout.files.items()))))


def slot_table(spec: BookSpec) -> list[tuple[str, str, str, str]]:
    """(our prompt, file, constant, placeholders → our values) rows, for the docs."""
    rows = []
    for slot_name, slot in spec.slots:
        mapping = ", ".join(f"{{{a}}} ← {o}" for a, o in slot.names) or "none"
        rows.append((slot_name, slot.file, slot.locator, mapping))
    return rows
