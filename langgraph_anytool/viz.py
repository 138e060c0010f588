"""Pictures of a graph and of a run, drawn offline (the `viz` extra: matplotlib; Graphviz's `dot` for the graph when
it is installed): no web service.

- `draw_graph(graph)`: the compiled graph's structure (`graph.get_graph(xray=True)`), subgraphs framed, conditional
  edges dashed, loops in red; laid out by Graphviz `dot` (each subgraph a cluster) when `dot` is on PATH
  (`apt-get install graphviz`, `brew install graphviz`), else by a simpler layered layout in matplotlib;
  `graph_dot(graph)` is the Graphviz source;
- `draw_agent_tree(out)`: the retriever's agents (meta → category → tool) with status, steps and APIs added;
- `draw_search_tree(out)`: a solver attempt's DFSDT tree: calls per node, backtracked (dead) branches, finish type;
- `usage_frame(out)` / `draw_usage(out)`: model calls and tokens per role as a pandas DataFrame and a bar chart.

Each `draw_*` returns a `Picture` (PNG bytes) that Jupyter shows inline and `.save(path)` writes.
`offline_display(graph)` makes a compiled graph display itself with `draw_graph` (LangGraph's own display asks a
web service to render Mermaid); the package's graph factories apply it.
"""

from __future__ import annotations

import functools
import io
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .install.extras import install_hint
from .text import shorten

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes

STATUS_COLORS = {
    "finished": "#b7e4c7", "running": "#ffe8a3", "stopped": "#f6c9a8", "pending": "#e0e0e0",
    "answer": "#95d5b2", "given_up": "#f4a6a6", "dead": "#d9d9d9", "open": "#cfe2ff",
}


@dataclass(frozen=True)
class Picture:
    """A PNG image: shown inline by Jupyter, written by `save`."""

    png: bytes

    def _repr_png_(self) -> bytes:
        return self.png

    def __repr__(self) -> str:  # not the bytes: a notebook's text output stays short
        width, height = self.size
        return f"<Picture: PNG {width}×{height}, {len(self.png):,} bytes>"

    @property
    def size(self) -> tuple[int, int]:
        """(width, height) in pixels, read from the PNG header."""
        return int.from_bytes(self.png[16:20], "big"), int.from_bytes(self.png[20:24], "big")

    def save(self, path: str | Path) -> Path:
        p = Path(path)
        p.write_bytes(self.png)
        return p


def _plt() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError(f"drawing needs matplotlib: {install_hint('viz')}") from exc
    return plt


def _picture(fig: Any) -> Picture:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    _plt().close(fig)
    return Picture(buf.getvalue())


def _box(ax: Axes, x: float, y: float, text: str, color: str, *, width: float = 1.7, fontsize: int = 8) -> None:
    from matplotlib.patches import FancyBboxPatch

    lines = text.count("\n") + 1
    h = 0.22 + 0.17 * lines
    ax.add_patch(FancyBboxPatch((x - width / 2, y - h / 2), width, h, boxstyle="round,pad=0.04",
                                facecolor=color, edgecolor="#444444", linewidth=0.8, zorder=2))
    ax.text(x, y, text, ha="center", va="center", fontsize=fontsize, zorder=3)


def _arrow(ax: Axes, a: tuple[float, float], b: tuple[float, float], *, dashed: bool = False, rad: float = 0.0,
           color: str = "#555555") -> None:
    ax.annotate("", xy=b, xytext=a, zorder=1, arrowprops={
        "arrowstyle": "-|>", "color": color, "lw": 0.9, "linestyle": "--" if dashed else "-",
        "shrinkA": 13, "shrinkB": 13, "connectionstyle": f"arc3,rad={rad}"})


# ------------------------------------------------------------------ graph structure
def _layers(nodes: list[str], edges: list[tuple[str, str]]) -> dict[str, int]:
    """Longest-path layering after dropping back edges (found by a DFS from the first node)."""
    succ: dict[str, list[str]] = {n: [] for n in nodes}
    for s, t in edges:
        if s != t:
            succ[s].append(t)
    back: set[tuple[str, str]] = set()
    state: dict[str, int] = {}

    def dfs(n: str) -> None:
        state[n] = 1
        for m in succ[n]:
            if state.get(m) == 1:
                back.add((n, m))
            elif m not in state:
                dfs(m)
        state[n] = 2

    for n in nodes:
        if n not in state:
            dfs(n)
    layer = dict.fromkeys(nodes, 0)
    for _ in range(len(nodes)):
        changed = False
        for s, t in edges:
            if s != t and (s, t) not in back and layer[t] < layer[s] + 1:
                layer[t], changed = layer[s] + 1, True
        if not changed:
            break
    return layer


