"""AnyTool's exclusion-word rule: an answer holding an apology or a refusal is Unsolved without asking a judge.

The authors' loop (dyabel/AnyTool `scripts/main.py`, the main search loop after `solve_given_api_main`) marks a
result Unsolved when `not solved or any(word in final_answer for word in exclusion_words)`, before
`check_solved_toolbench` is called; the word list is `exclusion_words` in `anytool/api_database_function.py`.
The test is a plain substring test on the final answer as written: case-sensitive ("Sorry" does not match
"sorry"), no word boundaries ("unable" matches "unableness"), the apostrophe as typed (ASCII `'`).

The rule belongs to AnyTool's protocol (AnyTool §3, Eq. 2); ToolEval's SoPR and ToolLLM's Eq. 1 do not apply it.
"""

from __future__ import annotations

EXCLUSION_WORDS: tuple[str, ...] = ("sorry", "apologize", "apology", "unfortunately", "couldn't", "could not",
                                    "can't", "cannot", "unable", "regret", "not successfully")


def exclusion_word(answer: str) -> str | None:
    """The first of `EXCLUSION_WORDS` (in the list's order) that `answer` contains, case-sensitively; else None."""
    for word in EXCLUSION_WORDS:
        if word in answer:
            return word
    return None
