"""Attack classes on what `anytool report`, `eval compare` and `eval steps` read, and on the YAML files of every
loader (issue 34 §4, §5), for `benchmarks/hardening.py`.

An attempt holds when the input ends the way the issue asks: rendered (exit 0, the pages written), or refused
with one `anytool: error:` line naming the file, the line and the field; never a traceback, a page shared by two
queries, a file name past the file system's limit, markup from data in `--markdown` output. Run one class alone:
`python benchmarks/hardening_attacks/records.py CLASS`.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.hardening_attacks.local import _cli as _cli_raw  # noqa: E402
from benchmarks.hardening_attacks.local import _one_line, _workdir  # noqa: E402
from tests.eval.report.test_report_hostile_records import (  # noqa: E402
    HOSTILE_IDS,
    WRONG,
    field_paths,
    full_record,
    with_value,
)

DATA = ROOT / "tests" / "data"


def _cli(args: list[str]) -> tuple[int, str]:
    """`anytool ARGS` in this process: exit code and stderr; a traceback is an attempt that did not hold (exit 1,
    the exception as stderr), not the end of the class."""
    try:
        return _cli_raw(args)
    except Exception as exc:
        return 1, f"Traceback: {type(exc).__name__}: {exc}"


def _cli_out(args: list[str]) -> tuple[int, str, str]:
    """`anytool ARGS` in this process: exit code, stdout and stderr (a traceback as in `_cli`)."""
    from langgraph_anytool.cli.app import main

    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = main(args)
    except Exception as exc:
        return 1, out.getvalue(), f"Traceback: {type(exc).__name__}: {exc}"
    return rc, out.getvalue(), err.getvalue()


# ------------------------------------------------------------------------------------------------ §4
def report_records() -> tuple[int, int]:
    """Every field of a full results record the report pages read, given every wrong type or value (a string
    number, null, lists, objects, ±Infinity, NaN, 1.7e308, -1, true, 10^30, ""), through `anytool report`; and the
    same record's usage through `eval compare`'s reader."""
    from langgraph_anytool.eval.anytool.compare import query_usage
    from langgraph_anytool.sanitize.paths import query_page_name

    results: list[bool] = []
    base = full_record()
    with _workdir() as tmp:
        path = tmp / "r.jsonl"
        for field in field_paths(base):
            for value in WRONG:
                record = with_value(base, field, value)
                path.write_text(json.dumps(record) + "\n", encoding="utf-8")
                out = tmp / "site"
                shutil.rmtree(out, ignore_errors=True)
                rc, err = _cli(["report", str(path), "--out", str(out)])
                if rc == 0:
                    page = out / query_page_name(record.get("group", ""), record.get("query_id", ""))
                    try:
                        query_usage(record)
                        results.append(page.is_file() and (out / "index.html").is_file())
                    except Exception:  # a traceback in compare's reader (the size of the failure is the figure)
                        results.append(False)
                else:
                    results.append(_one_line(rc, err, "r.jsonl, line 1, field '"))
    return len(results), sum(results)


def report_page_names() -> tuple[int, int]:
    """Ids of every length (to 5,000 characters) and script, ids spelled as another id's digested name, and many
    near-identical ids in one report: every query its own page, every name under 255 bytes."""
    from langgraph_anytool.sanitize.paths import query_page_name, safe_file_name

    results: list[bool] = []
    with _workdir() as tmp:
        ids: list[Any] = []
        for n in (1, 64, 99, 100, 101, 120, 130, 200, 255, 256, 1000, 5000):
            for ch in ("q", "é", "/", "😀", ".", " ", "-"):
                ids.append(ch * n)
        ids += ["a b", "a_b", "a/b", "", 1, "1"]
        ids += [safe_file_name(i) for i in list(ids)]
        ids += [f"q{i:06d}/" for i in range(2000)]  # 2,000 names that all change the same way
        records = [{"query_id": q, "group": "g" * 130, "status": "solved"} for q in ids]
        path = tmp / "r.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
        rc, _ = _cli(["report", str(path), "--out", str(tmp / "site")])
        keys = {str(q) for q in ids}
        names = {query_page_name("g" * 130, q) for q in keys}
        written = {p.name for p in (tmp / "site").glob("*.html")} - {"index.html"}
        results.append(rc == 0 and written == names)
        for q in keys:
            name = query_page_name("g" * 130, q)
            results.append(len(name.encode()) <= 255 and name in written)
        results.append(len(names) == len(keys))
    return len(results), sum(results)


def compare_inputs() -> tuple[int, int]:
    """`eval compare --markdown --report DIR` on pass-rate reports whose groups and query ids are markup (tags,
    images, links, comments, bare CRs, emphasis, code, headings), rendered by a CommonMark parser: no markup from
    data, every link a page of the report folder; pass-rate reports nested up to 100,000 levels: one line."""
    from urllib.parse import unquote

    from markdown_it import MarkdownIt

    from langgraph_anytool.sanitize.paths import query_page_name

    results: list[bool] = []
    md = MarkdownIt("commonmark").enable("table")
    with _workdir() as tmp:
        report = tmp / "rep (1) <x>"
        report.mkdir()
        for hostile in HOSTILE_IDS:
            pair = [f"{hostile}{k}" for k in range(2)]
            for side, values in (("a", [1.0, 1.0]), ("b", [0.0, 1.0])):
                queries = [{"group": hostile, "query_id": q, "value": v} for q, v in zip(pair, values, strict=True)]
                (tmp / f"{side}.json").write_text(json.dumps({"protocol": "anytool", "samples": 1,
                                                              "evaluator": hostile, "queries": queries}))
            for q in pair:
                (report / query_page_name(hostile, q)).write_text("x")
            rc, out, _ = _cli_out(["eval", "compare", str(tmp / "a.json"), str(tmp / "b.json"), "--markdown",
                                   "--report", str(report), "--resamples", "100"])
            html = md.render(out)
            hrefs = re.findall(r'href="([^"]*)"', html)
            results.append(rc == 0 and "\r" not in out
                           and not re.search(r"<(script|img|h\d|code|del|s)\b|<!--", html)
                           and html.count("<strong>") == 4 and len(hrefs) == 2
                           and all(Path(unquote(h)).parent == report for h in hrefs))
        for depth in (1_000, 10_000, 100_000):
            deep = tmp / "deep.json"
            for text in ('{"protocol": "anytool", "queries": ' + "[" * depth + "]" * depth + "}",
                         '{"query_id": ' + "[" * depth + "]" * depth + "}\n",
                         "{\n" + '"protocol": "anytool", "overall": ' + '{"a": ' * depth + "1" + "}" * depth + "}"):
                deep.write_text(text)
                rc, err = _cli(["eval", "compare", str(deep), str(deep), "--evaluator", "openai:gpt-test"])
                results.append(_one_line(rc, err, "nesting too deep"))
    return len(results), sum(results)


# ------------------------------------------------------------------------------------------------ §5
def yaml_characters() -> tuple[int, int]:
    """Every character YAML forbids (C0 and C1 controls, U+FFFE, U+FFFF) in OPPO's config.yml (`catalog
    --catalog DIR`), an OpenAPI spec (`catalog --catalog spec.yaml`) and ToolEval's config.yaml (`prompts_from`)."""
    from langgraph_anytool.paper_prompts import PromptSourceError, tooleval_book
    from langgraph_anytool.paper_prompts.testing import write_fake_checkout

    forbidden = ([chr(c) for c in range(0x20) if chr(c) not in "\t\n\r"]
                 + [chr(c) for c in range(0x7F, 0xA0) if c != 0x85] + ["\ufffe", "\uffff"])
    results: list[bool] = []
    with _workdir() as tmp:
        toolset = tmp / "toolset"
        shutil.copytree(DATA / "oppo_toolset", toolset)
        cfg = toolset / "config.yml"
        original = cfg.read_text(encoding="utf-8")
        spec = tmp / "petstore.yaml"
        petstore = (DATA / "openapi" / "petstore.yaml").read_text(encoding="utf-8")
        checkout = write_fake_checkout(tmp / "StableToolBench", "tooleval")
        tooleval_cfg = next(checkout.rglob("config.yaml"))
        tooleval_text = tooleval_cfg.read_text(encoding="utf-8")
        for ch in forbidden:
            code = f"U+{ord(ch):04X}"
            for at in (0, len(original) // 2, len(original)):
                cfg.write_text(original[:at] + ch + original[at:], encoding="utf-8")
                rc, err = _cli(["catalog", "--catalog", str(toolset)])
                results.append(_one_line(rc, err, "config.yml", code))
            cfg.write_text(original, encoding="utf-8")
            spec.write_text(petstore.replace("title:", f"title: a{ch}", 1), encoding="utf-8")
            rc, err = _cli(["catalog", "--catalog", str(spec)])
            results.append(_one_line(rc, err, "petstore.yaml", code))
            tooleval_cfg.write_text(tooleval_text + f"extra: a{ch}b\n", encoding="utf-8")
            try:
                tooleval_book(checkout)
                results.append(False)
            except PromptSourceError as exc:
                results.append("\n" not in str(exc) and code in str(exc))
            except Exception:  # a traceback
                results.append(False)
            tooleval_cfg.write_text(tooleval_text, encoding="utf-8")
    return len(results), sum(results)


def steps_arguments() -> tuple[int, int]:
    """`eval steps --offline` on ToolBench answer files and α-UMi test files whose arguments (the step's reference
    or the history's, as JSON text or JSON objects) nest 250 to 100,000 levels deep: one line, or scored."""
    from tests.eval.umi.test_steps_hostile import CASES, _dumps_deep, deep_text, deep_value, toolbench, umi

    results: list[bool] = []
    with _workdir() as tmp:
        for depth in (250, 1_000, 5_000, 20_000, 100_000):
            for fmt, where, form in CASES:
                args: Any = deep_text(depth) if form == "text" else deep_value(min(depth, 5_000))
                data = toolbench(args, where) if fmt == "toolbench" else umi(args, where)
                folder = tmp / f"{fmt}-{where}-{form}-{depth}" / "G1"
                folder.mkdir(parents=True)
                (folder / "1.json").write_text(json.dumps(data) if form == "text" else _dumps_deep(data))
                rc, err = _cli(["eval", "steps", str(folder.parent), "--format", fmt, "--offline"])
                results.append((rc == 0 and where == "history" and "Traceback" not in err)
                               or _one_line(rc, err, "1.json", "nesting too deep"))
    return len(results), sum(results)


ATTACKS: list[tuple[str, Callable[[], tuple[int, int]]]] = [
    ("report on hostile records", report_records),
    ("report page names", report_page_names),
    ("compare --markdown and reports", compare_inputs),
    ("YAML forbidden characters", yaml_characters),
    ("eval steps deep arguments", steps_arguments),
]


if __name__ == "__main__":  # each class in a fresh process, as benchmarks/hardening.py runs them
    from benchmarks.hardening import main

    sys.exit(main(["--only", *(sys.argv[1:] or [name for name, _ in ATTACKS])]))
