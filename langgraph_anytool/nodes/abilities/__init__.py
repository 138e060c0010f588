"""Abilities beyond the paper's always-retrieve, tool-only loop (issue 9; each behind an `AnyToolConfig` switch):

- `router`: answer without tools — one "router" model call before retrieval decides tool / no tool (OPPO §3,
  tasks 1 and 5); a direct answer is checked by the in-loop judge like any other answer;
- `ask_user`: the solver's `ask_user(question)` function, which pauses the run with LangGraph's `interrupt`
  (OPPO task 3); batch runs answer "no user is available";
- `conversation`: a given conversation (the input's `messages`) whose turns before the request reach the
  router, the solver and the outline as context (OPPO task 6);
- `outline`: plan only — an ordered plan of pooled API calls with their purposes, none executed (OPPO task 8).
"""

from ...protocol import ASK_USER_NAME, NO_USER_ANSWER
from .ask_user import ask_user_schema, resume_text
from .conversation import conversation_messages, prior_turns, render_conversation, request_of, split_request
from .outline import make_outline, render_plan
from .router import DIRECT_MODE, make_route, make_route_after_init

__all__ = [
    "ASK_USER_NAME", "DIRECT_MODE", "NO_USER_ANSWER", "ask_user_schema", "conversation_messages", "make_outline",
    "make_route", "make_route_after_init", "prior_turns", "render_conversation", "render_plan", "request_of",
    "resume_text", "split_request",
]
