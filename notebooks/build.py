"""Write the notebooks; with --execute, run each in a Jupyter kernel (nbclient, no `jupyter` command needed), save it
with its outputs and export its pictures into docs/img for the documentation site:

    python notebooks/build.py --execute              # both notebooks
    python notebooks/build.py --execute quickstart   # one of them
    python notebooks/build.py --export               # only the pictures of the saved notebooks, into docs/img

Works on Python 3.11 and 3.12 with the `dev` extra (nbclient, nbformat, ipykernel, matplotlib, pandas)."""

from __future__ import annotations

import argparse
import base64
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent
PICTURES = HERE.parent / "docs" / "img"
NAMES = ("quickstart", "evaluate")
# the docs' pictures: notebook → [(file name in docs/img, a text the producing cell's source contains)]
EXPORTS = {
    "quickstart": [("anytool-graph.png", "xray=False"), ("agent-tree.png", "draw_agent_tree"),
                   ("search-tree.png", "draw_search_tree"), ("usage.png", "draw_usage")],
    "evaluate": [("retrieval-by-group.png", "ax = metrics"), ("passrate-consumption.png", "scores = ")],
}

QUICKSTART = [
    new_markdown_cell("""# langgraph-anytool quickstart

AnyTool on LangGraph: a meta-agent creates category agents, which create tool agents, which fill a shared
API-candidate pool; a DFSDT solver answers with the pool; a judge and self-reflection route failures back to the
unfinished agents.

This notebook runs offline on the built-in catalog. Set `ANYTOOL_MODEL` (e.g. `openai:gpt-4o-mini`, or any
OpenAI-compatible server through `OPENAI_BASE_URL`) to use a real model; without one, the rule-based
`OfflinePolicyModel` stands in (it is **not** an LLM). Pictures are drawn locally with matplotlib
(the `viz` extra: `pip install '.[viz]'` in a checkout); nothing here calls a web service."""),
    new_code_cell("""import os
os.environ.setdefault("ANYTOOL_EMBEDDINGS", "none")  # BM25 search only: fast and deterministic here

from langgraph_anytool import AnyToolConfig, AnyToolRetriever, Catalog, create_anytool_graph, viz

catalog = Catalog.builtin()          # or Catalog.from_toolbench("../../shared/toolbench/tools")
catalog"""),
    new_markdown_cell("## Browse and search the catalog\n\n`relevance` is 0–1, 1.0 = first for every retriever: with "
                      "BM25 alone (the saved outputs) 1 / the API's effective rank (0.5 ≈ second); with MiniLM "
                      "the share of the best score the query allows (z-score fusion)."),
    new_code_cell("""print(catalog.categories)
retriever = AnyToolRetriever(catalog=catalog, k=5)
for doc in retriever.invoke("distance between two cities in kilometres"):
    m = doc.metadata
    print(f"{m['rank']}. {m['relevance']:.2f}  {m['category']} / {m['tool']} / {m['api']}  -> {m['function_name']}")"""),
    new_markdown_cell("## The graph\n\nDisplaying a compiled graph draws it offline (subgraphs framed, conditional "
                      "edges dashed, loops in red)."),
    new_code_cell("""from langgraph.checkpoint.memory import InMemorySaver
from langgraph_anytool.offline import OfflinePolicyModel

model = os.environ.get("ANYTOOL_MODEL") or OfflinePolicyModel(catalog=catalog)
graph = create_anytool_graph(catalog, model, config=AnyToolConfig(max_reflections=3), checkpointer=InMemorySaver())
graph"""),
    new_markdown_cell("Every subgraph open makes a wide picture; the top level alone (each agent and the solver one "
                      "box) stays legible at page width:"),
    new_code_cell("viz.draw_graph(graph, xray=False)"),
    new_markdown_cell("## Run it (checkpointed)"),
    new_code_cell("""config = {"configurable": {"thread_id": "notebook-1"}}
out = graph.invoke({"query": "How far is Paris from Berlin, and is 2025-07-14 a public holiday in France?"}, config)
print(out["status"], "—", out["answer"])
print([e["function_name"] for e in out["api_pool"]])"""),
    new_markdown_cell("## What happened\n\nThe agent tree (meta → category → tool agents, with their status, steps "
                      "and the APIs each added to the pool):"),
    new_code_cell("viz.draw_agent_tree(out)"),
    new_markdown_cell("The solver's DFSDT search tree for the last attempt (each node: the calls made and their "
                      "status; grey = backtracked, green = answer, red = gave up):"),
    new_code_cell("viz.draw_search_tree(out)"),
    new_markdown_cell("Model calls and tokens per role (the paper's Table 12 view):"),
    new_code_cell("viz.usage_frame(out)"),
    new_code_cell("viz.draw_usage(out)"),
    new_markdown_cell("## Stream progress live"),
    new_code_cell("""import sys
from langgraph_anytool.cli.progress import ProgressPrinter, stream_run

stream_run(graph, {"query": "Convert 26.2 miles to kilometers"}, {"configurable": {"thread_id": "notebook-2"}},
           ProgressPrinter(sys.stdout).handle)"""),
    new_markdown_cell("""## α-UMi with a text-mode caller

`solver="umi"` splits each solver step into α-UMi's planner, caller and summarizer. A caller model without native
function calling (e.g. α-UMi's fine-tuned checkpoints served by vLLM) writes its call as `Action:` /
`Action Input:` text (`text_mode_roles=("caller",)`), and `umi_prompts="alpha_umi"` uses α-UMi's prompt formats
(the planner ends with `Next: caller.`, `Next: conclusion.` or `Next: give up.`). Offline, the stand-in plays each
role in the format its call asks for."""),
    new_code_cell("""import json

umi = create_anytool_graph(catalog, model, config=AnyToolConfig(
    solver="umi", text_mode_roles=("caller",), umi_prompts="alpha_umi"))
out = umi.invoke({"query": "How far is Paris from Berlin?"})
print(out["status"], "—", out["answer"])
for node in out["solver_attempts"][-1]["tree"][1:]:  # one search-tree node per step (node 0 is the root)
    for m in node["messages"]:
        said = m["content"] or json.dumps(m.get("tool_calls"))  # the caller's text, parsed into a tool call
        print(f"{m.get('name') if m['role'] == 'assistant' else m['role']:>10}: {said[:110]}")"""),
    new_markdown_cell("""## LangGraph Studio

`langgraph.json` exports the graph (compiled without a checkpointer). With `pip install 'langgraph-cli[inmem]'`:

    ANYTOOL_MODEL=openai:gpt-4o-mini langgraph dev

`ANYTOOL_CATALOG` points it at a ToolBench-layout directory; `ANYTOOL_EXECUTION` picks the executor."""),
]

