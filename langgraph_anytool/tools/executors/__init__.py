"""Executors: local, http, virtual, llm-simulated, template-simulated."""

from __future__ import annotations

from typing import Any

from .base import Executor
from .local import LocalExecutor
from .template import TemplateSimulatedExecutor

EXECUTOR_KINDS: tuple[str, ...] = ("local", "template", "http", "virtual", "llm")


def make_executor(kind: str, **options: Any) -> Executor:
    """An executor by kind; `options` go to its constructor.

    - "local": `LocalExecutor`; without `implementations=` it runs the builtin offline toolset;
    - "template": `TemplateSimulatedExecutor` (synthetic responses, marked simulated);
    - "http": `HttpExecutor`; "virtual": `VirtualServerExecutor` (StableToolBench-compatible server);
    - "llm": `LLMSimulatedExecutor` (a model plays the API; marked simulated).
    There is deliberately no default kind: a simulator is only ever used when asked for by name.
    """
    k = kind.strip().lower().replace("-", "_")
    if k == "local":
        impls = options.pop("implementations", None)
        if impls is None:
            from ...catalog.builtin import builtin_implementations, builtin_worker_api_ids

            impls = builtin_implementations()
            options.setdefault("isolated", builtin_worker_api_ids())  # killable at the timeout
            options.setdefault("isolated_timeout", 10.0)
        return LocalExecutor(impls, **options)
    if k == "template":
        return TemplateSimulatedExecutor(**options)
    if k == "http":
        from .http import HttpExecutor

        return HttpExecutor(**options)
    if k == "virtual":
        from .virtual import VirtualServerExecutor

        return VirtualServerExecutor(**options)
    if k in ("llm", "llm_sim"):
        from .llm_sim import LLMSimulatedExecutor

        return LLMSimulatedExecutor(**options)
    raise ValueError(f"unknown executor kind {kind!r}; expected one of: {', '.join(EXECUTOR_KINDS)}")


__all__ = ["EXECUTOR_KINDS", "Executor", "LocalExecutor", "TemplateSimulatedExecutor", "make_executor"]