def draw_graph(graph: Any, *, xray: bool | int = True, title: str | None = None,
               layout: str = "auto") -> Picture:
    """The structure of a compiled LangGraph graph (or a `langchain_core` drawable `Graph`).

    `layout`: "dot" (Graphviz: clusters that never overlap, edges routed around nodes), "layers" (matplotlib
    only), or "auto" (dot when the `dot` program is installed)."""
    if layout not in ("auto", "dot", "layers"):
        raise ValueError(f"layout must be 'auto', 'dot' or 'layers', not {layout!r}")
    dot = shutil.which("dot")
    if layout == "dot" and dot is None:
        raise FileNotFoundError("layout='dot' needs Graphviz's dot program (apt-get install graphviz)")
    if dot is not None and layout != "layers":
        done = subprocess.run([dot, "-Tpng", "-Gdpi=110"], input=graph_dot(graph, xray=xray, title=title).encode(),
                              capture_output=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"dot failed: {done.stderr.decode(errors='replace').strip()[:500]}")
        return Picture(done.stdout)
    return _draw_layers(graph, xray=xray, title=title)


_GRAPH_TITLE = "{name} (dashed: conditional edge; red: back edge, a loop)"
# the retriever's agent subgraphs, in the order the paper's hierarchy reads (meta → category → tool; flat: ours)
_CLUSTER_ORDER = ("meta_agent", "category_agent", "tool_agent", "flat_agent", "solver")


def _structure(graph: Any, xray: bool | int) -> tuple[list[str], dict[str, str], list[tuple[str, str, bool, Any]]]:
    """(node ids, display names, edges as (source, target, conditional, data)) of a graph."""
    g = graph.get_graph(xray=xray) if hasattr(graph, "get_graph") else graph
    nodes = list(g.nodes)
    names = {n: str(getattr(g.nodes[n], "name", n)) for n in nodes}
    return nodes, names, [(e.source, e.target, bool(e.conditional), e.data) for e in g.edges]


def _label(name: str) -> str:
    label = name.split(":", 1)[-1]
    return label.strip("_") if label.startswith("__") else label


def graph_dot(graph: Any, *, xray: bool | int = True, title: str | None = None) -> str:
    """The graph as Graphviz DOT source (what `draw_graph` lays out with `dot`): one cluster per subgraph
    (`name:node` ids), conditional edges dashed, back edges (loops) red, edge data (e.g. α-UMi's "caller") as
    labels. Deterministic: the same graph gives the same text."""
    nodes, names, edges = _structure(graph, xray)
    layer = _layers(nodes, [(s, t) for s, t, _, _ in edges])

    def q(text: str) -> str:
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'

    font = 'fontname="DejaVu Sans"'
    heading = title or _GRAPH_TITLE.format(name=getattr(graph, "name", "graph"))
    out = [f"digraph {q(str(getattr(graph, 'name', 'graph')))} {{",
           f"  graph [rankdir=TB, newrank=true, nodesep=0.25, ranksep=0.32, pad=0.2, {font}, fontsize=12, "
           f"labelloc=t, label={q(heading)}];",
           f'  node [shape=box, style="rounded,filled", fillcolor="#dbe9ff", color="#444444", {font}, fontsize=10, '
           'height=0.32, margin="0.12,0.04"];',
           f'  edge [color="#555555", arrowsize=0.6, {font}, fontsize=8, fontcolor="#555555"];']
    groups: dict[str, list[str]] = {}
    for n in nodes:
        if ":" in n:
            groups.setdefault(n.split(":", 1)[0], []).append(n)
        else:
            grey = ', fillcolor="#dddddd"' if n in ("__start__", "__end__") else ""
            out.append(f"  {q(n)} [label={q(_label(names[n]))}{grey}];")
    rank = {name: i for i, name in enumerate(_CLUSTER_ORDER)}
    for gname in sorted(groups, key=lambda g: (rank.get(g, len(rank)), g)):
        out.append(f"  subgraph {q('cluster_' + gname)} {{")
        out.append(f'    label={q(gname)}; style="rounded,filled"; color="#9aa9c2"; fillcolor="#f3f6fb"; '
                   'fontcolor="#4a5a7a";')
        for m in groups[gname]:
            small = ', fillcolor="#dddddd", fontsize=8, height=0.22' if m.endswith(":__end__") else ""
            out.append(f"    {q(m)} [label={q(_label(names[m]))}{small}];")
        out.append("  }")
    for s, t, conditional, data in edges:
        attrs = ["style=dashed"] if conditional else []
        if layer[t] <= layer[s]:
            attrs.append('color="#b04a4a"')
        if data:
            attrs.append(f"xlabel={q(str(data))}")
        out.append(f"  {q(s)} -> {q(t)}" + (f" [{', '.join(attrs)}]" if attrs else "") + ";")
    out.append("}")
    return "\n".join(out) + "\n"


