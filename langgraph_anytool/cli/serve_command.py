"""`anytool serve MODEL`: one of the packaged small models (integrations/local_models.py) served by llama.cpp's
`llama-server` on loopback, with the flags the docs use (`--jinja`, the window, `--parallel`, the machine's
threads, the model's name as alias); prints the `OPENAI_BASE_URL` to use and runs until Ctrl-C, which stops it.

The binary is found as `find_llama_server` finds it (`$ANYTOOL_LLAMA_SERVER`, the PATH, the build of `make
llama-server`); without one, or without the model's package, one line says what to run.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, TextIO

DEFAULT_PORT = 8080
DEFAULT_CTX = 8192
MODELS = ("smollm2", "gemma3-270m")  # = local_models.LOCAL_MODELS (not imported to build the parser)
BUILD_HELP = ("no llama-server binary: build it with `make llama-server` (or `bash .ci/llama_server.sh`), which "
              "prints its path, then set ANYTOOL_LLAMA_SERVER to that path or put llama-server on the PATH")


class UsageError(ValueError):
    """A mistake the user can mend (no binary, no model package, a bad number): one `anytool: error:` line, exit 2."""


def machine_threads() -> int:
    """The CPU cores this process may run on (its affinity where the OS says, else the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def configure(p: argparse.ArgumentParser) -> None:
    p.epilog = ("exit status: 0 when stopped by Ctrl-C (or SIGTERM), 1 when the server ends by itself or does not "
                "start, 2 on a usage error (no llama-server binary, model package not installed)")
    p.add_argument("model", choices=MODELS, help="the packaged model to serve (its name is the server's alias)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"loopback port (default {DEFAULT_PORT}; 0: a free one)")
    p.add_argument("--ctx", type=int, default=DEFAULT_CTX, metavar="N",
                   help=f"the server's context window in tokens, -c (default {DEFAULT_CTX})")
    p.add_argument("--parallel", type=int, default=1, metavar="N",
                   help="slots: requests served at once, sharing the window (default 1: the whole window each)")
    p.add_argument("--threads", type=int, default=None, metavar="N",
                   help="CPU threads (default: the cores this process may use)")
    p.add_argument("--log", metavar="FILE", default=None,
                   help="append the server's output to FILE (default: a temporary file, shown when it fails)")


def _base_url_lines(alias: str, base_url: str) -> list[str]:
    return [f"  export OPENAI_BASE_URL={base_url} OPENAI_API_KEY=unused",
            f"  anytool run \"Convert 26.2 miles to kilometers.\" --model openai:{alias}"]


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Start the server, print how to use it, wait until Ctrl-C (or SIGTERM) or the server's own end."""
    from ..integrations.local_models import LOCAL_MODELS, LlamaServer, LocalModelError, find_llama_server, gguf_path

    out = out or sys.stdout
    for name, value, low in (("--ctx", args.ctx, 256), ("--parallel", args.parallel, 1), ("--port", args.port, 0)):
        if value < low or (name == "--port" and value > 65535):
            raise UsageError(f"{name} {value}: out of range")
    binary = find_llama_server()
    if binary is None:
        named = os.environ.get("ANYTOOL_LLAMA_SERVER", "").strip()
        raise UsageError(f"ANYTOOL_LLAMA_SERVER={named}: no such file; {BUILD_HELP}" if named else BUILD_HELP)
    try:
        model = gguf_path(args.model)
    except LocalModelError as exc:
        raise UsageError(str(exc)) from None
    threads = args.threads or machine_threads()
    temporary = args.log is None
    log = Path(args.log) if args.log else Path(tempfile.mkstemp(prefix=f"llama-server-{args.model}-", suffix=".log")[1])
    server = LlamaServer(model, ctx=args.ctx, alias=args.model, binary=binary, log_path=log, parallel=args.parallel,
                         threads=threads, port=args.port)
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        try:
            server.start()
        except LocalModelError as exc:
            print(f"anytool: error: {exc}", file=sys.stderr)
            return 1
        title = LOCAL_MODELS[args.model].title
        lines = [f"serving {title} as {args.model!r} at {server.base_url} (window {args.ctx} tokens, "
                 f"{args.parallel} slot{'s' if args.parallel > 1 else ''}, {threads} thread"
                 f"{'s' if threads > 1 else ''}; {binary})", "in another terminal:",
                 *_base_url_lines(args.model, server.base_url), "Ctrl-C stops the server."]
        out.write("\n".join(lines) + "\n")
        out.flush()
        code = server.wait()
        print(f"anytool: error: llama-server ended by itself (exit {code}):\n{server.log_tail()}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        started = time.monotonic()
        server.stop()
        out.write(f"\nstopped the server ({time.monotonic() - started:.1f} s)\n")
        return 0
    finally:
        server.stop()
        signal.signal(signal.SIGTERM, previous)
        if temporary:
            log.unlink(missing_ok=True)


def _raise_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt
