"""Re-activation prompts (AnyTool Tables 18-20), one per agent level."""

TOOL_REACTIVATE = (
    "The current APIs have failed to solve the query, resulting in: {reason}. You need to analyze this result and "
    "seek additional APIs. It's possible that the tools lack the relevant APIs. In such cases, you should call the "
    "finish_search function. Remember not to invent tool or API names."
)
CATEGORY_REACTIVATE = (
    "The current APIs have failed to solve the query, and the reason is: {reason}. Please consider assigning more "
    "unexplored tools to the agents."
)
META_REACTIVATE = (
    "The current APIs have failed to solve the query, and the reason is: {reason}. Please consider assigning more "
    "unexplored categories to the agents."
)


def reactivation_prompt(level: str, reason: str) -> str:
    """The re-activation message for an agent of `level`."""
    template = {"tool": TOOL_REACTIVATE, "category": CATEGORY_REACTIVATE}.get(level, META_REACTIVATE)
    return template.format(reason=reason)
