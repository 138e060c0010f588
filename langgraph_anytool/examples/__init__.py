"""The example files the documentation uses, shipped with the package so that its examples run from any folder.

- `compare/a.jsonl`, `compare/b.jsonl`: two hand-made results files of ten queries (`anytool eval compare`,
  `eval passrate`);
- `oppo_tasks/`: hand-made rows in the layout of the OPPO release's `data/eval_tasks/` (`anytool eval tasks --data`);
- `oppo_toolset/`: a hand-made folder in the release's `toolset/` layout (`Catalog.load`, `--catalog`).

All are our own hand-made data, not the papers' or the benchmarks'. `python -m langgraph_anytool.examples [DEST]`
copies them into `DEST/examples/` (default: `./examples/`), which is what the docs' blocks start with; in Python,
`example_path("compare/a.jsonl")` is the installed file itself (read it, never write it).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

FOLDER = Path(__file__).resolve().parent
NAMES = ("compare", "oppo_tasks", "oppo_toolset")


def example_path(relative: str) -> Path:
    """The installed example file or folder `relative` (e.g. "compare/a.jsonl"); FileNotFoundError if none."""
    path = (FOLDER / relative).resolve()
    if not path.is_relative_to(FOLDER) or path.name.startswith(("__", ".")) or not path.exists():
        raise FileNotFoundError(f"no example {relative!r}; the examples are {', '.join(NAMES)}")
    return path


def copy_examples(dest: str | Path = ".") -> Path:
    """Copy every example folder into `dest/examples/` (created; existing files are left as they are)."""
    target = Path(dest) / "examples"
    for name in NAMES:
        shutil.copytree(FOLDER / name, target / name, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__"), copy_function=_copy_new)
    return target


def _copy_new(src: str, dst: str) -> str:
    """Copy a file unless `dst` exists: the user's edits to a copied example stay."""
    return dst if Path(dst).exists() else shutil.copy2(src, dst)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) > 1 or (args and args[0].startswith("-")):
        print("usage: python -m langgraph_anytool.examples [DEST]  (copies the examples into DEST/examples/)",
              file=sys.stderr)
        return 2
    target = copy_examples(args[0] if args else ".")
    print(f"examples copied into {target}: {', '.join(NAMES)}")
    return 0
