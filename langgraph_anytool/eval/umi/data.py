"""Step-level test cases for α-UMi's static evaluation (α-UMi Appendix C): one case per reference step, holding the
reference history before the step (teacher forcing) and the reference decision of the step.

Two input formats:
- ToolBench answer files (`answer_generation.train_messages`: each entry is one chain prefix ending in the
  assistant turn to predict; `function` holds the schemas, `query` the instruction). A function call is a
  `call` step, `Finish` with `give_answer` a `conclusion` step (its `final_answer` is the reference answer),
  `Finish` with `give_up_and_restart` / `give_up` a `give_up` step. An assistant turn with text and no call has no
  decision and is skipped (counted).
- α-UMi's released test format: a JSON list of `{"tools": [{"Name", "function", "input"}], "instruction",
  "conversations": [{"from", "value"}]}`. As in the authors' `GLPFT/inference_utils/toolbench/infer_pipeline.py`
  (`build_infer_samples`), an assistant turn holding `Next: caller.`, `Next: conclusion.` or `Next: give up.`
  (exactly so, case-sensitive) is a step; its reference is the string that script builds — the assistant turn,
  then, for "Next: caller" / "Next: conclusion.", the next turn (`assistant: V</s>caller: C</s>`) — read with the
  scorer's own parser (`step_metrics.parse_multi_agent_reply`). Other assistant turns are history only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from ...protocol import parse_action
from ...sanitize.files import DataFileError, load_json_file, loads_json, read_head
from ...sanitize.schema import FileModel, check_model
from .metrics import NO_INPUT, Plan, parse_multi_agent_reply


class StepDataError(ValueError):
    """A step file that cannot be read, naming the file and the field."""


class NoTrainMessages(StepDataError):
    """A ToolBench answer file without `train_messages` (a run that kept no chain): skipped and listed."""


MAX_STEP_FILE_BYTES = 1 << 30  # an α-UMi test file or a ToolBench answer file (the released ones are a few MB)




class _Call(FileModel):
    name: str | None = None
    arguments: Any = None


class _Message(FileModel):
    role: str | None = None
    content: Any = None
    name: Any = None
    function_call: _Call | None = None


class _Function(FileModel):
    name: str
    description: Any = None
    parameters: Any = None


class _Generation(FileModel):
    query: str | None = None
    function: list[_Function] | None = None
    train_messages: list[list[_Message]] | None = None


class _AnswerFile(FileModel):
    """A ToolBench answer file, as far as the step cases read it."""

    answer_generation: _Generation


class _UmiTool(FileModel):
    Name: str
    function: Any = None
    input: dict[str, Any] | None = None


class _UmiTurn(FileModel):
    value: Any = None


class _UmiItem(FileModel):
    """One conversation of an α-UMi test file."""

    tools: list[_UmiTool] | None = None
    instruction: Any = None
    conversations: list[_UmiTurn]


def _read_step_file(p: Path) -> Any:
    """A step file's JSON, bounded (`sanitize.files`: size, a regular file, depth, numbers)."""
    try:
        return load_json_file(p, max_bytes=MAX_STEP_FILE_BYTES, what="step file", allow_nonfinite=True)
    except DataFileError as exc:
        raise StepDataError(str(exc)) from None


def _check(model: type[FileModel], data: Any, p: Path, prefix: str = "") -> None:
    try:
        check_model(model, data, source=str(p), prefix=prefix)
    except DataFileError as exc:
        raise StepDataError(str(exc)) from None


