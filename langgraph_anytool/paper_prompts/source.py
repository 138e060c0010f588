"""Reading prompt text from a checkout of the authors' repository, as data: Python files are parsed with `ast` and
string constants are found by name (never imported or executed); text and YAML files are read as they are.

A prompt is a `Template`: literal text and named placeholders. How the placeholders are found follows how the
authors' code fills the text, per prompt (`Mode`):
- "replace": `text.replace("{name}", value)` (AnyTool, α-UMi): every `{identifier}` in the text is a placeholder
  and everything else stays as written (so `{{failed_reason}}` leaves a brace on each side of the value, as there);
- "format": `text.format(**values)` (ToolEval): `str.format` syntax, `{{` and `}}` are literal braces;
- "literal": an f-string or plain string used as it is (OPPO, the first user messages): its `{expression}` parts
  are the placeholders, named as written (`query`, `self.tools`).

Where a prompt is found (`Locator`, relative to a file):
- `NAME`: a module-level assignment `NAME = <string>`; `NAME[key]`: the value of `key` in a module-level dict literal;
- `scope:target`: the one assignment to `target` (a name or `self.attr`) inside the function or method `scope`
  (`Class.method`, `function`);
- `scope:user[i]` (`scope:tool[i]`): the `content` of the i-th (from 0, in source order) dict literal
  `{"role": "user", ...}` (`"tool"`) inside `scope`;
- `scope:return[i]`: the value of the i-th `return <value>` statement inside `scope` (a function's answer);
- `scope:target[i]`: the i-th assignment to `target` inside `scope` (a name assigned more than once).
A string is a constant, an f-string, a `+` of those (a bare name, attribute or subscript there is a placeholder
named by it, e.g. `templete['description']`), or a
`.replace(...)` call on one: replacing a constant by a constant is applied here; replacing `"{x}"` by anything else
makes `{x}` a placeholder (the authors' code fills it at run time).

Every refusal is one line naming the file and the constant (`PromptSourceError`).

A checkout is data we did not write, read bounded: every file through `Checkout.data` (a regular file inside the
checkout — its real path, symbolic links followed, never outside the checkout's root — of at most
`MAX_FILE_BYTES`); a constant evaluates to at most `MAX_PROMPT_CHARS` characters, and its `.replace(...)` calls do
at most `MAX_REPLACE_WORK` characters of work in all (nine chained `.replace('x', 'xxxxxxxxxx')` calls would make
a 4 MB file 4 TB); a `+` of any number of terms is read without recursion, and a constant nested past Python's
recursion limit is refused in one line.
"""

from __future__ import annotations

import ast
import hashlib
import re
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..sanitize.files import DataFileError, brief, read_bytes
from ..sanitize.paths import path_inside
from ..text import shorten

Mode = Literal["replace", "format", "literal"]

MAX_FILE_BYTES = 4_000_000  # a prompt file larger than this is refused (no release file comes near it)
MAX_PROMPT_CHARS = 1_000_000  # one prompt constant, evaluated (the authors' longest are a few thousand characters)
MAX_REPLACE_WORK = 20_000_000  # characters read and written by one constant's `.replace` calls, in all
_REPLACE_FIELD = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


class PromptSourceError(ValueError):
    """A checkout, file or constant that cannot give the prompt asked for; the message is one line naming the file
    and the constant."""


@dataclass(frozen=True)
class Placeholder:
    """A value the authors' code puts into the text (named as in their code)."""

    name: str


Part = str | Placeholder