def _draw_layers(graph: Any, *, xray: bool | int, title: str | None) -> Picture:
    """`draw_graph` without Graphviz: longest-path layers, one barycentre pass, matplotlib."""
    plt = _plt()
    nodes, names, full_edges = _structure(graph, xray)
    edges = [(s, t, c) for s, t, c, _ in full_edges]
    layer = _layers(nodes, [(s, t) for s, t, _ in edges])
    rows: dict[int, list[str]] = {}
    for n in nodes:
        rows.setdefault(layer[n], []).append(n)
    pos: dict[str, tuple[float, float]] = {}
    for depth in sorted(rows):  # order each row by its parents' mean x (one barycentre pass)
        members = rows[depth]

        def bary(n: str) -> float:
            xs = [pos[s][0] for s, t, _ in edges if t == n and s in pos]
            return sum(xs) / len(xs) if xs else 0.0

        members.sort(key=bary)
        width = len(members)
        for i, n in enumerate(members):
            pos[n] = ((i - (width - 1) / 2) * 2.2, -depth * 1.1)
    span = max(len(r) for r in rows.values())
    fig, ax = plt.subplots(figsize=(max(6.0, 2.3 * span), max(4.0, 1.15 * len(rows) + 0.6)))
    groups: dict[str, list[str]] = {}
    for n in nodes:
        if ":" in n:
            groups.setdefault(n.split(":", 1)[0], []).append(n)
    from matplotlib.patches import FancyBboxPatch

    for gname, members in groups.items():
        xs, ys = [pos[m][0] for m in members], [pos[m][1] for m in members]
        ax.add_patch(FancyBboxPatch((min(xs) - 1.0, min(ys) - 0.45), max(xs) - min(xs) + 2.0, max(ys) - min(ys) + 0.9,
                                    boxstyle="round,pad=0.05", facecolor="#f3f6fb", edgecolor="#9aa9c2",
                                    linestyle=":", zorder=0))
        ax.text(min(xs) - 0.95, max(ys) + 0.38, gname, fontsize=8, color="#4a5a7a", va="bottom", zorder=0)
    for s, t, cond in edges:
        if s == t:
            x, y = pos[s]
            ax.annotate("", xy=(x + 0.85, y - 0.05), xytext=(x + 0.85, y + 0.05), arrowprops={
                "arrowstyle": "-|>", "color": "#555555", "lw": 0.8, "connectionstyle": "arc3,rad=-2.5"})
            continue
        back = layer[t] <= layer[s]
        _arrow(ax, pos[s], pos[t], dashed=cond, rad=0.35 if back else 0.0, color="#b04a4a" if back else "#555555")
    for n in nodes:
        label = names[n].split(":", 1)[-1]
        color = "#dddddd" if label in ("__start__", "__end__") else "#dbe9ff"
        _box(ax, *pos[n], _label(names[n]), color)
    xs = [p[0] for p in pos.values()]
    ys = [p[1] for p in pos.values()]
    ax.set_xlim(min(xs) - 1.4, max(xs) + 1.4)
    ax.set_ylim(min(ys) - 0.7, max(ys) + 0.8)
    ax.axis("off")
    ax.set_title(title or _GRAPH_TITLE.format(name=getattr(graph, "name", "graph")), fontsize=10)
    return _picture(fig)


