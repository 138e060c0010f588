"""One run's page: the request and answer, the judge's verdicts, the agent tree, the API-candidate pool over the
reflection rounds, the DFSDT search trees, the reflections, the timeline and the usage per role.

It reads a results record (`eval/anytool/runner.run_record`'s fields, plus the batch's `query_id`, `group`, ...).
A field that an older version did not write renders as "not recorded"; nothing is inferred that the record does
not hold. Every text goes through `markup.esc`; secrets are masked before (`redact.scrub`)."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from ...sanitize.paths import safe_file_name
from . import svg
from .markup import (
    badge,
    block,
    esc,
    facts,
    items,
    mapping,
    not_recorded,
    number,
    pretty,
    section,
    table,
    text,
)
from .style import CSS, SCRIPT

ROLE_ORDER = ("meta", "category", "tool", "flat", "solvable", "solver", "planner", "caller", "summarizer", "judge")
TOC = (("answer", "Request & answer"), ("verdicts", "Verdicts"), ("agents", "Agent tree"), ("pool", "Pool"),
       ("search", "Search tree"), ("reflections", "Reflections"), ("timeline", "Timeline"), ("usage", "Usage"))


def anchor(kind: str, ident: Any) -> str:
    """An element id made from a name that comes from data."""
    return f"{kind}-{safe_file_name(ident, fallback='x')}"


def document(title: str, body: str) -> str:
    """A whole self-contained HTML page: inline style and script, no external resource."""
    return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
            "script-src 'unsafe-inline'; img-src data:\">"
            f"<title>{esc(title)}</title><style>{CSS}</style></head><body>{body}<script>{SCRIPT}</script>"
            "</body></html>")


def events_of(record: Mapping[str, Any], kind: str) -> list[dict[str, Any]]:
    return [e for e in items(record.get("events")) if isinstance(e, dict) and e.get("kind") == kind]


# ------------------------------------------------------------------------------------------------ sections
def header(record: Mapping[str, Any], index_href: str) -> str:
    status = text(record.get("status")) or "unknown"
    nav = f'<nav class="top"><a href="{esc(index_href)}">← all queries</a></nav>' if index_href else ""
    title = f"Query {esc(record.get('query_id', ''))}" if "query_id" in record else "AnyTool run"
    usage = mapping(record.get("usage"))
    kinds = " ".join(badge(k, "warn") for k in (text(record.get("error_kind")), text(record.get("stop_reason"))) if k)
    info = facts([
        ("group", esc(record.get("group", ""))),
        ("status", badge(status, status) + (" " + kinds if kinds else "")),
        ("reason", esc(record.get("reason", ""))),
        ("model", esc(record.get("model") or "")),
        ("wall time", f"{number(record.get('wall_time'), 2)} s" if record.get("wall_time") is not None else ""),
        ("retries", esc(record.get("retries", "")) if record.get("retries") else ""),
        ("tokens", number((usage.get("input_tokens") or 0) + (usage.get("output_tokens") or 0)) if usage else ""),
        ("error", esc(record.get("error") or "")),
    ])
    toc = '<nav class="toc">' + "".join(f'<a href="#{k}">{esc(v)}</a>' for k, v in TOC) + (
        '<button type="button" data-fold="open">unfold all</button> '
        '<button type="button" data-fold="close">fold all</button></nav>')
    return f"{nav}<h1>{title}</h1>{info}{toc}"


def answer_section(record: Mapping[str, Any]) -> str:
    body = "<h3>Request</h3>" + block(record.get("query", ""), label="request")
    answer = text(record.get("answer"))
    body += "<h3>Final answer</h3>" + (block(answer, cls="answer", label="answer") if answer
                                       else '<p class="muted">(no answer)</p>')
    return section("answer", "Request & answer", body)


def verdicts_section(record: Mapping[str, Any]) -> str:
    judged = events_of(record, "judge")
    if judged:
        rows = [[esc(e.get("attempt", "")), esc(e.get("round", "")), badge(e.get("label", ""), e.get("label", "")),
                 esc(e.get("by", "")), block(e.get("reason", ""), label="reason")] for e in judged]
        body = table(["attempt", "round", "verdict", "by", "reason"], rows)
    elif mapping(record.get("verdict")):
        v = mapping(record.get("verdict"))
        body = ('<p class="muted">The last verdict only (this record has no event log).</p>'
                + table(["verdict", "by", "reason"], [[badge(v.get("label", ""), v.get("label", "")),
                                                       esc(v.get("by", "")), block(v.get("reason", ""))]]))
    else:
        body = not_recorded("The judge's verdicts")
    return section("verdicts", "Judge verdicts", body)


def _added_by(record: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Agent id → the pool entries it added (still in the pool, or pruned later)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for e in pool_history(record):
        out.setdefault(text(e.get("added_by")), []).append(e)
    return out


def agent_calls(messages: Sequence[Any]) -> str:
    """An agent's history: its function calls in order with their results, and what it was told."""
    results = {m.get("tool_call_id"): m.get("content", "") for m in messages
               if isinstance(m, dict) and m.get("tool_call_id")}
    steps: list[str] = []
    for k, m in enumerate(messages):
        if not isinstance(m, dict):
            continue
        role = m.get("role")
        if role in ("human", "user") and k > 0:
            steps.append(f"<li><strong>told</strong>{block(m.get('content', ''), label='message')}</li>")
        for call in items(m.get("tool_calls")):
            call = mapping(call)
            out = results.get(call.get("id"))
            steps.append(f"<li><code>{esc(call.get('name', ''))}</code>"
                         f"{block(pretty(call.get('args', {})), label='arguments', fold=300)}"
                         + (block(out, label="result", fold=300) if out is not None else "") + "</li>")
    return f'<ol class="steps">{"".join(steps)}</ol>' if steps else '<p class="muted">(no function call)</p>'


