"""Real models behind an OpenAI-compatible endpoint: per query, model and solver mode, the run's status and what the
SERVER counted.

    .venv/bin/python benchmarks/real_model.py                 # SmolLM2-135M and Gemma 3 270M on a local llama-server
    .venv/bin/python benchmarks/real_model.py --local smollm2 --queries 2 --modes dfsdt-text
    .venv/bin/python benchmarks/real_model.py --base-url http://gpu-host:8000/v1 --model Qwen/Qwen2.5-7B-Instruct \\
        --window 32768                                          # any endpoint: vLLM, Ollama, llama.cpp, a provider

Each (model, mode, query) is one `anytool run` (the installed command, as a user runs it) on the builtin catalog,
whose model requests pass through a recording loopback proxy (tests/real_model/recorder.py) on their way to the
server. Columns:
- status: how the run ended (docs/endpoints.md, "What a record's status means");
- calls: chat requests the server answered (refused ones, e.g. an overflow, are counted apart: "refused");
- prompt / completion: the tokens in the server's own `usage` replies, summed over the run;
- over: requests whose prompt (the server's count) plus `max_tokens` could pass the declared window (or that sent
  no `max_tokens`);
- fn calls / valid: the function calls in the server's replies (native `tool_calls`, or a constrained reply's JSON
  call), and those whose name is an offered function and whose arguments pass its parameters' schema;
- API calls: the catalog APIs the solver called (its attempts' `api_calls`); pool: the run's API pool;
- wall s: the run's wall time, the command's start to its end;
- gen tok/s: completion tokens per second of generation, from llama.cpp's `timings` (other servers send none:
  then completion tokens per second of request time, prompt processing included, marked "~").

Without --base-url the script starts llama.cpp's llama-server (`make llama-server` builds it) once per local model
(`--local`, from the PyPI packages of the `real-model` extra), with `-c --server-ctx` (4096), `--jinja` and greedy
sampling; the client declares `--window` (2048: short prompts, for a CPU) in `model_profiles`. With --base-url,
OPENAI_API_KEY is passed to the endpoint as it is set (it is never printed), and the window is declared only when
--window is given.

A summary per model × mode follows: runs, solved, the solver's API calls, the valid-call rate, runs with a
reflection round ("reflected": more than one solver attempt, or a reflection event), how the runs ended (the failure taxonomy), tokens and
wall time.

Solver modes (`--modes`, tests/real_model/workload.py): dfsdt (hierarchical retriever, DFSDT, function calls:
constrained by a JSON schema on llama.cpp), dfsdt-text (the search retriever's 64-API pool, DFSDT writing Action /
Action Input text, held to a call by a grammar on llama.cpp), cot and cot-text (one chain of thought over that
pool), umi (α-UMi's planner, caller and summarizer over that pool); dfsdt-small and dfsdt-small-text (the
hierarchical retriever and DFSDT on tests/real_model/small.py's two-tool catalog, CPU-sized settings and offline
judge, its own two-part query; the second in text mode: the agents' and the solver's calls held by a grammar).
"adds" in the per-run table: the agents' `add_apis_into_api_pool` calls in the server's replies.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from langgraph_anytool.integrations.local_models import LOCAL_MODELS, LlamaServer, gguf_path  # noqa: E402
from langgraph_anytool.render import table  # noqa: E402
from tests.real_model.recorder import Exchange, RecordingProxy  # noqa: E402
from tests.real_model.small import QUERY as SMALL_QUERY  # noqa: E402
from tests.real_model.workload import MODES, QUERIES, profiles  # noqa: E402

# the small catalog and CPU-sized settings of tests/real_model/small.py (its own query; run in process by
# `python -m tests.real_model.small`): mode → text mode
SMALL_MODES = {"dfsdt-small": False, "dfsdt-small-text": True}

ANYTOOL = Path(sys.executable).with_name("anytool")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--base-url", default=None, help="an OpenAI-compatible endpoint (default: local llama-servers)")
    p.add_argument("--model", action="append", default=[], help="model name(s) at --base-url (repeatable)")
    p.add_argument("--local", nargs="+", default=list(LOCAL_MODELS), choices=list(LOCAL_MODELS),
                   help="local models to serve with llama-server when no --base-url (default: all)")
    p.add_argument("--llama-server", default=None, help="the llama-server binary (default: found as the tests do)")
    p.add_argument("--server-ctx", type=int, default=4096, help="llama-server's -c (default 4096)")
    p.add_argument("--threads", type=int, default=None, help="llama-server's --threads (default: its own)")
    p.add_argument("--window", type=int, default=None,
                   help="the window the client declares (default: 2048 for local models, none with --base-url)")
    p.add_argument("--modes", nargs="+", default=["dfsdt", "dfsdt-text", "cot", "umi"],
                   choices=[*MODES, *SMALL_MODES])
    p.add_argument("--queries", type=int, default=5, help=f"the first N builtin queries (1..{len(QUERIES)})")
    p.add_argument("--max-run-seconds", type=float, default=600.0,
                   help="each run's max_run_seconds, its hard time limit (default 600)")
    p.add_argument("--max-tokens", type=int, default=None,
                   help="every call's max_tokens (model_profiles; default: each role's own)")
    p.add_argument("--token-budget", type=int, default=20_000, help="--max-tokens-per-query (default 20000)")
    p.add_argument("--set", action="append", default=[], dest="settings", metavar="FIELD=VALUE",
                   help="more --set options for every run")
    p.add_argument("--json", metavar="FILE", default=None, help="also write the rows as JSON")
    p.add_argument("--requests", metavar="FILE", default=None,
                   help="also write every recorded request as JSON lines (its messages' text, the reply's text, "
                        "the offered functions' names, whether it was constrained or held to a grammar)")
    args = p.parse_args(argv)
    if args.base_url and not args.model:
        p.error("--base-url needs --model NAME")
    if not 1 <= args.queries <= len(QUERIES):
        p.error(f"--queries must be 1..{len(QUERIES)}")
    return args


@contextmanager
def endpoint(args: argparse.Namespace, logs: Path) -> Iterator[tuple[RecordingProxy, str, list[str]]]:
    """(the recording proxy, the client's base URL through it, the model names)."""
    with ExitStack() as stack:
        if args.base_url:
            parts = urlsplit(args.base_url.rstrip("/"))
            root = f"{parts.scheme}://{parts.netloc}"
            upstreams = dict.fromkeys(args.model, root)
            suffix = parts.path
        else:
            upstreams, suffix = {}, "/v1"
            for name in args.local:
                print(f"starting llama-server for {LOCAL_MODELS[name].title} (-c {args.server_ctx})", flush=True)
                server = LlamaServer(gguf_path(name), ctx=args.server_ctx, alias=name, binary=args.llama_server,
                                     threads=args.threads, log_path=logs / f"{name}.log",
                                     extra=("--temp", "0", "--seed", "1"))
                upstreams[name] = stack.enter_context(server).url
        proxy = stack.enter_context(RecordingProxy(upstreams))
        yield proxy, proxy.url + suffix, list(upstreams)


def gen_rate(chats: list[Exchange]) -> str:
    """Completion tokens per second of generation (llama.cpp timings), else per second of request time (~)."""
    timed = [e for e in chats if e.tokens_per_second and e.completion_tokens]
    if timed and len(timed) == len(chats):
        seconds = sum((e.completion_tokens or 0) / (e.tokens_per_second or 1) for e in timed)
        return f"{sum(e.completion_tokens or 0 for e in timed) / seconds:.1f}" if seconds else "-"
    seconds = sum(e.seconds for e in chats)
    return f"~{sum(e.completion_tokens or 0 for e in chats) / seconds:.1f}" if seconds else "-"


def run_one(args: argparse.Namespace, proxy: RecordingProxy, base_url: str, model: str, mode: str, query: str,
            window: int | None, home: Path) -> dict[str, Any]:
    if mode in SMALL_MODES:
        cmd = [sys.executable, "-m", "tests.real_model.small", model, "--window", str(window or 2048),
               "--max-tokens", str(args.max_tokens or 256), *(["--text"] if SMALL_MODES[mode] else [])]
    else:
        options, native = MODES[mode]
        cap = {"max_tokens": args.max_tokens} if args.max_tokens else {}
        profile = (profiles([model], window, native, args.max_tokens) if window is not None
                   else json.dumps({model: {"tool_calling": native, **cap}}))
        cmd = [str(ANYTOOL), "run", query, "--model", f"openai:{model}", *options, "--json", "--quiet",
               "--max-tokens-per-query", str(args.token_budget), "--set", f"max_run_seconds={args.max_run_seconds:g}",
               "--set", f"model_profiles={profile}", *[a for s in args.settings for a in ("--set", s)]]
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANYTOOL_MODEL")}
    env.update(OPENAI_BASE_URL=base_url, ANYTOOL_CACHE_DIR=str(home / "responses"))
    env.setdefault("OPENAI_API_KEY", "sk-local-unused")
    proxy.clear()
    start = time.monotonic()
    try:
        done = subprocess.run(cmd, env=env, cwd=ROOT if mode in SMALL_MODES else home, capture_output=True,
                              text=True, stdin=subprocess.DEVNULL, timeout=args.max_run_seconds * 2)
        code, out, err = done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired:
        code, out, err = -9, "", f"killed after {args.max_run_seconds * 2:g} s"
    seconds = time.monotonic() - start
    try:
        result = json.loads(out)
        status = str(result.get("status"))
        if status == "error":
            status += f": {result.get('error_kind')}"
    except ValueError:
        result, status = {}, "crashed" if code not in (0, 1) else "no JSON"
    if "Traceback (most recent call last)" in out + err:
        status += " (traceback)"
    chats = proxy.chats()
    if args.requests:
        with Path(args.requests).open("a", encoding="utf-8") as f:
            for e in chats:
                f.write(json.dumps({"model": model, "mode": mode, "query": query, "text": e.text,
                                    "reply": e.reply_text, "offered": sorted(e.offered), "constrained": e.constrained,
                                    "grammar": e.grammar, "decision": e.decision, "prompt_tokens": e.prompt_tokens,
                                    "finish_reason": e.finish_reason}, ensure_ascii=False) + "\n")
    answered = [e for e in chats if e.ok]
    attempts = result.get("solver_attempts") or []
    calls = [c for e in answered for c in e.function_calls()]
    over = proxy.over_window(window) if window is not None else [e for e in chats if e.max_tokens is None]
    return {"model": model, "mode": mode, "query": query, "status": status, "calls": len(answered),
            "refused": len(chats) - len(answered),
            "prompt_tokens": sum(e.prompt_tokens or 0 for e in answered),
            "completion_tokens": sum(e.completion_tokens or 0 for e in answered),
            "over_window": len(over), "api_calls": sum(int(a.get("api_calls") or 0) for a in attempts),
            "attempts": len(attempts), "pool": len(result.get("api_pool") or []),
            "reflected": len(attempts) > 1 or any(e.get("kind") == "reflect" for e in result.get("events") or []),
            "added": sum(1 for e in answered for c in e.function_calls() if c[0] == "add_apis_into_api_pool"),
            "function_calls": len(calls), "valid_calls": sum(e.valid_calls() for e in answered),
            "constrained": sum(e.constrained for e in answered), "wall_seconds": round(seconds, 1), "gen_tokens_per_second": gen_rate(answered),
            "answer": str(result.get("answer") or "")[:300], "reason": str(result.get("reason") or "")[:300],
            "errors": sorted({e.error[:200] for e in chats if e.error})[:3], "exit": code}


def summary(rows: list[dict[str, Any]]) -> tuple[list[str], list[list[Any]]]:
    """Per model × mode: runs, solved, the solver's API calls, the valid-call rate (calls in the server's replies
    whose name is an offered function and whose arguments pass its schema, of all calls the replies made), how the
    runs ended, the server's prompt / completion tokens, the wall time."""
    from collections import Counter

    out: list[list[Any]] = []
    for key in dict.fromkeys((r["model"], r["mode"]) for r in rows):
        group = [r for r in rows if (r["model"], r["mode"]) == key]
        made, valid = sum(r["function_calls"] for r in group), sum(r["valid_calls"] for r in group)
        ends = Counter(r["status"] for r in group)
        out.append([*key, len(group), ends.get("solved", 0), sum(r["api_calls"] for r in group),
                    f"{valid}/{made}" + (f" ({100 * valid / made:.0f}%)" if made else ""),
                    sum(bool(r["reflected"]) for r in group),
                    ", ".join(f"{k} {n}" for k, n in ends.most_common()),
                    sum(r["prompt_tokens"] for r in group), sum(r["completion_tokens"] for r in group),
                    round(sum(r["wall_seconds"] for r in group), 1)])
    return (["model", "mode", "runs", "solved", "API calls", "valid calls", "reflected", "ended", "prompt",
             "completion", "wall s"], out)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    window = args.window if args.window is not None else (None if args.base_url else 2048)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="real-model-bench-") as tmp, \
            endpoint(args, Path(tmp)) as (proxy, base_url, models):
        print(f"endpoint: {args.base_url or 'local llama-server'}; models {', '.join(models)}; declared window "
              f"{window or 'none'}; modes {', '.join(args.modes)}; {args.queries} queries\n", flush=True)
        for model in models:
            for mode in args.modes:
                queries = [SMALL_QUERY] if mode in SMALL_MODES else [q for q, _ in QUERIES[: args.queries]]
                for query in queries:
                    row = run_one(args, proxy, base_url, model, mode, query, window, Path(tmp))
                    rows.append(row)
                    print(f"{model} | {mode} | {query} → {row['status']}, {row['calls']} calls, "
                          f"{row['prompt_tokens']}+{row['completion_tokens']} tokens, {row['wall_seconds']} s",
                          flush=True)
    headers = ["model", "mode", "query", "status", "calls", "refused", "fn calls", "valid", "adds", "API calls", "pool",
               "prompt", "completion", "over", "wall s", "gen tok/s"]
    print()
    print(table(headers, [[r["model"], r["mode"], r["query"], r["status"], r["calls"], r["refused"],
                           r["function_calls"], r["valid_calls"], r["added"], r["api_calls"], r["pool"],
                           r["prompt_tokens"], r["completion_tokens"], r["over_window"], r["wall_seconds"],
                           r["gen_tokens_per_second"]] for r in rows]))
    print()
    print(table(*summary(rows)))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
