"""Every module of the package imports first, on its own: a user's notebook may start with any of them.

An import cycle hides as long as some other module happens to be imported first (as in one test process); it
shows in a fresh interpreter that imports the cycle's other end first. One child interpreter imports each module
with the package's modules forgotten in between (third-party libraries stay loaded, so it takes seconds).
"""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import langgraph_anytool

CHILD = r"""
import importlib, json, sys, traceback
failures = {}
for name in json.loads(sys.stdin.read()):
    for loaded in [m for m in sys.modules if m == "langgraph_anytool" or m.startswith("langgraph_anytool.")]:
        del sys.modules[loaded]
    try:
        importlib.import_module(name)
    except Exception as error:  # noqa: BLE001 - reported to the parent
        failures[name] = traceback.format_exception_only(type(error), error)[-1].strip()
print(json.dumps(failures))
"""


def package_modules() -> list[str]:
    """Every module and subpackage of langgraph_anytool, by dotted name (`__main__` runs the CLI: left out)."""
    root = Path(langgraph_anytool.__file__).parent
    modules = sorted(info.name for info in pkgutil.walk_packages([str(root)], prefix="langgraph_anytool.")
                     if not info.name.endswith(".__main__"))
    return ["langgraph_anytool", *modules]


def test_each_module_imports_first_in_a_fresh_interpreter(tmp_path: Path) -> None:
    names = package_modules()
    assert "langgraph_anytool.graphs.retriever" in names and len(names) > 100
    package_parent = str(Path(langgraph_anytool.__file__).parent.parent)
    done = subprocess.run([sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {package_parent!r})\n" + CHILD],
                          input=json.dumps(names), capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    failures = json.loads(done.stdout.strip().splitlines()[-1])
    assert failures == {}, "\n".join(f"{name}: {why}" for name, why in failures.items())