def agent_label(agent: Mapping[str, Any]) -> str:
    """What an agent searches: its tools (tool agent), its category, or the last part of its id."""
    tools = "" if agent.get("level") == "category" else ", ".join(text(t) for t in items(agent.get("tools")))
    ident = text(agent.get("id"))
    return tools or text(agent.get("category")) or ident.rsplit("/", 1)[-1] or ident


def agents_section(record: Mapping[str, Any]) -> str:
    agents = [a for a in items(record.get("agents")) if isinstance(a, dict)]
    if record.get("agents") is None:
        return section("agents", "Agent tree", not_recorded("The agents"))
    if not agents:
        return section("agents", "Agent tree", '<p class="muted">No agent ran (the run answered without '
                       "retrieval, or stopped before it).</p>")
    added = _added_by(record)
    boxes = []
    for a in agents:
        ident = text(a.get("id"))
        n_added = len(added.get(ident, []))
        again = f" · ×{a.get('activations')}" if (a.get("activations") or 1) > 1 else ""
        boxes.append(svg.TreeBox(ident, text(a.get("parent")) or None,
                                 [agent_label(a), f"{a.get('level', '')} · {a.get('status', '')}",
                                  f"{a.get('steps', 0)} steps · +{n_added} APIs{again}"],
                                 f"n-{a.get('level', '')}", href="#" + anchor("agent", ident), tip=ident))
    chart = svg.tree_chart(boxes, title="Agents (meta → category → tool); click a box for its calls", box_w=170)
    details = []
    for a in agents:
        ident = text(a.get("id"))
        mine = added.get(ident, [])
        scope = text(a.get("category")) or ", ".join(text(t) for t in items(a.get("tools")))
        apis = ("<p>APIs added: " + ", ".join(f"<code>{esc(e.get('function_name') or e.get('api_id'))}</code> "
                                              f"<span class=\"muted\">(round {esc(e.get('round', '?'))})</span>"
                                              for e in mine) + "</p>") if mine else ""
        details.append(
            f'<details class="box" id="{esc(anchor("agent", ident))}"><summary><strong>{esc(ident)}</strong> '
            f'{badge(a.get("level", ""), "plain")} {badge(a.get("status", ""), a.get("status", ""))} '
            f'<span class="muted">{esc(scope)} · {esc(a.get("steps", 0))} steps · end: '
            f'{esc(a.get("end_reason") or "-")} · {number(a.get("tokens"))} tokens</span></summary>'
            f"{apis}{agent_calls(items(a.get('messages')))}</details>")
    return section("agents", "Agent tree", chart + "".join(details))


