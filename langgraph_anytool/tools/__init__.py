"""API execution layer and the agents' functions as LangChain tools."""
