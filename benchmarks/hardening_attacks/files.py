"""Attack classes on the files and inputs read from users and releases (issue 28, points 2, 4, 5, 9, 10, 12, 13), for
`benchmarks/hardening.py`: the OPPO toolset folder, results files and `eval convert`, the other data files (query
files, task CSVs, step files, caches, catalogs with invalid code points) and the environment's settings.

An attempt holds when the input ends the way the issue asks: refused with one `anytool: error:` line naming the
file (and the line and field), repaired with a warning, recomputed, or honoured; never a traceback, a hang, a file
written outside its folder or a silent wrong figure. Run one class alone:
`python benchmarks/hardening_attacks/files.py CLASS`.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import shutil
import sqlite3
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from unittest import mock

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.hardening_attacks.local import _cli, _lexical, _one_line, _workdir  # noqa: E402
from tests.catalog.test_loader_hardening import BOMB, _set_tools  # noqa: E402

TOOLSET = ROOT / "tests" / "data" / "oppo_toolset"
DEEP = "[" * 100_000 + "]" * 100_000
DEEP_CELL = "[" * 10_000 + "]" * 10_000  # fits in a CSV field
SECRET = "TOP-SECRET-4242"


@contextlib.contextmanager
def _warnings() -> Iterator[io.StringIO]:
    """The package's warning lines while the block runs."""
    buf = io.StringIO()
    handler = logging.StreamHandler(buf)
    logger = logging.getLogger("langgraph_anytool")
    logger.addHandler(handler)
    try:
        yield buf
    finally:
        logger.removeHandler(handler)


def _env(**values: str) -> Any:
    """The environment with `values` set while the block runs."""
    return mock.patch.dict(os.environ, values)


def _toolset(tmp: Path) -> Path:
    root = tmp / "toolset"
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(TOOLSET, root)
    return root


