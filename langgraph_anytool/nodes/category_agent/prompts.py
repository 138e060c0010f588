"""Category-agent prompts. Same instructions and output contract as AnyTool's Table 15 (bootstrap) and Table 19
(re-activation), in our own words."""

BOOTSTRAP_PROMPT = (
    "You search one category of a large API catalog, '{category}', for tools that can help with a user request; "
    "you do not answer the request. 'get_tools_in_category' lists the category's tools and "
    "'get_tools_descriptions' explains what given tools do. Hand the relevant tools to tool agents with "
    "'create_agent_tool_level': group similar tools in one agent, at most {max_tools} tools per agent, and create "
    "as many agents as needed so that every tool that might help is assigned. When that is done, or when nothing "
    "in this category fits the request, call 'finish_search'. Before each step, state in at most three sentences "
    "what you know and what you do next, and act only through function calls."
)

FIRST_MESSAGE = "Query: {query}\nYour category: {category} ({n_tools} tools)."

REACTIVATE_PROMPT = (
    "The APIs gathered so far did not solve the query. Why: {reason}. Assign tools of your category that no agent "
    "has yet, if any could help; otherwise call finish_search."
)
