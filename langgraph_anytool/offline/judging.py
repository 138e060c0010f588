"""The in-loop judge's role: Solved when the answer addresses every request part and rests on a successful API
call, else Unsolved (a JSON verdict `{"label", "reason"}`, the judge's output contract). A call whose observation
has an error status, or whose output reports a failure (`calls[].error`), is no success; an answer that is an error
message (a traceback, `ok: no`, a non-zero exit code) is never Solved."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from langchain_core.messages import AIMessage

from ..text import shorten
from .call import RoleCall
from .mentions import mentions_of, topic_words
from .text import shares_topic, split_clauses

_GAVE_UP = re.compile(r"\bcould not answer\b|\bno suitable api\b|\bnext:\s*give up\b|\bnone of the available functions\b",
                      re.IGNORECASE)
# an answer that reports an error instead of a result: a traceback, an exception, a failed status field
_ERROR_ANSWER = re.compile(
    r"Traceback \(most recent call last\)|\b[A-Z]\w*(?:Error|Exception): |\bok: (?:no|false)\b|\bsuccess: (?:no|false)\b"
    r"|\bexit code: -?[1-9]|\btimed out: yes\b|^\W*error\b", re.IGNORECASE | re.MULTILINE)


def addresses(answer: str, clause: str) -> bool:
    """Whether an answer speaks to one request part: it repeats one of the part's values (numbers, dates, names,
    units; any when the part has none) and shares one of its topic words (any when it has none)."""
    me = mentions_of(clause)
    values = [m.text for group in (me.dates, me.numbers, me.quoted, me.countries, me.names) for m in group]
    low = answer.lower()
    value_ok = not values or any(v.lower() in low for v in values)
    words = topic_words(clause)
    return value_ok and (not words or shares_topic(words, answer))


def judge_reply(call: RoleCall) -> AIMessage:
    """The verdict on `inputs["answer"]` for `inputs["query"]`. `inputs["calls"]` (`[{function, status}]`, the
    attempt's API calls) lets it require a successful call; without it the answer alone is judged."""
    answer = call.text("answer")
    calls = call.records("calls")
    ok = [str(c.get("function")) for c in calls if _is_ok(c)]
    missed = [c for c in split_clauses(call.query) if not addresses(answer, c)]
    if not answer:
        verdict = {"label": "Unsolved", "reason": "The final answer is empty."}
    elif "calls" in call.inputs and not ok:
        failed = "; ".join(f"{c.get('function')}: {c.get('error')}" for c in calls if c.get("error"))
        verdict = {"label": "Unsolved", "reason": "No API call succeeded, so the answer rests on no observation"
                   + (f" ({shorten(failed, 300)})." if failed else ".")}
    elif (error := _ERROR_ANSWER.search(answer)) is not None:
        verdict = {"label": "Unsolved", "reason": f"The answer is an error message ({error.group(0).strip()!r}), "
                                                  "not a result."}
    elif _GAVE_UP.search(answer):
        verdict = {"label": "Unsolved", "reason": "The answer says part of the query could not be answered."}
    elif missed:
        verdict = {"label": "Unsolved",
                   "reason": "The answer does not address " + "; ".join(repr(c) for c in missed) + "."}
    else:
        source = f" from {len(ok)} successful API call(s): {', '.join(ok)}" if ok else ""
        verdict = {"label": "Solved", "reason": f"Every part of the query is answered{source}."}
    return AIMessage(content=json.dumps(verdict, ensure_ascii=False))


def _is_ok(record: Mapping[str, object]) -> bool:
    """A call whose observation has an ok status and whose output reports no failure of its own (`error`)."""
    return str(record.get("status", "")).lower() in ("ok", "success") and not record.get("error")
