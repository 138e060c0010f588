"""Run one step of `make` and keep the terminal informed: a line at least every `--every` seconds.

    python3 scripts/heartbeat.py [--every 20] [--pip] --label TEXT -- COMMAND [ARG...]

By default the command's output passes through as it comes (pytest's per-file lines, mkdocs' warnings); whenever
it has been silent for `--every` seconds (mypy checking, a long test, pip unpacking), a line says what is still
running and for how long. With `--pip`, pip's own lines (one per package, and noise from the local index
configuration) are condensed into a few phase lines: resolving, building, installing, done; on failure the end
of pip's full output is printed so the error shows. The exit status is the command's (130 on Ctrl-C).

Standard library only: `make` runs it with the system Python, before the virtual environment exists.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

# pip lines that say nothing to a user: the local index configuration of some machines names absent folders
_PIP_NOISE = re.compile(r"^WARNING: Location '.*' is ignored")
_PIP_TAIL = 60  # lines of pip's output shown when it fails


def duration(seconds: float) -> str:
    """`seconds` as "42 s" or "3 min 05 s"."""
    s = int(seconds)
    return f"{s} s" if s < 60 else f"{s // 60} min {s % 60:02d} s"


def plural(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


@dataclass
class PipSummary:
    """Condenses pip's output into phase lines (at most one per `interval` seconds while it resolves)."""

    say: Callable[[str], None]
    interval: float = 5.0
    collected: list[str] = field(default_factory=list)
    phase: str = ""
    last_said: float = 0.0
    tail: deque[str] = field(default_factory=lambda: deque(maxlen=_PIP_TAIL))

    def line(self, text: str, now: float) -> None:
        text = text.rstrip()
        if not text or _PIP_NOISE.match(text):
            return
        self.tail.append(text)
        if m := re.match(r"(?:Collecting|Requirement already satisfied:|Obtaining)\s+(\S+)", text):
            name = re.split(r"[<>=!~\[; ]", m.group(1), maxsplit=1)[0]
            if name not in self.collected:
                self.collected.append(name)
            self._enter("resolve", f"resolving the dependencies ({plural(len(self.collected), 'package')} so far, "
                                   f"latest: {name})", now, repeat=True)
        elif m := re.match(r"Building (?:wheels for collected packages:|wheels? for|editable for) (.+)", text):
            self._enter("build", f"building {m.group(1).split(' (')[0].strip()}", now)
        elif text.startswith("Installing collected packages:"):
            count = len(text.split(":", 1)[1].split(","))
            self._enter("install", f"installing {plural(count, 'package')} (unpacking the wheels)", now)
        elif text.startswith("Successfully installed"):
            self._enter("done", f"installed {plural(len(text.split()) - 2, 'package')}", now)

    def _enter(self, phase: str, message: str, now: float, repeat: bool = False) -> None:
        if phase != self.phase or (repeat and now - self.last_said >= self.interval):
            self.phase, self.last_said = phase, now
            self.say(message)


def run(command: list[str], label: str, every: float, pip: bool, out: Callable[[str], None]) -> int:
    """Run `command`, writing its output (or pip's summary) with `out`, a heartbeat line after `every` s of silence."""
    start = time.monotonic()
    lock = threading.Lock()
    state = {"last": start, "line_start": True}

    def emit(text: str, own_line: bool = False) -> None:
        with lock:
            if not text:
                return
            if own_line and not state["line_start"]:
                text = "\n" + text
            out(text)
            state["last"] = time.monotonic()
            state["line_start"] = text.endswith("\n")

    def say(message: str) -> None:
        emit(f"   {label}: {message}\n", own_line=True)

    summary = PipSummary(say=say) if pip else None
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}  # Python children write as they go, not when a buffer fills
    try:
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    except OSError as exc:
        out(f"   {label}: cannot run {command[0]}: {exc}\n")
        return 127
    assert proc.stdout is not None
    stream = proc.stdout

    def pump() -> None:
        pending = b""
        while chunk := os.read(stream.fileno(), 65536):
            if summary is None:
                emit(chunk.decode("utf-8", "replace"))
                continue
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for raw in lines:
                summary.line(raw.decode("utf-8", "replace"), time.monotonic())
        if summary is not None and pending:
            summary.line(pending.decode("utf-8", "replace"), time.monotonic())

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    try:
        while proc.poll() is None:
            time.sleep(0.25)
            now = time.monotonic()
            if now - state["last"] >= every:
                say(f"still running ({duration(now - start)} so far)")
        reader.join()
    except KeyboardInterrupt:  # the child got the same SIGINT (one process group): let it stop
        proc.wait()
        return 130
    code = proc.returncode
    if code != 0 and summary is not None:
        out("".join(f"   | {t}\n" for t in summary.tail))
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    say(f"{'done' if code == 0 else f'failed (exit status {code})'} in {duration(time.monotonic() - start)} "
        f"({usage.ru_utime + usage.ru_stime:.1f} s of CPU)")
    return code


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--label", required=True, help="the step's name, at the start of each line this script adds")
    parser.add_argument("--every", type=float, default=20.0, help="seconds of silence before a heartbeat line")
    parser.add_argument("--pip", action="store_true", help="condense pip's output into phase lines")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command, after --")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command given (put it after --)")

    def out(text: str) -> None:
        sys.stdout.write(text)
        sys.stdout.flush()

    return run(command, args.label, args.every, args.pip, out)


if __name__ == "__main__":
    sys.exit(main())
