"""Run a command as on a machine without some programs: they are missing from its PATH.

    python3 scripts/without_programs.py [--unset VAR]... PROGRAM... -- COMMAND [ARG...]

The programs of every folder on today's PATH are linked into a temporary folder (the first of each name wins, as
the shell finds it), except the named ones, and COMMAND runs with that folder as its only PATH and without the
`--unset` variables. `make test-without-tools` (run by `.ci/run` after `make test`) uses it to run the suite's
collection and the tests of the optional tools with bubblewrap, Chromium and Graphviz missing, as on macOS or in a
container without user namespaces: a test module that needs one at import, not only when it runs, fails CI there
instead of hiding behind the installed tools. The exit status is the command's.

Standard library only: it runs with the system Python.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path


def path_without(programs: set[str], folder: Path, path: str) -> str:
    """Link the programs found on `path` into `folder`, leaving out `programs`; the new PATH (just `folder`)."""
    folder.mkdir(parents=True, exist_ok=True)
    for entry in path.split(os.pathsep):
        if not entry or not os.path.isdir(entry):
            continue
        for name in sorted(os.listdir(entry)):
            source, target = Path(entry, name), folder / name
            if name in programs or os.path.lexists(target) or not (source.is_file() and os.access(source, os.X_OK)):
                continue
            target.symlink_to(source.absolute())
    return str(folder)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if "--" not in argv:
        print("usage: without_programs.py [--unset VAR]... PROGRAM... -- COMMAND [ARG...]", file=sys.stderr)
        return 2
    split = argv.index("--")
    parser = argparse.ArgumentParser(prog="without_programs.py")
    parser.add_argument("--unset", action="append", default=[], metavar="VAR", help="a variable to remove")
    parser.add_argument("programs", nargs="+", help="the programs to leave out")
    args = parser.parse_args(argv[:split])
    command = argv[split + 1:]
    if not command:
        parser.error("no command after --")
    env = {k: v for k, v in os.environ.items() if k not in set(args.unset)}
    with tempfile.TemporaryDirectory(prefix="without-") as tmp:
        env["PATH"] = path_without(set(args.programs), Path(tmp, "bin"), os.environ.get("PATH", ""))
        print(f">> without {', '.join(args.programs)} on the PATH" +
              (f", {', '.join(args.unset)} unset" if args.unset else "") + f": {' '.join(command)}", flush=True)
        try:
            return subprocess.call(command, env=env)
        except KeyboardInterrupt:
            return 130


if __name__ == "__main__":
    sys.exit(main())
