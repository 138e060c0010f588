"""`OfflinePolicyModel`: a deterministic, rule-based stand-in for a chat model — NOT an LLM.

It lets `anytool demo`, `anytool run --offline` and the tests run the whole AnyTool graph with no model
configured. It plays every role the graph asks a model to play (meta / category / tool agents, the solvable
check, the DFSDT solver, α-UMi's planner / caller / summarizer, the judge) with heuristics: the catalog's search
ranks categories, tools and APIs; regular expressions pull arguments (numbers, dates, countries, units, names)
out of the query; API results are turned into sentences by a template. Its answers are only as good as these
heuristics: configure a real model for real work.

Each call's role and inputs are read from the call's metadata (`anytool_role`, `anytool_inputs`, set by
`langgraph_anytool.models.llm.call_role`), progress from the structured messages (tool calls and their answers), never
from the wording of a prompt; so is the reply's format (`text_mode`: `Action:` / `Action Input:` text instead of
native tool calls; `umi_prompts`: the α-UMi planner's decision words). A call without role metadata is answered as a generic tool-calling assistant
(the last human message over the bound tools). Replies depend on nothing but the call (deterministic, resumable).

Modules: `text` (words, request parts), `mentions` (values in a text), `arguments` (argument extraction),
`responses` (API results in words), `trajectory` (progress from messages), `relevance` (API ↔ request fit and
the shared knobs), `retrieval` / `solving` / `judging` / `generic` (the roles' policies), `model` (the class).
Importing the graph does not import this package; the CLI, the demo and Studio import it when they use it.
"""

from .arguments import Extraction, extract, extract_arguments
from .call import ROLES, RoleCall
from .clauses import split_clauses
from .mentions import Mention, Mentions, mentions_of, topic_words
from .model import LABEL, MODEL_NAME, OfflinePolicyModel
from .responses import describe_response
from .text import content_words
from .trajectory import Step, parse_observation, steps_from_dicts, steps_from_messages

__all__ = [
    "LABEL", "MODEL_NAME", "ROLES", "Extraction", "Mention", "Mentions", "OfflinePolicyModel", "RoleCall", "Step",
    "content_words", "describe_response", "extract", "extract_arguments", "mentions_of", "parse_observation",
    "split_clauses", "steps_from_dicts", "steps_from_messages", "topic_words",
]