# ------------------------------------------------------------------------------------------------ points 4, 5, 9, 10
def oppo_toolset() -> tuple[int, int]:
    """config.yml bombs and names that are paths, docs leaving the folder, deep and wrongly typed docs, invalid
    code points."""
    results: list[bool] = []
    with _workdir() as tmp, _lexical():
        outside = tmp / "secret.json"
        outside.write_text(json.dumps({"tool_name": "leak", "tool_description": SECRET, "APIs": [
            {"type": "function", "function": {"name": "x", "description": SECRET}}]}))

        def refused(*needles: str) -> bool:
            rc, err = _cli(["catalog", "--catalog", str(tmp / "toolset"), "--json"])
            return _one_line(rc, err, *needles) and SECRET not in err

        root = _toolset(tmp)
        cfg = root / "config.yml"
        base = cfg.read_text()
        for extra, needle in ((BOMB, "expands to more than"),
                              ("x: &x [1]\ny: [" + ",".join(["*x"] * 101) + "]\n", "YAML aliases"),
                              ("# " + "x" * 2_000_000 + "\n", "at most"),
                              ("deep: " + "[" * 5000 + "]" * 5000 + "\n", "nesting too deep")):
            cfg.write_text(base + extra)
            results.append(refused("config.yml", needle))
        cfg.unlink()
        os.mkfifo(cfg)  # a FIFO would block a reader for ever
        rc, err = _cli(["catalog", "--catalog", str(root)])
        results.append(rc == 2 and "Traceback" not in err)
        depth = len((tmp / "toolset" / "rapidapi" / "docs").resolve().parts)
        names = ["../" * depth + str(outside.with_suffix(""))[1:], str(outside.with_suffix("")), "../../secret",
                 "docs/../../secret", "..", "~/secret", "a\\..\\..\\secret"]
        for key in ("RAPIDAPI_TOOLS", "DEV_TOOLS"):
            for name in names:
                _set_tools(_toolset(tmp), key, [name])
                results.append(refused("not a tool name", f"{key}[0]"))
        root = _toolset(tmp)
        doc = root / "rapidapi" / "docs" / "fx_rates.json"
        good = doc.read_text()
        doc.unlink()
        doc.symlink_to(outside)
        results.append(refused("outside"))
        doc.unlink()
        doc.write_text(good)
        moved = tmp / "config.yml"
        shutil.move(root / "config.yml", moved)
        (root / "config.yml").symlink_to(moved)
        results.append(refused("outside", "config.yml"))
        root = _toolset(tmp)
        doc = root / "rapidapi" / "docs" / "fx_rates.json"
        original = json.loads(good)
        bad_docs: list[tuple[Any, str]] = [
            ('{"tool_name": "fx_rates", "APIs": ' + DEEP + "}", "nesting too deep"),
            ('{"tool_name": "fx_rates", "APIs": [{"function": {"name": "x", "parameters": {"properties": {"a": '
             '{"default": NaN}}}}}]}', "NaN"),
            ('{"tool_name": "fx_rates", "x": ' + "9" * 5000 + "}", "digits"),
            ({"tool_name": "fx_rates", "APIs": "all"}, "field 'APIs'"),
            ({"tool_name": "fx_rates", "APIs": []}, "field 'APIs'"),
            ({"tool_name": 7, "APIs": original["APIs"]}, "field 'tool_name'"),
            ({"tool_name": "fx_rates", "APIs": [7]}, "field 'APIs[0]'"),
            ({"tool_name": "fx_rates", "APIs": [{"function": "x"}]}, "field 'APIs[0].function'"),
        ]
        for patch, field in (({"parameters": "abc"}, "APIs[0].function.parameters"),
                             ({"parameters": {"properties": {"a": "NUMBER"}}},
                              "APIs[0].function.parameters.properties.a"),
                             ({"parameters": {"properties": {}, "required": "a"}},
                              "APIs[0].function.parameters.required"),
                             ({"name": ["convert"]}, "APIs[0].function.name"),
                             ({"description": {"t": 1}}, "APIs[0].function.description")):
            changed = json.loads(good)
            changed["APIs"][0]["function"].update(patch)
            bad_docs.append((changed, f"field {field!r}"))
        for content, needle in bad_docs:
            doc.write_text(content if isinstance(content, str) else json.dumps(content))
            results.append(refused("fx_rates.json", needle))
        changed = json.loads(good)
        changed["APIs"][0]["function"]["description"] = "convert @@ money"
        doc.write_text(json.dumps(changed).replace("@@", "\\ud800"))
        (root / "config.yml").write_text((root / "config.yml").read_text().replace('"Ada"', '"Ada\\ud800"'))
        with _warnings() as warned:
            rc, err = _cli(["catalog", "--catalog", str(root), "--tool", "fx_rates", "--json"])
        results.append(rc == 0 and "fx_rates.json" in warned.getvalue()
                       and "APIs[0].function.description" in warned.getvalue())
        results.append("config.yml" in warned.getvalue() and "USER.name" in warned.getvalue())
    return len(results), sum(results)


# ------------------------------------------------------------------------------------------------ points 2, 10
def _record(qid: str, group: str = "G1", **extra: Any) -> dict[str, Any]:
    return {"query_id": qid, "group": group, "query": "q", "status": "solved", "answer": "an answer",
            "usage": {"model_calls": 2, "input_tokens": 10, "output_tokens": 5}, "wall_time": 1.0,
            "pool": ["Cat/tool/api"], "trajectory": [], **extra}


def _jsonl(path: Path, *lines: str | dict[str, Any]) -> Path:
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    return path


