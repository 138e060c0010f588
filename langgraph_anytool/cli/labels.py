"""Saying so whenever the offline stand-in plays a role. Every command that ends up with `OfflinePolicyModel` for
some role — chosen by `--offline`, or by the name "offline" in `--model`, `ANYTOOL_MODEL`, a per-role option or
as an evaluator — prints its label in its first line and in its last one (`first_line`, `last_line`)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping, Sequence
from typing import Any

OFFLINE_NAME = "offline"  # the model name of the stand-in (models.llm.OFFLINE; not imported: it loads LangChain)


def model_spec(args: argparse.Namespace) -> str | None:
    """The command's model: --model, else $ANYTOOL_MODEL, else "offline" with --offline (None: none given)."""
    return args.model or os.environ.get("ANYTOOL_MODEL", "").strip() or (OFFLINE_NAME if args.offline else None)


def is_stand_in(model: Any) -> bool:
    """Whether `model` is the offline stand-in: the name "offline", or an instance (its class carries
    `STAND_IN_LABEL`)."""
    if isinstance(model, str):
        return model.strip() == OFFLINE_NAME
    return bool(getattr(type(model), "STAND_IN_LABEL", ""))


def stand_in_label(model: Any) -> str:
    """The stand-in's label when `model` is it, else ""."""
    if not is_stand_in(model):
        return ""
    from ..offline import LABEL

    return LABEL


def stand_in_roles(models: Mapping[str, Any]) -> list[str]:
    """The roles (or other names: "evaluator", "model") of `models` played by the stand-in."""
    return [role for role, model in models.items() if is_stand_in(model)]


def resolve_stand_in(spec: Any, catalog: Any) -> Any:
    """`spec`, with the name "offline" made the stand-in over `catalog` (a model instance or any other name is
    returned as it is)."""
    if isinstance(spec, str) and is_stand_in(spec):
        from ..offline import OfflinePolicyModel

        return OfflinePolicyModel(catalog=catalog)
    return spec


def first_line(roles: Sequence[str] = ()) -> str:
    """The first line of a command whose `roles` (all when empty) the stand-in plays."""
    from ..offline import LABEL

    who = f" plays {', '.join(roles)}" if roles else ""
    return f"model: {LABEL}{who}; its answers come from heuristics over the catalog search, not from an LLM"


def last_line() -> str:
    """The last line of such a command."""
    from ..offline import LABEL

    return f"note: answers and token counts come from {LABEL}; tokens are estimated as characters / 4."
