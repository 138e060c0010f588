"""What a faulty model endpoint does to the loop: AnyToolBench through `anytool eval run` against a loopback
OpenAI-compatible server that plays the model, with seeded faults, a kill -9 half way and a resume.

    python benchmarks/endpoint_faults.py [--queries 200] [--fault-rate 0.1] [--content-share 0.2] [--seed 0]
                                         [--concurrency 8] [--out DIR] [--slow-seconds 4] [--request-timeout 2]
                                         [--set KEY=VALUE ...]

The model is `tests/endpoint_policy.EndpointPolicy` (a deterministic policy of the request body) served by
`tests/servers.OpenAIChatServer` in its own process (`--serve`, so its CPU use does not share the client's GIL).
The first N AnyToolBench queries (`../shared/anytoolbench/anytoolbench.json`) run through the real CLI,
`anytool eval run --model openai:endpoint-policy --execution template --catalog ../shared/toolbench/tools`, with
`OPENAI_BASE_URL` / `OPENAI_API_KEY` pointing at the server:

1. faulted: a server answering about `--fault-rate` of its responses with a fault. Transport faults (429 with and
   without Retry-After, 500/502/503, a dropped connection, a reply after `--slow-seconds`, longer than the
   client's `--request-timeout`) are drawn per attempt from a hash of the seed, the body and how often the
   server has seen that body, never more than `MAX_FAULTS` in a row, so a client that retries twice (the OpenAI
   client's default) always gets through; content faults (`--content-share` of the faults: arguments that are not
   JSON, a function that was not offered, no function call) are the policy's, in a quarter of the queries.
   When about half the queries have a result line the eval process gets SIGKILL; the same command then resumes
   from its `--db` checkpoints and `--out` file (the server keeps running).
2. unfaulted: the same queries against a fresh server with no faults.

Faults are attributed to queries from the request body alone: each role's first user message carries the user's
query ("Query: ...", "Request:\\n...", "...\\nBegin!"; `endpoint_policy.query_of`), matched against the query
texts of the run. Whether a request is faulted is a hash of `--seed`, the body (tool-call ids left out) and its
attempt number, so it does not depend on timing. Printed: queries with a result (must be N), results that differ between the two runs
among queries whose faults were all transport faults (status, answer and the solver's calls; must be 0, else the
differing queries are listed with what differs), retries (faults the server sent, bodies it received more than
once, and the records' usage counters when the build has them), wall time of each phase, peak RSS of the eval
processes (VmHWM polled from /proc). `--control` adds a second unfaulted run: the differences timing alone makes.

Run-to-run differences and their fix: with the default `max_concurrency=8` the sibling agents of a query run
concurrently. They used to share run-scoped live signals (the live pool, the stop flag, the token tally), so which
reply arrived first (wall-clock timing, which a retried request or just load shifts) changed what a sibling saw
("Not checked: another agent already found the pool solvable", a stop before its next call, the pool's fill order)
and then the token counts and where the token budget cut the solver: two unfaulted runs differed as often as a
faulted and an unfaulted one (13 and 13 of ~158 queries, 200 queries, seed 0). The retriever's parallel phase is
now bulk-synchronous (nodes/dispatch.py: a step sees the run's state as of its superstep's start plus its own
effects). A second source showed once that was fixed: a query killed after every task of a step had saved its
writes, but before the step's checkpoint, was started again on its thread (LangGraph's `next` was empty) with the
request twice in the conversation; `eval.runner.solve` now resumes it. Measured after both (100 queries, seed 0,
`--control --keep-bodies`): 0 results differ, faulted vs unfaulted (79 compared, 74 faulted) and unfaulted vs
unfaulted (100), and every request body of the compared queries is the same in both runs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SHARED = ROOT.parent / "shared"  # the data beside the repository
QUERIES = SHARED / "anytoolbench" / "anytoolbench.json"
CATALOG = SHARED / "toolbench" / "tools"
MODEL = "openai:endpoint-policy"
KEY = "sk-loopback-benchmark"
MAX_FAULTS = 2  # consecutive faulted attempts of one body (the OpenAI client retries twice by default)
CONTENT_SCALE = 6.0  # conversations per content fault share (see serve())
CONTENT_QUERIES = 0.25  # share of the queries whose conversations may get content faults


# ------------------------------------------------------------------------------------------------ the server
class FaultHook:
    """Seeded transport faults: attempt k of a body (the k-th time the server sees it) is faulted when
    hash(seed, body, k) < rate, unless its last `MAX_FAULTS` attempts were all faulted: so a client retrying
    `MAX_FAULTS` times always gets through, and faults are about `rate` of the responses."""

    def __init__(self, seed: int, attempt_rate: float, slow_seconds: float, policy: Any, queries: dict[str, str],
                 log_path: Path, keep_bodies: bool = False) -> None:
        from tests.servers import ChatFault

        self.seed, self.attempt_rate, self.policy, self.queries = seed, attempt_rate, policy, queries
        self.keep_bodies = keep_bodies
        self.kinds = [ChatFault.rate_limited("1"), ChatFault.rate_limited(), ChatFault.server_error(500),
                      ChatFault.server_error(502), ChatFault.server_error(503), ChatFault.dropped(),
                      ChatFault.slow(slow_seconds)]
        self.names = ["429_retry_after", "429", "500", "502", "503", "drop", "slow"]
        self.attempts: Counter[str] = Counter()
        self.in_a_row: Counter[str] = Counter()
        self.lock = threading.Lock()
        self.log = log_path.open("a", encoding="utf-8")

    def query_id(self, body: dict[str, Any]) -> str | None:
        from tests.endpoint_policy import query_of

        text = query_of(body)
        if text in self.queries:
            return self.queries[text]
        return next((qid for q, qid in self.queries.items() if q and q in text), None)

    def __call__(self, n: int, body: dict[str, Any]) -> Any:
        from tests.endpoint_policy import canonical, role_of, unit

        key = hashlib.sha256(canonical(body).encode("utf-8")).hexdigest()
        content = self.policy.content_fault(body)
        fault, name = None, None
        with self.lock:
            attempt = self.attempts[key]
            self.attempts[key] += 1
            if (content is None and self.in_a_row[key] < MAX_FAULTS
                    and unit(str(self.seed), "transport", key, str(attempt)) < self.attempt_rate):
                i = int(unit(str(self.seed), "kind", key, str(attempt)) * len(self.kinds))
                fault, name = self.kinds[i], self.names[i]
                self.in_a_row[key] += 1
            else:
                self.in_a_row[key] = 0
        event: dict[str, Any] = {"n": n, "query_id": self.query_id(body), "role": role_of(body), "body": key[:16],
                                 "attempt": attempt, "fault": name, "content_fault": content}
        if self.keep_bodies:
            event["canonical"] = canonical(body)
        with self.lock:
            self.log.write(json.dumps(event) + "\n")
            self.log.flush()
        return fault


def serve(args: argparse.Namespace) -> None:
    """The server process: prints `URL <base_url>`, serves until stdin closes."""
    from tests.endpoint_policy import EndpointPolicy
    from tests.servers import OpenAIChatServer

    queries = {q["query"].strip(): str(q["query_id"]) for q in load_queries(args.queries_file)}
    rate, share = args.fault_rate, args.content_share
    # content faults fall on CONTENT_QUERIES of the queries (so most queries keep transport faults only and can be
    # compared); there a picked conversation has one malformed reply at one of its first three turns. Measured on
    # AnyToolBench, CONTENT_SCALE × the wanted share gives about that share of responses (printed per run).
    policy = EndpointPolicy(seed=args.seed, content_fault_rate=min(1.0, CONTENT_SCALE * rate * share / CONTENT_QUERIES),
                            content_query_share=CONTENT_QUERIES)
    hook = FaultHook(args.seed, rate * (1 - share), args.slow_seconds, policy, queries, Path(args.log),
                     args.keep_bodies)
    with OpenAIChatServer(policy=policy, fault_hook=hook, model="endpoint-policy", lifetime=args.lifetime,
                          record_limit=0) as server:
        print(f"URL {server.base_url}", flush=True)
        sys.stdin.read()


def start_server(args: argparse.Namespace, queries_file: Path, log: Path, fault_rate: float) -> tuple[Any, str]:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--serve", "--queries-file", str(queries_file),
           "--log", str(log), "--fault-rate", str(fault_rate), "--content-share", str(args.content_share),
           "--seed", str(args.seed), "--slow-seconds", str(args.slow_seconds)]
    if args.keep_bodies:
        cmd.append("--keep-bodies")
    proc = subprocess.Popen(cmd, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    if not line.startswith("URL "):
        proc.kill()
        raise SystemExit(f"the model server did not start: {line!r}")
    return proc, line.split(" ", 1)[1]


def stop_server(proc: Any) -> None:
    assert proc.stdin is not None
    proc.stdin.close()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


# ------------------------------------------------------------------------------------------------ the client
def load_queries(path: str | Path) -> list[dict[str, Any]]:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return list(data)


def result_ids(out: Path) -> set[str]:
    """The queries with a complete record (a line cut by the kill is skipped)."""
    return set(records(out)) if out.exists() else set()


def peak_rss_mb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def run_eval(args: argparse.Namespace, url: str, queries_file: Path, out: Path, db: Path, log: Path,
             kill_at: int | None = None) -> dict[str, Any]:
    """One `anytool eval run` process; SIGKILL once `kill_at` queries have a result line. Returns timings."""
    cmd = [str(Path(sys.executable).with_name("anytool")), "eval", "run", "--queries", str(queries_file),
           "--catalog", str(CATALOG), "--model", MODEL, "--execution", "template", "--concurrency",
           str(args.concurrency), "--out", str(out), "--db", str(db), "--no-progress"]
    for setting in [f"request_timeout={args.request_timeout}", *args.settings]:
        cmd += ["--set", setting]
    if args.timeout:
        cmd += ["--timeout", str(args.timeout)]
    env = {**os.environ, "OPENAI_BASE_URL": url, "OPENAI_API_KEY": KEY, "PYTHONPATH": str(ROOT)}
    env.pop("ANYTOOL_MODEL", None)
    start = time.monotonic()
    with log.open("a", encoding="utf-8") as fh:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=fh, stderr=subprocess.STDOUT)
        peak, killed = 0.0, False
        while proc.poll() is None:
            peak = max(peak, peak_rss_mb(proc.pid))
            if kill_at is not None and len(result_ids(out)) >= kill_at:
                os.kill(proc.pid, signal.SIGKILL)
                killed = True
                proc.wait()
                break
            time.sleep(0.2)
    return {"seconds": time.monotonic() - start, "peak_rss_mb": peak, "killed": killed, "rc": proc.returncode,
            "results": len(result_ids(out))}


# ------------------------------------------------------------------------------------------------ comparing
def records(out: Path) -> dict[str, dict[str, Any]]:
    """The last complete record of each query (`read_results`)."""
    from langgraph_anytool.eval.anytool.results import read_results

    return {str(rec["query_id"]): rec for rec in read_results(out)}


def solver_calls(rec: dict[str, Any]) -> list[tuple[Any, ...]]:
    """The solver's API calls (attempt, function, arguments, status), tool-call ids left out."""
    return [(a.get("attempt"), c.get("function"), json.dumps(c.get("arguments"), sort_keys=True), c.get("status"))
            for a in rec.get("trajectory") or [] for node in a.get("tree") or [] for c in node.get("calls") or []]