def results_and_convert() -> tuple[int, int]:
    """Groups that are paths, a planted symlink, deep / wrongly typed / non-finite / over-long results lines for
    stats, passrate, convert and a resumed eval run, a FIFO, bad answer files for convert --to ours."""
    results: list[bool] = []
    with _workdir() as tmp, _lexical():
        work = tmp / "a" / "b"
        work.mkdir(parents=True)
        out = work / "out"
        groups = ["../../escaped", "../x", str(tmp / "abs"), "//" + str(tmp / "abs2"), ".hidden", "a/b", "..", "~",
                  "", "results", "G1\x00x", "x" * 400]
        src = _jsonl(work / "r.jsonl", *(_record(str(i), g) for i, g in enumerate(groups)))
        before = set(tmp.rglob("*"))
        rc, _ = _cli(["eval", "convert", str(src), "--to", "tooleval", "--out", str(out)])
        written = [p for p in set(tmp.rglob("*")) - before if p.is_file()]
        inside = [p for p in written if p.parent == out and not p.name.startswith(".")]
        answered = {qid for p in inside for qid in json.loads(p.read_text())}
        results += [rc == 0 and str(i) in answered and len(inside) == len(written) for i in range(len(groups))]
        victim = tmp / "victim.txt"
        victim.write_text("keep")
        planted = tmp / "planted"
        planted.mkdir()
        (planted / "G1.json").symlink_to(victim)
        rc, err = _cli(["eval", "convert", str(_jsonl(tmp / "g.jsonl", _record("1"))), "--to", "tooleval", "--out",
                        str(planted)])
        results.append(_one_line(rc, err, "outside") and victim.read_text() == "keep")

        deep = _jsonl(tmp / "deep.jsonl", _record("1"), '{"query_id": "2", "trajectory": ' + DEEP + "}")
        for cmd in (["eval", "stats", str(deep)], ["eval", "passrate", str(deep), "--offline", "--no-cache"],
                    ["eval", "convert", str(deep), "--to", "tooleval", "--out", str(tmp / "o")]):
            rc, err = _cli(cmd)
            results.append(_one_line(rc, err, "deep.jsonl", "line 2", "nesting too deep"))
        queries = tmp / "G1.json"
        queries.write_text(json.dumps([{"query_id": 1, "query": "Convert 5 kilograms to pounds."}]))
        rc, err = _cli(["eval", "run", "--queries", str(queries), "--offline", "--out", str(deep), "--no-progress",
                        "--quiet"])
        results.append(_one_line(rc, err, "line 2", "nesting too deep"))
        for fields, field in (({"usage": "abc"}, "usage"), ({"usage": {"model_calls": "abc"}}, "usage.model_calls"),
                              ({"usage": {"input_tokens": -5}}, "usage.input_tokens"),
                              ({"usage": {"roles": {"solver": {"model_calls": [1]}}}},
                               "usage.roles.solver.model_calls"),
                              ({"usage": {"agents": {"tool": "many"}}}, "usage.agents.tool"),
                              ({"wall_time": "slow"}, "wall_time"), ({"pool_recall": 3}, "pool_recall"),
                              ({"pool": "Cat/tool/api"}, "pool"), ({"trajectory": "x"}, "trajectory"),
                              ({"trajectory": [{"tree": [5]}]}, "trajectory[0].tree[0]"),
                              ({"query_id": {"id": 1}}, "query_id"), ({"attempt": 0}, "attempt")):
            bad = _jsonl(tmp / "bad.jsonl", _record("1"), _record("2", **fields))
            for cmd in (["eval", "stats", str(bad)], ["eval", "passrate", str(bad), "--offline", "--no-cache"]):
                rc, err = _cli(cmd)
                results.append(_one_line(rc, err, "line 2", f"field {field!r}"))
        for line, needle in (('{"query_id": "1", "wall_time": NaN}', "wall_time"),
                             ('{"query_id": "1", "usage": {"model_calls": 1e999}}', "usage.model_calls"),
                             ('{"query_id": ' + "9" * 5000 + "}", "digits")):
            rc, err = _cli(["eval", "stats", str(_jsonl(tmp / "n.jsonl", line))])
            results.append(_one_line(rc, err, "line 1", needle))
        long = tmp / "long.jsonl"
        with long.open("w") as fh:
            fh.write(json.dumps(_record("1")) + "\n" + '{"query_id": "2", "answer": "' + "x" * (70 << 20) + '"}\n')
        rc, err = _cli(["eval", "stats", str(long)])
        results.append(_one_line(rc, err, "line 2", "over 67,108,864 bytes"))
        fifo = tmp / "fifo.jsonl"
        os.mkfifo(fifo)
        rc, err = _cli(["eval", "stats", str(fifo)])
        results.append(_one_line(rc, err, "not a regular file"))
        rc, err = _cli(["eval", "run", "--queries", str(queries), "--offline", "--out", str(fifo), "--no-progress"])
        results.append(_one_line(rc, err, "not a regular file"))
        entry = {"query": "q", "available_tools": [], "answer": {"method": "m", "total_steps": 1,
                                                                  "final_answer": "", "answer_details": []}}
        for content, needle in (('{"1": ' + DEEP + "}", "nesting too deep"),
                                (json.dumps({"1": {**entry, "available_tools": 5}}), "field '1.available_tools'"),
                                (json.dumps({"1": {**entry, "answer": {"total_steps": "x"}}}),
                                 "field '1.answer.total_steps'")):
            ans = tmp / "G1_conv.json"
            ans.write_text(content)
            rc, err = _cli(["eval", "convert", str(ans), "--to", "ours", "--out", str(tmp / "ours.jsonl")])
            results.append(_one_line(rc, err, "G1_conv.json", needle))
    return len(results), sum(results)


