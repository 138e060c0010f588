"""`eval convert` both ways on the shared StableToolBench examples (checked against the evaluator's own results),
and `eval stats` / `eval passrate` on hand-made results."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

import pytest

from langgraph_anytool.cli.app import main
from langgraph_anytool.eval.anytool.convert import from_answer_dir, from_tooleval, record_to_tooleval, to_tooleval
from langgraph_anytool.eval.anytool.passrate import QueryVerdicts, answer_process, score
from langgraph_anytool.eval.anytool.results import read_results
from langgraph_anytool.eval.anytool.stats import results_stats

SHARED = Path(__file__).parents[3] / ".." / "shared"
EXAMPLE = SHARED / "toolbench" / "trajectories" / "stabletoolbench_example"
needs_example = pytest.mark.skipif(not EXAMPLE.is_dir(), reason="../shared/toolbench/trajectories is absent")


@needs_example
@pytest.mark.parametrize("method", ["virtual_chatgpt_cot", "virtual_chatgpt_dfs"])
def test_converted_format_and_answer_dirs_give_the_same_records(method: str) -> None:
    converted = {r["query_id"]: r for r in from_tooleval(EXAMPLE / "model_predictions_converted" / method /
                                                          "G1_instruction.json")}
    answers = {r["query_id"]: r for r in from_answer_dir(EXAMPLE / "answer" / method / "G1_instruction")}
    assert sorted(converted) == sorted(answers) == ["1073", "588", "608"]
    for qid, a in answers.items():
        c = converted[qid]
        assert c["group"] == a["group"] == "G1_instruction"
        assert c["answer"] == a["answer"]
        # the one empty answer (CoT on 588) is the one StableToolBench's evaluator labelled Unsolved 3 times
        assert bool(a["answer"]) == (not (method.endswith("cot") and qid == "588"))
        assert a["status"] == ("answered" if a["answer"] else "gave_up")
        assert [s["function"] for s in answer_process(c)] == [s["function"] for s in answer_process(a)]
        assert a["query"] == c["query"]


@needs_example
def test_ours_to_tooleval_round_trip(tmp_path: Path) -> None:
    src = EXAMPLE / "model_predictions_converted" / "virtual_chatgpt_dfs" / "G1_instruction.json"
    original = json.loads(src.read_text())
    records = from_tooleval(src)
    back = to_tooleval(records)["G1_instruction"]
    for qid, entry in back.items():
        # what ToolEval reads: the Finish arguments as JSON, a chain ending in a Finish tool node
        assert json.loads(entry["answer"]["final_answer"])["final_answer"] == \
            json.loads(original[qid]["answer"]["final_answer"])["final_answer"]
        names = [t["name"] for t in entry["available_tools"]]
        assert names[-1] == "Finish" and set(names[:-1]) <= {t["name"] for t in original[qid]["available_tools"]}
    (tmp_path / "G.json").write_text(json.dumps(back))
    again = from_tooleval(tmp_path / "G.json", group="G1_instruction")
    assert [(r["query_id"], r["answer"], [s["function"] for s in answer_process(r)]) for r in again] == \
        [(r["query_id"], r["answer"], [s["function"] for s in answer_process(r)]) for r in records]


@needs_example
@pytest.mark.parametrize("method", ["virtual_chatgpt_cot", "virtual_chatgpt_dfs"])
def test_our_sopr_matches_stabletoolbench_on_its_own_verdicts(method: str) -> None:
    """StableToolBench's recorded per-sample verdicts, scored by its own formula (written out here) and by ours."""
    results = json.loads((EXAMPLE / "pass_rate_results" / method / f"G1_instruction_{method}.json").read_text())
    weight = {"AnswerStatus.Solved": 1.0, "AnswerStatus.Unsure": 0.5, "AnswerStatus.Unsolved": 0.0}
    theirs = statistics.fmean(
        sum(weight[v["is_solved"][str(i)]] for v in results.values()) / len(results) for i in range(3)) * 100
    verdicts = [QueryVerdicts("G1_instruction", qid, [v["is_solved"][str(i)].split(".")[1] for i in range(3)])
                for qid, v in results.items()]
    _, overall = score(verdicts, "sopr", 3)
    assert overall.rate == pytest.approx(theirs)
    assert theirs == pytest.approx({"virtual_chatgpt_cot": 200 / 3, "virtual_chatgpt_dfs": 100.0}[method])


