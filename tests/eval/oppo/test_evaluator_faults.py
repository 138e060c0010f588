"""An OPPO task whose evaluator fails (issue 34 §2): every task that calls the evaluator (3-8) stops at the first
failed call with `EvaluatorFault` naming the task and the item, and no figure of it is made from items never scored;
`failed_as_zero` (`--failed-as-zero`) scores them 0 as the authors' eval_func.py does and counts them. The evaluator
is a real loopback OpenAI-compatible server answering HTTP 500 (`Retry-After: 0`: the call's retries are quick)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage

from langgraph_anytool import Catalog
from langgraph_anytool.cli.app import main
from langgraph_anytool.cli.exits import EXIT_EVALUATOR
from langgraph_anytool.eval.evaluator_faults import EvaluatorFault
from langgraph_anytool.eval.oppo.data import load_task
from langgraph_anytool.eval.oppo.judge import TaskEvaluator
from langgraph_anytool.eval.oppo.tasks import TaskRunner
from langgraph_anytool.models.testing import ScriptedChatModel, ai, call
from langgraph_anytool.tools.executors import make_executor
from langgraph_anytool.tools.pipeline import ApiExecutor
from tests.servers import ChatFault, OpenAIChatServer

DATA = Path(__file__).parents[2] / "data" / "oppo_tasks"
TOOLSET = Path(__file__).parents[2] / "data" / "oppo_toolset"


def failing(body: dict[str, Any]) -> ChatFault:
    return ChatFault("status", 500, retry_after="0")


# per task: the replies of the model under test that reach the evaluator, and the items (the test data's)
REACHING: dict[int, tuple[list[AIMessage], slice]] = {
    3: ([ai("Which city do you mean?")], slice(0, 1)),
    4: ([ai("", call("days_of_month", year=2024, month=3))], slice(0, 1)),
    5: ([ai("Blue light scatters most.")], slice(0, 1)),
    6: ([ai("I am in Porto.")], slice(0, 1)),
    7: ([ai("", call("list_currencies")), ai("Here are the currencies.")], slice(1, 2)),
    8: ([ai("1. get_my_location\n2. current_weather")], slice(0, 1)),
}


@pytest.fixture(scope="module")
def cat() -> Catalog:
    return Catalog.load(TOOLSET)


def run(cat: Catalog, task: int, judge: OpenAIChatServer, tmp_path: Path, **options: Any) -> Any:
    from langchain_openai import ChatOpenAI

    evaluator = TaskEvaluator(ChatOpenAI(model="judge-test", base_url=judge.base_url, api_key="sk-test",
                                         max_retries=0, timeout=10), cache_dir=tmp_path / "cache", identity="judge")
    replies, items = REACHING[task]
    executor = ApiExecutor(cat, default=make_executor("template"), use_catalog_executors=True)
    try:
        return TaskRunner(cat, ScriptedChatModel(replies=list(replies)), evaluator=evaluator, executor=executor,
                          **options).run(task, load_task(task, DATA)[items])
    finally:
        executor.close()


@pytest.mark.parametrize("task", sorted(REACHING))
def test_a_failed_evaluator_stops_the_task(task: int, cat: Catalog, tmp_path: Path) -> None:
    with OpenAIChatServer(policy=failing) as judge:
        with pytest.raises(EvaluatorFault) as caught:
            run(cat, task, judge, tmp_path)
        assert judge.chat_requests  # the evaluator was asked
    fault = caught.value
    assert fault.where.startswith(f"task {task}, item ") and "server_error" in fault.fault and "500" in fault.fault
    assert (fault.unscored, fault.total) == (1, 1)


@pytest.mark.parametrize("task", sorted(REACHING))
def test_failed_as_zero_scores_the_authors_way_and_counts(task: int, cat: Catalog, tmp_path: Path) -> None:
    with OpenAIChatServer(policy=failing) as judge:
        report = run(cat, task, judge, tmp_path, failed_as_zero=True)
    assert report.evaluator_faults == 1 and report.to_dict()["evaluator_faults"] == 1
    assert "1 of 1 items were not scored by the evaluator (its call failed) and count as failed" in report.table()


def test_the_command_line_says_it_in_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """Was: `pass_rate 0.0` and exit 0 when every evaluator call failed."""
    def policy(body: dict[str, Any]) -> Any:
        return failing(body) if body["model"] == "judge" else "Blue light scatters most."

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    base = ["eval", "tasks", "--task", "5", "--data", str(DATA), "--catalog", str(TOOLSET), "--model",
            "openai:model-under-test", "--evaluator", "openai:judge", "--evaluator-cache", str(tmp_path / "c")]
    with OpenAIChatServer(policy=policy) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        code = main(base)
        out, err = capsys.readouterr()
        assert code == EXIT_EVALUATOR and "Traceback" not in err and "pass_rate" not in out
        [line] = [x for x in err.splitlines() if x.startswith("anytool:")]
        assert line.startswith("anytool: evaluator openai:judge failed on task 5, item ") and "server_error" in line
        code = main([*base, "--failed-as-zero", "--json"])
        out, err = capsys.readouterr()
    [report] = json.loads(out)
    assert code == EXIT_EVALUATOR and report["metrics"]["pass_rate"] == 0.0 and report["evaluator_faults"] >= 1
    assert "scored 0 (--failed-as-zero)" in err