# ------------------------------------------------------------------ trees
def _tree_positions(ids: Sequence[Any], parent: Mapping[Any, Any]) -> dict[Any, tuple[float, int]]:
    """Tidy top-down layout: leaves get consecutive x, a parent sits above its children's middle."""
    children: dict[Any, list[Any]] = {i: [] for i in ids}
    roots: list[Any] = []
    for i in ids:
        p = parent.get(i)
        children.get(p, roots).append(i)
    pos: dict[Any, tuple[float, int]] = {}
    next_x = [0.0]

    def place(n: Any, depth: int) -> float:
        kids = children[n]
        if not kids:
            x = next_x[0]
            next_x[0] += 1.0
        else:
            xs = [place(k, depth + 1) for k in kids]
            x = (xs[0] + xs[-1]) / 2
        pos[n] = (x, depth)
        return x

    for r in roots:
        place(r, 0)
    return pos


def _draw_tree(labels: Mapping[Any, str], colors: Mapping[Any, str], parent: Mapping[Any, Any], title: str,
               edge_style: Mapping[Any, bool] | None = None, legend: Mapping[str, str] | None = None) -> Picture:
    plt = _plt()
    ids = list(labels)
    pos = _tree_positions(ids, parent)
    width = max(x for x, _ in pos.values()) + 1 if pos else 1
    depth = max(d for _, d in pos.values()) + 1 if pos else 1
    fig, ax = plt.subplots(figsize=(max(5.0, 2.3 * width), max(2.5, 1.35 * depth + 0.6)))
    xy = {i: (x * 2.2, -d * 1.35) for i, (x, d) in pos.items()}
    for i in ids:
        p = parent.get(i)
        if p in xy:
            _arrow(ax, xy[p], xy[i], dashed=bool(edge_style and edge_style.get(i)))
    for i in ids:
        _box(ax, *xy[i], labels[i], colors.get(i, "#eeeeee"), width=2.0, fontsize=7)
    xs = [p[0] for p in xy.values()] or [0.0]
    ys = [p[1] for p in xy.values()] or [0.0]
    ax.set_xlim(min(xs) - 1.3, max(xs) + 1.3)
    ax.set_ylim(min(ys) - 0.8, max(ys) + 0.8)
    ax.axis("off")
    ax.set_title(title, fontsize=10)
    if legend:
        from matplotlib.patches import Patch

        ax.legend(handles=[Patch(facecolor=c, edgecolor="#444444", label=k) for k, c in legend.items()],
                  loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7, frameon=False)
    return _picture(fig)


def _short(text: str, n: int = 26) -> str:
    return shorten(text, n)


def draw_agent_tree(out: Mapping[str, Any]) -> Picture:
    """The retriever's agents from a run's output (or state): level, scope, status, steps, APIs added to the pool."""
    agents: Mapping[str, Any] = out.get("agents") or {}
    added: dict[str, int] = {}
    for e in out.get("api_pool") or []:
        added[e.get("added_by", "")] = added.get(e.get("added_by", ""), 0) + 1
    labels, colors, parent = {}, {}, {}
    for aid, a in agents.items():
        level = a.get("level", "?")
        if level == "meta":
            scope = "meta agent"
        elif level == "category":
            scope = f"category: {_short(str(a.get('category')))}"
        else:
            tools = a.get("tools") or []
            scope = f"tools: {_short(', '.join(tools), 24)}" if len(tools) <= 1 else f"{len(tools)} tools of {_short(str(a.get('category')), 16)}"
        status = str(a.get("status", "?"))
        extra = f"\n+{added[aid]} APIs" if added.get(aid) else ""
        labels[aid] = f"{scope}\n{status} · {a.get('steps', 0)} steps\n{_short(str(a.get('end_reason', '')), 24)}{extra}"
        colors[aid] = STATUS_COLORS.get(status, "#eeeeee")
        parent[aid] = a.get("parent")
    pool = len(out.get("api_pool") or [])
    return _draw_tree(labels, colors, parent, f"agent tree: {len(agents)} agents, {pool} APIs in the pool",
                      legend={k: STATUS_COLORS[k] for k in ("finished", "stopped", "running")})


