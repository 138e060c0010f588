"""The OPPO paper's eight evaluation tasks (§3.3-3.4, Table 1, Appendix C): items read from the release's
`data/eval_tasks/task<N>.csv` files (repository OPPO-Mente-Lab/agent_eval) exactly as they are laid out.

The files are written by pandas: the first column is an unnamed index (the authors read them with
`pd.read_csv(data_fn, index_col=0)`, `eval_scripts/tasks.py` `run_task<N>`). Columns after it:

| file | columns |
|---|---|
| task1 | did, tool_name, api_name, instruction, type, tool_use_label (0/1) |
| task2 | did, tool_name, api_name, simi_apis (newline-separated `tool##api`), instruction, instruction_type |
| task3 | did, tool_name, api_name, instruction, type |
| task4 | did, tool_name, api_name, instruction, type |
| task5 | did, tool_name, api_name, instruction, type |
| task6 | did, tool_name, api_name, instruction, conv (JSON list of OpenAI chat messages) |
| task7 | did, tool_name, api_name, instruction, type, label, dep (newline-separated `<dir>/<tool>/<api>`), hard_reliance, ref_steps (`api -> api`; one alternative sequence per line) |
| task8 | did, comb (newline-separated `<tool>/<api>`), instruction |

Types are integers in the release (1-5 = the paper's I-V); roman numerals (our sample set) are accepted too.
Task 6 rows have no type column (the paper's type II), task 8 rows neither (type V). Columns are read by name, so
extra columns are kept: our sample set adds optional reference columns used only by the non-paper rule scoring
(`missing` in task 3, `ref_call` in task 4, `answer` in tasks 5 and 6). Our sample set over the builtin catalog
ships in `eval/data/oppo/` in this layout; `--data DIR` points at the release's folder.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from ...catalog.errors import UnknownNameError
from ...sanitize.files import DataFileError, iter_lines, loads_json

TASKS: dict[int, str] = {
    1: "deciding whether to use tools", 2: "tool selection", 3: "requesting the user to clarify missing info",
    4: "filling parameter values", 5: "responding with intrinsic knowledge", 6: "responding according to tool returns",
    7: "planning for resolving dependency", 8: "planning for a high-level task",
}
TYPES = ("I", "II", "III", "IV", "V")
# The release's columns per task (after the unnamed index column); all are required.
COLUMNS: dict[int, tuple[str, ...]] = {
    1: ("did", "tool_name", "api_name", "instruction", "type", "tool_use_label"),
    2: ("did", "tool_name", "api_name", "simi_apis", "instruction", "instruction_type"),
    3: ("did", "tool_name", "api_name", "instruction", "type"),
    4: ("did", "tool_name", "api_name", "instruction", "type"),
    5: ("did", "tool_name", "api_name", "instruction", "type"),
    6: ("did", "tool_name", "api_name", "instruction", "conv"),
    7: ("did", "tool_name", "api_name", "instruction", "type", "label", "dep", "hard_reliance", "ref_steps"),
    8: ("did", "comb", "instruction"),
}
TYPE_COLUMN: dict[int, str | None] = {1: "type", 2: "instruction_type", 3: "type", 4: "type", 5: "type", 6: None,
                                      7: "type", 8: None}
IMPLIED_TYPE: dict[int, str] = {6: "II", 8: "V"}  # the paper's Table 1: the instruction type a task draws on
MAX_LINE_BYTES = 16 << 20  # one line of a task file (the release's longest, a task 6 conversation, is ~20 KB)


class TaskDataError(ValueError):
    """A task file that cannot be used, naming the file, row and column."""


def parse_type(value: str) -> str | None:
    """The paper's instruction type as a roman numeral from "1".."5" (the release, also "2.0") or "I".."V"."""
    v = value.strip().upper()
    if v in TYPES:
        return v
    try:
        n = float(v)
    except ValueError:
        return None
    return TYPES[int(n) - 1] if n.is_integer() and 1 <= n <= 5 else None


