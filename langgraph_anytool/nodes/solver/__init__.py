"""The solver: DFSDT with backtracking over an explicit search tree, CoT (one chain), and α-UMi's
planner / caller / summarizer split. The graph is assembled in `graphs/solver.py`."""

from ...protocol import FINISH_NAME
from .finish import FinishCall, FinishError, finish_schema, parse_finish, resolve_failed
from .tree import FinishOutcome, SolverState, TreeNode, seed_messages, tree_to_dicts

__all__ = [
    "FINISH_NAME",
    "FinishCall",
    "FinishError",
    "FinishOutcome",
    "SolverState",
    "TreeNode",
    "finish_schema",
    "parse_finish",
    "resolve_failed",
    "seed_messages",
    "tree_to_dicts",
]
