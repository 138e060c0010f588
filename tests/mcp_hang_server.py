"""A stdio MCP server for tests that hangs at one step of the session (a hand-written JSON-RPC loop).

    python tests/mcp_hang_server.py STEP PIDFILE [--ignore-term]

STEP: `start` (never reads its input), `initialize` (reads, never answers the handshake), `list` (answers the
handshake, never the tools listing), `call` (lists one tool, `echo`, and never answers a call) or `none` (answers
everything). The server writes its process id to PIDFILE first; with --ignore-term it also ignores SIGTERM, so only
SIGKILL ends it.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path

ECHO = {"name": "echo", "description": "Echo a text back.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}


def _reply(message_id: object, result: dict[str, object]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message_id, "result": result}) + "\n")
    sys.stdout.flush()


def main(step: str, pidfile: str, ignore_term: bool) -> None:
    Path(pidfile).write_text(str(os.getpid()))
    if ignore_term:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if step == "start":
        while True:
            time.sleep(3600)
    for line in sys.stdin:
        message = json.loads(line)
        method, message_id = message.get("method"), message.get("id")
        if message_id is None:  # a notification
            continue
        if method == "initialize" and step != "initialize":
            _reply(message_id, {"protocolVersion": message["params"]["protocolVersion"],
                                "capabilities": {"tools": {}}, "serverInfo": {"name": "hang", "version": "1"}})
        elif method == "tools/list" and step not in ("initialize", "list"):
            _reply(message_id, {"tools": [ECHO]})
        elif method == "tools/call" and step == "none":
            text = message["params"]["arguments"]["text"]
            _reply(message_id, {"content": [{"type": "text", "text": text}], "isError": False})
    while ignore_term:  # stdin closed: a server that ignores that too
        time.sleep(3600)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], "--ignore-term" in sys.argv[3:])
