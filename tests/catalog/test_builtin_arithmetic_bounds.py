"""Builtin arithmetic cannot freeze the process (issue 28, point 3).

`fraction_to_decimal(fraction="1e40000000")` held the GIL for 92 s: `Fraction` computes 10**40000000. Every builtin
API that reads numbers from text bounds their digits and exponents before any arithmetic (the interpreter's own
4,300-digit limit is switched off here, as an application may do); every builtin but the code runners runs in a
killable worker process, so no call holds the event loop; workers have a memory limit and a CPU budget per call.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
import time

import pytest

from langgraph_anytool.catalog.catalog import Catalog
from langgraph_anytool.catalog.models import Api
from langgraph_anytool.tools.executors import LocalExecutor, make_executor
from langgraph_anytool.tools.executors.worker_pool import WorkerPool
from langgraph_anytool.tools.observation import Observation, Status
from tests import slow_impl

# (API id, arguments): numbers as text that take minutes or hours to compute, or that parse into huge integers.
HOSTILE = [
    ("Mathematics/fraction_calculator/fraction_to_decimal", {"fraction": "1e40000000"}),
    ("Mathematics/fraction_calculator/fraction_to_decimal", {"fraction": "1e999999999"}),
    ("Mathematics/fraction_calculator/fraction_to_decimal", {"fraction": "1 1/1e1_000_000_000"}),
    ("Mathematics/fraction_calculator/fraction_arithmetic", {"a": "1/1E99999999", "operation": "add", "b": "1"}),
    ("Mathematics/fraction_calculator/decimal_to_fraction", {"decimal_value": "1.5e-999999999"}),
    ("Mathematics/fraction_calculator/fraction_to_decimal", {"fraction": "7" * 9000 + "/3"}),
    ("Mathematics/fraction_calculator/simplify_fraction", {"numerator": "9" * 9000, "denominator": 7}),
    ("Mathematics/number_theory_toolkit/prime_check", {"n": "9" * 9000}),
    ("Mathematics/quick_calculator/evaluate_expression", {"expression": "9**9**9"}),
    ("Mathematics/quick_calculator/evaluate_expression", {"expression": "factorial(100000)"}),
    ("Mathematics/quick_calculator/evaluate_expression", {"expression": "round(5, -10**9)"}),
    ("Mathematics/quick_calculator/evaluate_expression", {"expression": "perm(10000) * perm(10000)"}),
    ("Units_Conversion/universal_unit_converter/convert_quantity_expression", {"expression": "10**99999999 m", "to_unit": "km"}),
    ("Units_Conversion/universal_unit_converter/convert_quantity_expression", {"expression": "9**9**9 m", "to_unit": "km"}),
    ("Units_Conversion/universal_unit_converter/convert_quantity_expression",
     {"expression": "((((9**99)**99)**99)**99) m", "to_unit": "km"}),
    ("Units_Conversion/universal_unit_converter/convert_units",
     {"value": 1, "from_unit": "10**99999999 m", "to_unit": "km"}),
    ("Units_Conversion/universal_unit_converter/unit_information", {"unit": "m**99999999999"}),
    ("Country_Data/locale_formatter/parse_localized_number", {"text": "1e999999999", "locale": "en_US"}),
]

_DIRECT = """
import sys, time
sys.set_int_max_str_digits(0)  # no help from the interpreter's 4,300-digit limit
from langgraph_anytool.catalog.builtin import builtin_implementations
impls = builtin_implementations()
for api_id, args in {cases!r}:
    start = time.process_time()  # CPU seconds: what a runaway computation burns, whatever the machine's load
    try:
        impls[api_id](**args)
        outcome = "returned"
    except ValueError as exc:
        outcome = "refused: " + str(exc)[:80]
    print(f"{{time.process_time() - start:.2f}} {{api_id}} {{outcome}}", flush=True)
