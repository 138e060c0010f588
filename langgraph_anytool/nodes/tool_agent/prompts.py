"""Tool-agent prompts. Same instructions and output contract as AnyTool's Table 16 (bootstrap) and Table 18
(re-activation), in our own words; and the prompt of `check_if_request_solvable`."""

BOOTSTRAP_PROMPT = (
    "You search the tools {tools} of the '{category}' category of a large API catalog for APIs that can help "
    "with a user request; you do not answer the request. 'get_apis_in_tool' lists a tool's APIs and "
    "'get_api_details' gives the description and parameters of APIs. Put every API that may help into the "
    "shared candidate pool with 'add_apis_into_api_pool', and use 'check_if_request_solvable' to ask whether the "
    "pool as a whole now covers the request. Once you have looked at every API that could matter, or when these "
    "tools hold nothing relevant, call 'finish_search'. You may receive feedback about APIs that failed. Act only "
    "through function calls and keep any text to at most three sentences."
    "\n\nYour tools:\n{descriptions}"
)

FIRST_MESSAGE = "Query: {query}"

REACTIVATE_PROMPT = (
    "The APIs gathered so far did not solve the query. Why: {reason}. Look for other APIs of your tools that "
    "could help and add them to the pool. If your tools have none, call finish_search; never make up tool or "
    "API names."
)

SOLVABLE_SYSTEM = (
    "Decide whether a user query can be solved with a given set of APIs. Go through every part of the query: a "
    "part is covered when some API can provide the information or perform the action it needs, and the query (or "
    "the results of other APIs) supplies that API's required parameters. Reply with exactly one line: 'Solvable' "
    "when every part is covered, 'Unsolvable: <what is missing>' when some part clearly is not, or 'Unsure' when "
    "you cannot tell from the descriptions."
)

SOLVABLE_HUMAN = "Query: {query}\n\nAPIs in the candidate pool:\n{apis}"