# ------------------------------------------------------------------------------------------------ points 9, 10, 12
def _big_task_csv(path: Path, rows: int) -> None:
    with path.open("w", encoding="utf-8") as fh:
        fh.write(",did,tool_name,api_name,instruction,type,tool_use_label\n")
        chunk = []
        for n in range(rows):
            chunk.append(f'{n},{n},Universal Unit Converter,Convert Units,"Convert {n} miles to kilometers.",1,1\n')
            if len(chunk) == 10_000:
                fh.write("".join(chunk))
                chunk = []
        fh.write("".join(chunk))


def data_files() -> tuple[int, int]:
    """Query files, OPPO task CSVs (a 3M-row file with --limit 3, a 40 MB line), α-UMi step files, cache files,
    model-profile files, catalogs holding lone surrogates from every loader and from code."""
    from langgraph_anytool.catalog.catalog import Catalog
    from langgraph_anytool.catalog.models import Api, Category, Param, Tool
    from langgraph_anytool.sanitize.files import DataFileError
    from langgraph_anytool.tools.cache import ResponseCache

    results: list[bool] = []
    with _workdir() as tmp, _lexical():
        queries = tmp / "G1.json"
        for content, needle in ((DEEP, "nesting too deep"),
                                (json.dumps([{"query": "q", "query_id": 1, "api_list": 5}]), "[0].api_list"),
                                (json.dumps([{"query": "q", "query_id": 1, "gt_api_list": "[" * 50_000}]),
                                 "gt_api_list"),
                                (json.dumps([{"query": "q", "query_id": 1, "gt_api_list": "-" * 100_000 + "1"}]),
                                 "gt_api_list"),
                                ('[{"query": "q", "query_id": ' + "9" * 5000 + "}]", "digits")):
            queries.write_text(content)
            rc, err = _cli(["eval", "run", "--queries", str(queries), "--offline", "--out", str(tmp / "r.jsonl"),
                            "--no-progress", "--quiet"])
            results.append(_one_line(rc, err, "G1.json", needle))
        big = tmp / "G1_big.json"
        with big.open("w", encoding="utf-8") as fh:
            fh.write("[")
            row = '{"query_id": %d, "query": "Convert %d miles to kilometers.", "relevant APIs": [["Universal Unit ' \
                  'Converter", "Convert Units"]]}'
            for start in range(0, 2_000_000, 10_000):
                fh.write(("," if start else "") + ",".join(row % (n, n) for n in range(start, start + 10_000)))
            fh.write("]")
        begin = time.perf_counter()
        rc, err = _cli(["eval", "run", "--queries", str(big), "--offline", "--out", str(tmp / "big.jsonl"),
                        "--limit", "3", "--no-progress", "--quiet"])
        seconds = time.perf_counter() - begin
        print(f"  eval run --limit 3 on a {big.stat().st_size / 1e6:.0f} MB, 2,000,000-query file: {seconds:.2f} s",
              file=sys.stderr)
        results.append(rc == 0 and seconds < 60)
        data = tmp / "tasks"
        data.mkdir()
        _big_task_csv(data / "task1.csv", 3_000_000)
        start = time.perf_counter()
        rc, err = _cli(["eval", "tasks", "--task", "1", "--data", str(data), "--offline", "--limit", "3", "--json"])
        seconds = time.perf_counter() - start
        print(f"  eval tasks --limit 3 on a {(data / 'task1.csv').stat().st_size / 1e6:.0f} MB, 3,000,000-row CSV: "
              f"{seconds:.2f} s", file=sys.stderr)
        results.append(rc == 0 and seconds < 30)
        with (data / "task1.csv").open("r+", encoding="utf-8") as fh:
            fh.seek(0)
            lines = [fh.readline() for _ in range(4)]
        with (data / "task1.csv").open("w", encoding="utf-8") as fh:
            fh.write("".join(lines) + "9,9,a,b," + "x" * (40 << 20) + "\n")
        rc, _ = _cli(["eval", "tasks", "--task", "1", "--data", str(data), "--offline", "--limit", "3"])
        results.append(rc == 0)
        rc, err = _cli(["eval", "tasks", "--task", "1", "--data", str(data), "--offline"])
        results.append(_one_line(rc, err, "task1.csv", "line 5"))
        for conv, needle in ((DEEP_CELL, "nesting too deep"), ('{"role": "user"}', "OpenAI-format"),
                             ('[{"role": "user", "content": "hi"}]', "function call")):
            cell = '"' + conv.replace('"', '""') + '"'
            (data / "task6.csv").write_text(",did,tool_name,api_name,instruction,conv\n"
                                            f"0,1,Date Calculator,Day of Week,hi,{cell}\n")
            rc, err = _cli(["eval", "tasks", "--task", "6", "--data", str(data), "--offline"])
            results.append(_one_line(rc, err, "task6.csv", "line 2", "column 'conv'", needle))
        steps = tmp / "steps.json"
        for content, needle in ((DEEP, "nesting too deep"),
                                (json.dumps([{"tools": [{"Name": "f", "input": ["x"]}], "conversations": []}]),
                                 "[0].tools[0].input"),
                                (json.dumps({"answer_generation": {"train_messages": [["m"]], "function": []}}),
                                 "train_messages[0][0]")):
            steps.write_text(content)
            rc, err = _cli(["eval", "steps", str(steps), "--offline"])
            results.append(_one_line(rc, err, "steps.json", needle))
        export = tmp / "export.jsonl"
        good = '{"api_id": "a/b/c", "arguments": {}, "status": "ok", "content": 1}\n'
        for line, needle in (('{"api_id": "a/b/c", "arguments": ' + DEEP + ', "status": "ok"}', "nesting too deep"),
                             ('{"api_id": "a/b/c", "arguments": [], "status": "ok"}', "field 'arguments'"),
                             ('{"api_id": "a/b/c", "arguments": {}, "status": "fine"}', "field 'status'"),
                             ('{"api_id": "a/b/c", "arguments": {}, "status": "ok", "created": -1}', "field 'created'")):
            export.write_text(good + line + "\n")
            with ResponseCache.memory() as cache:
                try:
                    cache.import_jsonl(export)
                    results.append(False)
                except DataFileError as exc:
                    results.append("line 2" in str(exc) and needle in str(exc) and "\n" not in str(exc))
        results += _damaged_caches(tmp)
        profiles = tmp / "profiles.json"
        profiles.write_text(DEEP)
        with _env(ANYTOOL_MODEL_PROFILES=str(profiles)):
            rc, err = _cli(["run", "Convert 5 kilograms to pounds.", "--offline", "--no-cache"])
        results.append(_one_line(rc, err, "ANYTOOL_MODEL_PROFILES=", "nesting too deep"))
        results += _surrogate_catalogs(tmp, Catalog, Api, Category, Param, Tool)
    return len(results), sum(results)


