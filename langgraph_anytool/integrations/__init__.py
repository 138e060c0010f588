"""LangChain faces: `create_anytool_tool`, `AnyToolRetriever`, `AnyToolSelectorMiddleware` and the pool selection behind it."""
