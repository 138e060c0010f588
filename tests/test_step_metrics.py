"""α-UMi step metrics on hand-made cases (expected values computed by hand in the comments)."""

from __future__ import annotations

from pathlib import Path

import pytest

from langgraph_anytool.eval.step_metrics import StepOutcome, argument_f1, rouge_l, score_steps

SHARED = Path(__file__).parents[1] / ".." / "shared"
DFS = SHARED / "toolbench" / "trajectories" / "toolbench_chatgpt_dfs"


def test_arg_f1_name_differs_is_zero() -> None:
    assert argument_f1("g", {"a": 1}, "f", {"a": 1}) == 0.0


def test_arg_f1_empty_objects() -> None:
    assert argument_f1("f", {}, "f", "{}") == 1.0
    assert argument_f1("f", "{}", "f", {}) == 1.0
    assert argument_f1("f", {"a": 1}, "f", {}) == 0.0  # {} reference, non-empty prediction


def test_arg_f1_half_credit() -> None:
    # a: same value (1), b: same key other value (0.5) → 1.5; P = 1.5/2, R = 1.5/2 → F1 = 0.75
    assert argument_f1("f", {"a": 1, "b": 3}, "f", '{"a": 1, "b": 2}') == pytest.approx(0.75)
    # a matches (1); c, d are extra keys → P = 1/3, R = 1/2 → F1 = 2·(1/6)/(5/6) = 0.4
    assert argument_f1("f", {"a": 1, "c": 5, "d": 6}, "f", {"a": 1, "b": 2}) == pytest.approx(0.4)
    # only other values: 0.5 + 0.5 = 1 → P = R = 1/2 → 0.5
    assert argument_f1("f", {"a": 9, "b": 9}, "f", {"a": 1, "b": 2}) == pytest.approx(0.5)
    # no shared key → 0
    assert argument_f1("f", {"z": 1}, "f", {"a": 1}) == 0.0


def test_arg_f1_unparsable() -> None:
    assert argument_f1("f", "not json", "f", {"a": 1}) == 0.0
    assert argument_f1("f", {"a": 1}, "f", "not json") is None  # left out of the mean, as the released scorer does


def test_rouge_l_hand_computed() -> None:
    # LCS("the cat on the mat", "the cat sat on the mat") = 5 tokens: P = 5/5, R = 5/6 → F = 10/11
    assert rouge_l("the cat on the mat", "the cat sat on the mat") == pytest.approx(10 / 11)
    assert rouge_l("same words here", "same words here") == pytest.approx(1.0)
    assert rouge_l("none", "completely different") == 0.0


def _cases() -> list[StepOutcome]:
    tools = ("f", "g")
    return [
        StepOutcome("call", "call", tools, ref_action="f", ref_args='{"a": 1}', pred_action="f", pred_args={"a": 1}),
        StepOutcome("call", "call", tools, ref_action="g", ref_args="{}", pred_action="h", pred_args={}),
        StepOutcome("conclusion", "conclusion", tools, ref_answer="the cat sat on the mat",
                    pred_answer="the cat on the mat"),
        StepOutcome("give_up", "call", tools, pred_action="f", pred_args={}),
    ]


def test_score_steps_hand_computed() -> None:
    s = score_steps(_cases())
    assert s.steps == 4 and s.call_steps == 2 and s.conclusion_steps == 1 and s.give_up_steps == 1
    assert s.plan_acc == pytest.approx(3 / 4)  # the give-up step was predicted as a call
    assert s.act_em == pytest.approx(1 / 2)  # f right, h instead of g
    assert s.predicted_calls == 3 and s.hallucinated == 1  # h is not a tool
    assert s.hallu == pytest.approx(1 / 4)  # hallucinated calls / steps (the released scorer's denominator)
    assert s.arg_f1 == pytest.approx(1 / 2)  # 1 and 0 (name differs)
    assert s.rouge_l == pytest.approx(10 / 11)


def test_missing_prediction_scores_as_miss() -> None:
    s = score_steps([StepOutcome("call", None, ("f",), ref_action="f", ref_args="{}"),
                     StepOutcome("conclusion", "call", ("f",), ref_answer="an answer", pred_action="f")])
    assert s.plan_acc == 0.0 and s.act_em == 0.0 and s.arg_f1 == 0.0 and s.rouge_l == 0.0


def test_reference_equals_prediction_scores_100() -> None:
    perfect = [StepOutcome(o.ref_plan, o.ref_plan, o.tools, o.ref_action, o.ref_args, o.ref_answer, o.ref_action,
                           o.ref_args, o.ref_answer) for o in _cases() if o.ref_action != "g"]
    perfect.append(StepOutcome("call", "call", ("f", "g"), "g", "{}", None, "g", "{}"))
    s = score_steps(perfect)
    assert (s.plan_acc, s.act_em, s.arg_f1, s.rouge_l, s.hallu) == (1.0, 1.0, 1.0, 1.0, 0.0)


@pytest.mark.toolbench
@pytest.mark.skipif(not DFS.is_dir(), reason="../shared/toolbench is absent")
def test_reference_run_over_shared_trajectories() -> None:
    from langgraph_anytool.eval.step_data import load_step_cases
    from langgraph_anytool.eval.steps import reference_outcomes

    loaded = load_step_cases([DFS])
    s = score_steps(reference_outcomes(loaded.cases))
    assert (s.plan_acc, s.act_em, s.arg_f1, s.rouge_l) == (1.0, 1.0, 1.0, 1.0)
    # the recorded ChatGPT run itself called one function that is not in its tool list (G3 #21, "dota_2_steam_web")
    assert s.hallucinated == 1 and s.hallu == pytest.approx(1 / s.steps)
