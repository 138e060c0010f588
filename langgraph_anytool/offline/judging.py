"""The judge's role (the in-loop judge, and the offline evaluator of `anytool eval passrate --offline`): Solved when
the answer addresses every request part, rests on a successful API call, and the APIs it came from serve each
part's purpose; else Unsolved (a JSON verdict `{"label", "reason"}`, the judge's output contract). A call whose
observation has an error status, or whose output reports a failure (`calls[].error`), is no success; an answer that
is an error message (a traceback, `ok: no`, a non-zero exit code) is never Solved; an answer from APIs whose purpose
does not match a part's (`purpose.purpose_fit`: a number spelled in words for "the SHA-256 hash of hello") is never
Solved, whatever values of the request it repeats."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from langchain_core.messages import AIMessage

from ..text import shorten
from .abilities import catalog_functions
from .call import RoleCall
from .clauses import split_clauses
from .mentions import loose, mentions_of, topic_words
from .purpose import GENERIC, PURPOSE_LEAD, PURPOSE_SHARE, purpose_fit
from .relevance import Heuristics
from .text import shares_topic

# The revision of these rules: part of the offline evaluator's cache key (`anytool eval passrate --offline`), so a
# verdict cached under older rules is not reused. Bump it when a rule changes a verdict.
JUDGE_RULES = "judge rules 3: purpose and names"
_GAVE_UP = re.compile(r"\bcould not answer\b|\bno suitable api\b|\bnext:\s*give up\b|\bnone of the available functions\b",
                      re.IGNORECASE)
# an answer that reports an error instead of a result: a traceback, an exception, a failed status field
_ERROR_ANSWER = re.compile(
    r"Traceback \(most recent call last\)|\b[A-Z]\w*(?:Error|Exception): |\bok: (?:no|false)\b|\bsuccess: (?:no|false)\b"
    r"|\bexit code: -?[1-9]|\btimed out: yes\b|^\W*error\b", re.IGNORECASE | re.MULTILINE)


def addresses(answer: str, clause: str) -> bool:
    """Whether an answer speaks to one request part: it repeats one of the part's values (numbers, dates, names,
    units; any when the part has none) and shares one of its topic words (any when it has none; a generic request
    verb such as "called" or "compute" is no topic: `purpose.GENERIC`)."""
    me = mentions_of(clause)
    values = [m.text for group in (me.dates, me.numbers, me.countries, me.names) for m in group]
    values += [str(m.value) for m in me.quoted]  # the quoted text, without its quotes
    low = answer.lower()
    # an identifier matches loosely: "SHA-256" is answered by "sha256", "UTF-8" by "utf8"
    said = {i.codes[0] for i in mentions_of(answer).identifiers} | {loose(w) for w in re.findall(r"\w+", answer)}
    value_ok = (not values and not me.identifiers) or any(v.lower() in low for v in values) or any(
        i.codes[0] in said for i in me.identifiers)
    words = topic_words(clause) - GENERIC
    return value_ok and (not words or shares_topic(words, answer))


def off_purpose(h: Heuristics, functions: list[str], clauses: list[str]) -> str:
    """Why the APIs behind `functions` (those the catalog knows) do not serve some request part's purpose; "" when
    they serve every part, or when none of them is known (then nothing can be said of their purpose)."""
    apis = catalog_functions(h, functions)
    if not apis:
        return ""
    index = h.purpose_index()
    for clause in clauses:
        fit = purpose_fit(index, apis.values(), clause)
        if fit is not None and not fit.serves:
            names = ", ".join(dict.fromkeys(f"{a.name} ({a.tool_name})" for a in apis.values()))
            lacking = f" (nothing about {', '.join(repr(t) for t in fit.missing)})" if fit.missing else ""
            if fit.rival and fit.share >= PURPOSE_SHARE and fit.share * PURPOSE_LEAD >= fit.best:
                rival = h.catalog.api(fit.rival)
                return (f"The answer comes from {names}, whose purpose does not match {clause!r}: the request names "
                        f"none of its name's words, but a word of {rival.name} ({rival.tool_name}), which serves it.")
            return (f"The answer comes from {names}, whose purpose does not match {clause!r}{lacking}: "
                    f"it covers {fit.share:.0%} of the request's purpose words, another API {fit.best:.0%}.")
    return ""


def judge_reply(h: Heuristics, call: RoleCall) -> AIMessage:
    """The verdict on `inputs["answer"]` for `inputs["query"]`. `inputs["calls"]` (`[{function, status}]`, the
    attempt's API calls; the in-loop judge) lets it require a successful call, and one whose API serves the
    request's purpose; `inputs["apis"]` (the functions the answer rests on; the offline evaluator) lets it check
    their purpose only. Without either the answer alone is judged."""
    answer = call.text("answer")
    calls = call.records("calls")
    ok = [str(c.get("function")) for c in calls if _is_ok(c)]
    clauses = split_clauses(call.query)
    missed = [c for c in clauses if not addresses(answer, c)]
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
    elif (behind := list(dict.fromkeys(ok + call.strings("apis")))) and (why := off_purpose(h, behind, clauses)):
        verdict = {"label": "Unsolved", "reason": why}
    else:
        source = f" from {len(ok)} successful API call(s): {', '.join(ok)}" if ok else ""
        verdict = {"label": "Solved", "reason": f"Every part of the query is answered{source}."}
    return AIMessage(content=json.dumps(verdict, ensure_ascii=False))


def _is_ok(record: Mapping[str, object]) -> bool:
    """A call whose observation has an ok status and whose output reports no failure of its own (`error`)."""
    return str(record.get("status", "")).lower() in ("ok", "success") and not record.get("error")
