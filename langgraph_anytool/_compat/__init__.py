"""Old module paths, kept for one release (the house redesign, issue 20, moved them).

`import langgraph_anytool.llm` (or any path in `MOVED`) warns with `DeprecationWarning` and gives the module at
its new path: the SAME module object, so monkeypatching through an old path patches the real module.
Nothing here is imported by the package itself; `langgraph_anytool/__init__` installs the finder.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from types import MappingProxyType, ModuleType

MOVED = MappingProxyType({
    'langgraph_anytool.agent_tool': 'langgraph_anytool.integrations.agent_tool',
    'langgraph_anytool.argtypes': 'langgraph_anytool.cli.argtypes',
    'langgraph_anytool.catalog.index_cli': 'langgraph_anytool.cli.index_commands',
    'langgraph_anytool.dbfile': 'langgraph_anytool.tools.dbfile',
    'langgraph_anytool.demo': 'langgraph_anytool.cli.demo',
    'langgraph_anytool.eval.bench_commands': 'langgraph_anytool.cli.bench_commands',
    'langgraph_anytool.eval.commands': 'langgraph_anytool.cli.eval_commands',
    'langgraph_anytool.eval.convert': 'langgraph_anytool.eval.anytool.convert',
    'langgraph_anytool.eval.hallucination': 'langgraph_anytool.eval.umi.hallucination',
    'langgraph_anytool.eval.oppo_agent': 'langgraph_anytool.eval.oppo.agent',
    'langgraph_anytool.eval.oppo_data': 'langgraph_anytool.eval.oppo.data',
    'langgraph_anytool.eval.oppo_judge': 'langgraph_anytool.eval.oppo.judge',
    'langgraph_anytool.eval.oppo_prompts': 'langgraph_anytool.eval.oppo.prompts',
    'langgraph_anytool.eval.oppo_score': 'langgraph_anytool.eval.oppo.score',
    'langgraph_anytool.eval.oppo_tasks': 'langgraph_anytool.eval.oppo.tasks',
    'langgraph_anytool.eval.passrate': 'langgraph_anytool.eval.anytool.passrate',
    'langgraph_anytool.eval.persistence': 'langgraph_anytool.eval.anytool.persistence',
    'langgraph_anytool.eval.remote': 'langgraph_anytool.eval.anytool.remote',
    'langgraph_anytool.eval.results': 'langgraph_anytool.eval.anytool.results',
    'langgraph_anytool.eval.runner': 'langgraph_anytool.eval.anytool.runner',
    'langgraph_anytool.eval.stats': 'langgraph_anytool.eval.anytool.stats',
    'langgraph_anytool.eval.step_data': 'langgraph_anytool.eval.umi.data',
    'langgraph_anytool.eval.step_metrics': 'langgraph_anytool.eval.umi.metrics',
    'langgraph_anytool.eval.step_predict': 'langgraph_anytool.eval.umi.predict',
    'langgraph_anytool.eval.steps': 'langgraph_anytool.eval.umi.steps',
    'langgraph_anytool.faults': 'langgraph_anytool.models.faults',
    'langgraph_anytool.fitting': 'langgraph_anytool.models.fitting',
    'langgraph_anytool.guard': 'langgraph_anytool.models.guard',
    'langgraph_anytool.interaction': 'langgraph_anytool.cli.interaction',
    'langgraph_anytool.llm': 'langgraph_anytool.models.llm',
    'langgraph_anytool.pool_selection': 'langgraph_anytool.integrations.pool_selection',
    'langgraph_anytool.preflight': 'langgraph_anytool.cli.preflight',
    'langgraph_anytool.profiles': 'langgraph_anytool.models.profiles',
    'langgraph_anytool.progress': 'langgraph_anytool.cli.progress',
    'langgraph_anytool.retriever': 'langgraph_anytool.integrations.retriever',
    'langgraph_anytool.selector': 'langgraph_anytool.integrations.selector',
    'langgraph_anytool.testing': 'langgraph_anytool.models.testing',
})


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, new: str) -> None:
        self.new = new

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        # stacklevel 2: the import statement (warnings skips the import system's own frames)
        warnings.warn(f"{module.__name__} moved to {self.new}; the old path goes away in the next release",
                      DeprecationWarning, stacklevel=2)
        # the import system returns whatever sys.modules holds once exec_module is done: the new module itself
        sys.modules[module.__name__] = importlib.import_module(self.new)


class AliasFinder(importlib.abc.MetaPathFinder):
    """Finds the old module paths of `MOVED`."""

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> importlib.machinery.ModuleSpec | None:
        new = MOVED.get(fullname)
        if new is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(new))


def install_aliases() -> None:
    """Put the finder in front of `sys.meta_path` (once)."""
    if not any(type(f).__name__ == "AliasFinder" and type(f).__module__ == __name__ for f in sys.meta_path):
        sys.meta_path.insert(0, AliasFinder())