@dataclass(frozen=True)
class TaskItem:
    """One row of a task file (API references are resolved against a catalog by `resolve_api`)."""

    task: int
    id: str
    instruction: str
    type: str
    row: dict[str, str] = field(default_factory=dict)
    source: str = ""
    line: int = 0

    def where(self, column: str = "") -> str:
        return f"{self.source}: line {self.line}" + (f", column {column!r}" if column else "")

    def get(self, column: str) -> str:
        return (self.row.get(column) or "").strip()

    def lines(self, column: str) -> list[str]:
        return [s.strip() for s in self.get(column).splitlines() if s.strip()]

    def api_ref(self) -> tuple[str, str]:
        """(tool_name, api_name) of the row's API."""
        return self.get("tool_name"), self.get("api_name")

    def simi_apis(self) -> list[tuple[str, str]]:
        """Task 2: the similar APIs, `tool##api` per line (`tasks.py` `run_task2`)."""
        out = []
        for ref in self.lines("simi_apis"):
            tool, sep, api = ref.partition("##")
            if not sep or not tool.strip() or not api.strip():
                raise TaskDataError(f"{self.where('simi_apis')}: {ref!r} is not 'tool##api'")
            out.append((tool.strip(), api.strip()))
        return out

    def deps(self) -> list[tuple[str, str]]:
        """Task 7: the dependency APIs, `<dir>/<tool>/<api>` per line (`tasks.py` `run_task7`)."""
        out = []
        for ref in self.lines("dep"):
            parts = [p.strip() for p in ref.split("/", 2)]  # an API name may hold a "/" (ours: "Sales Tax / VAT")
            if len(parts) != 3 or not all(parts):
                raise TaskDataError(f"{self.where('dep')}: {ref!r} is not '<dir>/<tool>/<api>'")
            out.append((parts[1], parts[2]))
        return out

    def comb(self) -> list[tuple[str, str]]:
        """Task 8: the APIs to plan with, `<tool>/<api>` per line (`tasks.py` `run_task8`)."""
        out = []
        for ref in self.lines("comb"):
            parts = [p.strip() for p in ref.split("/", 1)]
            if len(parts) != 2 or not all(parts):
                raise TaskDataError(f"{self.where('comb')}: {ref!r} is not '<tool>/<api>'")
            out.append((parts[0], parts[1]))
        return out

    def ref_steps(self) -> list[str]:
        """Task 7: the alternative reference sequences, one `api -> api` string per line."""
        return self.lines("ref_steps")

    def facts(self) -> list[str]:
        return [s.strip() for s in self.get("answer").split("|") if s.strip()]

    def _json(self, column: str) -> Any:
        """The column's JSON, bounded (depth, numbers: `sanitize.files.loads_json`)."""
        try:
            return loads_json(self.get(column), source=self.where(column))
        except DataFileError as exc:
            raise TaskDataError(f"{self.where(column)}: not usable JSON ({exc.message})") from None

    def conv(self) -> list[dict[str, Any]]:
        """Task 6: the conversation (an optional system message, the user's, the call, the tool's return...)."""
        value = self._json("conv")
        if not isinstance(value, list) or not all(isinstance(m, Mapping) and isinstance(m.get("role"), str)
                                                  for m in value):
            raise TaskDataError(f"{self.where('conv')}: must be a JSON list of OpenAI-format messages "
                                "(objects with a 'role' string)")
        start = 1 if value and value[0].get("role") == "system" else 0
        if len(value) < start + 2:
            raise TaskDataError(f"{self.where('conv')}: needs the user's message and the function call after it "
                                f"(got {len(value)} message(s))")
        return [dict(m) for m in value]

    def ref_call(self) -> dict[str, Any] | None:
        if not self.get("ref_call"):
            return None
        value = self._json("ref_call")
        if not isinstance(value, dict):
            raise TaskDataError(f"{self.where('ref_call')}: must be a JSON object")
        return value

    def check(self) -> None:
        """Every column this task reads, parsed now (a bad row fails the load, before any model call)."""
        if self.task == 1 and parse_label(self.get("tool_use_label")) is None:
            raise TaskDataError(f"{self.where('tool_use_label')}: must be 0 or 1, got {self.get('tool_use_label')!r}")
        for task, parse in ((2, self.simi_apis), (4, self.ref_call), (6, self.conv), (7, self.deps),
                            (8, self.comb)):
            if self.task == task:
                parse()


