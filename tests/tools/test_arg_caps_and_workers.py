"""Size caps on API arguments and killable local calls (issue 11, section 3: the 100k-character unit string)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from langgraph_anytool.catalog.catalog import Catalog
from langgraph_anytool.catalog.errors import CatalogError
from langgraph_anytool.catalog.models import Api, Param
from langgraph_anytool.catalog.parse import parse_tool
from langgraph_anytool.tools.executors import LocalExecutor
from langgraph_anytool.tools.observation import Status
from langgraph_anytool.tools.pipeline import ApiExecutor
from langgraph_anytool.tools.validation import DEFAULT_MAX_ARGUMENT_CHARS, validate_arguments
from tests import slow_impl

CONVERT = "Units_Conversion/universal_unit_converter/convert_units"


def _api(cap: int | None = None) -> Api:
    return Api(id="C/t/a", name="a", tool_key="t", tool_name="T", category="C", max_argument_chars=cap,
               params=(Param("text", required=True), Param("items", "array")))


def test_default_cap_is_documented_and_enforced() -> None:
    assert DEFAULT_MAX_ARGUMENT_CHARS == 10_000
    assert validate_arguments(_api(), {"text": "x" * 10_000}).ok
    bad = validate_arguments(_api(), {"text": "x" * 10_001})
    assert not bad.ok and "at most 10,000" in bad.problems[0] and "text" in bad.problems[0]
    assert not validate_arguments(_api(), {"text": "a", "items": ["y" * 6000, "z" * 6000]}).ok
    assert validate_arguments(_api(20_000), {"text": "x" * 15_000}).ok  # per-API override


def test_nested_and_oversized_argument_strings_are_refused() -> None:
    deep = '{"text": "a", "items": ' + "[" * 100_000 + "]" * 100_000 + "}"
    r = validate_arguments(_api(10**7), deep)
    assert not r.ok and "nested" in r.problems[0]
    r = validate_arguments(_api(), {"text": "a", "items": "[" * 70 + "]" * 70})
    assert not r.ok and "nested" in r.problems[0]
    r = validate_arguments(_api(), json.dumps({"text": "x" * 50_000}))
    assert not r.ok and "at most 40,000" in r.problems[0]


def test_catalogs_set_the_cap_per_api(tmp_path: Path) -> None:
    doc = {"tool_name": "T", "api_list": [{"name": "small", "url": "/s", "max_argument_chars": 50},
                                          {"name": "big", "url": "/b"}]}
    small, big = parse_tool(doc, category="C", source="t.json").apis
    assert (small.max_argument_chars, big.max_argument_chars) == (50, None)
    with pytest.raises(CatalogError, match="max_argument_chars"):
        parse_tool({"tool_name": "T", "api_list": [{"name": "x", "max_argument_chars": "big"}]}, category="C",
                   source="t.json")


def test_a_100k_unit_string_is_refused_at_once_and_normal_calls_work() -> None:
    catalog = Catalog.builtin()
    assert catalog.api(CONVERT).max_argument_chars == 200
    pipe = ApiExecutor.for_catalog(catalog, kind="local")
    try:
        started = time.monotonic()
        obs = pipe.call(CONVERT, {"value": 1, "from_unit": "m" * 100_000, "to_unit": "km"})
        assert obs.status is Status.INVALID_ARGUMENTS and "at most 200" in obs.error
        assert time.monotonic() - started < 2
        ok = pipe.call(CONVERT, {"value": 26.2, "from_unit": "mile", "to_unit": "km"})  # through a worker process
        assert ok.ok and abs(ok.content["result"] - 42.1648128) < 1e-6, ok
        bad = pipe.call(CONVERT, {"value": 1, "from_unit": "parsec", "to_unit": "kg"})
        assert bad.status is Status.REJECTED  # the worker's ValueError: the API refused the value
    finally:
        pipe.close()


async def test_a_timeout_kills_the_worker_and_nothing_keeps_burning() -> None:
    impls = {"X/t/burn": slow_impl.burn, "X/t/pid": slow_impl.whoami, "X/t/fail": slow_impl.fail}
    ex = LocalExecutor(impls, isolated=set(impls), isolated_timeout=1.0, workers=1)

    def api(key: str) -> Api:
        return Api(id=f"X/t/{key}", name=key, tool_key="t", tool_name="T", category="X")

    try:
        first = await ex.aexecute(api("pid"), {})
        worker = first.content
        assert first.ok and worker != os.getpid()
        started = time.monotonic()
        slow = await ex.aexecute(api("burn"), {"seconds": 60})
        assert slow.status is Status.TIMEOUT and "killed" in slow.error
        assert time.monotonic() - started < 5
        assert not Path(f"/proc/{worker}").exists()  # the burning process is gone, not left running
        again = await ex.aexecute(api("pid"), {})
        assert again.ok and again.content != worker  # a fresh worker serves the next call
        failed = await ex.aexecute(api("fail"), {"message": "no such unit"})
        assert failed.status is Status.REJECTED and "no such unit" in failed.error
    finally:
        await ex.aclose()
    assert not Path(f"/proc/{again.content}").exists()


def test_worker_apis_run_from_a_script_read_on_stdin() -> None:
    """`python - <<EOF` (no main file): the worker process must not try to re-run the parent's '<stdin>'."""
    import subprocess
    import sys

    script = ("from langgraph_anytool import Catalog\nfrom langgraph_anytool.tools.pipeline import ApiExecutor\n"
              "cat = Catalog.builtin()\napi = cat.find_api('Universal Unit Converter', 'Convert Units')\n"
              "args = {p.name: p.default for p in api.params if p.required}\n"
              "with ApiExecutor.for_catalog(cat, kind='local') as ex:\n"
              "    print(ex.call(api.id, args).status.value)\n")
    done = subprocess.run([sys.executable, "-"], input=script, capture_output=True, text=True, timeout=120)
    assert done.stdout.strip().splitlines()[-1] == "ok", done.stderr[-2000:]
