"""In-band messages every retriever agent may receive from its step loop."""


def nudge(signatures: str) -> str:
    """The reply to a turn that called no function."""
    return (f"No function was called. Each step must call one of: {signatures}. "
            "Call finish_search() once your search is complete.")


def after_end(end_reason: str) -> str:
    """The reply to a call made after a call that ended the agent's search in the same turn."""
    return f"Not executed: an earlier call in this turn already ended this agent's search ({end_reason})."


def malformed(name: object, error: object, expected: str) -> str:
    """The reply to a call whose arguments are not valid JSON."""
    return f"Error: the arguments of {name!r} are not valid JSON ({error or ''}). Expected {expected}."
