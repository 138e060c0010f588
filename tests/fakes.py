"""Test helpers: the package's scripted chat model (kept public in `langgraph_anytool.models.testing`)."""

from langgraph_anytool.models.testing import Responder, ScriptedChatModel, ai, call, system_text

__all__ = ["Responder", "ScriptedChatModel", "ai", "call", "system_text"]