def pool_history(record: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every pool entry the run held: the final pool's and the pruned ones (from the reflections' events)."""
    seen: dict[str, dict[str, Any]] = {}
    final = {text(e.get("api_id")) for e in items(record.get("pool_entries")) if isinstance(e, dict)}
    for ev in events_of(record, "reflect"):
        for e in items(ev.get("pruned")):
            if isinstance(e, dict):
                seen.setdefault(text(e.get("api_id")), {**e, "pruned_round": ev.get("round"),
                                                        "pruned_reason": ev.get("reason", "")})
    for e in items(record.get("pool_entries")):
        if isinstance(e, dict):
            seen[text(e.get("api_id"))] = {**seen.get(text(e.get("api_id")), {}), **e, "final": True}
    return [{**e, "final": text(e.get("api_id")) in final} for e in seen.values()]


def _verdict_rows(record: Mapping[str, Any]) -> list[tuple[Any, str]]:
    """(round, HTML) of each solvability verdict: the tool agents' checks and the gate's."""
    out = []
    for e in events_of(record, "agent_step"):
        for v in items(e.get("solvable")):
            v = mapping(v)
            out.append((e.get("round"), f"{badge(v.get('label', ''), v.get('label', ''))} by "
                                        f"<code>{esc(e.get('agent', ''))}</code> over {esc(v.get('apis', '?'))} APIs"
                                        + (f": {esc(v.get('reason'))}" if v.get("reason") else "")))
    for e in events_of(record, "solvable"):
        out.append((e.get("round"), f"{badge(e.get('label', ''), e.get('label', ''))} by the {esc(e.get('by', ''))}"
                                    + (f": {esc(e.get('reason'))}" if e.get("reason") else "")))
    return out


def round_of(value: Any) -> int:
    """A round number from the record (0 when absent or damaged)."""
    try:
        return int(value or 0)
    except (TypeError, ValueError, OverflowError):
        return 0


def pool_section(record: Mapping[str, Any]) -> str:
    if record.get("pool_entries") is None:
        pool = items(record.get("pool"))
        body = not_recorded("The pool's entries (who added each API, in which round)")
        if pool:
            body += "<p>Final pool: " + ", ".join(f"<code>{esc(p)}</code>" for p in pool) + "</p>"
        if record.get("removed_apis"):
            body += "<p>Pruned: " + ", ".join(f"<code>{esc(p)}</code>" for p in items(record["removed_apis"])) + "</p>"
        return section("pool", "API-candidate pool", body)
    history = pool_history(record)
    verdicts = _verdict_rows(record)
    solves = events_of(record, "solve")
    rounds = sorted({round_of(e.get("round")) for e in history} | {round_of(r) for r, _ in verdicts}
                    | {round_of(e.get("round")) for e in solves}
                    | {round_of(e.get("round")) for e in events_of(record, "reflect")} | {0})
    rows = []
    for r in rounds:
        added = [e for e in history if round_of(e.get("round")) == r]
        pruned = [e for e in history if e.get("pruned_round") == r]
        solved = [e for e in solves if round_of(e.get("round")) == r]
        rows.append([
            esc(r), ", ".join(f"<code>{esc(e.get('function_name') or e.get('api_id'))}</code>" for e in added) or "-",
            ", ".join(f"<code>{esc(e.get('function_name') or e.get('api_id'))}</code>" for e in pruned) or "-",
            "<br>".join(h for rr, h in verdicts if round_of(rr) == r) or "-",
            "<br>".join(f"attempt {esc(e.get('attempt'))} over {len(items(e.get('pool')))} APIs" for e in solved)
            or "no solve in this round",
        ])
    body = table(["round", "added", "pruned before this round", "solvability verdicts", "solved"], rows,
                 tid="pool-rounds")
    detail = [[f"<code>{esc(e.get('function_name', ''))}</code><br><span class=\"muted\">{esc(e.get('api_id', ''))}"
               "</span>", esc(e.get("tool", "")), esc(e.get("category", "")),
               f'<a href="#{esc(anchor("agent", e.get("added_by", "")))}">{esc(e.get("added_by", ""))}</a>',
               esc(e.get("round", "not recorded")),
               (f"round {esc(e.get('pruned_round'))}" + block(e.get("pruned_reason", ""), label="why", fold=200))
               if "pruned_round" in e else "-",
               badge("in pool", "ok") if e.get("final") else badge("pruned", "pruned")] for e in history]
    body += "<h3>Every API the pool held</h3>" + table(
        ["API", "tool", "category", "added by", "round", "pruned", "at the end"], detail)
    if not history:
        body += '<p class="muted">The pool stayed empty.</p>'
    return section("pool", "API-candidate pool over the reflection rounds", body)


def _observations(node: Mapping[str, Any]) -> dict[str, str]:
    return {text(m.get("tool_call_id")): text(m.get("content")) for m in items(node.get("messages"))
            if isinstance(m, dict) and m.get("tool_call_id")}


def call_html(call: Mapping[str, Any], observation: str | None) -> str:
    name = text(call.get("function"))
    status = text(call.get("status"))
    finish = name == "Finish"
    flags = " ".join([badge(status, "finish" if finish else ("ok" if status == "ok" else "warn"))]
                     + ([badge("cached", "cached")] if call.get("cached") else [])
                     + ([badge("simulated", "simulated")] if call.get("simulated") else []))
    cls = "call finish" if finish else ("call" if status in ("ok", "") else "call err")
    api = f' <span class="muted">{esc(call.get("api_id"))}</span>' if call.get("api_id") else ""
    obs = block(pretty(observation), label="observation", fold=500) if observation is not None else ""
    return (f'<div class="{cls}"><code>{esc(name)}</code>{api} {flags}'
            f"{block(pretty(call.get('arguments', {})), label='arguments', fold=400)}{obs}</div>")


def backtracks(nodes: Sequence[Mapping[str, Any]]) -> list[tuple[Any, Any]]:
    """(from node, back to node) for each backtrack: a node whose parent is not the node expanded just before it."""
    out = []
    for prev, node in itertools.pairwise(nodes):
        if node.get("parent") is not None and node.get("parent") != prev.get("id"):
            out.append((prev.get("id"), node.get("parent")))
    return out


def attempt_html(attempt: Mapping[str, Any]) -> str:
    nodes = [n for n in items(attempt.get("tree")) if isinstance(n, dict)]
    k = attempt.get("attempt", "")
    back = backtracks(nodes)
    back_to = {b for _, b in back}
    after_back = {n.get("id") for prev, n in itertools.pairwise(nodes)
                  if n.get("parent") is not None and n.get("parent") != prev.get("id")}
    boxes = []
    for n in nodes:
        calls = [text(mapping(c).get("function")) for c in items(n.get("calls"))]
        status = text(n.get("status")) or "open"
        boxes.append(svg.TreeBox(text(n.get("id")), None if n.get("parent") is None else text(n.get("parent")),
                                 [f"#{n.get('id')} {status}" + (" ↩" if n.get("id") in back_to else ""),
                                  ", ".join(calls) or ("root" if n.get("parent") is None else "(no call)"),
                                  text(n.get("note"))], "n-root" if n.get("parent") is None else f"n-{status}",
                                 href="#" + anchor(f"node-{k}", n.get("id")), dashed=n.get("id") in after_back))
    head = facts([("round", esc(attempt.get("round", ""))), ("mode", esc(attempt.get("mode", ""))),
                  ("finish", badge(attempt.get("finish_type", "") or "-", "finish")),
                  ("API calls", esc(attempt.get("api_calls", ""))),
                  ("backtracks", esc(len(back)) + (" (" + ", ".join(f"#{a} → #{b}" for a, b in back) + ")"
                                                   if back else "")),
                  ("failed functions", ", ".join(f"<code>{esc(f)}</code>" for f in items(attempt.get("failed_functions")))),
                  ("reason", esc(attempt.get("reason") or ""))])
    chart = svg.tree_chart(boxes, title=f"Attempt {k}: search tree (dashed: reached by backtracking)",
                           box_w=170) if nodes else '<p class="muted">(no node)</p>'
    parts = []
    for n in nodes:
        obs = _observations(n)
        thoughts = [text(m.get("content")) for m in items(n.get("messages"))
                    if isinstance(m, dict) and m.get("role") in ("ai", "assistant") and m.get("content")]
        shown = "".join(call_html(mapping(c), obs.get(text(mapping(c).get("tool_call_id"))))
                        for c in items(n.get("calls")))
        if not shown and not thoughts:
            continue
        parts.append(f'<details class="box" id="{esc(anchor(f"node-{k}", n.get("id")))}"><summary>node '
                     f'#{esc(n.get("id"))} {badge(n.get("status", ""), n.get("status", ""))} '
                     f'<span class="muted">parent #{esc(n.get("parent"))} · depth {esc(n.get("depth", ""))}</span>'
                     f"</summary>{''.join(block(t, label='thought', fold=300) for t in thoughts)}{shown}</details>")
    return (f'<h3 id="{esc(anchor("attempt", k))}">Attempt {esc(k)}</h3>{head}{chart}{"".join(parts)}')


def search_section(record: Mapping[str, Any]) -> str:
    attempts = [a for a in items(record.get("trajectory")) if isinstance(a, dict)]
    if record.get("trajectory") is None:
        body = not_recorded("The solver's search trees")
    elif not attempts:
        body = '<p class="muted">The solver did not run.</p>'
    else:
        body = "".join(attempt_html(a) for a in attempts)
    return section("search", "DFSDT search tree", body)


def reflections_section(record: Mapping[str, Any]) -> str:
    if record.get("events") is None:
        return section("reflections", "Reflections", not_recorded("The reflections (the run's event log)"))
    rows = []
    for e in events_of(record, "reflect"):
        what = "new round (unsolved answer)" if e.get("request") == "new" else "climb (agents re-activated)"
        agents = ", ".join(f'<a href="#{esc(anchor("agent", a))}">{esc(a)}</a>' for a in items(e.get("reactivated")))
        pruned = ", ".join(f"<code>{esc(mapping(p).get('function_name') or mapping(p).get('api_id'))}</code>"
                           for p in items(e.get("pruned")))
        rows.append([esc(e.get("round", "")), esc(what), esc(e.get("level", "") or "-"), agents or "-",
                     block(e.get("reason", "") or "-", label="reason"), pruned or "-"])
    body = (table(["to round", "request", "level", "re-activated", "reason", "APIs pruned"], rows) if rows
            else '<p class="muted">No reflection: the run ended after its first judged answer (or before).</p>')
    return section("reflections", "Reflections", body)


def seconds(value: Any, default: float | None = None) -> Any:
    """A time of the event log as seconds (a finite number ≥ 0), else `default`."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        return default
    return max(0.0, x) if x == x and x not in (float("inf"), float("-inf")) else default


