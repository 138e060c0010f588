"""Conversion between our results and ToolBench / StableToolBench formats.

- Ours → ToolEval's converted-answer format (what ToolBench's `convert_to_answer_format.py` writes and
  `eval_pass_rate.py` reads): one JSON object per group, query_id → {query, available_tools, answer: {method,
  total_steps, final_answer, answer_details}}; `final_answer` holds the Finish arguments as a JSON string and
  `answer_details` is the chain system → user → tool nodes ({name, arguments, response}) → a Finish tool node,
  the system and user nodes' message '' and `total_steps` every node, as ToolEval's `convert_to_dict` writes them.
- ToolEval's converted format → ours, and a ToolBench / StableToolBench answer directory
  (`<query_id>_<method>.json` with `answer_generation`) → ours, so our pass rate can score others' runs.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...catalog.errors import CatalogError
from ...sanitize.files import DataFileError, load_json_file, loads_json, repair_surrogates
from ...sanitize.paths import path_inside, safe_file_name
from ...sanitize.schema import Count, FileModel, check_model
from .process import answer_process

if TYPE_CHECKING:
    from ...catalog.catalog import Catalog

FINISH_SCHEMA: dict[str, Any] = {
    "name": "Finish",
    "description": "Call at the end of the attempt: give the final answer, or give up and restart.",
    "parameters": {"type": "object", "properties": {
        "return_type": {"type": "string", "enum": ["give_answer", "give_up_and_restart"]},
        "final_answer": {"type": "string", "description": "the final answer shown to the user"}},
        "required": ["return_type"]},
}


MAX_ANSWER_FILE_BYTES = 1 << 30  # a converted-answer file (one group) or one ToolBench answer file




class _ToolEvalAnswer(FileModel):
    method: str | None = None
    total_steps: Count | None = None
    final_answer: Any = None
    answer_details: list[Any] | dict[str, Any] | None = None


class _ToolEvalEntry(FileModel):
    """One query of ToolEval's converted-answer format (the fields `from_tooleval` reads)."""

    query: str | None = None
    available_tools: list[Any] | None = None
    answer: _ToolEvalAnswer


class _Generation(FileModel):
    query: str | None = None
    final_answer: Any = None
    train_messages: list[list[Any]] | None = None
    function: list[Any] | None = None
    query_count: Count | None = None
    total_tokens: Count | None = None


class _AnswerFile(FileModel):
    """A ToolBench / StableToolBench answer file (the fields `from_answer_dir` reads)."""

    answer_generation: _Generation
    trys: list[Any] | None = None


def _read(path: Path, what: str) -> Any:
    """A JSON file we convert, bounded (size, depth, integer digits; NaN loads, as Python's json writes it, and the
    counts read are checked finite), lone surrogates repaired; faults as `CatalogError`s naming the file."""
    try:
        return repair_surrogates(load_json_file(path, max_bytes=MAX_ANSWER_FILE_BYTES, what=what,
                                                allow_nonfinite=True), source=str(path))
    except DataFileError as exc:
        raise CatalogError.from_data(exc) from None


def _checked(model: type[FileModel], data: Any, source: str, field: str = "") -> Any:
    try:
        return check_model(model, data, source=source, prefix=field)
    except DataFileError as exc:
        raise CatalogError.from_data(exc) from None


# ------------------------------------------------------------------------------------------------ ours → ToolEval
def _tool_schema(api_id: str, catalog: Catalog | None) -> dict[str, Any]:
    if catalog is None or api_id not in catalog:
        return {"name": api_id, "description": "", "parameters": {"type": "object", "properties": {}}}
    api = catalog.api(api_id)
    props = {p.name: {"type": (p.type or "string").lower(), "description": p.description} for p in api.params}
    return {"name": catalog.function_name(api_id), "description": api.description,
            "parameters": {"type": "object", "properties": props,
                           "required": [p.name for p in api.required_params],
                           "optional": [p.name for p in api.optional_params]}}


def _finish_type(record: Mapping[str, Any]) -> str:
    attempts = record.get("trajectory") or []
    return str(attempts[-1].get("finish_type") or "") if attempts else ""


def finish_arguments(record: Mapping[str, Any]) -> dict[str, Any] | None:
    """The arguments of the Finish call that gave the record's answer, as the solver's tree recorded them (the
    model's keys in its order), or None when the record holds none (e.g. converted from another format)."""
    answer = str(record.get("answer") or "")
    for attempt in reversed(record.get("trajectory") or []):
        for node in reversed(attempt.get("tree") or [] if isinstance(attempt, Mapping) else []):
            for call in reversed(node.get("calls") or [] if isinstance(node, Mapping) else []):
                args = call.get("arguments") if isinstance(call, Mapping) else None
                if (isinstance(args, Mapping) and call.get("status") == "finish:give_answer"
                        and str(args.get("final_answer") or "").strip() == answer.strip()):
                    return dict(args)
    return None