@dataclass(frozen=True)
class Template:
    """A prompt read from a checkout: literal text and placeholders, and where it was found (`file: locator`)."""

    where: str
    parts: tuple[Part, ...]

    @property
    def placeholders(self) -> frozenset[str]:
        return frozenset(p.name for p in self.parts if isinstance(p, Placeholder))

    @property
    def text(self) -> str:
        """The text with each placeholder shown as `{name}` (for display)."""
        return "".join(p if isinstance(p, str) else "{" + p.name + "}" for p in self.parts)

    def fill(self, values: Mapping[str, object]) -> str:
        """The text with every placeholder replaced by `str(values[name])` (all placeholders must be given)."""
        missing = self.placeholders - set(values)
        if missing:
            raise KeyError(f"{self.where}: no value for {', '.join(sorted(missing))}")
        return "".join(p if isinstance(p, str) else str(values[p.name]) for p in self.parts)


# ------------------------------------------------------------------------------------------------ text → parts
def _literal_parts(text: str, mode: Mode, where: str) -> list[Part]:
    """The parts of a literal text whose placeholders follow `mode`."""
    if mode == "literal":
        return [text] if text else []
    if mode == "replace":
        out: list[Part] = []
        last = 0
        for m in _REPLACE_FIELD.finditer(text):
            out += [text[last:m.start()], Placeholder(m.group(1))]
            last = m.end()
        out.append(text[last:])
        return [p for p in out if p != ""]
    parts: list[Part] = []
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError as exc:
        raise PromptSourceError(f"{where}: not a str.format template ({exc})") from None
    for literal, name, spec, conversion in parsed:
        if literal:
            parts.append(literal)
        if name is None:
            continue
        if not name.isidentifier() or spec or conversion:
            shown = "{" + name + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}"
            raise PromptSourceError(f"{where}: placeholder {shown} is not a plain name")
        parts.append(Placeholder(name))
    return parts


def template_from_text(text: str, mode: Mode, where: str) -> Template:
    """A template from text read as data (e.g. a ToolEval template.txt section)."""
    return Template(where, tuple(_literal_parts(text, mode, where)))


# ------------------------------------------------------------------------------------------------ ast → parts
@dataclass
class _Raw:
    """A constant text not yet split into placeholders (its mode applies later)."""

    text: str


_Seg = _Raw | Placeholder | str  # str: literal text of an f-string (never split)


@dataclass
class _Budget:
    """The work left for one constant's `.replace` calls (characters read and written)."""

    where: str
    work: int = MAX_REPLACE_WORK

    def replaced(self, segs: Sequence[_Seg], old: str, new: str) -> None:
        """Charge a `.replace(old, new)` over `segs`; refused (one line) when its result would exceed
        `MAX_PROMPT_CHARS` or the constant's work would exceed `MAX_REPLACE_WORK`, before any text is built."""
        texts = [s.text if isinstance(s, _Raw) else s for s in segs if not isinstance(s, Placeholder)]
        before = sum(len(t) for t in texts)
        after = before + sum(t.count(old) for t in texts) * (len(new) - len(old)) if old else before
        if old == "":  # str.replace('', x) puts x between every two characters
            after = before + (before + len(texts)) * len(new)
        if after > MAX_PROMPT_CHARS:
            raise PromptSourceError(f"{self.where}: .replace({brief(old)}, {brief(new)}) makes the "
                                    f"constant {after:,} characters long (at most {MAX_PROMPT_CHARS:,}); refused")
        self.work -= before + after
        if self.work < 0:
            raise PromptSourceError(f"{self.where}: the constant's .replace calls do more than {MAX_REPLACE_WORK:,} "
                                    "characters of work; refused")


def _terms(node: ast.expr) -> list[ast.expr]:
    """The terms of `a + b + c + ...` (a left-leaning tree of any depth), found without recursion."""
    right: list[ast.expr] = []
    while isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        right.append(node.right)
        node = node.left
    return [node, *reversed(right)]