def timeline_section(record: Mapping[str, Any]) -> str:
    events = [e for e in items(record.get("events")) if isinstance(e, dict)]
    if not any(seconds(e.get("t")) is not None for e in events):
        return section("timeline", "Timeline", not_recorded("The timeline (timed events)"))
    lanes: dict[str, list[svg.Span]] = {}
    for e in events:
        end = seconds(e.get("t"))
        if e.get("kind") == "agent_step" and end is not None:
            start = seconds(e.get("t0"), end)
            fns = ", ".join(text(f) for f in items(e.get("functions")))
            lanes.setdefault(text(e.get("agent")), []).append(svg.Span(
                start, end, f"l-{e.get('level', 'tool')}",
                f"{e.get('agent')} round {e.get('round')}: {fns or '(no call)'} ({end - start:.2f} s)"))
    judges = {e.get("attempt"): e for e in events if e.get("kind") == "judge"}
    for e in events:
        start = seconds(e.get("t"))
        if e.get("kind") == "solve" and start is not None:
            j = judges.get(e.get("attempt"), {})
            end = seconds(j.get("t0"), seconds(j.get("t"), start))
            lanes.setdefault("solver", []).append(svg.Span(start, end, "l-solver",
                                                           f"solver attempt {e.get('attempt')}: {end - start:.2f} s"))
    for e in judges.values():
        end = seconds(e.get("t"))
        if end is not None:
            lanes.setdefault("judge", []).append(svg.Span(seconds(e.get("t0"), end), end, "l-judge",
                                                          f"judge, attempt {e.get('attempt')}: {e.get('label')}"))
    markers = [svg.Marker(t, f"reflect → round {e.get('round')}", "m-reflect")
               for e in events if e.get("kind") == "reflect" and (t := seconds(e.get("t"))) is not None]
    markers += [svg.Marker(t, f"end: {e.get('status')}", "m-end")
                for e in events if e.get("kind") == "end" and (t := seconds(e.get("t"))) is not None]
    chart = svg.timeline_chart(list(lanes.items()), markers, title="Timeline (seconds since the run started)")
    key = svg.legend({"l-meta": "meta agent", "l-category": "category agent", "l-tool": "tool agent",
                      "l-solver": "solver", "l-judge": "judge"})
    return section("timeline", "Timeline", chart + key)