def differences(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """What differs between two records of a query: status, answer, the solver's calls (the compared result),
    and, for information, the API pool."""
    out = []
    if a.get("status") != b.get("status"):
        out.append(f"status {a.get('status')} vs {b.get('status')}")
    if a.get("answer") != b.get("answer"):
        out.append("answer")
    if solver_calls(a) != solver_calls(b):
        out.append(f"solver calls ({len(solver_calls(a))} vs {len(solver_calls(b))})")
    if a.get("pool") != b.get("pool"):
        out.append("pool" + (" order" if sorted(a.get("pool") or []) == sorted(b.get("pool") or []) else ""))
    return out


def result_differs(d: list[str]) -> bool:
    return any(not x.startswith("pool") for x in d)


def usage_counter(recs: dict[str, dict[str, Any]], name: str) -> int | None:
    """A usage counter summed over records (None when no record has it: the build does not count it)."""
    total, seen = 0, False
    for rec in recs.values():
        if isinstance(rec.get(name), int):  # a record-level counter (`retries`)
            total += rec[name]
            seen = True
            continue
        usage = rec.get("usage") or {}
        for where in [usage, *(usage.get("roles") or {}).values()]:
            if isinstance(where, dict) and isinstance(where.get(name), int):
                total += where[name]
                seen = True
    return total if seen else None


def where_runs_part(faulted: list[dict[str, Any]], clean: list[dict[str, Any]],
                    queries: dict[str, Any]) -> dict[str, str]:
    """For each query, the first request body (in arrival order) that only one of the runs sent, by role, and how
    many bodies differ (needs --keep-bodies)."""
    out: dict[str, str] = {}
    for q in queries:
        a = [e for e in faulted if e["query_id"] == q and "canonical" in e]
        b = [e for e in clean if e["query_id"] == q and "canonical" in e]
        if not a or not b:
            continue
        seen_a, seen_b = {x["canonical"] for x in a}, {x["canonical"] for x in b}
        only_a = [e for e in a if e["canonical"] not in seen_b]
        only_b = [e for e in b if e["canonical"] not in seen_a]
        first = min(only_a + only_b, key=lambda e: min(x["n"] for x in (a if e in only_a else b)
                                                       if x["canonical"] == e["canonical"]), default=None)
        out[q] = (f"bodies only in the faulted run {len(only_a)}, only in the unfaulted run {len(only_b)}; first "
                  f"differing body: role {first['role']}" if first else "the same request bodies in both runs")
    return out


def events(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line.strip()]


# ------------------------------------------------------------------------------------------------ main
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=200, help="first N AnyToolBench queries (default 200)")
    parser.add_argument("--fault-rate", type=float, default=0.10, help="share of responses faulted (default 0.1)")
    parser.add_argument("--content-share", type=float, default=0.2, help="share of the faults that are content "
                        "faults (default 0.2)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--slow-seconds", type=float, default=4.0, help="delay of a slow fault (default 4)")
    parser.add_argument("--request-timeout", type=float, default=2.0, help="the client's request timeout "
                        "(`--set request_timeout`, default 2: a slow fault is a real client timeout)")
    parser.add_argument("--timeout", type=float, default=None, help="anytool eval run --timeout (seconds/query)")
    parser.add_argument("--set", dest="settings", action="append", default=[], metavar="KEY=VALUE",
                        help="passed to anytool eval run --set (repeatable)")
    parser.add_argument("--out", default=None, help="directory for results, logs and checkpoints (default: temp)")
    parser.add_argument("--control", action="store_true", help="a second unfaulted run: how many results differ "
                        "between two runs without faults (timing alone)")
    parser.add_argument("--keep-bodies", action="store_true", help="log every request body (ids left out) in the "
                        "server logs, to find where two runs part")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--queries-file", help=argparse.SUPPRESS)
    parser.add_argument("--log", help=argparse.SUPPRESS)
    parser.add_argument("--lifetime", type=float, default=7200.0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args)
        return

    out = Path(args.out or tempfile.mkdtemp(prefix="endpoint_faults_"))
    out.mkdir(parents=True, exist_ok=True)
    for run in ("faulted", "clean", "control"):  # this script's files of an earlier run (results are appended)
        for suffix in (".jsonl", ".sqlite", "_server.jsonl", "_eval.log"):
            (out / f"{run}{suffix}").unlink(missing_ok=True)
        for extra in out.glob(f"{run}.sqlite-*"):
            extra.unlink()
    chosen = load_queries(QUERIES)[: args.queries]
    queries_file = out / "anytoolbench.json"
    queries_file.write_text(json.dumps(chosen), encoding="utf-8")
    n = len(chosen)
    print(f"{n} AnyToolBench queries | fault rate {args.fault_rate} (content share {args.content_share}) | seed "
          f"{args.seed} | concurrency {args.concurrency} | out {out}", flush=True)

    # 1. faulted, killed half way, resumed
    server, url = start_server(args, queries_file, out / "faulted_server.jsonl", args.fault_rate)
    try:
        first = run_eval(args, url, queries_file, out / "faulted.jsonl", out / "faulted.sqlite",
                         out / "faulted_eval.log", kill_at=max(1, n // 2))
        print(f"faulted run: SIGKILL={first['killed']} after {first['seconds']:.1f}s with {first['results']} "
              f"results", flush=True)
        second = run_eval(args, url, queries_file, out / "faulted.jsonl", out / "faulted.sqlite",
                          out / "faulted_eval.log")
        print(f"resumed: rc={second['rc']} after {second['seconds']:.1f}s, {second['results']} results", flush=True)
    finally:
        stop_server(server)
    # 2. unfaulted (and, with --control, a second unfaulted run: the differences timing alone makes)
    runs = ["clean", "control"] if args.control else ["clean"]
    timings = {}
    for name in runs:
        server, url = start_server(args, queries_file, out / f"{name}_server.jsonl", 0.0)
        try:
            timings[name] = run_eval(args, url, queries_file, out / f"{name}.jsonl", out / f"{name}.sqlite",
                                     out / f"{name}_eval.log")
            print(f"unfaulted run ({name}): rc={timings[name]['rc']} after {timings[name]['seconds']:.1f}s, "
                  f"{timings[name]['results']} results", flush=True)
        finally:
            stop_server(server)
    report(out, chosen, first, second, timings)


def report(out: Path, chosen: list[dict[str, Any]], first: dict[str, Any], second: dict[str, Any],
           timings: dict[str, dict[str, Any]]) -> None:
    ids = [str(q["query_id"]) for q in chosen]
    faulted, unfaulted = records(out / "faulted.jsonl"), records(out / "clean.jsonl")
    ev = events(out / "faulted_server.jsonl")
    transport = [e for e in ev if e["fault"]]
    content = [e for e in ev if e["content_fault"] and e["attempt"] == 0]
    unattributed = sum(1 for e in ev if e["query_id"] is None)
    content_q = {e["query_id"] for e in content}
    transport_q = {e["query_id"] for e in transport}
    bodies = Counter(e["body"] for e in ev)
    resent = sum(c - 1 for c in bodies.values())
    compared = [q for q in ids if q not in content_q and q in faulted and q in unfaulted]
    differing = {q: d for q in compared if (d := differences(faulted[q], unfaulted[q]))}
    core = [q for q, d in differing.items() if result_differs(d)]
    clean = timings["clean"]
    touched = [q for q in compared if q in transport_q]

    print()
    print(f"queries with a result: {len(set(ids) & set(faulted))} of {len(ids)} (faulted+resumed), "
          f"{len(set(ids) & set(unfaulted))} of {len(ids)} (unfaulted)")
    print(f"statuses faulted:   {dict(Counter(r['status'] for r in faulted.values()))}")
    print(f"statuses unfaulted: {dict(Counter(r['status'] for r in unfaulted.values()))}")
    print(f"responses: {len(ev)} requests to the faulted server; transport faults {len(transport)} "
          f"({len(transport) / max(1, len(ev)):.1%}: {dict(Counter(e['fault'] for e in transport))}); "
          f"content faults {len(content)} ({dict(Counter(e['content_fault'] for e in content))}); "
          f"unattributed requests {unattributed}")
    print(f"queries: {len(transport_q - {None})} saw transport faults, {len(content_q - {None})} content faults; "
          f"{len(compared)} with transport faults only or none are compared ({len(touched)} of them faulted)")
    print(f"results that differ (faulted vs unfaulted, transport faults only; status, answer or solver calls): "
          f"{len(core)} [among the {len(touched)} faulted ones: {sum(1 for q in core if q in transport_q)}]; "
          f"the API pool alone differs for {len(differing) - len(core)} more")
    parted = where_runs_part(ev, events(out / "clean_server.jsonl"), differing)
    for q, d in list(differing.items())[:20]:
        print(f"  {q}: {', '.join(d)}{' (transport-faulted)' if q in transport_q else ' (no fault)'}"
              + (f"; {parted[q]}" if q in parted else ""))
    retries = usage_counter(faulted, "retries")
    print(f"retries: {len(transport)} transport faults sent (each needs a retry to go on); bodies received more "
          f"than once: {resent}; records' 'retries': {retries if retries is not None else 'not counted'}")
    print(f"wall time: faulted {first['seconds']:.1f}s until SIGKILL + {second['seconds']:.1f}s resumed; "
          f"unfaulted {clean['seconds']:.1f}s")
    print(f"peak RSS of the eval processes: {first['peak_rss_mb']:.0f} MB (killed), {second['peak_rss_mb']:.0f} MB "
          f"(resumed), {clean['peak_rss_mb']:.0f} MB (unfaulted)")
    if "control" in timings:
        control = records(out / "control.jsonl")
        both = [q for q in ids if q in unfaulted and q in control]
        timing = {q: d for q in both if (d := differences(unfaulted[q], control[q]))}
        print(f"control (two unfaulted runs, {len(both)} queries): results differ for "
              f"{sum(1 for d in timing.values() if result_differs(d))}, the API pool alone for "
              f"{sum(1 for d in timing.values() if not result_differs(d))}; "
              f"{timings['control']['seconds']:.1f}s, peak RSS {timings['control']['peak_rss_mb']:.0f} MB")
        for q, d in list(timing.items())[:10]:
            print(f"  {q}: {', '.join(d)}")
    (out / "differences.json").write_text(json.dumps(differing, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