def record_to_tooleval(record: Mapping[str, Any], catalog: Catalog | None = None) -> dict[str, Any]:
    """One record in ToolEval's converted-answer format. `final_answer` is the Finish call's arguments as a JSON
    string, as ToolBench's DFS.py `to_json` writes it (`answer_generation["final_answer"] = node.description`, the
    Finish action's input) and ToolEval's `rtl.py check_is_solved` reads it (`answer['final_answer']`): the recorded
    arguments (`finish_arguments`) when the record holds them, else {return_type, final_answer}."""
    answer = str(record.get("answer") or "")
    steps = [s for s in answer_process(record, max_content=100_000) if s.get("function") != "Finish"]
    gave_answer = bool(answer.strip())
    recorded = finish_arguments(record) if gave_answer else None
    finish_args = recorded or ({"return_type": "give_answer", "final_answer": answer} if gave_answer else
                               {"return_type": "give_up_and_restart"})
    finish_text = json.dumps(finish_args, ensure_ascii=False)
    chain: dict[str, Any] = {"role": "tool", "message": {"name": "Finish", "arguments": finish_text,
                                                         "response": ""}, "next": []}
    for s in reversed(steps):
        args = s.get("arguments")
        chain = {"role": "tool", "message": {"name": s.get("function"),
                                             "arguments": args if isinstance(args, str) else json.dumps(args),
                                             "response": s.get("result", "")}, "next": [chain]}
    # ExecutionGraph.convert_to_dict (toolbench/tooleval/evaluation/dataclass.py): the system and user nodes carry
    # the message '' (`node.message if node.role != 'system' and node.role != 'user' else ''`), and `total_steps`
    # is `node_count`, those two nodes included (convert_to_answer_format.py process_valid_data)
    details = [{"role": "system", "message": "", "next": [{"role": "user", "message": "", "next": [chain]}]}]
    mode = (record.get("config") or {}).get("solver", "dfsdt")
    return {
        "query": record.get("query", ""),
        "available_tools": [_tool_schema(a, catalog) for a in record.get("pool") or []] + [FINISH_SCHEMA],
        "answer": {"method": f"anytool-{mode}", "total_steps": len(steps) + 3,
                   "final_answer": finish_text if gave_answer else "",
                   "answer_details": details},
    }


def to_tooleval(records: Iterable[Mapping[str, Any]], catalog: Catalog | None = None) -> dict[str, dict[str, Any]]:
    """group → {query_id → converted answer}."""
    out: dict[str, dict[str, Any]] = {}
    for r in records:
        out.setdefault(str(r.get("group", "")), {})[str(r.get("query_id"))] = record_to_tooleval(r, catalog)
    return out


def group_files(out: Path, groups: Iterable[str]) -> dict[str, Path]:
    """group → the file `<out>/<group>.json` its answers go to. A group comes from a results file, so it is made a
    file name (`safe_file_name`: no path, no leading dot; a changed name gets a digest of the group) and the path
    is checked to resolve inside `out` (a symlink planted there is refused); the empty group is `results`."""
    files: dict[str, Path] = {}
    used: set[str] = set()
    for group in groups:
        name = safe_file_name(group or "results", fallback="results")
        if name in used:  # e.g. the groups "" and "results"
            name = safe_file_name(f"{group}\x00", fallback="results")
        used.add(name)
        try:
            files[group] = path_inside(out, f"{name}.json", what="output file")
        except DataFileError as exc:
            raise CatalogError.from_data(exc) from None
    return files


# ------------------------------------------------------------------------------------------------ others → ours
def _finish_answer(raw: Any) -> tuple[str, str]:
    """(return_type, final answer text) from Finish arguments given as a JSON string, a dict or plain text."""
    if isinstance(raw, Mapping):
        return str(raw.get("return_type", "give_answer")), str(raw.get("final_answer", ""))
    text = str(raw or "").strip()
    if not text:
        return "", ""
    try:
        data = loads_json(text, source="final_answer") if text[:1] in "{[" else None
    except DataFileError:  # not JSON (plain text), or JSON we refuse (too deep): the text itself
        data = None
    if isinstance(data, Mapping):
        return _finish_answer(data)
    if "give_up_and_restart" in text:
        return "give_up_and_restart", ""
    return "give_answer", text


def _walk(nodes: Any) -> Iterable[Mapping[str, Any]]:
    """ToolEval answer_details: nodes with role, message, next — depth first."""
    stack = list(reversed(nodes)) if isinstance(nodes, list) else [nodes]
    while stack:
        node = stack.pop()
        if not isinstance(node, Mapping):
            continue
        yield node
        nxt = node.get("next")
        if isinstance(nxt, list):
            stack.extend(reversed(nxt))


