"""`eval steps`: loaders, teacher-forced prediction in single and multi mode (scripted and offline models), CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage

from langgraph_anytool.cli.app import main
from langgraph_anytool.config import AnyToolConfig
from langgraph_anytool.eval.umi.data import StepCase, StepDataError, load_step_cases, load_umi_test
from langgraph_anytool.eval.umi.predict import step_tools
from langgraph_anytool.eval.umi.steps import StepsReport, evaluate_steps
from langgraph_anytool.models.llm import ModelSet
from langgraph_anytool.models.testing import ScriptedChatModel, ai, call

SHARED = Path(__file__).parents[3] / ".." / "shared"
DFS = SHARED / "toolbench" / "trajectories" / "toolbench_chatgpt_dfs"
needs_shared = pytest.mark.skipif(not DFS.is_dir(), reason="../shared/toolbench is absent")

UMI_ITEM = {
    "tools": [
        {"Name": "search_for_video_db", "function": "Search videos by keyword.", "input": {"q": "string, the query"}},
        {"Name": "details_for_video_db", "function": "Details of a video.", "input": {"is_id": "string, video id"}},
    ],
    "instruction": "Find a comedy video and give me its details.",
    "conversations": [
        {"from": "user", "value": "Find a comedy video and give me its details."},
        {"from": "assistant", "value": "I will search for comedy videos first. Next: caller."},
        {"from": "caller", "value": "Action: search_for_video_db\nAction Input: {\n  \"q\": \"comedy\"\n}"},
        {"from": "observation", "value": "{'items': [{'id': 'v1'}]}"},
        {"from": "assistant", "value": "Now the details of v1. Next: caller."},
        {"from": "caller", "value": "Action: details_for_video_db\nAction Input: {\"is_id\": \"v1\"}"},
        {"from": "observation", "value": "{'title': 'Funny cats'}"},
        {"from": "assistant", "value": "I have what the user needs. Next: conclusion."},
        {"from": "conclusion", "value": "The comedy video v1 is titled Funny cats."},
    ],
}


@pytest.fixture()
def umi_file(tmp_path: Path) -> Path:
    path = tmp_path / "in_domain.json"
    path.write_text(json.dumps([UMI_ITEM]), encoding="utf-8")
    return path


def test_umi_loader(umi_file: Path) -> None:
    cases, skipped = load_umi_test(umi_file)
    assert skipped == 0 and [c.reference.plan for c in cases] == ["call", "call", "conclusion"]
    first, second, last = cases
    assert first.reference.action == "search_for_video_db" and json.loads(first.reference.args) == {"q": "comedy"}
    assert first.history == () and first.query == UMI_ITEM["instruction"]
    assert [type(m) for m in second.history] == [AIMessage, AIMessage, ToolMessage]
    assert second.history[1].tool_calls[0]["args"] == {"q": "comedy"}  # type: ignore[union-attr]
    assert last.reference.answer == "The comedy video v1 is titled Funny cats."
    assert first.functions[0].parameters["properties"]["q"]["type"] == "string"


def test_loader_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"tools": [], "conversations": [{"from": "robot", "value": "x"}]}]))
    with pytest.raises(StepDataError, match=r"bad.json: item 0: conversations\[0\].from is 'robot'"):
        load_step_cases([bad])
    with pytest.raises(StepDataError, match="no such file"):
        load_step_cases([tmp_path / "missing.json"])


def test_step_tools_keep_toolbench_names() -> None:
    from langgraph_anytool.eval.umi.data import FunctionSpec

    tools = step_tools([FunctionSpec("transitaire_for_transitaires"), FunctionSpec("weird name!")])
    assert "transitaire_for_transitaires" in tools.functions
    shown = tools.to_shown["weird name!"]
    assert shown != "weird name!" and tools.to_recorded[shown] == "weird name!"


def _noarg_cases(tmp_path: Path) -> list[StepCase]:
    """The step cases of NOARG_ITEM, written to a file as released and read back."""
    path = tmp_path / "noarg.json"
    path.write_text(json.dumps([NOARG_ITEM]))
    return load_step_cases([path]).cases


def _scripted(model: ScriptedChatModel, cases: list[StepCase], mode: str, config: AnyToolConfig | None = None
              ) -> StepsReport:
    """`evaluate_steps` with one scripted model answering for every role."""
    return evaluate_steps(cases, lambda _c: ModelSet(default=model, by_role={}), mode=mode,  # type: ignore[arg-type]
                          config=config)


def _tc(name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "args": args, "id": f"ref_{name}", "type": "tool_call"}


def _reference_replies(cases: list[StepCase], mode: str) -> list[AIMessage]:
    """Replies that reproduce every reference step (one model plays every role, in call order)."""
    out: list[AIMessage] = []
    for c in cases:
        ref = c.reference
        args = json.loads(ref.args) if ref.plan == "call" and ref.args else {}
        if mode == "single":
            if ref.plan == "call":
                out.append(ai(ref.thought, _tc(str(ref.action), args)))
            elif ref.plan == "conclusion":
                out.append(ai("", call("Finish", return_type="give_answer", final_answer=ref.answer)))
            else:
                out.append(ai("", call("Finish", return_type="give_up_and_restart", reason="stuck")))
            continue
        word = {"call": "caller", "conclusion": "conclusion", "give_up": "give up"}[ref.plan]
        out.append(ai(f"{ref.thought} Next: {word}."))
        if ref.plan == "call":
            out.append(ai("", _tc(str(ref.action), args)))
        elif ref.plan == "conclusion":
            out.append(ai(str(ref.answer)))
    return out


@pytest.mark.toolbench
@needs_shared
@pytest.mark.parametrize("mode", ["single", "multi"])
def test_scripted_reference_model_over_shared_trajectories(mode: str) -> None:
    loaded = load_step_cases([DFS])
    model = ScriptedChatModel(replies=_reference_replies(loaded.cases, mode))
    report = evaluate_steps(loaded.cases, lambda _c: ModelSet(default=model, by_role={}), mode=mode,  # type: ignore[arg-type]
                            model_label="scripted", loaded=loaded)
    s = report.overall
    assert s.steps == 50 and report.files == 13 and len(report.skipped_files) == 2
    assert (s.plan_acc, s.act_em, s.arg_f1) == (1.0, 1.0, 1.0) and s.rouge_l == pytest.approx(1.0, abs=1e-8)
    assert s.hallucinated == 1  # replaying the reference repeats its one call to a function it was not given
    assert set(report.groups) == {"G1_answer", "G2_answer", "G3_answer"}
    if mode == "single":  # the solver's own prompt and function set were used
        first = model.calls[0]
        assert "calling functions" in str(first["messages"][0].content) and "Finish" in first["tools"]
    else:
        roles = {(c["tools"] and "caller") or "text" for c in model.calls}
        assert roles == {"caller", "text"}


def test_scripted_model_hand_computed(umi_file: Path) -> None:
    """Single mode on the α-UMi file: call the wrong function, then the right one with an extra key, then give up."""
    loaded = load_step_cases([umi_file])
    model = ScriptedChatModel(replies=[
        ai("", call("details_for_video_db", is_id="v1")),  # wrong name: plan ok, EM 0, F1 0
        ai("", call("details_for_video_db", is_id="v1", lang="en")),  # name ok; P = 1/2, R = 1 → F1 = 2/3
        ai("", call("Finish", return_type="give_up", reason="no")),  # plan miss; Rouge-L of "none" = 0
    ])
    report = _scripted(model, loaded.cases, "single")
    s = report.overall
    assert s.plan_acc == pytest.approx(2 / 3) and s.act_em == pytest.approx(1 / 2)
    assert s.arg_f1 == pytest.approx((0 + 2 / 3) / 2) and s.rouge_l == 0.0 and s.hallu == 0.0


def test_multi_mode_text_caller(umi_file: Path) -> None:
    """The caller in text mode: no tools bound, the reply's Action lines parsed into the call."""
    loaded = load_step_cases([umi_file])
    model = ScriptedChatModel(replies=[
        ai("Search first. Next: caller."), ai('Action: search_for_video_db\nAction Input: {"q": "comedy"}'),
        ai("Details now. Next: caller."), ai("Action: details_for_video_db\nAction Input: {'is_id': 'v2'}"),
        ai("Done. Next: conclusion."), ai("The comedy video v1 is titled Funny cats."),
    ])
    cfg = AnyToolConfig(solver="umi", text_mode_roles=("caller",), umi_prompts="alpha_umi")
    report = _scripted(model, loaded.cases, "multi", config=cfg)
    s = report.overall
    assert (s.plan_acc, s.act_em) == (1.0, 1.0) and s.rouge_l == pytest.approx(1.0, abs=1e-8)
    # the second call's input is a Python-literal dict: json.loads fails in the authors' scorer → F1 0
    assert s.arg_f1 == pytest.approx((1 + 0) / 2)
    caller_calls = [c for c in model.calls if "Action Input:" in str(c["messages"][0].content)]
    assert caller_calls and all(c["tools"] == [] for c in caller_calls)
    assert "Next: conclusion." in str(model.calls[0]["messages"][0].content)  # the alpha_umi planner profile