def _damaged_caches(tmp: Path) -> list[bool]:
    """Damaged evaluator verdicts (OPPO cache files, pass-rate SQLite rows): recomputed, never trusted or fatal."""
    from langgraph_anytool.eval.anytool.passrate import EvaluatorCache
    from langgraph_anytool.eval.oppo.judge import TaskEvaluator
    from langgraph_anytool.models.llm import RoleUsage
    from langgraph_anytool.models.testing import ScriptedChatModel, ai
    from langgraph_anytool.nodes.judge.tooleval import JudgeResult

    out: list[bool] = []
    probe_dir = tmp / "probe"
    TaskEvaluator(ScriptedChatModel(replies=[ai("yes")]), cache_dir=probe_dir, identity="j").judge(5, "p")
    name = next(probe_dir.iterdir()).name
    for entry in (DEEP, '{"passed": "no", "reason": "x"}', '{"reason": "x"}', "[1]", "FIFO"):
        cache = tmp / f"cache-{len(out)}"
        cache.mkdir()
        if entry == "FIFO":
            os.mkfifo(cache / name)
        else:
            (cache / name).write_text(entry)
        evaluator = TaskEvaluator(ScriptedChatModel(replies=[ai("no, it is wrong")]), cache_dir=cache, identity="j")
        verdict = evaluator.judge(5, "p")
        out.append(not verdict.passed and not verdict.cached and evaluator.calls == 1)
    db = tmp / "evaluator.sqlite"
    calls: list[int] = []

    def call() -> JudgeResult:
        calls.append(1)
        return JudgeResult("Unsolved", "no", "answer", RoleUsage(model_calls=1))

    for value in (DEEP, '{"label": "Solved"}', '{"label": "Maybe", "reason": "", "stage": "answer"}', "x"):
        cache_db = EvaluatorCache(db)
        cache_db.get_or_call("k", call)
        with sqlite3.connect(db) as conn:
            conn.execute("UPDATE verdicts SET value = ? WHERE key = 'k'", (value,))
        before = len(calls)
        out.append(cache_db.get_or_call("k", call).label == "Unsolved" and len(calls) == before + 1)
        cache_db.close()
    return out