def role_rows(roles: Mapping[str, Any]) -> list[str]:
    """Roles in the paper's order (meta → … → judge), others after."""
    return sorted(roles, key=lambda r: (ROLE_ORDER.index(r) if r in ROLE_ORDER else len(ROLE_ORDER), r))


def usage_charts(roles: Mapping[str, Mapping[str, Any]], *, per: str = "") -> str:
    """Tokens (input / output) and model calls per role, as bar charts; cost when any is known."""
    names = role_rows(roles)
    tokens = svg.bar_chart([svg.Bar(r, [(float(roles[r].get("input_tokens") or 0), "s-input", "input"),
                                        (float(roles[r].get("output_tokens") or 0), "s-output", "output")])
                            for r in names], title=f"Tokens per role{per}", unit="tokens")
    calls = svg.bar_chart([svg.Bar(r, [(float(roles[r].get("model_calls") or 0), "s-calls", "model calls")])
                           for r in names], title=f"Model calls per role{per}", unit="calls")
    out = tokens + calls
    if any(roles[r].get("cost_usd") for r in names):
        out += svg.bar_chart([svg.Bar(r, [(float(roles[r].get("cost_usd", 0) or 0), "s-cost", "USD")],
                                      note=f"${float(roles[r].get('cost_usd', 0) or 0):.4f}") for r in names],
                             title=f"Cost per role{per}", unit="USD")
    return f'<div class="cards usage-plots">{out}</div>'