@pytest.mark.toolbench
@needs_shared
def test_offline_stand_in_over_shared_trajectories() -> None:
    from langgraph_anytool.offline import LABEL, OfflinePolicyModel

    loaded = load_step_cases([DFS / "G1_answer"])
    report = evaluate_steps(loaded.cases, lambda c: ModelSet(default=OfflinePolicyModel(catalog=c), by_role={}),
                            mode="single", model_label=LABEL, loaded=loaded)
    s = report.overall
    assert s.steps == 16 and report.errors == 0
    assert all(0.0 <= (s.metric(m) or 0.0) <= 1.0 for m in ("plan_acc", "act_em", "hallu", "arg_f1", "rouge_l"))
    assert s.plan_acc is not None and s.plan_acc > 0 and "NOT an LLM" in report.table()


def test_cli_steps_json(umi_file: Path, capsys: Any) -> None:
    assert main(["eval", "steps", str(umi_file), "--offline", "--mode", "multi", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["overall"]["steps"] == 3 and "NOT an LLM" in data["model"] and len(data["steps"]) == 3
    assert main(["eval", "steps", str(umi_file.parent / "nope.json"), "--offline"]) == 2


def test_group_by(umi_file: Path) -> None:
    assert {c.source for c in load_step_cases([umi_file]).cases} == {"in_domain"}
    assert {c.source for c in load_step_cases([umi_file], group_by="dir").cases} == {umi_file.parent.name}
    with pytest.raises(StepDataError, match="grouping"):
        load_step_cases([umi_file], group_by="nope")


def test_umi_loader_reads_steps_as_the_authors_pipeline(tmp_path: Path) -> None:
    """infer_pipeline.py build_infer_samples: a step needs "Next: caller." / "Next: conclusion." / "Next: give up."
    exactly; the reference is "assistant: V</s>caller: C</s>" read by evaluate-multi_agent.py parse_output."""
    item = {"tools": [{"Name": "list_for_video_db", "function": "List videos.", "input": {}}],
            "instruction": "List the videos.",
            "conversations": [
                {"from": "user", "value": "List the videos."},
                {"from": "assistant", "value": "Let me list them. Next: caller"},  # no period: history only
                {"from": "assistant", "value": "List them. Next: caller."},
                {"from": "caller", "value": "Action: list_for_video_db\nAction Input: "},
                {"from": "observation", "value": "[]"},
                {"from": "assistant", "value": "Nothing there. Next: give up."}]}
    path = tmp_path / "t.json"
    path.write_text(json.dumps([item]))
    cases, skipped = load_umi_test(path)
    assert skipped == 1 and [c.reference.plan for c in cases] == ["call", "give_up"]
    ref = cases[0].reference
    assert (ref.action, ref.args) == ("list_for_video_db", "")  # the empty Action Input as written


NOARG_ITEM = {
    "tools": [{"Name": "list_for_video_db", "function": "List videos.", "input": {}},
              {"Name": "details_for_video_db", "function": "Details of a video.", "input": {"is_id": "string, id"}}],
    "instruction": "Show the first video's details.",
    "conversations": [
        {"from": "user", "value": "Show the first video's details."},
        {"from": "assistant", "value": "List first. Next: caller."},
        {"from": "caller", "value": "Action: list_for_video_db\nAction Input: {}"},
        {"from": "observation", "value": "['v1']"},
        {"from": "assistant", "value": "Details of v1. Next: caller."},
        {"from": "caller", "value": "Action: details_for_video_db\nAction Input: {\"is_id\": \"v1\"}"},
        {"from": "observation", "value": "{'title': 'Funny cats'}"},
        {"from": "assistant", "value": "Done. Next: conclusion."},
        {"from": "conclusion", "value": "The first video is Funny cats."},
    ],
}


def test_single_mode_reply_without_a_call_is_read_as_evaluate_backbone(tmp_path: Path) -> None:
    """Native function calling, but the model answers in text (evaluate-backbone.py parse_output):
    1. "Action: list_for_video_db / Action Input: {}" written as text → a call: plan hit, EM 1, F1 1 ({} = {});
    2. a plain sentence → a call of "none": plan hit, EM 0, F1 0, not a hallucination;
    3. "conclusion: <answer>" → a conclusion, Rouge-L ≈ 1 (2/(2 + 1e-8)).
    Plan 3/3, EM 1/2, F1 (1 + 0)/2, Hallu. 0. (Before: no call → no plan → Plan ACC 0.)"""
    cases = _noarg_cases(tmp_path)
    model = ScriptedChatModel(replies=[
        ai("I list the videos.\nAction: list_for_video_db\nAction Input: {}"),
        ai("Let me think about the details."),
        ai("All done.\nconclusion: The first video is Funny cats."),
    ])
    report = _scripted(model, cases, "single")
    s = report.overall
    assert s.plan_acc == 1.0 and s.act_em == pytest.approx(1 / 2) and s.arg_f1 == pytest.approx(1 / 2)
    assert s.rouge_l == pytest.approx(2 / (2 + 1e-8)) and s.hallucinated == 0
    assert [r.prediction["action"] for r in report.records] == ["list_for_video_db", "none", None]


def test_text_mode_empty_action_input_scores_zero(tmp_path: Path) -> None:
    """Text mode (the solver writes its calls as text): "Action Input:" with nothing after it for a reference `{}`
    is json.loads("") in the authors' scorer → F1 0 (our text parser reads it as {}; the scorer must not).
    Step 1: EM 1, F1 0; step 2: EM 1, F1 1; step 3: Finish(give_answer) → conclusion. Arg. F1 = (0 + 1)/2."""
    cases = _noarg_cases(tmp_path)
    model = ScriptedChatModel(replies=[
        ai("Listing.\nAction: list_for_video_db\nAction Input:"),
        ai('Details.\nAction: details_for_video_db\nAction Input: {"is_id": "v1"}'),
        ai('Action: Finish\nAction Input: {"return_type": "give_answer", '
           '"final_answer": "The first video is Funny cats."}'),
    ])
    cfg = AnyToolConfig(text_mode_roles=("solver",))
    report = _scripted(model, cases, "single", config=cfg)
    s = report.overall
    assert (s.plan_acc, s.act_em) == (1.0, 1.0) and s.arg_f1 == pytest.approx(1 / 2)
    assert report.records[0].prediction["args"] == ""
    assert all(c["tools"] == [] for c in model.calls)  # text mode: no tools bound


def test_multi_mode_caller_without_a_call_is_a_call_of_none(tmp_path: Path) -> None:
    """The caller answers in prose: the authors' prediction is "planner</s>caller: <prose>" → a call of "none"
    (plan hit, EM 0); the summarizer's empty reply becomes "none" (infer_pipeline.py) → Rouge-L 0.
    Plan 3/3, EM (0 + 1)/2, Rouge-L 0."""
    cases = _noarg_cases(tmp_path)
    model = ScriptedChatModel(replies=[
        ai("List first. Next: caller."), ai("I would list the videos now."),
        ai("Details. Next: caller."), ai("", _tc("details_for_video_db", {"is_id": "v1"})),
        ai("Done. Next: conclusion."), ai(""),
    ])
    cfg = AnyToolConfig(solver="umi", umi_prompts="alpha_umi")
    report = _scripted(model, cases, "multi", config=cfg)
    s = report.overall
    assert s.plan_acc == 1.0 and s.act_em == pytest.approx(1 / 2) and s.rouge_l == 0.0
    assert [r.prediction["answer"] for r in report.records][-1] == "none"


def test_alpha_umi_planner_is_read_as_infer_pipeline(tmp_path: Path) -> None:
    """infer_pipeline.py: "Next: give up." anywhere wins over a later "Next: caller." (our solver's reading takes the
    last one); a planner text without a marker goes to the caller with "Next: caller." appended.
    Step 1 (ref call): give up → plan miss; step 2 (ref call): no marker → caller → call, EM 1, F1 1;
    step 3 (ref conclusion): "Next: conclusion." → summarizer. Plan ACC 2/3, Act. EM 1/2."""
    from langgraph_anytool.eval.umi.predict import authors_planner_decision

    assert authors_planner_decision("a Next: give up. b Next: caller.") == ("give_up", "a Next: give up.")
    assert authors_planner_decision("just think") == ("caller", "just thinkNext: caller.")
    cases = _noarg_cases(tmp_path)
    model = ScriptedChatModel(replies=[
        ai("Hmm. Next: give up. No wait, Next: caller."),
        ai("Details of v1 now."), ai("", _tc("details_for_video_db", {"is_id": "v1"})),
        ai("Done. Next: conclusion."), ai("The first video is Funny cats."),
    ])
    cfg = AnyToolConfig(solver="umi", umi_prompts="alpha_umi")
    report = _scripted(model, cases, "multi", config=cfg)
    s = report.overall
    assert s.plan_acc == pytest.approx(2 / 3) and s.act_em == pytest.approx(1 / 2) and s.arg_f1 == pytest.approx(1 / 2)
    assert report.records[1].prediction["thought"] == "Details of v1 now.Next: caller."


def test_toolbench_answer_keeps_an_empty_arguments_string(tmp_path: Path) -> None:
    """A ToolBench answer whose recorded call has `"arguments": ""`: the reference input stays "" (not "{}"), which
    the authors' scorer cannot parse → the step is left out of Arg. F1 (arg_f1_steps 0, Arg. F1 None), EM still
    counts (1/1). The Finish step's answer is scored by Rouge-L (identical text: 2/(2 + 1e-8))."""
    fn = {"name": "list_for_video_db", "description": "List videos.", "parameters": {"type": "object",
                                                                                     "properties": {}}}
    system = {"role": "system", "content": "You are AutoGPT."}
    user = {"role": "user", "content": "List the videos.\nBegin!"}
    called = {"role": "assistant", "content": "I list them.",
              "function_call": {"name": "list_for_video_db", "arguments": ""}}
    result = {"role": "function", "name": "list_for_video_db", "content": "['v1']"}
    finish = {"role": "assistant", "content": "", "function_call": {"name": "Finish", "arguments": json.dumps(
        {"return_type": "give_answer", "final_answer": "There is one video, v1."})}}
    data = {"answer_generation": {"valid_data": True, "query": "List the videos.", "function": [fn],
                                  "train_messages": [[system, user, called], [system, user, called, result, finish]]}}
    (tmp_path / "G1_answer").mkdir()
    path = tmp_path / "G1_answer" / "1_DFS.json"
    path.write_text(json.dumps(data))
    loaded = load_step_cases([path])
    assert [c.reference.args for c in loaded.cases] == ["", None]
    model = ScriptedChatModel(replies=[
        ai("", call("list_for_video_db")),
        ai("", call("Finish", return_type="give_answer", final_answer="There is one video, v1.")),
    ])
    report = _scripted(model, loaded.cases, "single")
    s = report.overall
    assert (s.act_em, s.arg_f1, s.arg_f1_steps) == (1.0, None, 0) and s.rouge_l == pytest.approx(2 / (2 + 1e-8))


def test_single_mode_text_reply_with_a_conclusion_is_a_conclusion(tmp_path: Path) -> None:
    """evaluate-backbone.py parse_output tests "conclusion: give up" and "conclusion: " before any `Action:`: a text-mode
    reply holding both a "conclusion: " and an `Action:` line is a conclusion (our text parser finds a call in it).
    Step 1 (ref call list {}): conclusion → plan miss, action "none": EM 0, F1 0 (names differ);
    step 2 (ref call details): EM 1, F1 1; step 3: Finish(give_answer) → conclusion, plan hit.
    Plan 2/3, Act. EM (0 + 1)/2, Arg. F1 (0 + 1)/2, Hallu. 0."""
    cases = _noarg_cases(tmp_path)
    model = ScriptedChatModel(replies=[
        ai("Listing.\nconclusion: The first video is Funny cats.\nAction: list_for_video_db\nAction Input: {}"),
        ai('Details.\nAction: details_for_video_db\nAction Input: {"is_id": "v1"}'),
        ai('Action: Finish\nAction Input: {"return_type": "give_answer", '
           '"final_answer": "The first video is Funny cats."}'),
    ])
    cfg = AnyToolConfig(text_mode_roles=("solver",))
    report = _scripted(model, cases, "single", config=cfg)
    s = report.overall
    assert s.plan_acc == pytest.approx(2 / 3) and s.act_em == pytest.approx(1 / 2) and s.arg_f1 == pytest.approx(1 / 2)
    assert report.records[0].prediction["plan"] == "conclusion" and s.hallucinated == 0


def test_multi_mode_reads_the_whole_prediction_string_as_the_authors(tmp_path: Path) -> None:
    """evaluate-multi_agent.py parse_output reads infer_pipeline.py's whole string "asssitant: <planner
    prediction></s>caller|conclusion: <output>"; "Next: give up" (no period) anywhere makes it a give-up, although
    infer_pipeline.py sent the step on (it splits at "Next: give up." with the period).
    Step 1 (ref call list): planner "…Next: give up" → caller (native call) → string holds "Next: give up" → give up:
    plan miss, EM 0, F1 0. Step 2 (ref call details): Next: caller. → call, EM 1, F1 1.
    Step 3 (ref conclusion): "Should I Next: give up? No. Next: conclusion." → summarizer; the string holds "Next: give
    up" → give up: plan miss, the answer "none" → Rouge-L 0 ("none" shares no token with the reference).
    Plan 1/3, Act. EM 1/2, Arg. F1 1/2, Rouge-L 0."""
    cases = _noarg_cases(tmp_path)
    model = ScriptedChatModel(replies=[
        ai("Nothing fits, Next: give up"), ai("", _tc("list_for_video_db", {})),
        ai("Details. Next: caller."), ai("", _tc("details_for_video_db", {"is_id": "v1"})),
        ai("Should I Next: give up? No. Next: conclusion."), ai("The first video is Funny cats."),
    ])
    cfg = AnyToolConfig(solver="umi", umi_prompts="alpha_umi")
    report = _scripted(model, cases, "multi", config=cfg)
    s = report.overall
    assert s.plan_acc == pytest.approx(1 / 3) and s.act_em == pytest.approx(1 / 2) and s.arg_f1 == pytest.approx(1 / 2)
    assert s.rouge_l == 0.0 and [r.prediction["plan"] for r in report.records] == ["give_up", "call", "give_up"]
    assert len(model.calls) == 6  # the caller and the summarizer were still asked, as infer_pipeline.py does
