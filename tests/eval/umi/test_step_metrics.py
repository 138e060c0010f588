"""α-UMi step metrics on hand-made cases, defined as the authors' scorers compute them (X-PLUG/Multi-LLM-Agent
GLPFT/inference_utils/toolbench/evaluate-multi_agent.py and evaluate-backbone.py); expected values computed by hand
in the comments."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from rouge import Rouge

from langgraph_anytool.eval.umi.metrics import (
    StepOutcome,
    argument_f1,
    authors_candidate,
    parse_backbone_reply,
    parse_call_text,
    parse_multi_agent_reply,
    rouge_l,
    rouge_l_norm,
    score_steps,
    summary_rouge_l,
)

SHARED = Path(__file__).parents[3] / ".." / "shared"
DFS = SHARED / "toolbench" / "trajectories" / "toolbench_chatgpt_dfs"


# ------------------------------------------------------------------------------------------------ Arg. F1
# evaluate_action_input_f1 (both scorers): its `f1` list.
def test_arg_f1_name_differs_is_zero() -> None:
    assert argument_f1("g", {"a": 1}, "f", {"a": 1}) == 0.0
    assert argument_f1(None, None, "f", "{}") == 0.0  # no call: the action "none" ≠ "f"


def test_arg_f1_empty_objects() -> None:
    assert argument_f1("f", {}, "f", "{}") == 1.0
    assert argument_f1("f", "{}", "f", {}) == 1.0
    assert argument_f1("f", None, "f", "{}") == 1.0  # no `Action Input:` line: the scorers' default '{}'
    assert argument_f1("f", {"a": 1}, "f", {}) == 0.0  # {} reference, non-empty prediction


def test_arg_f1_empty_action_input_is_not_json() -> None:
    # `Action Input:` with nothing after it: json.loads("") raises → the inner except → f1 0 (not a match with {})
    assert argument_f1("f", "", "f", "{}") == 0.0
    assert argument_f1("f", "", "f", '{"a": 1}') == 0.0
    # the same on the reference side: the outer except → `pass`: the step is left out of the mean
    assert argument_f1("f", "{}", "f", "") is None


def test_arg_f1_half_credit() -> None:
    # a: same value (1), b: same key other value (0.5) → 1.5; P = 1.5/2, R = 1.5/2 → F1 = 0.75
    assert argument_f1("f", {"a": 1, "b": 3}, "f", '{"a": 1, "b": 2}') == pytest.approx(0.75)
    # a matches (1); c, d are extra keys → P = 1/3, R = 1/2 → F1 = 2·(1/6)/(5/6) = 0.4
    assert argument_f1("f", {"a": 1, "c": 5, "d": 6}, "f", {"a": 1, "b": 2}) == pytest.approx(0.4)
    # only other values: 0.5 + 0.5 = 1 → P = R = 1/2 → 0.5
    assert argument_f1("f", {"a": 9, "b": 9}, "f", {"a": 1, "b": 2}) == pytest.approx(0.5)
    # no shared key → recall + precision = 0 → ZeroDivisionError in the scorer's try → 0
    assert argument_f1("f", {"z": 1}, "f", {"a": 1}) == 0.0
    assert argument_f1("f", {}, "f", {"a": 1}) == 0.0


def test_arg_f1_unparsable_and_non_objects() -> None:
    assert argument_f1("f", "not json", "f", {"a": 1}) == 0.0
    assert argument_f1("f", "{'a': 1}", "f", '{"a": 1}') == 0.0  # a Python-literal dict is not JSON
    assert argument_f1("f", {"a": 1}, "f", "not json") is None  # left out of the mean, as the scorer does
    assert argument_f1("f", "[1]", "f", '{"a": 1}') == 0.0  # `.keys()` of a list raises → 0
    assert argument_f1("f", "{}", "f", "[]") == 0.0  # [] != {}, `.items()` of a list raises → 0
    assert argument_f1("f", "{}", "f", "null") == 0.0


# ------------------------------------------------------------------------------------------------ Rouge-L
def test_rouge_l_is_the_rouge_package_f_case_and_punctuation_kept() -> None:
    # evaluate_rougel: Rouge().get_scores(hyps, refs, avg=True)["rouge-l"]["f"] — summary-level LCS over distinct
    # tokens, sentences cut at ".", F = 2PR / (P + R + 1e-8).
    # distinct reference tokens {the, cat, sat, on, mat} = 5, prediction {the, cat, on, mat} = 4, LCS tokens 4:
    # R = 4/5, P = 4/4 → F = 1.6 / (1.8 + 1e-8) = 0.8888888839
    assert rouge_l("the cat on the mat", "the cat sat on the mat") == pytest.approx(1.6 / (1.8 + 1e-8), abs=1e-12)
    assert rouge_l_norm("the cat on the mat", "the cat sat on the mat") == pytest.approx(10 / 11)  # LCS 5: 5/5, 5/6
    # case kept: only "sat" is shared → P = R = 1/3 → F = (2/9) / (2/3 + 1e-8) ≈ 1/3; rouge-score lowercases: 1.0
    assert rouge_l("The Cat sat.", "the cat sat") == pytest.approx(1 / 3, abs=1e-7)
    assert rouge_l_norm("The Cat sat.", "the cat sat") == pytest.approx(1.0)
    # punctuation kept: "Paris," ≠ "Paris" → only "France" shared → P = R = 1/2 → F ≈ 0.5; rouge-score: 1.0
    assert rouge_l("Paris, France", "Paris France") == pytest.approx(0.5, abs=1e-7)
    assert rouge_l_norm("Paris, France", "Paris France") == pytest.approx(1.0)
    # sentences: ["a b", "c d"] vs ["a c", "b d"]: the union of per-sentence LCS tokens is {a, b, c, d} → F ≈ 1;
    # rouge-score's single LCS of "a b c d" / "a c b d" is 3 tokens → 0.75
    assert rouge_l("a b. c d", "a c. b d") == pytest.approx(1.0, abs=1e-7)
    assert rouge_l_norm("a b. c d", "a c. b d") == pytest.approx(0.75)
    # identical texts: 2·1·1 / (2 + 1e-8) = 0.999999995 (the authors' "100")
    assert rouge_l("same words here", "same words here") == pytest.approx(2 / (2 + 1e-8), abs=1e-15)
    assert rouge_l("none", "completely different") == 0.0


def test_rouge_l_of_a_text_without_sentence_is_zero() -> None:
    # the package raises ValueError ("Hypothesis is empty." / "Collections must contain at least 1 sentence.")
    for empty in ("", ".", "..."):
        with pytest.raises(ValueError):
            Rouge().get_scores(hyps=[empty], refs=["x"], avg=True)
        assert rouge_l(empty, "x") == 0.0 and rouge_l("x", empty) == 0.0


def test_our_recursion_free_lcs_agrees_with_the_package() -> None:
    rng = random.Random(7)
    words = ["the", "cat", "Cat", "sat", "on", "mat", "a", "b", ",", "x.", "y", "."]
    for _ in range(400):
        hyp = " ".join(rng.choice(words) for _ in range(rng.randint(1, 12)))
        ref = " ".join(rng.choice(words) for _ in range(rng.randint(1, 12)))
        try:
            want = Rouge(metrics=["rouge-l"]).get_scores(hyps=[hyp], refs=[ref], avg=True)["rouge-l"]["f"]
        except ValueError:
            with pytest.raises(ValueError):
                summary_rouge_l(hyp, ref)
            continue
        assert summary_rouge_l(hyp, ref) == want, (hyp, ref)


def test_a_long_sentence_does_not_overflow() -> None:
    # 700 tokens without a "." overflow the package's recursive LCS; rouge_l falls back to our loop.
    # extra token: R = 700/700, P = 700/701 → F = 2P/(P + 1 + 1e-8)
    text = " ".join(f"w{i}" for i in range(700))
    p = 700 / 701
    assert rouge_l(text + " extra", text) == pytest.approx(2 * p / (p + 1 + 1e-8), abs=1e-12)


# ------------------------------------------------------------------------------------------------ parsing
def test_backbone_parse() -> None:
    # evaluate-backbone.py parse_output
    assert parse_backbone_reply("No luck.\nconclusion: give up.").plan == "give_up"
    done = parse_backbone_reply("Done.\nconclusion: It is 4. conclusion: It is 5.")
    assert (done.plan, done.answer) == ("conclusion", "It is 5.")  # the text after the LAST "conclusion: "
    chat = parse_backbone_reply("I think the weather is sunny.")  # no call, no conclusion → a call of "none"
    assert (chat.plan, chat.action, chat.action_input) == ("call", "none", "{}")
    empty = parse_backbone_reply("Thought.\nAction: get_weather\nAction Input: ")
    assert (empty.action, empty.action_input) == ("get_weather", "")
    assert parse_call_text('Action: f Action Input: {"a": 1}\nmore') == ("f", '{"a": 1}\nmore')
    assert parse_call_text("Action: f\nAction: g") == ("g", "{}")


def test_multi_agent_parse() -> None:
    # evaluate-multi_agent.py parse_output on infer_pipeline.py's strings
    call = parse_multi_agent_reply("assistant: go. Next: caller.</s>caller: Action: f\nAction Input: {}</s>")
    assert (call.plan, call.action, call.action_input) == ("call", "f", "{}")
    fin = parse_multi_agent_reply("assistant: done. Next: conclusion.</s>conclusion: The answer</s>")
    assert (fin.plan, fin.answer) == ("conclusion", "The answer")
    assert parse_multi_agent_reply("I can't. Next: give up.").plan == "give_up"


def test_authors_candidate_cleanup() -> None:
    # inference.py / infer_pipeline.py: `candidate[2:]` after ": ", and '', '.', ',' → 'none'
    assert authors_candidate(": hi") == "hi" and authors_candidate(" . ") == "none" and authors_candidate("") == "none"


# ------------------------------------------------------------------------------------------------ scoring
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
    assert s.hallu == pytest.approx(1 / 4)  # hallucinated calls / steps (hallu_pred / len(data))
    assert s.arg_f1 == pytest.approx(1 / 2)  # 1 and 0 (name differs)
    assert s.rouge_l == pytest.approx(1.6 / 1.8)  # see test_rouge_l_...: 0.8889 (rouge-score: 10/11)
    assert s.rouge_l_norm == pytest.approx(10 / 11)


def test_score_steps_authors_edge_cases() -> None:
    """1. a reply without a call on a call step: plan "call" (a hit), action "none": EM 0, F1 0, not hallucinated;
    2. an empty `Action Input:` for a `{}` reference: EM 1, F1 0; 3. an empty reference input: F1 left out;
    4. an empty answer: the rouge package raises → 0, counted as unscorable.
    Plan 4/4; EM (0 + 1 + 1)/3; F1 mean of [0, 0] = 0 over 2 steps; Rouge-L 0; Hallu. 0."""
    tools = ("f",)
    s = score_steps([
        StepOutcome("call", "call", tools, ref_action="f", ref_args='{"a": 1}', pred_action="none", pred_args="{}"),
        StepOutcome("call", "call", tools, ref_action="f", ref_args="{}", pred_action="f", pred_args=""),
        StepOutcome("call", "call", tools, ref_action="f", ref_args="", pred_action="f", pred_args="{}"),
        StepOutcome("conclusion", "conclusion", tools, ref_answer="Paris", pred_answer=""),
    ])
    assert s.plan_acc == 1.0 and s.act_em == pytest.approx(2 / 3)
    assert (s.arg_f1, s.arg_f1_steps) == (0.0, 2)
    assert (s.rouge_l, s.rouge_unscorable, s.hallucinated, s.predicted_calls) == (0.0, 1, 0, 2)


def test_missing_prediction_scores_as_miss() -> None:
    s = score_steps([StepOutcome("call", None, ("f",), ref_action="f", ref_args="{}"),
                     StepOutcome("conclusion", "call", ("f",), ref_answer="an answer", pred_action="f")])
    assert s.plan_acc == 0.0 and s.act_em == 0.0 and s.arg_f1 == 0.0 and s.rouge_l == 0.0


def test_reference_equals_prediction_scores_100() -> None:
    perfect = [StepOutcome(o.ref_plan, o.ref_plan, o.tools, o.ref_action, o.ref_args, o.ref_answer, o.ref_action,
                           o.ref_args, o.ref_answer) for o in _cases() if o.ref_action != "g"]
    perfect.append(StepOutcome("call", "call", ("f", "g"), "g", "{}", None, "g", "{}"))
    s = score_steps(perfect)
    assert (s.plan_acc, s.act_em, s.arg_f1, s.hallu) == (1.0, 1.0, 1.0, 0.0)
    assert s.rouge_l == pytest.approx(1.0, abs=1e-8) and s.rouge_l_norm == pytest.approx(1.0)


@pytest.mark.toolbench
@pytest.mark.skipif(not DFS.is_dir(), reason="../shared/toolbench is absent")
def test_reference_run_over_shared_trajectories() -> None:
    from langgraph_anytool.eval.umi.data import load_step_cases
    from langgraph_anytool.eval.umi.steps import reference_outcomes

    loaded = load_step_cases([DFS])
    s = score_steps(reference_outcomes(loaded.cases))
    assert (s.plan_acc, s.act_em, s.arg_f1) == (1.0, 1.0, 1.0) and s.rouge_l == pytest.approx(1.0, abs=1e-8)
    # the recorded ChatGPT run itself called one function that is not in its tool list (G3 #21, "dota_2_steam_web")
    assert s.hallucinated == 1 and s.hallu == pytest.approx(1 / s.steps)


def test_an_empty_action_line_is_a_hallucinated_name() -> None:
    """evaluate-multi_agent.py parse_output on "…</s>caller: Action: \\nAction Input: {}": the text after the last
    "Action:" is " \\nAction Input: {}", stripped "Action Input: {}", cut at "Action Input:" → action "" (not None,
    not 'none'), so `pred_action not in [t['Name'] ...]` counts it: hallu_pred += 1.
    Step 1 (ref call f {}): EM "" vs "f" → 0; Arg F1: names differ → 0. Step 2 (ref call f {}, pred f {}): EM 1, F1 1.
    Plan 2/2 = 1; Act. EM 1/2; Arg. F1 (0 + 1)/2 = 0.5; Hallu. 1 hallucinated / 2 steps = 0.5."""
    parsed = parse_multi_agent_reply("asssitant: go. Next: caller.</s>caller: Action: \nAction Input: {}")
    assert (parsed.plan, parsed.action, parsed.action_input) == ("call", "", "{}")
    s = score_steps([
        StepOutcome("call", parsed.plan, ("f",), ref_action="f", ref_args="{}", pred_action=parsed.action,
                    pred_args=parsed.action_input),
        StepOutcome("call", "call", ("f",), ref_action="f", ref_args="{}", pred_action="f", pred_args="{}"),
    ])
    assert (s.plan_acc, s.act_em, s.arg_f1, s.hallu) == (1.0, 0.5, 0.5, 0.5)
    assert (s.predicted_calls, s.hallucinated) == (2, 1)
    # Arg. F1 alone: "" is a name like any other ("" vs "f" differ; "" vs "" compare the inputs)
    assert argument_f1("", "{}", "f", "{}") == 0.0 and argument_f1("", "{}", "", "{}") == 1.0