def parse_label(value: str) -> int | None:
    """Task 1's `tool_use_label`: 0 or 1 ("0.0"/"1.0" too, as pandas writes a column that once held a gap)."""
    try:
        n = float(value.strip())
    except ValueError:
        return None
    return int(n) if n in (0.0, 1.0) else None


def sample_dir() -> Path:
    """Our sample set (builtin catalog), shipped as package data in the release's layout."""
    return Path(str(resources.files("langgraph_anytool.eval") / "data" / "oppo"))


def load_task(task: int, data: str | Path | None = None, *, limit: int | None = None) -> list[TaskItem]:
    """The items of one task from `<data>/task<N>.csv` (default: our sample set): the first `limit` items when
    given (the file is streamed, and reading stops there). Lines are capped at `MAX_LINE_BYTES`; a bad row is a
    `TaskDataError` naming the file, the line and the column."""
    if task not in TASKS:
        raise TaskDataError(f"unknown task {task}; tasks are 1-8")
    path = Path(data) if data is not None else sample_dir()
    if path.is_dir():
        path = path / f"task{task}.csv"
    if not path.exists():
        raise TaskDataError(f"{path}: no such file (expected task{task}.csv in the data directory)")
    try:
        items = _read_task(task, path, limit)
    except DataFileError as exc:  # not a regular file, a line over the cap, not UTF-8
        at = f" (line {exc.line})" if exc.line is not None else ""
        raise TaskDataError(f"{exc.source}: {exc.message}{at}") from None
    if not items:
        raise TaskDataError(f"{path}: no rows")
    return items


def _read_task(task: int, path: Path, limit: int | None) -> list[TaskItem]:
    items: list[TaskItem] = []
    # the byte-order mark of a spreadsheet's first line is dropped by iter_lines; rows may span lines (quoted)
    reader = csv.reader(text for _, text in iter_lines(path, max_line_bytes=MAX_LINE_BYTES, what="task file"))
    try:
        header = next(reader, None)
        if header is None:
            raise TaskDataError(f"{path}: empty file")
        names = [h.strip() for h in header]
        missing = [c for c in COLUMNS[task] if c not in names]
        if missing:
            raise TaskDataError(f"{path}: missing column(s) {', '.join(missing)} for task {task} (the release's "
                                f"columns: {', '.join(COLUMNS[task])})")
        type_col = TYPE_COLUMN[task]
        end = reader.line_num
        for values in reader:
            n, end = end + 1, reader.line_num  # the row's first line (a quoted field may span several)
            if not any(v.strip() for v in values):
                continue
            if len(values) != len(names):
                raise TaskDataError(f"{path}: line {n} has {len(values)} fields, the header {len(names)}")
            row = {k: v for k, v in zip(names, values, strict=True) if k}
            index = values[0].strip() if names[0] == "" else ""
            typ = IMPLIED_TYPE[task] if type_col is None else parse_type(row.get(type_col, ""))
            if typ is None:
                raise TaskDataError(f"{path}: line {n}, column {type_col!r}: {row.get(type_col or '', '')[:80]!r} "
                                    "is not an instruction type (1-5 or I-V)")
            instruction = row.get("instruction", "").strip()
            if not instruction:
                raise TaskDataError(f"{path}: line {n}, column 'instruction' is empty")
            item_id = row.get("did", "").strip() or index or f"row{n}"
            item = TaskItem(task=task, id=item_id, instruction=instruction, type=typ, row=row, source=str(path),
                            line=n)
            item.check()
            items.append(item)
            if limit is not None and len(items) >= limit:
                break  # nothing after the limit is read
    except csv.Error as exc:  # e.g. a field over csv.field_size_limit() characters
        raise TaskDataError(f"{path}: not readable as CSV at line {reader.line_num} ({exc})") from None
    return items


def resolve_api(catalog: Any, tool: str, api: str, where: str) -> str:
    """The catalog API id of (tool, api): tool by name or key, API by its name (the function name in OPPO's
    toolset docs, the display name in ours)."""
    try:
        return str(catalog.find_api(tool.strip(), api.strip()).id)
    except UnknownNameError:
        raise TaskDataError(f"{where}: API {api!r} of tool {tool!r} is not in catalog {catalog.name!r}; point "
                            "--catalog at a catalog holding the task's tools (for the release: its toolset/ "
                            "folder)") from None
