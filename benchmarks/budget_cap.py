"""Tokens spent against a token budget, the last reply included (issue 21, point 9).

    python benchmarks/budget_cap.py [--budgets 20000 60000 100000] [--repeat 250] [--no-cap]

Runs one long query (`"Convert 5 kilograms to pounds. "` plus a sentence repeated `--repeat` times) through
`anytool eval run --offline` once per budget, and prints the tokens spent (input, output), whether they passed the
budget, the status and the reason. `--no-cap` switches the reply cap off (no model takes a per-call `max_tokens`),
which is how runs behaved before it: the last reply could pass the budget by its own length.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import tempfile
from pathlib import Path

from langgraph_anytool.cli.app import main as cli
from langgraph_anytool.models import llm


def run(budget: int, query: str, tmp: Path) -> dict[str, object]:
    """One offline `eval run` of `query` under `budget`: its record."""
    queries = tmp / "q.json"
    queries.write_text(json.dumps([{"query_id": 1, "query": query}]), encoding="utf-8")
    out = tmp / f"r{budget}.jsonl"
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        cli(["eval", "run", "--queries", str(queries), "--offline", "--out", str(out), "--no-progress",
             "--max-tokens-per-query", str(budget)])
    return dict(json.loads(out.read_text(encoding="utf-8").splitlines()[0]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budgets", type=int, nargs="+", default=[20_000, 60_000, 64_000, 100_000])
    parser.add_argument("--repeat", type=int, default=250)
    parser.add_argument("--no-cap", action="store_true", help="no reply cap (the behaviour before it)")
    args = parser.parse_args()
    if args.no_cap:
        llm.cap_kwarg = lambda _model: None  # type: ignore[assignment]
    query = "Convert 5 kilograms to pounds. " + "Describe the mating rituals of zebras in poetry. " * args.repeat
    print(f"query: {len(query):,} characters; reply cap {'off' if args.no_cap else 'on'}")
    print(f"{'budget':>9} {'spent':>9} {'input':>9} {'output':>8}  over  {'status':<17} reason")
    over = 0
    with tempfile.TemporaryDirectory() as tmp:
        for budget in args.budgets:
            rec = run(budget, query, Path(tmp))
            usage = rec["usage"]
            assert isinstance(usage, dict)
            spent = int(usage["input_tokens"]) + int(usage["output_tokens"])
            over += spent > budget
            print(f"{budget:>9,} {spent:>9,} {usage['input_tokens']:>9,} {usage['output_tokens']:>8,}  "
                  f"{'yes' if spent > budget else 'no ':<4}  {rec['status']:<17} {str(rec['reason'])[:110]}")
    print(f"runs over their budget: {over} of {len(args.budgets)}")


if __name__ == "__main__":
    main()