def _expr_segments(node: ast.expr, where: str, top: bool = True, budget: _Budget | None = None) -> list[_Seg]:
    budget = budget if budget is not None else _Budget(where)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [_Raw(node.value)]
    if isinstance(node, ast.JoinedStr):
        out: list[_Seg] = []
        for v in node.values:
            if isinstance(v, ast.Constant) and isinstance(v.value, str):
                out.append(v.value)
            elif isinstance(v, ast.FormattedValue):
                name = ast.unparse(v.value)
                if v.conversion != -1:
                    name += "!" + chr(v.conversion)
                if v.format_spec is not None:
                    name += ":" + ast.unparse(v.format_spec)[2:-1]
                out.append(Placeholder(name))
        return out
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        out = []
        for term in _terms(node):
            out += _expr_segments(term, where, False, budget)
        if sum(len(s.text) if isinstance(s, _Raw) else len(s) for s in out if not isinstance(s, Placeholder)) \
                > MAX_PROMPT_CHARS:
            raise PromptSourceError(f"{where}: the constant is more than {MAX_PROMPT_CHARS:,} characters long; "
                                    "refused")
        return out
    if not top and isinstance(node, ast.Name | ast.Attribute | ast.Subscript):
        return [Placeholder(ast.unparse(node))]
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "replace"
            and len(node.args) == 2 and not node.keywords
            and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
        segs = _expr_segments(node.func.value, where, top, budget)
        old, new = node.args[0].value, node.args[1]
        if isinstance(new, ast.Constant) and isinstance(new.value, str):
            budget.replaced(segs, old, new.value)
            return [_Raw(s.text.replace(old, new.value)) if isinstance(s, _Raw)
                    else s.replace(old, new.value) if isinstance(s, str) else s for s in segs]
        field_match = _REPLACE_FIELD.fullmatch(old)
        if field_match is None:
            raise PromptSourceError(f"{where}: .replace({old!r}, ...) with a value computed at run time is not a "
                                    "'{name}' placeholder")
        return _split_on(segs, old, Placeholder(field_match.group(1)))
    raise PromptSourceError(f"{where}: not a string constant (line {getattr(node, 'lineno', '?')}: "
                            f"{shorten(ast.unparse(node), 60)})")


def _split_on(segs: Sequence[_Seg], token: str, ph: Placeholder) -> list[_Seg]:
    out: list[_Seg] = []
    for s in segs:
        text = s.text if isinstance(s, _Raw) else s if isinstance(s, str) else None
        if text is None or token not in text:
            out.append(s)
            continue
        pieces = text.split(token)
        for i, piece in enumerate(pieces):
            if i:
                out.append(ph)
            if piece:
                out.append(_Raw(piece) if isinstance(s, _Raw) else piece)
    return out


def _template(node: ast.expr, mode: Mode, where: str) -> Template:
    try:
        segments = _expr_segments(node, where)
    except (RecursionError, MemoryError):  # e.g. `'a' + ('a' + ('a' + ...))`, or calls nested as deep
        raise PromptSourceError(f"{where}: the constant nests too deeply to read; refused") from None
    parts: list[Part] = []
    for s in segments:
        parts += _literal_parts(s.text, mode, where) if isinstance(s, _Raw) else [s]
    merged: list[Part] = []
    for p in parts:  # adjacent literals joined
        if isinstance(p, str) and merged and isinstance(merged[-1], str):
            merged[-1] += p
        elif p != "":
            merged.append(p)
    return Template(where, tuple(merged))


# ------------------------------------------------------------------------------------------------ locators
_ROLE = re.compile(r"^(user|tool)\[(\d+)\]$")
_RETURN = re.compile(r"^return\[(\d+)\]$")
_NTH = re.compile(r"^(.+)\[(\d+)\]$")
_SUBSCRIPT = re.compile(r"^([A-Za-z_]\w*)\[(['\"]?)(.*)\2\]$")


