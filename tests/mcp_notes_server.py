"""A stdio MCP server for tests (FastMCP): a notes store that logs every call to $NOTES_LOG."""

from __future__ import annotations

import json
import os
from pathlib import Path

from mcp.server.fastmcp import FastMCP

server = FastMCP("notes", log_level="WARNING")


def _log(tool: str, **args: object) -> None:
    with Path(os.environ["NOTES_LOG"]).open("a", encoding="utf-8") as fh:
        fh.write(json.dumps({"tool": tool, **args}) + "\n")


@server.tool()
def save_note(title: str, body: str) -> str:
    """Save a note under a title; returns the note's id."""
    _log("save_note", title=title, body=body)
    return f"note-{len(title)}-{len(body)}"


@server.tool()
def count_words(text: str) -> int:
    """Count the words of a text."""
    _log("count_words", text=text)
    return len(text.split())


@server.tool()
def fail_always(reason: str) -> str:
    """A tool that always fails (to test error observations)."""
    raise RuntimeError(f"refused: {reason}")


if __name__ == "__main__":
    server.run("stdio")
