"""The OPPO paper's eight evaluation tasks (seed 001, §3.3-3.4, Table 1, Appendix C): items read from CSV files in
the upstream column layout, one file per task (`task1.csv` … `task8.csv`).

Columns (all tasks: `instruction`, `type` (I-V); `id` optional; APIs are `tool##api`, display names):
- task 1: `api`, `tool_use_label` (1 = a tool is needed)                 — types I, II
- task 2: `api` (the right one), `simi_apis` (newline list of `tool##api`)  — type II
- task 3: `api`, `missing` (optional: the parameters the instruction lacks, `|`-separated) — type III
- task 4: `api`, `ref_call` (optional: a reference arguments object, JSON) — type II
- task 5: `api` (the tool it may mislead towards), `answer` (optional reference facts, `|`-separated) — type I
- task 6: `conv` (OpenAI-format messages: user, assistant tool call, tool result), `answer` (optional facts) — II
- task 7: `api`, `dep` (newline list of `tool##api`), `hard_reliance`, `ref_steps` (`a -> b`, API names) — IV
- task 8: `comb` (newline list of `tool/api`)                             — type V
Our sample set over the builtin catalog ships in `eval/data/oppo/`; `--data DIR` points at the upstream CSVs.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from ..catalog.errors import UnknownNameError

TASKS: dict[int, str] = {
    1: "deciding whether to use tools", 2: "tool selection", 3: "requesting the user to clarify missing info",
    4: "filling parameter values", 5: "responding with intrinsic knowledge", 6: "responding according to tool returns",
    7: "planning for resolving dependency", 8: "planning for a high-level task",
}
TYPES = ("I", "II", "III", "IV", "V")
REQUIRED: dict[int, tuple[str, ...]] = {
    1: ("instruction", "type", "api", "tool_use_label"), 2: ("instruction", "type", "api", "simi_apis"),
    3: ("instruction", "type", "api"), 4: ("instruction", "type", "api"), 5: ("instruction", "type"),
    6: ("instruction", "type", "conv"), 7: ("instruction", "type", "api", "dep", "ref_steps"),
    8: ("instruction", "type", "comb"),
}


class TaskDataError(ValueError):
    """A task file that cannot be used, naming the file, row and column."""


@dataclass(frozen=True)
class TaskItem:
    """One row of a task file (API references resolved to catalog ids by `resolve`)."""

    task: int
    id: str
    instruction: str
    type: str
    row: dict[str, str] = field(default_factory=dict)
    source: str = ""
    line: int = 0

    def where(self, column: str = "") -> str:
        return f"{self.source}: row {self.line}" + (f", column {column!r}" if column else "")

    def get(self, column: str) -> str:
        return (self.row.get(column) or "").strip()

    def lines(self, column: str) -> list[str]:
        return [s.strip() for s in self.get(column).splitlines() if s.strip()]

    def facts(self) -> list[str]:
        return [s.strip() for s in self.get("answer").split("|") if s.strip()]

    def conv(self) -> list[dict[str, Any]]:
        try:
            value = json.loads(self.get("conv"))
        except ValueError as exc:
            raise TaskDataError(f"{self.where('conv')}: not JSON ({exc})") from exc
        if not isinstance(value, list) or not all(isinstance(m, Mapping) and "role" in m for m in value):
            raise TaskDataError(f"{self.where('conv')}: must be a JSON list of OpenAI-format messages")
        return [dict(m) for m in value]

    def ref_call(self) -> dict[str, Any] | None:
        text = self.get("ref_call")
        if not text:
            return None
        try:
            value = json.loads(text)
        except ValueError as exc:
            raise TaskDataError(f"{self.where('ref_call')}: not JSON ({exc})") from exc
        if not isinstance(value, dict):
            raise TaskDataError(f"{self.where('ref_call')}: must be a JSON object")
        return value

    def ref_steps(self) -> list[str]:
        return [s.strip() for s in self.get("ref_steps").split("->") if s.strip()]


def sample_dir() -> Path:
    """Our sample set (builtin catalog), shipped as package data."""
    return Path(str(resources.files("langgraph_anytool.eval") / "data" / "oppo"))


def load_task(task: int, data: str | Path | None = None) -> list[TaskItem]:
    """The items of one task from `<data>/task<N>.csv` (default: our sample set)."""
    if task not in TASKS:
        raise TaskDataError(f"unknown task {task}; tasks are 1-8")
    path = Path(data) if data is not None else sample_dir()
    if path.is_dir():
        path = path / f"task{task}.csv"
    if not path.is_file():
        raise TaskDataError(f"{path}: no such file (expected task{task}.csv in the data directory)")
    try:
        items = _read_task(task, path)
    except UnicodeDecodeError as exc:
        raise TaskDataError(f"{path}: not UTF-8 text (byte {exc.start}: {exc.reason})") from None
    except csv.Error as exc:  # e.g. a field over csv.field_size_limit() characters
        raise TaskDataError(f"{path}: not readable as CSV ({exc})") from None
    except OSError as exc:
        raise TaskDataError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if not items:
        raise TaskDataError(f"{path}: no rows")
    return items


def _read_task(task: int, path: Path) -> list[TaskItem]:
    items: list[TaskItem] = []
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in REQUIRED[task] if c not in (reader.fieldnames or [])]
        if missing:
            raise TaskDataError(f"{path}: missing column(s) {', '.join(missing)} for task {task}")
        for n, row in enumerate(reader, start=2):
            clean = {k: (v or "") for k, v in row.items() if k is not None}
            typ = clean.get("type", "").strip().upper()
            if typ not in TYPES:
                raise TaskDataError(f"{path}: row {n}, column 'type': {typ!r} is not one of {', '.join(TYPES)}")
            if not clean.get("instruction", "").strip():
                raise TaskDataError(f"{path}: row {n}, column 'instruction' is empty")
            items.append(TaskItem(task=task, id=clean.get("id", "").strip() or f"row{n}",
                                  instruction=clean["instruction"].strip(), type=typ, row=clean, source=str(path),
                                  line=n))
    return items


def resolve_api(catalog: Any, ref: str, where: str) -> str:
    """The catalog API id of `tool##api` (or `tool/api`, or an API id / function name)."""
    ref = ref.strip()
    if ref in catalog:
        return ref
    for sep in ("##", "/"):
        if sep in ref:
            tool, api = ref.split(sep, 1)
            try:
                return str(catalog.find_api(tool.strip(), api.strip()).id)
            except UnknownNameError:
                break
    try:
        return str(catalog.api_for_function(ref).id)
    except UnknownNameError:
        raise TaskDataError(f"{where}: API {ref!r} is not in catalog {catalog.name!r}; point --catalog at a "
                            "catalog holding the task's tools") from None
