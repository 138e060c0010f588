"""dyabel/AnyTool's prompts (`AnyToolConfig.paper(prompts_from=...)`): which constant feeds which of our prompts.

Each slot sits where the authors' code puts it (cited beside it), and its placeholders are filled with the values
their code uses (`nodes/` fills them; docs/configuration.md has the table):
- the retriever agents: system prompts from `anytool/prompt_template.py`, the first user messages, the
  re-activation messages and the reply to a turn without a function call from `scripts/main.py`;
- the solvability check (`anytool/verifier.py check_task_solvable_by_function`): its system prompt, user message and
  the `Finish` function it offers (`solvable_finish_function`);
- the solver (`toolbench/inference/Algorithms/DFS.py`, AnyTool's default `use_original_prompt=False`): the system
  prompt, the user message and the diversity prompt from `toolbench/inference/Prompts/`, the task description from
  `anytool/rapidapi.py` (`rapidapi_wrapper.__init__`; the tool list after it is built as there), and the note after
  `max_query_count` model queries (`DFS_tree_search.DFS`); the functions it offers: `Finish` and each pooled API's
  description text from `anytool/rapidapi.py` (`rapidapi_wrapper.__init__`, `api_json_to_openai_json`);
- the judge (`anytool/verifier.py check_solved_toolbench` → `anytool/check_solved.py`): the ToolEval evaluator
  `tooleval_gpt-3.5-turbo_default` of the checkout's own `toolbench/tooleval` (template and function schemas).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..sanitize.files import DataFileError, loads_json
from .book import BookSpec, PromptBook, Slot, load_book, ours_provenance
from .source import Checkout, PromptSourceError
from .tooleval import CHECK_SLOTS, REASON_LITERAL

REPO = "dyabel/AnyTool"
TEMPLATES = "anytool/prompt_template.py"
MAIN = "scripts/main.py"
VERIFIER = "anytool/verifier.py"
REACT = "toolbench/inference/Prompts/ReAct_prompts.py"
TREE = "toolbench/inference/Prompts/Tree_search_prompts.py"
RAPIDAPI = "anytool/rapidapi.py"
DFS = "toolbench/inference/Algorithms/DFS.py"
DATABASE = "anytool/api_database_function.py"

# main.py's `len(global_api_list)` (the pool after the addition) and `max_api_number` (`--max_api_number`)
POOL_SIZE = (("len(global_api_list)", "pool_size"), ("max_api_number", "max_pool"))
POOL_COUNT = (*POOL_SIZE, ("len(api_list)", "count"))

SPEC = BookSpec(
    repo=REPO,
    marker=TEMPLATES,
    slots=(
        # the retriever agents (main.py Main_Search_Agent / Category_Agent / Tool_Agent)
        ("meta_system", Slot(TEMPLATES, "META_AGENT_PROMPT", "replace", (("categories", "categories"),),
                             "meta-agent system message")),
        ("meta_first", Slot(MAIN, "Main_Search_Agent.__init__:user[0]", "literal", (("query", "query"),),
                            "meta-agent first user message")),
        ("category_system", Slot(TEMPLATES, "CATEGORY_AGENT_PROMPT", "replace",
                                 (("category", "category"), ("leaf_tool_number", "max_tools")),
                                 "category-agent system message")),
        ("category_first", Slot(MAIN, "Category_Agent.category_search:user[0]", "literal",
                                (("self.query", "query"), ("self.tools", "tools")),
                                "category-agent first user message")),
        ("tool_system", Slot(TEMPLATES, "TOOL_AGENT_PROMPT", "replace", (("category", "category"), ("tools", "tools")),
                             "tool-agent system message")),
        ("tool_first", Slot(MAIN, "Tool_Agent.__init__:user[0]", "literal",
                            (("self.query", "query"), ("tools_info", "tools_info")), "tool-agent first user message")),
        ("meta_reactivate", Slot(TEMPLATES, "REFIND_CATEGORY_PROMPT", "replace", (("failed_reason", "reason"),),
                                 "meta-agent re-activation (user message)")),
        ("category_reactivate", Slot(TEMPLATES, "REFIND_TOOL_PROMPT", "replace", (("failed_reason", "reason"),),
                                     "category-agent re-activation (user message)")),
        ("tool_reactivate", Slot(TEMPLATES, "REFIND_API_PROMPT", "replace", (("failed_reason", "reason"),),
                                 "tool-agent re-activation (user message)")),
        ("flat_system", Slot(TEMPLATES, "FIND_API_NO_HIER_PROMPT", "replace", (("categories", "categories"),),
                             "flat agent (retriever=\"flat\", the -hierarchy ablation) system message")),
        ("flat_reactivate", Slot(TEMPLATES, "REFIND_API_NO_HIER_PROMPT", "replace", (("failed_reason", "reason"),),
                                 "flat agent re-activation (user message)")),
        ("agent_nudge", Slot(MAIN, "Main_Search_Agent.assign_main:user[0]", "literal", (),
                             "reply to an agent turn without a function call (user message)")),
        # the agents' function results (main.py, the f-strings the functions return; the multi-threaded branch,
        # `multi_thread = True`) and the round-end status (`check_if_request_solvable`: `status = ...`)
        ("agent_category_assigned", Slot(MAIN, "Main_Search_Agent.create_agent_category_level:return[3]", "literal",
                                         (("category", "category"),), "create_agent_category_level result")),
        ("agent_tools_assigned", Slot(MAIN, "Category_Agent.create_agent_tool_level:return[2]", "literal",
                                      (("tools", "tools"),), "create_agent_tool_level result")),
        ("agent_add_over_cap", Slot(MAIN, "Tool_Agent.add_apis_into_api_pool:return[0]", "literal", POOL_COUNT,
                                    "add_apis_into_api_pool result: the addition would pass the pool's cap")),
        ("agent_add_solvable", Slot(MAIN, "Tool_Agent.add_apis_into_api_pool:return[3]", "literal", POOL_SIZE,
                                    "add_apis_into_api_pool result: the check found the pool solvable")),
        ("agent_add_unsolvable", Slot(MAIN, "Tool_Agent.add_apis_into_api_pool:return[4]", "literal", POOL_SIZE,
                                      "add_apis_into_api_pool result: the check found the pool unsolvable")),
        ("agent_add_unchecked", Slot(MAIN, "Tool_Agent.add_apis_into_api_pool:return[5]", "literal", POOL_SIZE,
                                     "add_apis_into_api_pool result: no check made (the search is stopped)")),
        ("agent_check_stopped", Slot(MAIN, "check_if_request_solvable:return[0]", "literal", (),
                                     "check_if_request_solvable result after the search stopped")),
        ("agent_check_solvable", Slot(MAIN, "check_if_request_solvable:return[1]", "literal", POOL_SIZE,
                                      "check_if_request_solvable result: solvable")),
        ("agent_check_unsolvable", Slot(MAIN, "check_if_request_solvable:return[2]", "literal",
                                        (*POOL_SIZE, ("reason", "reason")),
                                        "check_if_request_solvable result: unsolvable")),
        ("agent_finished", Slot(MAIN, "Tool_Agent.tool_search:tool[0]", "literal", (), "Finish result")),
        ("status_unsolvable", Slot(MAIN, "check_if_request_solvable:status[1]", "literal", (("reason", "reason"),),
                                   "the round-end check's status, read by the next level up as its failure reason")),
        # the solvability check (verifier.py check_task_solvable_by_function)
        ("solvable_system", Slot(TEMPLATES, "CHECK_SOLVABLE_BY_FUNCTION_PROMPT", "replace", (),
                                 "solvability check system message")),
        ("solvable_user", Slot(VERIFIER, "check_task_solvable_by_function:user[0]", "literal",
                               (("query", "query"), ("functions", "apis")), "solvability check user message")),
        # the solver (DFS.py DFS_tree_search.start / DFS, rapidapi.py rapidapi_wrapper.__init__)
        ("solver_system", Slot(REACT, "FORMAT_INSTRUCTIONS_SYSTEM_FUNCTION_ADAPTED", "replace",
                               (("task_description", "task_description"),), "solver system message")),
        ("solver_task", Slot(RAPIDAPI, "rapidapi_wrapper.__init__:self.task_description", "literal", (),
                             "solver task description (before the tool list)")),
        ("solver_user", Slot(REACT, "FORMAT_INSTRUCTIONS_USER_FUNCTION", "replace",
                             (("input_description", "query"),), "solver first user message")),
        ("solver_diversity", Slot(TREE, "DIVERSITY_PROMPT", "replace", (("previous_candidate", "actions"),),
                                  "solver diversity prompt (user message)")),
        ("solver_query_limit", Slot(DFS, "DFS_tree_search.DFS:user[1]", "literal", (),
                                    "solver note after max_solver_queries (user message)")),
        # each pooled API's function description (rapidapi.py rapidapi_wrapper.api_json_to_openai_json: the first
        # assignment to `templete["description"]`, then, for an API with a description, the second: it + the API's)
        ("solver_function", Slot(RAPIDAPI, "rapidapi_wrapper.api_json_to_openai_json:templete['description'][0]",
                                 "literal", (("standard_tool_name", "tool"),), "solver function description")),
        ("solver_function_described", Slot(
            RAPIDAPI, "rapidapi_wrapper.api_json_to_openai_json:templete['description'][1]", "literal",
            (("templete['description']", "head"), ("tuncated_description", "description")),
            "solver function description, the API's own description added")),
        # the judge (check_solved.py compute_pass_rate → ToolEval's check_is_solved on the clone's own tooleval,
        # evaluator tooleval_gpt-3.5-turbo_default: check_solved.py parse_args default)
        *CHECK_SLOTS,
    ),
    literals=(("solvable_finish", VERIFIER, "solvable_finish_function"), REASON_LITERAL,
              # the solver's Finish (rapidapi.py rapidapi_wrapper.__init__, lines 107-173: the second assignment to
              # `finish_func`, the `else` of `if args.use_original_prompt`, AnyTool's default False)
              ("solver_finish", RAPIDAPI, "rapidapi_wrapper.__init__:finish_func[1]"),
              # the functions main.py offers its agents (`self.functions`), sent with call_gpt's `functions=`
              # (nodes/agents/wire.py): main.py's own Finish (line 885, which shadows the star-imported one) and
              # agent creators (855, 867); api_database_function.py's browsing and pool functions (204-264)
              ("agent_finish", MAIN, "finish_function"),
              ("agent_create_agent_category_level", MAIN, "create_agent_category_level_function"),
              ("agent_create_agent_tool_level", MAIN, "create_agent_tool_level_function"),
              *((f"agent_{name}", DATABASE, f"{name}_function") for name in (
                  "get_tools_in_category", "get_tools_descriptions", "check_if_request_solvable",
                  "add_apis_into_api_pool"))),
)


# preprocess/extract_tool_database.py's output in the clone's root, which anytool/api_database_function.py reads
# (`database = json.load(open('tool_data.json'))`): {category: {tool name: {"api_list_names": [...]}}}, in the order
# os.walk met the files on the machine that made it; `get_tools_in_category` lists a category's tools in it
TOOL_DATA = "tool_data.json"


def tool_data_order(root: str | Path) -> Mapping[str, tuple[str, ...]] | None:
    """{category: its tool names in the order of the clone's `tool_data.json`}, or None when the clone has none
    (it is made by the authors' preprocessing; read bounded, as every file of a checkout, and cached while the
    file is unchanged). Refused in one line when it is not such a JSON object."""
    path = Path(root).expanduser() / TOOL_DATA
    try:
        st = path.stat()
    except OSError:
        return None
    return _tool_data(str(Path(root).expanduser()), st.st_mtime_ns, st.st_size)


@functools.lru_cache(maxsize=4)
def _tool_data(root: str, _mtime: int, _size: int) -> Mapping[str, tuple[str, ...]]:
    checkout = Checkout.open(root, REPO, TEMPLATES)
    where = str(checkout.root / TOOL_DATA)
    try:
        data = loads_json(checkout.text(TOOL_DATA), source=where)
    except DataFileError as exc:
        raise PromptSourceError(str(exc)) from None
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise PromptSourceError(f"{where}: not an object of categories, each an object of tools")
    return MappingProxyType({str(c): tuple(str(t) for t in tools) for c, tools in data.items()})


def anytool_book(root: str | Path) -> PromptBook:
    """The AnyTool prompts of the checkout at `root` (refused in one line when something is missing or differs)."""
    return load_book(SPEC, root)


def prompts_record(prompts_from: str | None) -> dict[str, Any]:
    """Which prompts a run with `AnyToolConfig.prompts_from` uses: the checkout's files and their sha256, or ours."""
    return anytool_book(prompts_from).provenance() if prompts_from else ours_provenance()