EVALUATE = [
    new_markdown_cell("""# Evaluating langgraph-anytool

Retrieval quality of the catalog search on the StableToolBench development queries (ToolBench catalog, 2,490 APIs),
read from `../../shared/toolbench` when it is there; otherwise on a few hand-labelled requests over the built-in
catalog. Metrics: Recall@k and NDCG@k over each query's "relevant APIs" (AnyTool §5 setting: the whole catalog
is searched)."""),
    new_code_cell("""import json, os, tempfile
from pathlib import Path
os.environ.setdefault("ANYTOOL_EMBEDDINGS", "none")  # BM25 only here (set "minilm" for the hybrid search)

import pandas as pd
from langgraph_anytool import Catalog
from langgraph_anytool.eval.retrieval import evaluate_retrieval

shared = Path("..").resolve().parent / "shared" / "toolbench"
if (shared / "tools").is_dir():
    catalog = Catalog.from_toolbench(shared / "tools")
    files = sorted((shared / "queries").glob("*.json"))
else:  # hand-labelled requests over the builtin catalog
    catalog = Catalog.builtin()
    labelled = [("How far is Paris from Berlin?", "Geo Distance Calculator", "Distance Between Cities"),
                ("Is 2025-07-14 a public holiday in France?", "Public Holidays", "Is Public Holiday"),
                ("Convert 26.2 miles to kilometres", "Universal Unit Converter", "Convert Units")]
    path = Path(tempfile.mkdtemp()) / "builtin_demo.json"
    path.write_text(json.dumps([{"query": q, "query_id": i, "relevant APIs": [[t, a]]}
                                for i, (q, t, a) in enumerate(labelled)]))
    files = [path]
from langgraph_anytool.catalog.search import CatalogSearcher

searcher = CatalogSearcher(catalog, progress=False)  # no progress bars in the notebook's outputs
report = evaluate_retrieval(catalog, files, recall_ks=(5, 10, 64), ndcg_ks=(5, 10),
                            search=lambda q, k: [h.api_id for h in searcher.search_apis(q, k)])
print(catalog, f"— {report.overall.queries} queries")  # no timing: a re-run leaves the saved notebook as it is"""),
    new_code_cell("""rows = [{"group": g.group, "queries": g.queries, **{m: round(100 * v, 1) for m, v in g.metrics.items()}}
        for g in [*report.groups, report.overall]]
metrics = pd.DataFrame(rows).set_index("group")
metrics"""),
    new_code_cell("""import matplotlib.pyplot as plt
ax = metrics.drop(index="overall")[["Recall@5", "Recall@10", "NDCG@5"]].plot.bar(figsize=(9, 3.4), rot=20)
ax.set_ylabel("%"); ax.set_ylim(0, 100); ax.set_xlabel(""); ax.set_title("catalog search: retrieval by query group")
plt.setp(ax.get_xticklabels(), ha="right")
ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)  # beside the bars, never over them
plt.show()"""),
    new_markdown_cell("""## Pass rate and consumption (Evaluation I)

A small batch on the built-in catalog, run twice: AnyTool's setting (`--mode whole`: the agents search the whole
catalog) and ToolBench's (`--mode reference`: the solver gets each query's own APIs). Every model role here is the
**offline stand-in (a heuristic, not an LLM)**, and so is the evaluator, so the figures show the harness, not a
model. With an endpoint, pass `--model` and `--evaluator` (see the README's "Evaluate" section)."""),
    new_code_cell("""import subprocess, sys
from langgraph_anytool.eval.anytool.results import read_results
from langgraph_anytool.eval.anytool.stats import results_stats

work = Path(tempfile.mkdtemp())
requests = [("Convert 26.2 miles to kilometers.", "Universal Unit Converter", "Convert Units"),
            ("Is 2025-07-14 a public holiday in France?", "Public Holidays", "Is Public Holiday"),
            ("What day of the week was 2024-02-29?", "Date Calculator", "Day of Week"),
            ("How far is Paris from Berlin?", "Geo Distance Calculator", "Distance Between Cities")]
qfile = work / "builtin_demo.json"
qfile.write_text(json.dumps([{"query": q, "query_id": i, "api_list": [{"tool_name": t, "api_name": a}],
                              "relevant APIs": [[t, a]]} for i, (q, t, a) in enumerate(requests)]))

def cli(*argv):  # the `anytool` command (in a subprocess: it runs its own event loop)
    done = subprocess.run([sys.executable, "-c", "import sys; from langgraph_anytool.cli import main; "
                           "sys.exit(main(sys.argv[1:]))", *argv], capture_output=True, text=True)
    return done.returncode, done.stdout

rows, passrates = [], []
for mode in ("whole", "reference"):
    results = work / f"{mode}.jsonl"
    cli("eval", "run", "--queries", str(qfile), "--offline", "--mode", mode, "--out", str(results))
    _, overall = results_stats(read_results(results))
    rows.append({"mode": mode, "tokens/query": overall.total_tokens, "model calls/query": overall.model_calls,
                 "API calls/query": overall.api_calls, "reflections/query": overall.reflections,
                 "pool recall %": 100 * (overall.pool_recall or 0)})
    for protocol in ("anytool", "sopr"):
        _, text = cli("eval", "passrate", str(results), "--offline", "--protocol", protocol, "--json",
                      "--cache", str(work / "evaluator.sqlite"))
        passrates.append({"mode": mode, "protocol": protocol, "pass rate %": json.loads(text)["overall"]["rate"]})
consumption = pd.DataFrame(rows).set_index("mode").round(1)
consumption"""),
    new_code_cell("""modes = ["whole", "reference"]  # one order in both panels (pivot would sort them)
scores = pd.DataFrame(passrates).pivot(index="mode", columns="protocol", values="pass rate %").reindex(modes)
fig, (a1, a2) = plt.subplots(1, 2, figsize=(9, 3.6))
scores.plot.bar(ax=a1, rot=0, ylim=(0, 100), title="pass rate % (offline stand-in, not an LLM)")
consumption.reindex(modes)[["model calls/query", "API calls/query"]].plot.bar(ax=a2, rot=0,
                                                                             title="consumption per query")
for ax in (a1, a2):  # the legends below the panels, never over a bar
    ax.set_xlabel("")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=2, frameon=False)
plt.tight_layout(); plt.show()
scores"""),
]


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The options. The names are checked here, not by argparse `choices`: with `nargs="*"` Python 3.11's
    argparse checks the empty default against the choices and refuses a call without names."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--execute", action="store_true",
                    help="run each notebook, save it with its outputs and export its pictures into docs/img")
    ap.add_argument("--pictures", type=Path, default=PICTURES, help="where the pictures go (default: docs/img)")
    ap.add_argument("--out", type=Path, default=HERE, help="where the notebooks are written (default: notebooks/)")
    ap.add_argument("--export", action="store_true",
                    help="only export the pictures of the saved notebooks into docs/img (nothing is run or written)")
    ap.add_argument("names", nargs="*", metavar="NAME", help=f"the notebooks to write: {', '.join(NAMES)} (default: both)")
    args = ap.parse_args(argv)
    unknown = [n for n in args.names if n not in NAMES]
    if unknown:
        ap.error(f"unknown notebook {unknown[0]!r}; notebooks are {', '.join(NAMES)}")
    return args


