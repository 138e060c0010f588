"""The authors' prompts, read from the user's own checkout of their repository (`prompts_from`).

Our prompts are our own words and the package ships no other; a researcher who wants a paper's number points
`prompts_from` at a clone of the authors' repository, and its prompt constants are read from there with `ast`
(never imported or executed), mapped onto our prompts, and recorded (file sha256s) in every result and evaluator
cache key. One module per repository: `anytool` (dyabel/AnyTool), `tooleval` (ToolEval in StableToolBench),
`oppo` (OPPO-Mente-Lab/agent_eval), `umi` (X-PLUG/Multi-LLM-Agent).
"""

from .anytool import anytool_book, prompts_record
from .book import BookSpec, PromptBook, Slot, load_book, ours_provenance
from .oppo import oppo_book
from .source import PromptSourceError, Template
from .tooleval import tooleval_book
from .umi import umi_book, umi_run_book

__all__ = ["BookSpec", "PromptBook", "PromptSourceError", "Slot", "Template", "anytool_book", "load_book",
           "oppo_book", "ours_provenance", "prompts_record", "tooleval_book", "umi_book", "umi_run_book"]