def _record(group: str, qid: str, query: str, answer_raw: Any, calls: Sequence[tuple[str, Any, str]],
            tools: Sequence[str], method: str, usage: Mapping[str, Any]) -> dict[str, Any]:
    return_type, answer = _finish_answer(answer_raw)
    status = "answered" if return_type == "give_answer" and answer.strip() else "gave_up"
    node = {"calls": [{"tool_call_id": f"c{i}", "function": n, "arguments": a, "status": "unknown"}
                      for i, (n, a, _) in enumerate(calls)],
            "messages": [{"role": "tool", "tool_call_id": f"c{i}", "content": r} for i, (_, _, r) in enumerate(calls)]}
    return {"query_id": qid, "group": group, "query": query, "status": status, "answer": answer, "reason": "",
            "verdict": {}, "pool": list(tools), "relevant": [], "relevant_missing": [], "pool_recall": None,
            "usage": dict(usage), "wall_time": None, "error": None,
            "trajectory": [{"attempt": 1, "finish_type": return_type or "none", "answer": answer, "tree": [node]}],
            "mode": "reference", "model": method, "config": {}}


def from_tooleval(path: str | Path, group: str | None = None) -> list[dict[str, Any]]:
    """Records from a ToolEval converted-answer file (group = file stem)."""
    p = Path(path)
    data = _read(p, "converted-answer file")
    if not isinstance(data, Mapping):
        raise CatalogError("a converted-answer file holds a JSON object query_id → entry", source=str(p))
    out = []
    for qid, e in data.items():
        if not isinstance(e, Mapping) or not isinstance(e.get("answer"), Mapping):
            raise CatalogError("entry needs an 'answer' object", source=str(p), field=str(qid))
        _checked(_ToolEvalEntry, e, str(p), str(qid))
        ans = e["answer"]
        calls = []
        for node in _walk(ans.get("answer_details") or []):
            msg = node.get("message")
            if node.get("role") == "tool" and isinstance(msg, Mapping) and msg.get("name") != "Finish":
                calls.append((str(msg.get("name")), msg.get("arguments"), str(msg.get("response", ""))))
        tools = [str(t.get("name")) for t in e.get("available_tools") or [] if isinstance(t, Mapping)
                 and t.get("name") != "Finish"]
        out.append(_record(group or p.stem, str(qid), str(e.get("query", "")), ans.get("final_answer"), calls,
                           tools, str(ans.get("method", "")), {"solver_steps": ans.get("total_steps")}))
    return out


def _chain_calls(trys: Any) -> list[tuple[str, Any, str]]:
    """Calls of the last try's chain (nodes "Action" = function name, then "Action Input" = arguments with the
    observation)."""
    if not isinstance(trys, list) or not trys or not isinstance(trys[-1], Mapping):
        return []
    calls: list[tuple[str, Any, str]] = []
    name = None
    for node in trys[-1].get("chain") or []:
        if not isinstance(node, Mapping):
            continue
        if node.get("node_type") == "Action":
            name = str(node.get("description", ""))
        elif node.get("node_type") == "Action Input" and name and name != "Finish":
            calls.append((name, node.get("description"), str(node.get("observation", ""))))
            name = None
    return calls


def from_answer_dir(path: str | Path, group: str | None = None) -> list[dict[str, Any]]:
    """Records from a ToolBench / StableToolBench answer directory (`<query_id>_<method>.json` files with
    `answer_generation`); the calls are those of the last chain of `train_messages`."""
    d = Path(path)
    if not d.is_dir():
        raise CatalogError("answer directory does not exist", source=str(d))
    out = []
    for f in sorted(d.glob("*.json")):
        data = _read(f, "ToolBench answer file")
        if not isinstance(data, Mapping) or not isinstance(data.get("answer_generation"), Mapping):
            raise CatalogError("not a ToolBench answer file (no 'answer_generation' object)", source=str(f))
        _checked(_AnswerFile, data, str(f))
        gen = data["answer_generation"]
        qid, _, method = f.stem.partition("_")
        chains = gen.get("train_messages") or []
        calls: list[tuple[str, Any, str]] = []
        if chains:
            pending: dict[str, Any] = {}
            for m in chains[-1]:
                fc = m.get("function_call") if isinstance(m, Mapping) else None
                if isinstance(fc, Mapping) and fc.get("name") != "Finish":
                    pending = dict(fc)
                elif isinstance(m, Mapping) and m.get("role") == "function" and m.get("name") != "Finish":
                    calls.append((str(m.get("name")), pending.get("arguments"), str(m.get("content", ""))))
        if not calls:  # an unfinished CoT run keeps no train_messages: read the last try's chain instead
            calls = _chain_calls(data.get("trys") or [])
        tools = [str(t.get("name")) for t in gen.get("function") or [] if isinstance(t, Mapping) and t.get("name") != "Finish"]
        usage = {"model_calls": gen.get("query_count"), "total_tokens": gen.get("total_tokens")}
        out.append(_record(group or d.name, qid, str(gen.get("query", "")), gen.get("final_answer"), calls, tools,
                           method, usage))
    return out
