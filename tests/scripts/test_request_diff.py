"""`scripts/request_diff.py`'s machinery on a tiny hand-made fake "clone" (never the authors' text): the authors'
side runs in an isolated child interpreter (`python -I scripts/request_diff_authors.py`, its working folder a fresh
temporary one, results back as JSON), and the comparison finds a difference when the builder differs.

The fake `GLPFT/inference_utils/toolbench/infer_pipeline.py` below is written here in our own words to the contract
our code follows (`eval/umi/predict.py` `_authors_input`, which cites X-PLUG/Multi-LLM-Agent's `infer_pipeline.py`
`build_infer_samples` and `infer`): the planner's input `prompt.replace(...) + ' assistant: '`, the history as
"<from>: <value></s>" turns (no "</s>" after an observation), the planner's output cleaned (a leading ": " dropped),
then the caller's or the summarizer's input with "planner: <prediction></s>" appended.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from langgraph_anytool.paper_prompts.testing import write_fake_checkout

SCRIPT = Path(__file__).parents[2] / "scripts" / "request_diff.py"
PIPELINE = "GLPFT/inference_utils/toolbench/infer_pipeline.py"

FAKE_PIPELINE = '''# a hand-made stand-in for the request diff's test (not the authors' text)
import json, os


def nested_load_test_data(data_path):
    with open(data_path) as handle:
        return json.load(handle)


def build_infer_samples(data_args):
    samples = []
    marks = ("Next: caller.", "Next: conclusion.", "Next: give up.")
    for item in nested_load_test_data(data_args.data_path):
        doc = "".join(json.dumps(tool) + "\\n" for tool in item["tools"])
        names = ", ".join(tool["Name"] for tool in item["tools"])
        filled = prompt_dict[data_args.planner_prompt_type].replace("{doc}", doc).replace("{tool_names}", names)
        history = ""
        for turn in item["conversations"]:
            if turn["from"] == "assistant" and any(mark in turn["value"] for mark in marks):
                samples.append({"tools": item["tools"], "dispath": history,
                                "model_input": filled.replace("{history}", history) + " assistant: "})
            end = OBSERVATION_END if turn["from"] == "observation" else "</s>"
            history += turn["from"] + ": " + turn["value"] + end
    return samples


def infer():
    for i, o in enumerate(outputs):
        text = planner_tokenizer.decode(o, skip_special_tokens=True)
        text = text[2:] if text.startswith(": ") else text
        infer_samples[i]["predictions"] = "none" if text.strip() in ("", ".", ",") else text
    for sample in infer_samples:
        said = sample["predictions"]
        if "Next: give up." in said:
            continue
        role = "summarizer" if "Next: conclusion." in said else "caller"
        mark = "Next: conclusion." if role == "summarizer" else "Next: caller."
        thought = said[: said.index(mark) + len(mark)] if mark in said else said + mark
        doc = "".join(json.dumps(tool) + "\\n" for tool in sample["tools"])
        names = ", ".join(tool["Name"] for tool in sample["tools"])
        kind = data_args.summarizer_prompt_type if role == "summarizer" else data_args.caller_prompt_type
        text = prompt_dict[kind].replace("{doc}", doc).replace("{tool_names}", names).replace("{thought}", thought)
        text = text.replace("{history}", sample["dispath"] + "planner: " + thought + "</s>")
        cue = " conclusion: " if role == "summarizer" else " caller: "
        sample["model_input_for_" + role] = text + cue
'''


# the run-time pipeline's stand-ins (ToolBench-multiLLM), to the contract nodes/solver/umi_authors.py follows (it cites
# collab_agent_model.py `CollbaAgentV3.prediction` / `parse`, rapidapi.py `api_json_to_openai_json`, utils.py
# `collab_agent_parser`): our own words, not the authors'
RUN = "ToolBench-multiLLM/toolbench"
FAKE_RUN = {
    f"{RUN}/utils.py": '''import re


def standardize(string):
    return re.sub(r"_+", "_", re.sub(r"[^a-zA-Z0-9_]", "_", string)).strip("_").lower()


def change_name(name):
    return "is_" + name if name in ("from", "id") else name
''',
    f"{RUN}/inference/utils.py": '''def collab_agent_parser(text):
    thought, call = text.split("</s>caller: ")[0], text.split("</s>")[1]
    action = call[call.rindex("Action:") + 7:].split("Action Input:")[0].strip() if "Action:" in call else "none"
    args = call[call.rindex("Action Input:") + 13:].strip() if "Action Input:" in call else "{}"
    return thought, action, args
''',
    f"{RUN}/inference/Downstream_tasks/rapidapi.py": '''class rapidapi_wrapper:
    def api_json_to_openai_json(self, api_json, standard_tool_name):
        name = (change_name(standardize(api_json["api_name"])) + "_for_" + standard_tool_name)[-64:]
        made = {"Name": name, "function": "", "input": {}}
        if api_json["api_description"].strip() != "":
            made["function"] = api_json["api_description"].strip().replace(api_json["api_name"], name)[:256]
        kinds = {"NUMBER": "integer", "STRING": "string", "BOOLEAN": "boolean"}
        if len(api_json["required_parameters"]) > 0:
            for arg in api_json["required_parameters"] + api_json["optional_parameters"]:
                kind = kinds.get(arg["type"], "string")
                made["input"][arg["name"]] = kind + ", " + arg["description"][-256:] if arg["description"].strip() else kind
        return {"name": name}, api_json["category_name"], name, made
''',
    f"{RUN}/inference/LLM/collab_agent_model.py": '''class CollbaAgentV3:
    def prediction(self, history, tools, prompt_type, stop=None):
        doc = "".join(json.dumps(t) + "\\n" for t in tools)
        names = ", ".join(t["Name"] for t in tools)
        params = {"temperature": 0.5, "max_new_tokens": 512, "stop": "</s>"}
        prompt = prompt_dict[prompt_type["planner"]].replace("{doc}", doc).replace("{tool_names}", names)
        said, model_input = generate_stream(None, None, {**params, "prompt": prompt.replace("{history}", history)
                                                         + " assistant: "})
        said = said.strip()
        said = said[2:] if said.startswith(": ") else said
        role, mark = ("conclusion", "Next: conclusion.") if "Next: conclusion." in said else ("caller", "Next: caller.")
        said = said[: said.index(mark) + len(mark)] if mark in said else said + CALLER_MARK
        text = prompt_dict[prompt_type[role]].replace("{doc}", doc).replace("{tool_names}", names)
        text = text.replace("{thought}", said).replace("{history}", history + "assistant: " + said + "</s>")
        out, _ = generate_stream(None, None, {**params, "prompt": text + " " + role + ": "})
        return said + "</s>" + role + ": " + out.strip(), model_input

    def parse(self, functions, functions_for_input, process_id=0, prompt_type=None, **args):
        history = ""
        for message in self.conversation_history:
            end = "" if message["role"] == "observation" else "</s>"
            history += message["role"] + ": " + message["value"] + end
        said, model_input = self.prediction(history, functions_for_input, prompt_type)
        thought, action, args = collab_agent_parser(said)
        return ({"role": "assistant", "content": thought, "function_call": {"name": action, "arguments": args},
                 "value": said, "model_input": model_input}, 0, 1)
''',
}


@pytest.fixture(scope="module")
def request_diff() -> ModuleType:
    spec = importlib.util.spec_from_file_location("request_diff_under_test", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def fake_clone(root: Path, observation_end: str = '""', body: str = FAKE_PIPELINE,
               caller_mark: str = '" Next: caller."') -> Path:
    write_fake_checkout(root, "umi")
    write_fake_checkout(root, "umi_run")
    for rel, text in FAKE_RUN.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text.replace("CALLER_MARK", caller_mark), encoding="utf-8")
    path = root / PIPELINE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body.replace("OBSERVATION_END", observation_end), encoding="utf-8")
    return root


def test_the_umi_case_finds_no_difference_on_a_faithful_fake(request_diff: ModuleType, tmp_path: Path,
                                                               capsys: Any) -> None:
    clone = fake_clone(tmp_path / "Multi-LLM-Agent")
    assert request_diff.main(["--multi-llm-agent", str(clone)]) == 0
    out = capsys.readouterr().out
    assert "11 request(s) compared; 0 with undocumented differences" in out
    assert out.count("equal (messages)") == 7
    # the run's four requests (planner, caller, planner, summarizer): their one message and settings
    assert out.count("equal (max_tokens, messages, stop, temperature)") == 4


def test_the_umi_case_reports_a_builder_that_differs(request_diff: ModuleType, tmp_path: Path, capsys: Any) -> None:
    """The fake closes an observation turn with "</s>": every input whose history holds an observation differs."""
    clone = fake_clone(tmp_path / "Multi-LLM-Agent", observation_end='"</s>"')
    assert request_diff.main(["--multi-llm-agent", str(clone)]) == 1
    out = capsys.readouterr().out
    assert "DIFFERENT" in out and "with undocumented differences: eval steps --mode multi" in out
    assert "11 request(s) compared; 3 with undocumented differences" in out  # the run case: equal


def test_the_umi_run_case_reports_a_caller_mark_without_its_leading_space(request_diff: ModuleType, tmp_path: Path,
                                                                          capsys: Any) -> None:
    """A pipeline that appends "Next: caller." without the leading space: the run's caller request and the next
    planner request (its history holds the planner's prediction) differ; the summarizer's does too."""
    clone = fake_clone(tmp_path / "Multi-LLM-Agent", caller_mark='"Next: caller."')
    assert request_diff.main(["--multi-llm-agent", str(clone)]) == 1
    out = capsys.readouterr().out
    assert "11 request(s) compared; 3 with undocumented differences" in out
    assert "CollbaAgentV3), request 1" not in out and "CollbaAgentV3), request 2" in out


def test_the_authors_side_runs_in_an_isolated_child(request_diff: ModuleType, tmp_path: Path) -> None:
    """The fake's builder reports where it runs: `-I` (isolated: no environment, no user site, no script folder on
    sys.path), in a temporary folder of its own (removed afterwards), never in the project or the caller's folder."""
    probe = FAKE_PIPELINE.replace('''def build_infer_samples(data_args):
    samples = []''', '''def build_infer_samples(data_args):
    import sys
    facts = {"isolated": sys.flags.isolated, "cwd": os.getcwd(), "path": sys.path,
             "modules": sorted(m for m in sys.modules if m.startswith("langgraph_anytool"))}
    return [{"tools": [], "dispath": "", "model_input": json.dumps(facts)}]
    samples = []''')
    clone = fake_clone(tmp_path / "Multi-LLM-Agent", body=probe)
    result = request_diff.run_child("umi_infer", clone, {"data": [], "predictions": []})
    facts = json.loads(result["planner"][0])
    assert facts["isolated"] == 1 and facts["modules"] == []
    cwd = Path(facts["cwd"])
    assert cwd.name.startswith("request_diff_") and not cwd.exists()
    assert str(SCRIPT.parent) not in facts["path"] and str(Path.cwd()) not in facts["path"]


def test_a_failing_authors_side_is_one_line(request_diff: ModuleType, tmp_path: Path) -> None:
    clone = fake_clone(tmp_path / "Multi-LLM-Agent", body="def infer():\n    pass\n")
    with pytest.raises(RuntimeError, match=r"^the authors' side of umi_infer failed \(exit 1\): LookupError: no function 'nested_load_test_data'$"):
        request_diff.run_child("umi_infer", clone, {"data": [], "predictions": []})


def test_a_scripted_call_keeps_its_thought_and_its_arguments_as_written(request_diff: ModuleType) -> None:
    """The solver's cases script replies as (content, function, arguments string): the legacy `function_call`
    carries the string as the model wrote it (its own spacing), beside the thought; a dict is `json.dumps`."""
    written = '{"city": "Lyon",  "is_from": 2}'
    message = request_diff.completion({"functions": []}, ("Let me look.", "current", written))["choices"][0]["message"]
    assert message["content"] == "Let me look." and message["function_call"] == {"name": "current",
                                                                                 "arguments": written}
    message = request_diff.completion({"functions": []}, ("current", {"city": "Lyon"}))["choices"][0]["message"]
    assert message["content"] is None and message["function_call"]["arguments"] == '{"city": "Lyon"}'
