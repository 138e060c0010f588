"""Children that a test interrupts with SIGINT (Ctrl-C) start with SIGINT's default action, as in a terminal.

A shell starts background jobs with SIGINT ignored, and a child inherits that: Python then installs no
KeyboardInterrupt handler and the test's Ctrl-C would do nothing. Pass `preexec_fn=default_sigint` to `Popen`."""

from __future__ import annotations

import signal


def default_sigint() -> None:
    """In the child, before it runs: SIGINT back to its default action."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