def _scope_node(tree: ast.Module, scope: str) -> ast.AST | None:
    node: ast.AST = tree
    for name in scope.split("."):
        body = getattr(node, "body", [])
        found = next((n for n in body if isinstance(n, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
                      and n.name == name), None)
        if found is None:
            return None
        node = found
    return node


def _own_nodes(scope: ast.AST) -> list[ast.AST]:
    """The nodes of a function or class body, not descending into nested functions or classes."""
    out: list[ast.AST] = []
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        n = stack.pop()
        out.append(n)
        if not isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            stack.extend(ast.iter_child_nodes(n))
    return sorted(out, key=lambda n: (getattr(n, "lineno", 0), getattr(n, "col_offset", 0)))


def _const_key(k: ast.expr | None) -> object:
    return k.value if isinstance(k, ast.Constant) else None


def _role_messages(scope: ast.AST, role_name: str) -> list[ast.expr]:
    """The `content` values of the dict literals `{"role": role_name, "content": ...}` inside `scope`."""
    out = []
    for n in _own_nodes(scope):
        if isinstance(n, ast.Dict):
            keys = [_const_key(k) for k in n.keys]
            if "role" in keys and "content" in keys:
                role = n.values[keys.index("role")]
                if isinstance(role, ast.Constant) and role.value == role_name:
                    out.append(n.values[keys.index("content")])
    return out


def _nth(values: list[ast.expr], i: int, where: str, scope: str, what: str) -> ast.expr:
    if i >= len(values):
        raise PromptSourceError(f"{where}: {scope} has {len(values)} {what}, not {i + 1}")
    return values[i]


def _targets(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Assign):
        return [ast.unparse(t) for t in node.targets]
    if isinstance(node, ast.AnnAssign) and node.value is not None:
        return [ast.unparse(node.target)]
    return []


def _module_value(tree: ast.Module, name: str) -> ast.expr | None:
    found = None
    for node in tree.body:
        if name in _targets(node):
            found = node.value  # type: ignore[attr-defined]  # the last assignment at module level wins
    return found


@dataclass
class PythonFile:
    """A Python file of the checkout, parsed (never imported)."""

    path: Path
    rel: str
    sha256: str
    tree: ast.Module

    def _where(self, locator: str) -> str:
        return f"{self.path}: {locator}"

    def node(self, locator: str) -> ast.expr:
        """The expression a locator names (see the module docstring)."""
        where = self._where(locator)
        scope, sep, what = locator.partition(":")
        if not sep:
            sub = _SUBSCRIPT.match(locator)
            name = sub.group(1) if sub else locator
            value = _module_value(self.tree, name)
            if value is None:
                raise PromptSourceError(f"{where}: no module-level constant {name}")
            if sub is None:
                return value
            if not isinstance(value, ast.Dict):
                raise PromptSourceError(f"{where}: {name} is not a dict literal")
            keys = [_const_key(k) for k in value.keys]
            if sub.group(3) not in keys:
                raise PromptSourceError(f"{where}: {name} has no key {sub.group(3)!r}")
            return value.values[keys.index(sub.group(3))]
        node = _scope_node(self.tree, scope)
        if node is None:
            raise PromptSourceError(f"{where}: no function or class {scope}")
        role = _ROLE.match(what)
        if role:
            return _nth(_role_messages(node, role.group(1)), int(role.group(2)), where, scope,
                        f"{role.group(1)} message(s)")
        returned = _RETURN.match(what)
        if returned:
            values = [n.value for n in _own_nodes(node) if isinstance(n, ast.Return) and n.value is not None]
            return _nth(values, int(returned.group(1)), where, scope, "return statement(s) with a value")
        nth = _NTH.match(what)
        if nth:
            values = [n.value for n in _own_nodes(node) if nth.group(1) in _targets(n)]  # type: ignore[attr-defined]
            return _nth(values, int(nth.group(2)), where, scope, f"assignment(s) to {nth.group(1)}")
        values = [n.value for n in _own_nodes(node) if what in _targets(n)]  # type: ignore[attr-defined]
        if len(values) != 1:
            raise PromptSourceError(f"{where}: {scope} assigns {what} {len(values)} times, expected once")
        return values[0]

    def template(self, locator: str, mode: Mode) -> Template:
        return _template(self.node(locator), mode, self._where(locator))

    def literal(self, locator: str) -> Any:
        """A literal value (a dict of a function schema, ...) read with `ast.literal_eval`."""
        try:
            return ast.literal_eval(self.node(locator))
        except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
            raise PromptSourceError(f"{self._where(locator)}: not a literal value") from None


# ------------------------------------------------------------------------------------------------ checkout
def _read(root: Path, rel: str) -> bytes:
    """A file of the checkout at `root`: its real path (symbolic links followed) inside `root`
    (`sanitize.paths.path_inside`), a regular file of at most `MAX_FILE_BYTES` (`sanitize.files.read_bytes`)."""
    path = root / rel
    try:
        real = path_inside(root, *rel.split("/"), what="prompt file")
    except DataFileError as exc:
        raise PromptSourceError(f"{path}: its real path is outside the checkout {root} ({exc.message})") from None
    if not real.exists():
        raise PromptSourceError(f"{path}: no such file (the checkout has no {rel})")
    try:
        return read_bytes(real, max_bytes=MAX_FILE_BYTES, what="prompt file")
    except DataFileError as exc:
        raise PromptSourceError(str(exc)) from None


@dataclass
class Checkout:
    """The user's clone of an authors' repository; every file read through it is hashed for the provenance."""

    root: Path
    repo: str  # e.g. "dyabel/AnyTool"
    files: dict[str, str] = field(default_factory=dict)  # relative path -> sha256 of the bytes read
    _python: dict[str, PythonFile] = field(default_factory=dict)

    @classmethod
    def open(cls, root: str | Path, repo: str, marker: str) -> Checkout:
        """The checkout at `root`, which must be a directory holding `marker` (a file every clone has)."""
        path = Path(root).expanduser()
        if not path.is_dir():
            raise PromptSourceError(f"{path}: not a directory (expected a clone of {repo})")
        if not (path / marker).is_file():
            raise PromptSourceError(f"{path}: not a checkout of {repo} (no {marker})")
        return cls(path.resolve(), repo)

    def data(self, rel: str) -> bytes:
        raw = _read(self.root, rel)
        self.files[rel] = hashlib.sha256(raw).hexdigest()
        return raw

    def text(self, rel: str) -> str:
        raw = self.data(rel)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise PromptSourceError(f"{self.root / rel}: not UTF-8 text (byte {exc.start})") from None

    def python(self, rel: str, wanted: str = "") -> PythonFile:
        """The Python file `rel`, parsed; `wanted` (the constant sought) is named when it is not valid Python."""
        if rel not in self._python:
            text = self.text(rel)
            sought = f", so {wanted} cannot be read" if wanted else ""
            try:
                tree = ast.parse(text, filename=rel)
            except SyntaxError as exc:
                raise PromptSourceError(f"{self.root / rel}: not valid Python (line {exc.lineno}: {exc.msg}){sought}") \
                    from None
            except (RecursionError, MemoryError):
                raise PromptSourceError(f"{self.root / rel}: nests too deeply to parse{sought}") from None
            self._python[rel] = PythonFile(self.root / rel, rel, self.files[rel], tree)
        return self._python[rel]

    def provenance(self) -> dict[str, Any]:
        """{"repo", "path", "files": {relative path: sha256}}: which prompt files ran."""
        return {"repo": self.repo, "path": str(self.root), "files": dict(sorted(self.files.items()))}


def expect_placeholders(template: Template, expected: Sequence[str]) -> Template:
    """`template`, refused (one line) unless its placeholders are exactly `expected`."""
    found, want = template.placeholders, frozenset(expected)
    if found != want:
        def shown(names: frozenset[str]) -> str:
            return ", ".join("{" + n + "}" for n in sorted(names)) or "none"
        raise PromptSourceError(f"{template.where}: placeholders {shown(found)} differ from the expected "
                                f"{shown(want)}")
    return template
