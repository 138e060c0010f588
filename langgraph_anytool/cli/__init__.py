"""The `anytool` command: `app` (argument parsing, subcommands), demo, eval/bench/index subcommands, progress, preflight, interaction.

The console script's target, `main`, is re-exported here (the `anytool` script installed by an older version keeps working)."""

from langgraph_anytool.cli.app import main

__all__ = ["main"]
