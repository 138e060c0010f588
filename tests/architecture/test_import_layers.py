"""The package's imports run one way: no import circle, no layer importing a layer above it.

Walks every module of `langgraph_anytool` (imports at module level, inside functions and under
`if TYPE_CHECKING:` alike: a type-only import still ties two modules' designs) and checks the layer table
below, which docs/architecture.md draws. A failure names the two modules of the offending import.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import langgraph_anytool

PACKAGE = Path(langgraph_anytool.__file__).resolve().parent
NAME = "langgraph_anytool"

# top → bottom. A module belongs to the layer of its longest listed prefix; it may import its own layer
# (if that makes no circle) and every layer below it, never one above.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("public face", ("",)),  # langgraph_anytool/__init__.py: re-exports, may import everything
    ("cli", ("cli",)),
    ("eval, integrations", ("eval", "integrations")),
    ("graphs", ("graphs",)),
    ("nodes", ("nodes",)),
    ("runtime", ("runtime",)),
    ("models, offline", ("models", "offline")),
    ("tools", ("tools",)),
    ("catalog", ("catalog",)),
    # bottom modules; models/profiles is a table of model facts that config.py validates overrides against,
    # so it sits here although it lives in models/ (it imports nothing of the package); paper_prompts reads the
    # authors' prompts from a checkout, which config.py validates `prompts_from` with
    ("bottom", ("config", "context", "state", "protocol", "sanitize", "render", "text", "chat", "viz", "_compat", "install", "examples",
                "models.profiles", "paper_prompts")),
)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, modules: set[str]) -> dict[str, int]:
    """The package modules `path` imports (each with the line of one such import)."""
    me = module_name(path)
    pkg = me if path.name == "__init__.py" else me.rpartition(".")[0]
    found: dict[str, int] = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = pkg.split(".")[: len(pkg.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            names = [base] + [f"{base}.{a.name}" for a in node.names]
        for n in names:
            while n and n not in modules:
                n = n.rpartition(".")[0]
            if n and n != me and not me.startswith(n + "."):
                found.setdefault(n, node.lineno)
    return found


def graph() -> dict[str, dict[str, int]]:
    files = sorted(PACKAGE.rglob("*.py"))
    modules = {module_name(p) for p in files}
    return {module_name(p): imports_of(p, modules) for p in files}


def layer_of(module: str) -> int:
    rel = module[len(NAME) + 1:] if module != NAME else ""
    best, best_len = len(LAYERS) - 1, -1
    for i, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (rel == prefix or rel.startswith(prefix + ".") or prefix == "") and len(prefix) > best_len:
                if prefix == "" and rel != "":
                    continue
                best, best_len = i, len(prefix)
    if best_len < 0:
        raise AssertionError(f"{module} is in no layer of LAYERS: add its folder to the table "
                             "(and to docs/architecture.md)")
    return best


def circles(g: dict[str, dict[str, int]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    for root in sorted(g):
        if root in index:
            continue
        work = [(root, iter(sorted(g[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(g.get(w, {})))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    x = stack.pop()
                    on.discard(x)
                    comp.append(x)
                    if x == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def test_every_module_has_a_layer() -> None:
    for module in graph():
        layer_of(module)


def test_no_import_circles() -> None:
    g = graph()
    problems = []
    for comp in circles(g):
        members = set(comp)
        a, b = next((a, b) for a in comp for b in sorted(g[a]) if b in members)
        problems.append(f"circle of {len(comp)} ({', '.join(comp)}), e.g. {a} imports {b} (line {g[a][b]})")
    assert not problems, "\n".join(problems)


def test_no_upward_imports() -> None:
    g = graph()
    problems = []
    for a, targets in sorted(g.items()):
        for b, line in sorted(targets.items()):
            if layer_of(b) < layer_of(a):
                problems.append(f"{a} ({LAYERS[layer_of(a)][0]}) imports {b} ({LAYERS[layer_of(b)][0]}), "
                                f"line {line}")
    assert not problems, "upward imports:\n" + "\n".join(problems)


def test_nodes_never_import_graphs_and_offline_never_imports_nodes() -> None:
    g = graph()
    bad = [f"{a} imports {b}" for a, ts in g.items() for b in ts
           if (a.startswith(f"{NAME}.nodes") and b.startswith(f"{NAME}.graphs"))
           or (a.startswith(f"{NAME}.offline") and b.startswith(f"{NAME}.nodes"))]
    assert not bad, "\n".join(bad)


def test_at_most_ten_root_modules() -> None:
    root = sorted(p.stem for p in PACKAGE.glob("*.py"))
    assert len(root) <= 10, f"{len(root)} modules at the package root: {', '.join(root)}"


@pytest.mark.parametrize(("importer", "imported", "upward"), [
    ("langgraph_anytool.catalog.catalog", "langgraph_anytool.tools.pipeline", True),
    ("langgraph_anytool.tools.pipeline", "langgraph_anytool.catalog.catalog", False),
    ("langgraph_anytool.models.profiles", "langgraph_anytool.config", False),
    ("langgraph_anytool.config", "langgraph_anytool.models.llm", True),
    ("langgraph_anytool.nodes.solver.tree", "langgraph_anytool.graphs.solver", True),
])
def test_the_layer_table_orders_known_pairs(importer: str, imported: str, upward: bool) -> None:
    """The checker itself: an import from a lower layer to a higher one is flagged, the other way is not."""
    assert (layer_of(imported) < layer_of(importer)) is upward


def test_the_circle_finder_finds_a_circle() -> None:
    assert circles({"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}, "d": {"a": 1}}) == [["a", "b", "c"]]
    assert circles({"a": {"b": 1}, "b": {}}) == []