def export_pictures(nb: Any, name: str, folder: Path) -> list[Path]:
    """The first PNG output of each picture-producing cell of notebook `name`, written into `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for file_name, needle in EXPORTS[name]:
        cell = next(c for c in nb.cells if c.cell_type == "code" and needle in c.source)
        png = next((o["data"]["image/png"] for o in cell.get("outputs", []) if "image/png" in o.get("data", {})), None)
        if png is None:
            raise SystemExit(f"notebooks/{name}.ipynb: the cell with {needle!r} drew no picture")
        (folder / file_name).write_bytes(base64.b64decode(png))
        written.append(folder / file_name)
    return written


def execute(nb: Any) -> None:
    """Run the notebook in a fresh kernel, in notebooks/, keeping nothing that changes from one run to the next: no
    execution timestamps, no interpreter patch version."""
    import tempfile

    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient

    # the kernel on local sockets (IPC), not TCP: it has no unencrypted port to warn about
    with tempfile.TemporaryDirectory(prefix="anytool-kernel-") as sockets:
        km = KernelManager(kernel_name="python3", transport="ipc", ip=str(Path(sockets) / "kernel"))
        try:
            NotebookClient(nb, km=km, timeout=600, kernel_name="python3", record_timing=False,
                           resources={"metadata": {"path": str(HERE)}}).execute()
        finally:  # a client given a kernel manager leaves the kernel running: it would outlive us and say so
            if km.has_kernel:
                km.shutdown_kernel(now=False)
    nb.metadata.get("language_info", {}).pop("version", None)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = merged_streams(cell.outputs)


def merged_streams(outputs: list[Any]) -> list[Any]:
    """The outputs with each run of consecutive stream outputs of one name (stdout, stderr) made one: how the kernel
    cut a cell's prints into messages depends on timing, and must not show in the saved file."""
    merged: list[Any] = []
    for out in outputs:
        last = merged[-1] if merged else None
        if (out.get("output_type") == "stream" and last is not None and last.get("output_type") == "stream"
                and last.get("name") == out.get("name")):
            last["text"] = "".join(last["text"]) + "".join(out["text"])
        else:
            merged.append(out)
    return merged


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    if args.export:
        for name in args.names or NAMES:
            for path in export_pictures(nbformat.read(HERE / f"{name}.ipynb", as_version=4), name, args.pictures):
                print(f"wrote {path}")
        return
    for name, cells in (("quickstart", QUICKSTART), ("evaluate", EVALUATE)):
        if args.names and name not in args.names:
            continue
        nb = new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                                "language": "python"}})
        for i, cell in enumerate(nb.cells):  # stable ids: a re-run without changes rewrites nothing
            cell.id = f"{name}-{i:02d}"
        if args.execute:
            execute(nb)
            for path in export_pictures(nb, name, args.pictures):
                print(f"wrote {path}")
        args.out.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, args.out / f"{name}.ipynb")
        print(f"wrote {args.out / f'{name}.ipynb'}")


if __name__ == "__main__":
    main()
