"""The solver's `Finish` function: its schema, the parsing of a call, and the failed-function mapping."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ...catalog import Catalog
from ...catalog.errors import UnknownNameError
from ...protocol import FINISH_NAME

ReturnType = Literal["give_answer", "give_up_and_restart", "give_up"]
RETURN_TYPES: tuple[str, ...] = ("give_answer", "give_up_and_restart", "give_up")


def finish_schema(allow_restart: bool = True) -> dict[str, Any]:
    """OpenAI function schema of `Finish` (CoT drops `give_up_and_restart` from the choices)."""
    types = list(RETURN_TYPES) if allow_restart else ["give_answer", "give_up"]
    return {
        "type": "function",
        "function": {
            "name": FINISH_NAME,
            "description": (
                "Call this function at the end of the task. If you have a result that answers the task, give it with "
                "return_type 'give_answer' and a final_answer that holds all the information the user needs"
                + (", 'give_up_and_restart' to try again from an earlier state" if allow_restart else "")
                + ", or 'give_up' when the task cannot be solved. When giving up, explain why in 'reason' and name "
                "the functions that failed or are irrelevant in 'failed_functions'."
            ),
            "parameters": {
                "type": "object",
                "properties": {
                    "return_type": {"type": "string", "enum": types},
                    "final_answer": {
                        "type": "string",
                        "description": "The final answer shown to the user (required for give_answer).",
                    },
                    "reason": {
                        "type": "string",
                        "description": "Why you restart or give up; mention the names of the failed functions.",
                    },
                    "failed_functions": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "Names of the functions that failed or cannot help with the task.",
                    },
                },
                "required": ["return_type"],
            },
        },
    }


@dataclass(frozen=True)
class FinishCall:
    """A parsed, valid `Finish` call."""

    return_type: ReturnType
    final_answer: str = ""
    reason: str = ""
    failed_functions: list[str] = field(default_factory=list)


class FinishError(ValueError):
    """A `Finish` call the solver cannot accept; the message is shown to the model."""


def _as_names(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [s.strip() for s in value.replace(";", ",").split(",") if s.strip()]
    if isinstance(value, Iterable):
        return [str(s).strip() for s in value if str(s).strip()]
    return [str(value)]


def parse_finish(args: Mapping[str, Any] | Any) -> FinishCall:
    """Validate `Finish` arguments; raises `FinishError` with a message for the model."""
    if not isinstance(args, Mapping):
        raise FinishError("Finish arguments must be a JSON object")
    rt = str(args.get("return_type") or "").strip().lower().replace("-", "_").replace(" ", "_")
    if rt not in RETURN_TYPES:
        raise FinishError(f"return_type must be one of {', '.join(RETURN_TYPES)}; got {args.get('return_type')!r}")
    answer = args.get("final_answer")
    answer = "" if answer is None else (answer if isinstance(answer, str) else str(answer))
    if rt == "give_answer" and not answer.strip():
        raise FinishError("final_answer is required with return_type give_answer")
    reason = args.get("reason")
    reason = "" if reason is None else str(reason)
    return FinishCall(return_type=rt, final_answer=answer.strip(), reason=reason.strip(),  # type: ignore[arg-type]
                      failed_functions=_as_names(args.get("failed_functions")))


def resolve_failed(catalog: Catalog, names: Iterable[str]) -> tuple[list[str], list[str]]:
    """Keep the failed-function names that exist in the catalog (function names or API ids) → (names, api ids)."""
    out_names: list[str] = []
    out_ids: list[str] = []
    for name in names:
        try:
            api_id = catalog.api_for_function(name).id
        except UnknownNameError:
            if name not in catalog:
                continue
            api_id = name
        if api_id not in out_ids:
            out_names.append(name)
            out_ids.append(api_id)
    return out_names, out_ids
