"""The offline stand-in's status and answer for the builtin catalog's example queries and the docs' queries, so that a
change of its judge can be measured as flips (issue 35 §5: how many previously-solved answers a purpose check turns
unsolved, and which).

    python benchmarks/offline_answers.py --out new.json
    python benchmarks/offline_answers.py --compare old.json new.json

The first form runs every query through the whole offline graph (`create_anytool_graph(catalog, "offline")`, the
builtin catalog) and writes {query: {status, answer}}; run it on two commits and `--compare` the files: it prints each
query whose status or answer changed, and the counts (solved before, after, solved → not solved). Queries: the 20 of
`benchmarks/tool_selection.py` `BUILTIN_QUERIES` and the ones the README and docs pages run or show.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

DOCS_QUERIES = [
    "Convert 26.2 miles to kilometers.", "Is 2025-07-14 a public holiday in France?", "Weather in Paris?",
    "Weather in Rome?", "miles to km", "Convert miles to kilometers", "convert 3 miles to km",
    "How far is Paris from Berlin, and is 2025-07-14 a public holiday in France?", "How far is Paris from Berlin?",
    "What is the capital of France?", "What are the latest cricket scores?", "What is the airspeed of an unladen swallow?",
    "What is the inventory count?",
    "Convert 26.2 miles to kilometers. Is 2025-07-14 a public holiday in France? How far is Paris from Berlin?",
    "What is the SHA-256 hash of 'hello'? Encode 'hello' in base64.", "Compute the SHA-256 hash of the word hello.",
]


def run(out: Path) -> None:
    from tool_selection import BUILTIN_QUERIES

    from langgraph_anytool import Catalog, create_anytool_graph

    catalog = Catalog.builtin()
    answers = {}
    for query in [q for q, _ in BUILTIN_QUERIES] + DOCS_QUERIES:
        result = create_anytool_graph(catalog, "offline").invoke({"query": query}, {"recursion_limit": 500})
        answers[query] = {"status": result["status"], "answer": result["answer"]}
        print(f"{result['status']:>9}  {query}", flush=True)
    out.write_text(json.dumps(answers, indent=1, ensure_ascii=False))


def compare(old_file: Path, new_file: Path) -> None:
    old, new = json.loads(old_file.read_text()), json.loads(new_file.read_text())
    for query, before in old.items():
        after = new.get(query)
        if after is None or (before["status"], before["answer"]) == (after["status"], after["answer"]):
            continue
        print(f"{before['status']} -> {after['status']}: {query}\n  before: {before['answer'][:200]}\n"
              f"  after:  {after['answer'][:200]}")
    solved = [q for q in old if old[q]["status"] == "solved"]
    print(f"{len(old)} queries; solved before {len(solved)}, after "
          f"{sum(1 for q in new if new[q]['status'] == 'solved')}; solved -> not solved "
          f"{sum(1 for q in solved if new.get(q, {}).get('status') != 'solved')}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, help="write {query: {status, answer}} here")
    p.add_argument("--compare", type=Path, nargs=2, metavar=("OLD", "NEW"), help="print the flips between two runs")
    args = p.parse_args()
    if args.compare:
        compare(*args.compare)
    elif args.out:
        run(args.out)
    else:
        p.error("give --out FILE or --compare OLD NEW")


if __name__ == "__main__":
    main()
