"""Inline SVG pictures for the report, drawn here as text (no plotting library, nothing fetched): horizontal bar
charts, pass rates with their intervals, trees and a timeline. Colours come from the page's CSS classes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ...text import shorten
from .markup import attr, esc

CHAR_W = 6.6  # width of one character of the 11 px labels (an estimate for the layout)


def _svg(width: float, height: float, body: str, *, label: str, cls: str = "chart") -> str:
    return (f'<svg class="{cls}" role="img" aria-label={attr(label)} width="{width:.0f}" height="{height:.0f}" '
            f'viewBox="0 0 {width:.0f} {height:.0f}" xmlns="http://www.w3.org/2000/svg"><title>{esc(label)}</title>'
            f"{body}</svg>")


def _clip(text: str, chars: int) -> str:
    return shorten(text, max(2, chars))  # at a word's end (text.shorten): a label is never cut mid-word


def _tick_step(top: float) -> float:
    """A round step giving 3-6 ticks up to `top`."""
    if top <= 0:
        return 1.0
    step = 10 ** len(str(int(top))) / 10 if top >= 1 else 0.1
    while top / step > 6:
        step *= 2 if str(step)[0] == "1" else 2.5
    while top / step < 3 and step > 1e-6:
        step /= 2
    return step


def _fmt(x: float) -> str:
    if x == 0:
        return "0"
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    if abs(x) >= 10:
        return f"{x:.0f}"
    if abs(x) >= 1:
        return f"{x:.1f}".rstrip("0").rstrip(".")
    return f"{x:.3g}"


@dataclass(frozen=True)
class Bar:
    """One bar of a chart: its label and stacked segments (value, CSS class, legend name)."""

    label: str
    segments: Sequence[tuple[float, str, str]]
    note: str = ""  # shown after the bar (default: the total)


def bar_chart(bars: Sequence[Bar], *, title: str, unit: str = "", width: int = 430) -> str:
    """Horizontal (stacked) bars with their totals, a legend of the segments and a scale."""
    label_w = min(150.0, max([CHAR_W * len(b.label) for b in bars] + [40.0]) + 8)
    plot_w = width - label_w - 70
    row_h, top = 22, 30
    height = top + row_h * max(1, len(bars)) + 34
    peak = max([sum(v for v, _, _ in b.segments) for b in bars] + [0.0])
    step = _tick_step(peak)
    scale_top = step * max(1, -(-peak // step)) if peak > 0 else 1.0
    out = [f'<text class="title" x="0" y="14">{esc(title)}</text>']
    for i in range(int(scale_top / step) + 1):
        x = label_w + plot_w * (i * step) / scale_top
        out.append(f'<line class="grid" x1="{x:.1f}" y1="{top - 4}" x2="{x:.1f}" y2="{top + row_h * len(bars)}"/>')
        out.append(f'<text class="tick" x="{x:.1f}" y="{top + row_h * len(bars) + 13}" '
                   f'text-anchor="middle">{esc(_fmt(i * step))}</text>')
    legend: dict[str, str] = {}
    for i, b in enumerate(bars):
        y = top + i * row_h
        out.append(f'<text class="label" x="{label_w - 6:.1f}" y="{y + 14}" text-anchor="end">'
                   f"{esc(_clip(b.label, int(label_w / CHAR_W)))}</text>")
        x = label_w
        total = 0.0
        for value, cls, name in b.segments:
            w = plot_w * value / scale_top if scale_top else 0
            legend.setdefault(name, cls)
            total += value
            if w > 0:
                out.append(f'<rect class="{esc(cls)}" x="{x:.1f}" y="{y + 3}" width="{w:.1f}" height="{row_h - 7}">'
                           f"<title>{esc(f'{b.label} · {name}: {_fmt(value)} {unit}'.strip())}</title></rect>")
            x += w
        out.append(f'<text class="value" x="{x + 4:.1f}" y="{y + 14}">{esc(b.note or _fmt(total))}</text>')
    if len(legend) > 1:
        lx = label_w
        for name, cls in legend.items():
            out.append(f'<rect class="{esc(cls)}" x="{lx:.1f}" y="{height - 11}" width="10" height="10"/>'
                       f'<text class="tick" x="{lx + 14:.1f}" y="{height - 2}">{esc(name)}</text>')
            lx += 24 + CHAR_W * len(name)
    if unit:
        out.append(f'<text class="tick" x="{width - 4}" y="14" text-anchor="end">{esc(unit)}</text>')
    return _svg(width, height, "".join(out), label=title)


@dataclass(frozen=True)
class Rate:
    """A pass rate (percent) with its interval (percent, None when not computed) over `n` queries."""

    label: str
    rate: float
    low: float | None
    high: float | None
    n: int
    overall: bool = False


def interval_chart(rates: Sequence[Rate], *, title: str, width: int = 560) -> str:
    """Each rate as a dot with its interval as a whisker, on a 0-100 % axis."""
    label_w = min(190.0, max([CHAR_W * len(r.label) for r in rates] + [50.0]) + 10)
    plot_w = width - label_w - 120
    row_h, top = 24, 30
    height = top + row_h * max(1, len(rates)) + 24
    out = [f'<text class="title" x="0" y="14">{esc(title)}</text>']
    for pct in range(0, 101, 20):
        x = label_w + plot_w * pct / 100
        out.append(f'<line class="grid" x1="{x:.1f}" y1="{top - 4}" x2="{x:.1f}" y2="{top + row_h * len(rates)}"/>'
                   f'<text class="tick" x="{x:.1f}" y="{top + row_h * len(rates) + 14}" text-anchor="middle">'
                   f"{pct}%</text>")
    for i, r in enumerate(rates):
        y = top + i * row_h + row_h / 2
        cls = "overall" if r.overall else "group"
        out.append(f'<text class="label{" strong" if r.overall else ""}" x="{label_w - 8:.1f}" y="{y + 4:.1f}" '
                   f'text-anchor="end">{esc(_clip(r.label, int(label_w / CHAR_W)))}</text>')
        ci = ""
        if r.low is not None and r.high is not None:
            x1, x2 = label_w + plot_w * r.low / 100, label_w + plot_w * r.high / 100
            out.append(f'<line class="whisker {cls}" x1="{x1:.1f}" y1="{y:.1f}" x2="{x2:.1f}" y2="{y:.1f}"/>'
                       f'<line class="whisker {cls}" x1="{x1:.1f}" y1="{y - 5:.1f}" x2="{x1:.1f}" y2="{y + 5:.1f}"/>'
                       f'<line class="whisker {cls}" x1="{x2:.1f}" y1="{y - 5:.1f}" x2="{x2:.1f}" y2="{y + 5:.1f}"/>')
            ci = f" [{r.low:.1f}, {r.high:.1f}]"
        x = label_w + plot_w * r.rate / 100
        tip = f"{r.label}: {r.rate:.1f}%{ci} over {r.n} queries"
        out.append(f'<circle class="dot {cls}" cx="{x:.1f}" cy="{y:.1f}" r="5"><title>{esc(tip)}</title></circle>'
                   f'<text class="value" x="{label_w + plot_w + 10:.1f}" y="{y + 4:.1f}">'
                   f"{esc(f'{r.rate:.1f}%{ci}')}</text>")
    return _svg(width, height, "".join(out), label=title)


# ------------------------------------------------------------------------------------------------ trees
@dataclass
class TreeBox:
    """A node of a tree picture: its id, parent, up to three lines of label, CSS class and link target."""

    ident: str
    parent: str | None
    lines: list[str]
    cls: str
    href: str = ""
    tip: str = ""
    dashed: bool = False  # the edge from its parent is dashed (e.g. a re-activation)
    children: list[str] = field(default_factory=list)


def _layout(boxes: Sequence[TreeBox]) -> dict[str, tuple[float, int]]:
    """Tidy top-down layout: leaves get consecutive columns, a parent sits above its children's middle (iterative:
    any depth; a damaged parent link, a cycle included, makes its node a root)."""
    by_id = {b.ident: b for b in boxes}
    for b in boxes:
        b.children = []
    roots = []
    for b in boxes:
        if b.parent is not None and b.parent in by_id and b.parent != b.ident:
            by_id[b.parent].children.append(b.ident)
        else:
            roots.append(b.ident)
    depth: dict[str, int] = {}
    placed_kids: dict[str, list[str]] = {}
    order: list[str] = []  # post-order: children before their parent, leaves left to right
    for root in [*roots, *by_id]:
        if root in depth:
            continue
        depth[root] = 0
        stack = [(root, iter(by_id[root].children))]
        while stack:
            ident, rest = stack[-1]
            nxt = next((k for k in rest if k not in depth), None)
            if nxt is None:
                stack.pop()
                order.append(ident)
                continue
            depth[nxt] = depth[ident] + 1
            placed_kids.setdefault(ident, []).append(nxt)
            stack.append((nxt, iter(by_id[nxt].children)))
    x: dict[str, float] = {}
    column = 0.0
    for ident in order:
        kids = placed_kids.get(ident)
        if kids:
            x[ident] = (x[kids[0]] + x[kids[-1]]) / 2
        else:
            x[ident] = column
            column += 1
    return {i: (x[i], depth[i]) for i in order}


def tree_chart(boxes: Sequence[TreeBox], *, title: str, box_w: int = 150, max_width: int = 0) -> str:
    """A tree of labelled boxes (top-down), each a link when it has `href`."""
    if not boxes:
        return ""
    pos = _layout(boxes)
    lines = max(len(b.lines) for b in boxes)
    box_h = 8 + 13 * lines
    gap_x, gap_y = 14, 30
    cols = max(x for x, _ in pos.values()) + 1
    depth = max(d for _, d in pos.values()) + 1
    width = cols * (box_w + gap_x) + gap_x
    height = 24 + depth * (box_h + gap_y)
    xy = {i: (gap_x + x * (box_w + gap_x), 24 + d * (box_h + gap_y)) for i, (x, d) in pos.items()}
    out = [f'<text class="title" x="{gap_x}" y="14">{esc(title)}</text>']
    chars = int((box_w - 10) / 6.2)
    for b in boxes:
        if b.parent in xy and b.ident in xy:
            px, py = xy[b.parent]
            cx, cy = xy[b.ident]
            dash = ' stroke-dasharray="4 3"' if b.dashed else ""
            out.append(f'<path class="edge" d="M{px + box_w / 2:.1f},{py + box_h:.1f} C{px + box_w / 2:.1f},'
                       f"{py + box_h + gap_y / 2:.1f} {cx + box_w / 2:.1f},{cy - gap_y / 2:.1f} "
                       f'{cx + box_w / 2:.1f},{cy:.1f}"{dash}/>')
    for b in boxes:
        x, y = xy[b.ident]
        texts = "".join(f'<text class="{"nodehead" if k == 0 else "nodetext"}" x="{x + 6:.1f}" y="{y + 15 + 13 * k:.1f}">'
                        f"{esc(_clip(line, chars))}</text>" for k, line in enumerate(b.lines))
        tip = f"<title>{esc(b.tip or ' · '.join(b.lines))}</title>"
        shape = (f'<rect class="node {esc(b.cls)}" x="{x:.1f}" y="{y:.1f}" width="{box_w}" height="{box_h}" rx="5"/>'
                 f"{texts}{tip}")
        out.append(f'<a href={attr(b.href)}>{shape}</a>' if b.href else f"<g>{shape}</g>")
    svg = _svg(width, height, "".join(out), label=title, cls="chart tree")
    return f'<div class="scroll">{svg}</div>'


# ------------------------------------------------------------------------------------------------ timeline
@dataclass(frozen=True)
class Span:
    start: float
    end: float
    cls: str
    tip: str


@dataclass(frozen=True)
class Marker:
    at: float
    label: str
    cls: str


def timeline_chart(lanes: Sequence[tuple[str, Sequence[Span]]], markers: Sequence[Marker], *, title: str,
                   width: int = 900) -> str:
    """A Gantt chart: one lane per agent / phase, spans as bars, markers (reflections, the end) as lines."""
    if not lanes:
        return ""
    label_w = min(210.0, max(CHAR_W * len(name) for name, _ in lanes) + 10)
    plot_w = width - label_w - 20
    row_h, top = 18, 40
    height = top + row_h * len(lanes) + 26
    end = max([s.end for _, spans in lanes for s in spans] + [m.at for m in markers] + [0.001])
    step = _tick_step(end)
    ticks = int(end // step) + 1
    scale = end if end > 0 else 1.0

    def px(t: float) -> float:
        return label_w + plot_w * max(0.0, t) / scale

    out = [f'<text class="title" x="0" y="14">{esc(title)}</text>']
    for i in range(ticks):
        x = px(i * step)
        out.append(f'<line class="grid" x1="{x:.1f}" y1="{top - 6}" x2="{x:.1f}" y2="{top + row_h * len(lanes)}"/>'
                   f'<text class="tick" x="{x:.1f}" y="{top + row_h * len(lanes) + 14}" text-anchor="middle">'
                   f"{esc(_fmt(i * step))} s</text>")
    for i, (name, spans) in enumerate(lanes):
        y = top + i * row_h
        out.append(f'<text class="label" x="{label_w - 6:.1f}" y="{y + 13}" text-anchor="end">'
                   f"{esc(_clip(name, int(label_w / CHAR_W)))}</text>")
        for s in spans:
            w = max(2.0, px(s.end) - px(s.start))
            out.append(f'<rect class="{esc(s.cls)}" x="{px(s.start):.1f}" y="{y + 3}" width="{w:.1f}" '
                       f'height="{row_h - 6}" rx="2"><title>{esc(s.tip)}</title></rect>')
    for k, m in enumerate(markers):
        x = px(m.at)
        out.append(f'<line class="marker {esc(m.cls)}" x1="{x:.1f}" y1="{top - 8}" x2="{x:.1f}" '
                   f'y2="{top + row_h * len(lanes)}"><title>{esc(m.label)}</title></line>'
                   f'<text class="tick {esc(m.cls)}" x="{x + 3:.1f}" y="{top - 10 - 9 * (k % 2)}">'
                   f"{esc(_clip(m.label, 22))}</text>")
    return f'<div class="scroll">{_svg(width, height, "".join(out), label=title)}</div>'


def legend(entries: Mapping[str, str]) -> str:
    """An HTML legend: class → name, as small swatches."""
    return '<p class="legend">' + "".join(
        f'<span class="swatch {esc(cls)}"></span>{esc(name)}' for cls, name in entries.items()) + "</p>"