def _surrogate_catalogs(tmp: Path, catalog_cls: Any, api_cls: Any, category_cls: Any, param_cls: Any,
                        tool_cls: Any) -> list[bool]:
    """One lone surrogate in a description, from every loader and from code: the catalog stays usable."""
    out: list[bool] = []

    def usable(make: Callable[[], Any]) -> bool:
        try:
            catalog = make()
            catalog.fingerprint()
            catalog.search("rate")
            json.dumps([a.details() for a in catalog], ensure_ascii=False).encode("utf-8")
            return True
        except Exception:  # any failure is an attempt that did not hold
            return False

    tools = tmp / "tools" / "Finance"
    tools.mkdir(parents=True)
    (tools / "fx.json").write_text(json.dumps({"tool_name": "fx", "tool_description": "rates @@", "api_list": [
        {"name": "rate", "description": "a rate @@", "required_parameters": [
            {"name": "base", "type": "STRING", "description": "currency @@"}]}]}).replace("@@", "\\ud800"))
    out.append(usable(lambda: catalog_cls.load(str(tmp / "tools"), embeddings=None)))
    qf = tmp / "G2_query.json"
    qf.write_text(json.dumps([{"query": "q", "query_id": 1, "api_list": [
        {"category_name": "F", "tool_name": "fx", "api_name": "rate", "api_description": "@@"}]}])
                  .replace("@@", "\\udc00"))
    out.append(usable(lambda: catalog_cls.load(str(qf), embeddings=None)))
    spec = {"openapi": "3.0.3", "info": {"title": "Pets @@"}, "paths": {"/pets": {"get": {"summary": "rate @@"}}}}
    (tmp / "pets.yaml").write_text(json.dumps(spec).replace("@@", "\\ud800"))
    out.append(usable(lambda: catalog_cls.load(str(tmp / "pets.yaml"), embeddings=None)))
    out.append(usable(lambda: catalog_cls.from_openapi([json.loads(json.dumps(spec).replace("@@", "\\ud800"))],
                                                       embeddings=None)))
    from langchain_core.tools import StructuredTool

    def rate(base: str) -> str:
        return base

    lc = StructuredTool.from_function(rate, name="rate", description="currency rate \ud800")
    out.append(usable(lambda: catalog_cls.from_langchain_tools([lc], embeddings=None)))
    api = api_cls(id="C/t/rate", name="rate", tool_key="t", tool_name="T\udc00", category="C", description="\ud800",
                  params=(param_cls("p", description="\udfff"),), template_response={"k\ud800": 1})
    out.append(usable(lambda: catalog_cls([category_cls("C", tools=(tool_cls("t", "T", "C", apis=(api,)),))],
                                          embeddings=None)))
    return out


