"""The retriever agents' building blocks: records, the call context handlers see, roles, and the step nodes.

Kept light on purpose: importing it does not import the roles (`roles.py` imports every level's package)."""

from .context import CallContext, FunctionResult, Handler, Role, finish_search, role_inputs, to_json
from .records import NODE_FOR_LEVEL, copy_record, new_agent_record

__all__ = [
    "NODE_FOR_LEVEL", "CallContext", "FunctionResult", "Handler", "Role", "copy_record", "finish_search",
    "new_agent_record", "role_inputs", "to_json",
]