"""


def test_the_hostile_cases_name_real_apis() -> None:
    ids = {api.id for api in Catalog.builtin()}
    assert {api_id for api_id, _ in HOSTILE} <= ids


def test_numbers_as_text_are_bounded_before_any_arithmetic() -> None:
    """Called directly (no worker, no timeout), each hostile input is refused at once with a ValueError."""
    code = textwrap.dedent(_DIRECT.format(cases=HOSTILE))
    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        pytest.fail(f"a builtin computed for minutes; finished before that:\n{out}")
    lines = done.stdout.strip().splitlines()
    assert done.returncode == 0 and len(lines) == len(HOSTILE), done.stderr[-2000:]
    for line in lines:
        seconds, _api_id, outcome = line.split(" ", 2)
        assert outcome.startswith("refused: "), line
        # CPU seconds: pint's registry loads on first use (a second or two), the rest takes milliseconds; an
        # unbounded input burns minutes to hours
        assert float(seconds) < 20, line


def test_every_builtin_but_the_code_runners_runs_in_a_killable_worker() -> None:
    catalog = Catalog.builtin()
    executor = make_executor("local")
    in_process = {api.id for api in catalog if api.id not in executor.isolated}
    assert in_process <= {"Code_Execution/python_sandbox/run_python_code",
                          "Code_Execution/python_sandbox/evaluate_python_expression",
                          "Code_Execution/python_sandbox/run_python_tests"}
    assert executor.isolated_memory_bytes == 1 << 30


async def hostile_calls() -> list[tuple[Observation, float]]:
    """Each hostile case through the builtin executor, with a ticker on the same loop: its observation and the
    longest the loop stood still during the call."""
    catalog = Catalog.builtin()
    executor = make_executor("local")
    gaps: list[float] = []
    done = asyncio.Event()

    async def tick() -> None:
        last = time.monotonic()
        while not done.is_set():
            await asyncio.sleep(0.01)
            now = time.monotonic()
            gaps.append(now - last)
            last = now

    ticker = asyncio.create_task(tick())
    out = []
    try:
        await executor.aexecute(catalog.api("Mathematics/fraction_calculator/fraction_to_decimal"), {"fraction": "1/3"})
        for api_id, args in HOSTILE:
            gaps.clear()  # the worker's start-up is behind us
            out.append((await executor.aexecute(catalog.api(api_id), args), max(gaps, default=0.0)))
    finally:
        done.set()
        await ticker
        await executor.aclose()
    return out


async def test_hostile_numbers_never_hold_the_event_loop() -> None:
    """Every call ends with REJECTED, and the loop never stops for more than half a second (a call holding the
    GIL in this process would stop it)."""
    calls = await hostile_calls()
    assert [o.status for o, _ in calls] == [Status.REJECTED] * len(HOSTILE), [o.error for o, _ in calls]
    assert max(stall for _, stall in calls) < 0.5


def _api(key: str) -> Api:
    return Api(id=f"X/t/{key}", name=key, tool_key="t", tool_name="T", category="X")


async def test_a_worker_has_a_memory_limit_and_is_replaced_after_reaching_it() -> None:
    impls = {"X/t/allocate": slow_impl.allocate, "X/t/pid": slow_impl.whoami}
    executor = LocalExecutor(impls, isolated=set(impls), isolated_timeout=60, isolated_memory_bytes=512 << 20,
                             workers=1)
    try:
        first = await executor.aexecute(_api("pid"), {})
        small = await executor.aexecute(_api("allocate"), {"megabytes": 64})
        assert small.ok and small.content == 64 << 20
        big = await executor.aexecute(_api("allocate"), {"megabytes": 1500})
        assert big.status is Status.ERROR and "memory limit (512 MB)" in big.error, big
        again = await executor.aexecute(_api("pid"), {})
        assert again.ok and again.content != first.content  # a fresh worker
    finally:
        await executor.aclose()


def test_the_cpu_limit_is_a_budget_per_call_not_per_worker() -> None:
    """RLIMIT_CPU counts a process's whole life: a worker serving many calls must not die of their sum."""
    pool = WorkerPool(1, cpu_seconds=2)
    try:
        pids = {pool.call(slow_impl.whoami, {}, 30)}
        for _ in range(4):
            assert pool.call(slow_impl.burn, {"seconds": 0.8}, 30) > 0
            pids.add(pool.call(slow_impl.whoami, {}, 30))
        assert len(pids) == 1 and pids != {os.getpid()}
    finally:
        pool.close()