def usage_section(record: Mapping[str, Any]) -> str:
    usage = mapping(record.get("usage"))
    roles = {r: mapping(v) for r, v in mapping(usage.get("roles")).items()}
    if not roles:
        return section("usage", "Usage per role", not_recorded("The usage per role"))
    rows = [[esc(r), number(roles[r].get("model_calls")), number(roles[r].get("input_tokens")),
             number(roles[r].get("output_tokens")), number(roles[r].get("estimated_tokens")),
             number(roles[r].get("cost_usd"), 4)] for r in role_rows(roles)]
    totals = facts([("API calls", number(usage.get("api_calls"))), ("solver attempts", number(usage.get("solver_attempts"))),
                    ("reflections", number(usage.get("reflections"))), ("pool size", number(usage.get("pool_size"))),
                    ("agents", esc(", ".join(f"{k}: {v}" for k, v in mapping(usage.get("agents")).items()))),
                    ("cost", f"${float(usage.get('cost_usd') or 0):.4f}")])
    note = ('<p class="muted">Token counts come from the server\'s usage figures; "estimated" ones were counted '
            "as characters / 4 where the server gave none.</p>")
    return section("usage", "Usage per role (AnyTool Table 12)", usage_charts(roles) + table(
        ["role", "model calls", "input tokens", "output tokens", "estimated", "cost USD"], rows) + totals + note)


def query_page(record: Mapping[str, Any], *, index_href: str = "") -> str:
    """One run's page (a whole HTML document) from a results record, secrets already masked."""
    body = "".join([header(record, index_href), answer_section(record), verdicts_section(record),
                    agents_section(record), pool_section(record), search_section(record),
                    reflections_section(record), timeline_section(record), usage_section(record)])
    title = f"{text(record.get('query_id', 'run'))} · {text(record.get('status', ''))} · AnyTool report"
    return document(title, body)