@dataclass(frozen=True)
class FunctionSpec:
    """A function the step offers: its recorded name, description and JSON-schema parameters."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = field(default_factory=dict)
    raw: dict[str, Any] | None = field(default=None, compare=False)  # α-UMi test files: the tool as recorded


@dataclass(frozen=True)
class StepRef:
    """The reference decision of a step."""

    plan: Plan
    thought: str = ""
    action: str | None = None
    args: Any = None  # the recorded arguments (JSON text or object)
    answer: str | None = None


@dataclass(frozen=True)
class StepCase:
    """One reference step: the history before it, as messages (AI turns carry calls, tool turns observations)."""

    source: str  # the file's group label (e.g. G1_answer, out_of_domain)
    case_id: str
    step: int
    query: str
    functions: tuple[FunctionSpec, ...]
    history: tuple[BaseMessage, ...]
    reference: StepRef
    # α-UMi test files: the history's first line as infer_pipeline.py `build_infer_samples` writes it, the
    # conversation's first turn as recorded ("user: <value></s>"; "" when the conversation opens otherwise); None
    # elsewhere (the query stands for it)
    opening: str | None = field(default=None, compare=False)

    @property
    def function_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.functions)


@dataclass
class LoadReport:
    cases: list[StepCase]
    files: int = 0
    skipped_files: list[str] = field(default_factory=list)  # "path: reason"
    skipped_turns: int = 0  # assistant turns with no decision


_FINISH = "Finish"
_STEP_MARKS = ("Next: caller.", "Next: conclusion.", "Next: give up.")  # infer_pipeline.py build_infer_samples
_NEXT = re.compile(r"Next:\s*(caller|conclusion|give up)\.?", re.IGNORECASE)


# ------------------------------------------------------------------------------------------- ToolBench
def _toolbench_functions(path: Path, raw: Any) -> tuple[FunctionSpec, ...]:
    if not isinstance(raw, list):
        raise StepDataError(f"{path}: answer_generation.function must be a list of function schemas")
    out = []
    for i, fn in enumerate(raw):
        if not isinstance(fn, Mapping) or not isinstance(fn.get("name"), str):
            raise StepDataError(f"{path}: answer_generation.function[{i}] has no 'name'")
        if fn["name"] == _FINISH:
            continue
        params = fn.get("parameters") if isinstance(fn.get("parameters"), Mapping) else {}
        out.append(FunctionSpec(fn["name"], str(fn.get("description") or ""), dict(params or {})))
    return tuple(out)


def _checked_reference(ref: StepRef, p: Path, where: str) -> StepRef:
    """`ref`, refused (one line naming the file and the step) when its arguments are JSON text nested deeper than
    `sanitize.MAX_NESTING` levels: no scorer can read them (Python's `json.loads` gives up near 1,000 levels)."""
    if isinstance(ref.args, str) and ref.args.lstrip()[:1] in ("{", "["):
        try:
            loads_json(ref.args, source=str(p), allow_nonfinite=True)
        except DataFileError as exc:
            if exc.message.startswith("nesting too deep"):
                raise StepDataError(f"{p}: {where}: the reference arguments: {exc.message}; refused") from None
    return ref


def _json_object(raw: Any) -> dict[str, Any]:
    if isinstance(raw, Mapping):
        return dict(raw)
    try:
        value = loads_json(str(raw), source="arguments", allow_nonfinite=True)
    except DataFileError:  # not JSON, or JSON we refuse (too deep, a huge integer)
        return {}
    return value if isinstance(value, dict) else {}


def _toolbench_history(messages: Sequence[Mapping[str, Any]], prefix: str) -> tuple[str, list[BaseMessage]]:
    """(query, history messages) of a chain prefix (system prompt dropped; the first user turn is the query)."""
    query = ""
    out: list[BaseMessage] = []
    pending: str | None = None
    for i, m in enumerate(messages):
        role = m.get("role")
        content = str(m.get("content") or "")
        if role == "system":
            continue
        if role == "user":
            if not query:
                query = re.sub(r"\s*Begin!\s*$", "", content.strip()).strip()
            else:
                out.append(HumanMessage(content=content))
        elif role == "assistant":
            fc = m.get("function_call") or {}
            if fc.get("name"):
                pending = f"{prefix}_{i}"
                args = _json_object(fc.get("arguments")) if fc.get("arguments") else {}
                out.append(AIMessage(content=content, tool_calls=[{"name": fc["name"], "args": args, "id": pending,
                                                                   "type": "tool_call"}]))
            else:
                out.append(AIMessage(content=content))
        elif role in ("function", "tool"):
            out.append(ToolMessage(content=content, name=str(m.get("name") or ""), tool_call_id=pending or f"{prefix}_{i}"))
            pending = None
    return query, out


def load_toolbench_answer(path: str | Path, source: str | None = None) -> tuple[list[StepCase], int]:
    """Step cases of one ToolBench answer file → (cases, assistant turns skipped for having no decision).

    Raises `StepDataError` for a file that is not a ToolBench answer or has no `train_messages`."""
    p = Path(path)
    data = _read_step_file(p)
    ag = data.get("answer_generation") if isinstance(data, Mapping) else None
    if not isinstance(ag, Mapping):
        raise StepDataError(f"{p}: no 'answer_generation' object (not a ToolBench answer file)")
    _check(_AnswerFile, data, p)
    chains = ag.get("train_messages")
    if not chains:
        raise NoTrainMessages(f"{p}: answer_generation.train_messages is missing or empty "
                            f"(valid_data={ag.get('valid_data')!r})")
    functions = _toolbench_functions(p, ag.get("function"))
    label = source or p.parent.name
    cases: list[StepCase] = []
    skipped = 0
    for n, chain in enumerate(chains):
        if not isinstance(chain, list) or not chain or not isinstance(chain[-1], Mapping):
            raise StepDataError(f"{p}: answer_generation.train_messages[{n}] is not a list of messages")
        last = chain[-1]
        if last.get("role") != "assistant":
            raise StepDataError(f"{p}: answer_generation.train_messages[{n}] does not end with an assistant turn")
        fc = last.get("function_call") or {}
        thought = str(last.get("content") or "")
        if not fc.get("name"):
            skipped += 1
            continue
        if fc["name"] == _FINISH:
            args = _json_object(fc.get("arguments"))
            if str(args.get("return_type")) == "give_answer":
                ref = StepRef("conclusion", thought, answer=str(args.get("final_answer") or ""))
            else:
                ref = StepRef("give_up", thought)
        else:
            raw_args = fc.get("arguments")  # kept as recorded: "" is not "{}" for the scorer
            ref = StepRef("call", thought, action=str(fc["name"]), args=NO_INPUT if raw_args is None else raw_args)
        query, history = _toolbench_history(chain[:-1], f"s{n}")
        if not query:
            query = str(ag.get("query") or "")
        ref = _checked_reference(ref, p, f"answer_generation.train_messages[{n}] (its last function_call.arguments)")
        cases.append(StepCase(label, p.stem, n, query, functions, tuple(history), ref))
    return cases, skipped


# ------------------------------------------------------------------------------------------- α-UMi
def _umi_functions(path: Path, i: int, tools: Any) -> tuple[FunctionSpec, ...]:
    if not isinstance(tools, list):
        raise StepDataError(f"{path}: item {i}: 'tools' must be a list")
    out = []
    for j, t in enumerate(tools):
        if not isinstance(t, Mapping) or not isinstance(t.get("Name"), str):
            raise StepDataError(f"{path}: item {i}: tools[{j}] has no 'Name'")
        props: dict[str, Any] = {}
        for key, spec in (t.get("input") or {}).items():
            typ, _, desc = str(spec).partition(",")
            props[str(key)] = {"type": typ.strip() or "string", "description": desc.strip()}
        out.append(FunctionSpec(t["Name"], str(t.get("function") or ""), {"type": "object", "properties": props},
                                raw=dict(t)))
    return tuple(out)


UMI_TEXT = "umi_text"  # additional_kwargs key of a caller turn's text as the test file records it


def _umi_call(text: str, call_id: str) -> AIMessage:
    parsed = parse_action(text)
    kept = {UMI_TEXT: text}
    if parsed is None:
        return AIMessage(content=text, name="caller", additional_kwargs=kept)
    if parsed.args is None:
        return AIMessage(content="", name="caller", additional_kwargs=kept, invalid_tool_calls=[{
            "name": parsed.name, "args": parsed.raw_args, "id": call_id, "error": parsed.error,
            "type": "invalid_tool_call"}])
    return AIMessage(content="", name="caller", additional_kwargs=kept,
                     tool_calls=[{"name": parsed.name, "args": parsed.args, "id": call_id, "type": "tool_call"}])


def _umi_reference(value: str, nxt: Any, thought: str) -> StepRef:
    """The reference of a step as the authors build and read it: `infer_pipeline.py` joins the assistant turn and,
    for "Next: caller" / "Next: conclusion.", the next turn (`assistant: V</s>caller: C</s>`); a give-up step is the
    assistant turn alone; `evaluate-multi_agent.py` `parse_output` reads the string."""
    if "Next: caller" in value or "Next: conclusion." in value:
        turn = nxt if isinstance(nxt, Mapping) else {}
        text = f"assistant: {value}</s>{turn.get('from', '')}: {turn.get('value', '')}</s>"
    else:
        text = value
    parsed = parse_multi_agent_reply(text)
    return StepRef(parsed.plan, thought, action=parsed.action, args=parsed.action_input, answer=parsed.answer)


def load_umi_test(path: str | Path, source: str | None = None) -> tuple[list[StepCase], int]:
    """Step cases of an α-UMi test file (a JSON list of conversations) → (cases, assistant turns without decision)."""
    p = Path(path)
    data = _read_step_file(p)
    if not isinstance(data, list):
        raise StepDataError(f"{p}: an α-UMi test file is a JSON list of conversations")
    label = source or p.stem
    cases: list[StepCase] = []
    skipped = 0
    for i, item in enumerate(data):
        if not isinstance(item, Mapping) or not isinstance(item.get("conversations"), list):
            raise StepDataError(f"{p}: item {i} has no 'conversations' list")
        _check(_UmiItem, item, p, f"[{i}]")
        functions = _umi_functions(p, i, item.get("tools", []))
        conv = item["conversations"]
        query = str(item.get("instruction") or "")
        first = conv[0] if conv and isinstance(conv[0], Mapping) else {}
        opening = f"user: {first.get('value') or ''!s}</s>" if first.get("from") == "user" else ""
        history: list[BaseMessage] = []
        pending = ""
        step = 0
        for j, turn in enumerate(conv):
            if not isinstance(turn, Mapping) or "from" not in turn:
                raise StepDataError(f"{p}: item {i}: conversations[{j}] has no 'from'")
            who, value = turn["from"], str(turn.get("value") or "")
            if who == "user":
                if not query:
                    query = value
                if j > 0:
                    history.append(HumanMessage(content=value))
            elif who == "assistant":
                if not any(mark in value for mark in _STEP_MARKS):
                    skipped += 1
                    history.append(AIMessage(content=value, name="planner"))
                    continue
                m = list(_NEXT.finditer(value))
                thought = value[: m[-1].start()].strip() if m else value.strip()
                ref = _checked_reference(_umi_reference(value, conv[j + 1] if j + 1 < len(conv) else None, thought),
                                         p, f"item {i}: conversations[{j}] (its step's Action Input)")
                cases.append(StepCase(label, f"{p.stem}#{i}", step, query, functions, tuple(history), ref,
                                      opening=opening))
                step += 1
                history.append(AIMessage(content=value, name="planner"))
            elif who == "caller":
                pending = f"u{i}_{j}"
                history.append(_umi_call(value, pending))
            elif who == "observation":
                last_call = history[-1] if history and isinstance(history[-1], AIMessage) else None
                name = ""
                if last_call is not None and (last_call.tool_calls or last_call.invalid_tool_calls):
                    calls = last_call.tool_calls or last_call.invalid_tool_calls
                    name = str(calls[0].get("name") or "")
                history.append(ToolMessage(content=value, name=name, tool_call_id=pending or f"u{i}_{j}"))
                pending = ""
            elif who == "conclusion":
                history.append(AIMessage(content=value, name="summarizer"))
            else:
                raise StepDataError(f"{p}: item {i}: conversations[{j}].from is {who!r}; expected user, assistant, "
                                    "caller, observation or conclusion")
    return cases, skipped


# ------------------------------------------------------------------------------------------- any
def _files(paths: Iterable[str | Path]) -> list[Path]:
    out: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            out.extend(sorted(q for q in p.rglob("*.json") if q.is_file()))
        elif p.is_file():
            out.append(p)
        else:
            raise StepDataError(f"{p}: no such file or directory")
    return out


def detect_format(path: Path) -> str:
    """"toolbench" or "umi", from the file's first characters (a file that is no regular file is refused)."""
    if not path.is_file():
        raise StepDataError(f"{path}: not a regular file")
    try:
        head = read_head(path, what="step file")
    except DataFileError as exc:
        raise StepDataError(str(exc)) from None
    if head.startswith(b"["):
        return "umi"
    return "toolbench"


def load_step_cases(paths: Iterable[str | Path], fmt: str = "auto", group_by: str = "auto", *,
                    limit: int | None = None) -> LoadReport:
    """Every step case under `paths` (files or directories of *.json). ToolBench files without train_messages
    are skipped and listed; any other malformed file raises `StepDataError`.

    Groups (the rows of the report): `file` (the file's stem), `dir` (its directory), or `auto` — the directory for
    ToolBench answer files (one query each, e.g. G1_answer) and the file for α-UMi test files (e.g. in_domain).
    `limit`: no further file is read once that many cases are loaded (`--limit`)."""
    if group_by not in ("auto", "file", "dir"):
        raise StepDataError(f"unknown grouping {group_by!r}; use auto, file or dir")
    report = LoadReport(cases=[])
    for path in _files(paths):
        if limit is not None and len(report.cases) >= limit:
            break
        kind = detect_format(path) if fmt == "auto" else fmt
        label = {"file": path.stem, "dir": path.parent.name}.get(group_by)
        try:
            if kind == "umi":
                cases, skipped = load_umi_test(path, label)
            elif kind == "toolbench":
                cases, skipped = load_toolbench_answer(path, label)
            else:
                raise StepDataError(f"unknown step file format {fmt!r}; use auto, toolbench or umi")
        except NoTrainMessages as exc:  # a run that kept no chain (valid_data false): listed, not an error
            report.skipped_files.append(str(exc))
            continue
        report.files += 1
        report.skipped_turns += skipped
        report.cases.extend(cases)
    return report