def draw_search_tree(out: Mapping[str, Any], attempt: int = -1) -> Picture:
    """One solver attempt's search tree (default: the last): each node's calls and their status, backtracked
    (dead) branches, the finish type of answering / giving-up nodes."""
    attempts = out.get("solver_attempts") or []
    if not attempts:
        raise ValueError("the run has no solver attempt to draw")
    a = attempts[attempt]
    labels, colors, parent = {}, {}, {}
    for n in a.get("tree") or []:
        nid = n["id"]
        calls = [tc.get("name", "?") for tc in n.get("tool_calls") or []]
        obs = {o.get("function"): o.get("status") for o in n.get("observations") or []}
        if nid == 0:
            text = "root (query)"
        elif not calls:
            text = _short(str(n.get("note") or "(no call)"), 26)
        else:
            parts = []
            for c in calls[:3]:
                if c == "Finish":
                    args: dict[str, Any] = next((tc.get("args", {}) for tc in n["tool_calls"]
                                                 if tc.get("name") == "Finish"), {})
                    parts.append(f"Finish: {args.get('return_type', '?')}")
                else:
                    parts.append(f"{_short(c, 22)} [{obs.get(c, '…')}]")
            text = "\n".join(parts)
        labels[nid] = f"#{nid} {text}\n{n.get('status')}"
        colors[nid] = STATUS_COLORS.get(str(n.get("status")), "#eeeeee")
        parent[nid] = n.get("parent")
    title = (f"search tree of attempt {a.get('attempt')} ({a.get('mode')}): finish = {a.get('finish_type')}, "
             f"{a.get('api_calls')} API calls")
    return _draw_tree(labels, colors, parent, title,
                      legend={k: STATUS_COLORS[k] for k in ("open", "answer", "given_up", "dead")})


# ------------------------------------------------------------------ usage
def usage_frame(out: Mapping[str, Any]) -> pd.DataFrame:
    """Model calls and tokens per role (rows), from a run's `usage`."""
    import pandas as pd

    usage = out.get("usage", out)
    rows = [{"role": role, "model_calls": u.get("model_calls", 0), "input_tokens": u.get("input_tokens", 0),
             "output_tokens": u.get("output_tokens", 0),
             "tokens": u.get("input_tokens", 0) + u.get("output_tokens", 0)}
            for role, u in usage.items() if isinstance(u, Mapping) and "model_calls" in u]
    frame = pd.DataFrame(rows, columns=["role", "model_calls", "input_tokens", "output_tokens", "tokens"])
    return frame.set_index("role")


def draw_usage(out: Mapping[str, Any], title: str = "tokens per role") -> Picture:
    """A stacked bar chart of input / output tokens per role."""
    plt = _plt()
    frame = usage_frame(out)
    fig, ax = plt.subplots(figsize=(6.5, 3.2))
    if len(frame):
        frame[["input_tokens", "output_tokens"]].plot.bar(stacked=True, ax=ax, color=["#7aa6d8", "#f2a65a"], rot=0)
    ax.set_ylabel("tokens")
    ax.set_xlabel("")
    ax.set_title(title, fontsize=10)
    return _picture(fig)


# ------------------------------------------------------------------ display of compiled graphs
def _offline_mimebundle(self: Any, **kwargs: Any) -> dict[str, Any]:
    # no object address in the text: a saved notebook does not change when it is run again
    bundle: dict[str, Any] = {"text/plain": f"<{type(self).__name__} {getattr(self, 'name', '')!r}: drawn offline>"}
    try:
        bundle["image/png"] = draw_graph(self).png
    except Exception as exc:  # no matplotlib, or a graph we cannot lay out: text only, never a network call
        bundle["text/plain"] += f"\n(no picture: {type(exc).__name__}: {exc})"
    return bundle


@functools.cache
def _displayable_class(base: Any) -> type:
    return type(base.__name__, (base,), {"_repr_mimebundle_": _offline_mimebundle, "__module__": base.__module__})


def offline_display(graph: Any) -> Any:
    """Make a compiled graph display itself in Jupyter with `draw_graph` (offline) instead of LangGraph's default,
    which renders Mermaid through a web service. Returns the same object."""
    if hasattr(graph, "_repr_mimebundle_") and not getattr(type(graph), "_anytool_offline", False):
        base: Any = type(graph)
        cls = _displayable_class(base)
        cls._anytool_offline = True  # type: ignore[attr-defined]
        graph.__class__ = cls
    return graph