def hand_records() -> list[dict[str, Any]]:
    def rec(group: str, qid: str, calls: int, tok: int, refl: int, pool: int, recall: float | None) -> dict[str, Any]:
        return {"group": group, "query_id": qid, "query": "q", "status": "solved", "answer": "a", "wall_time": 2.0,
                "pool_recall": recall,
                "usage": {"model_calls": calls, "input_tokens": tok, "output_tokens": 100, "api_calls": 3,
                          "reflections": refl, "pool_size": pool, "agents": {"meta": 1, "tool": 2},
                          "roles": {"solver": {"model_calls": calls - 1}, "judge": {"model_calls": 1}}}}

    return [rec("A", "1", 10, 900, 1, 4, 1.0), rec("A", "2", 20, 1900, 3, 8, 0.5), rec("B", "3", 30, 2900, 5, 12, None)]


def test_stats_by_hand() -> None:
    groups, overall = results_stats(hand_records())
    a = groups[0]
    assert (a.queries, a.model_calls, a.total_tokens, a.reflections, a.pool_size) == (2, 15.0, 1500.0, 2.0, 6.0)
    assert a.calls_per_role == {"solver": 14.0, "judge": 1.0} and a.pool_recall == 0.75
    assert overall.model_calls == 20.0 and overall.pool_recall == 0.75 and overall.recall_queries == 2
    assert groups[1].pool_recall is None


def test_stats_and_convert_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    res = tmp_path / "r.jsonl"
    res.write_text("".join(json.dumps(r) + "\n" for r in hand_records()))
    assert main(["eval", "stats", str(res)]) == 0
    out = capsys.readouterr().out
    assert "average call number (model calls)" in out and "75.0%" in out
    assert main(["eval", "stats", str(res), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["overall"]["model_calls"] == 20.0
    assert main(["eval", "convert", str(res), "--to", "tooleval", "--out", str(tmp_path / "tv")]) == 0
    assert sorted(p.name for p in (tmp_path / "tv").iterdir()) == ["A.json", "B.json"]
    assert main(["eval", "convert", str(tmp_path / "tv" / "A.json"), "--to", "ours", "--out",
                 str(tmp_path / "back.jsonl")]) == 0
    assert [r["query_id"] for r in read_results(tmp_path / "back.jsonl")] == ["1", "2"]
    assert main(["eval", "stats", str(tmp_path / "missing.jsonl")]) == 2


def test_record_to_tooleval_without_answer_is_empty() -> None:
    entry = record_to_tooleval({"query": "q", "answer": "", "pool": [], "trajectory": []})
    assert entry["answer"]["final_answer"] == ""  # ToolEval's empty-answer rule → Unsolved without a call


def test_stats_report_the_hallucination_rate_of_live_runs() -> None:
    from langgraph_anytool.eval.anytool.stats import results_stats

    node = {"id": 1, "messages": [{"role": "assistant", "content": ""}],
            "calls": [{"function": "made_up", "status": "unknown_function"}, {"function": "w", "status": "ok"},
                      {"function": "q", "status": "not_in_pool"}, {"function": "Finish", "status": "finish:give_answer"}]}
    records = [{"group": "g", "status": "solved", "usage": {}, "trajectory": [{"attempt": 1, "tree": [node]}]},
               {"group": "g", "status": "solved", "usage": {}, "trajectory": [{"attempt": 1, "tree": [
                   {"id": 1, "messages": [{"role": "assistant", "content": ""}],
                    "calls": [{"function": "w", "status": "ok"}]}]}]}]
    _, overall = results_stats(records)
    assert overall.hallucinated_calls == 2 and overall.hallucination_rate == 2 / 4  # 2 of 4 API calls