# ------------------------------------------------------------------------------------------------ point 13
def environment_config() -> tuple[int, int]:
    """ANYTOOL_PROFILE / ANYTOOL_<FIELD>: bad values refused naming the variable in every command that builds a
    configuration; good ones honoured, under the command line's options."""
    from langgraph_anytool.cli.app import build_parser, run_settings

    results: list[bool] = []
    with _workdir() as tmp, _lexical():
        queries = tmp / "G1.json"
        queries.write_text(json.dumps([{"query_id": 1, "query": "Convert 5 kilograms to pounds."}]))
        steps = tmp / "in_domain.json"
        steps.write_text(json.dumps([{"tools": [], "instruction": "q", "conversations": [
            {"from": "user", "value": "q"}, {"from": "assistant", "value": "Next: give up."}]}]))
        commands = [["run", "Convert 5 kilograms to pounds.", "--offline", "--no-cache"],
                    ["demo", "Convert 5 kilograms to pounds.", "--no-cache"],
                    ["eval", "run", "--queries", str(queries), "--offline", "--out", str(tmp / "r.jsonl"),
                     "--no-progress"],
                    ["eval", "steps", str(steps), "--offline"]]
        for var, value in (("ANYTOOL_MAX_API_POOL", "abc"), ("ANYTOOL_MAX_API_POOL", "0"),
                           ("ANYTOOL_PROFILE", "bogus"), ("ANYTOOL_SEED_WITH_SEARCH", "perhaps"),
                           ("ANYTOOL_RETRY_MAX_WAIT", "inf"), ("ANYTOOL_MAX_COST", "nan"), ("ANYTOOL_SOLVER", "magic"),
                           ("ANYTOOL_TEXT_MODE_ROLES", "judge"), ("ANYTOOL_MODEL_PROFILES", "[" * 100_000)):
            with _env(**{var: value}):
                for args in commands:
                    rc, err = _cli(args)
                    results.append(_one_line(rc, err, f"{var}="))
        parse = build_parser().parse_args
        with _env(ANYTOOL_MAX_API_POOL="1"):
            results.append(run_settings(parse(["run", "q"])).max_api_pool == 1)
            results.append(run_settings(parse(["run", "q", "--set", "max_api_pool=4"])).max_api_pool == 4)
        with _env(ANYTOOL_PROFILE="paper"):
            results.append(run_settings(parse(["run", "q"])).judge == "anytool")
            results.append(run_settings(parse(["run", "q", "--profile", "default"])).judge == "tooleval")
        with _env(ANYTOOL_MAX_API_POOL="7", ANYTOOL_PROFILE="paper"):
            out = tmp / "env.jsonl"
            rc, _ = _cli(["eval", "run", "--queries", str(queries), "--offline", "--out", str(out), "--no-progress"])
            config = json.loads(out.read_text().splitlines()[0])["config"] if rc == 0 else {}
            results.append((config.get("max_api_pool"), config.get("judge")) == (7, "anytool"))
    return len(results), sum(results)


ATTACKS: list[tuple[str, Callable[[], tuple[int, int]]]] = [
    ("OPPO toolset folder", oppo_toolset),
    ("results files and convert", results_and_convert),
    ("data files (queries, CSV, steps, caches)", data_files),
    ("environment settings", environment_config),
]


if __name__ == "__main__":  # each class in a fresh process, as benchmarks/hardening.py runs them
    from benchmarks.hardening import main

    sys.exit(main(["--only", *(sys.argv[1:] or [name for name, _ in ATTACKS])]))
