"""The evaluator model of the OPPO tasks (the authors use GPT-4: `eval_scripts/eval_func.py` `_get_gpt_response`,
one user message, no system prompt). It is its own model (never the in-loop judge of the graph); every usable
verdict is cached on disk, keyed by the evaluator's identity and the full prompt, so a re-run costs no call.

Verdicts are read as the authors read them:
- task 3 (`_check_clarification`): "yes" anywhere in the lower-cased reply → yes;
- tasks 4-8 (`_check_params_with_gpt4`, `_check_direct_response`, `_check_response_w_tool`, `_check_answer`,
  `_check_plan`): the lower-cased reply starts with "yes" → yes; anything else is a no — a JSON verdict too.
Our JSON form is a named variant (`json_verdicts=True`, `--json-verdicts`): a reply that starts with a JSON object
`{"label": "pass"|"fail", ...}` (or a fenced one) → that label. An empty reply is unusable: scored as a failure and
not cached, so a later run asks again. The cache keeps the evaluator's reply and reads it again under the rule in
force, so a verdict cached under one rule is never reused under the other.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage

from ...models.llm import call_role
from ...sanitize.files import DataFileError, load_json_file
from ...sanitize.schema import FileModel, check_model
from ...sanitize.writes import atomic_write
from ...text import shorten
from ..identity import evaluator_identity as shared_identity
from ..identity import evaluator_key

ROLE = "evaluator"


@dataclass(frozen=True)
class Verdict:
    passed: bool
    reason: str
    cached: bool = False


def model_identity(model: Any) -> str:
    """A stable name for a model when no identity is given (the cache key's first part): `eval.identity`'s key."""
    return evaluator_key(model)


def evaluator_identity(spec: str, model: Any) -> str:
    """The cache key's evaluator part, readable in reports: the model string, the endpoint it talks to and the
    sampling settings that are set, as `eval.identity` reads them (credentials and query strings never included) —
    the same model name on another endpoint or at another temperature gives other verdicts, so it must not reuse
    these."""
    ident = shared_identity(model)
    parts = [spec, f"endpoint={ident['base_url'] or 'default'}"]
    parts += [f"{name}={json.dumps(value)}" for name, value in ident["sampling"].items()]
    return "|".join(parts)


_JSON = re.compile(r"\{.*\}", re.DOTALL)


def _json_verdict(text: str) -> Verdict | None:
    m = _JSON.search(text)
    if not m:
        return None
    try:
        data = json.loads(m.group(0))
    except ValueError:
        return None
    label = str(data.get("label", "")).strip().lower() if isinstance(data, dict) else ""
    if label not in ("pass", "fail"):
        return None
    return Verdict(passed=label == "pass", reason=str(data.get("reason", "")).strip())


def read_verdict(task: int, text: str, *, json_verdicts: bool = False) -> Verdict | None:
    """The verdict in an evaluator reply (None: empty, unusable). See the module docstring for the rules."""
    if not text or not text.strip():
        return None
    if json_verdicts and text.lstrip().startswith(("{", "```")):
        found = _json_verdict(text)
        if found is not None:
            return found
    low = text.lower()
    passed = "yes" in low if task == 3 else low.startswith("yes")
    return Verdict(passed=passed, reason=text.strip())


def parse_verdict(text: str) -> Verdict | None:
    """Our JSON form only: `{"label": "pass"|"fail", "reason": ...}` (the first JSON object), or None."""
    return _json_verdict(text or "")


MAX_CACHE_ENTRY_BYTES = 1 << 20  # one cached verdict (a reason of a few hundred characters)
log = logging.getLogger(__name__)


class _CachedReply(FileModel):
    reply: str


def _cached_reply(path: Path) -> str | None:
    """The evaluator's reply cached in `path`, or None when the entry is damaged, foreign or older (without the
    reply): it is then asked again and rewritten, with a warning naming the file and the field. Bounded, a regular
    file only, every field checked."""
    try:
        data = load_json_file(path, max_bytes=MAX_CACHE_ENTRY_BYTES, what="evaluator cache entry")
        return check_model(_CachedReply, data, source=str(path)).reply
    except DataFileError as exc:
        log.warning("%s; recomputed", exc)
        return None


class TaskEvaluator:
    """Asks the evaluator model one task prompt and reads its verdict (as the authors read it; with
    `json_verdicts`, our JSON form too), with an on-disk cache (`cache_dir`)."""

    def __init__(self, model: Any, *, cache_dir: str | Path | None = None, identity: str | None = None,
                 json_verdicts: bool = False) -> None:
        self.model = model
        self.json_verdicts = json_verdicts
        self.identity = identity or model_identity(model)
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self.calls = 0
        self.hits = 0

    def _path(self, key: str) -> Path | None:
        return self.cache_dir / f"{key}.json" if self.cache_dir is not None else None

    def _entry(self, parts: list[Any]) -> tuple[Path | None, str | None]:
        """The cache file of a request (its parts hashed) and the reply cached there, if any."""
        key = hashlib.sha256(json.dumps(parts).encode()).hexdigest()
        path = self._path(key)
        return path, (_cached_reply(path) if path is not None and path.exists() else None)

    def _ask(self, task: int, prompt: str) -> str:
        self.calls += 1
        ai, _ = call_role(self.model, ROLE, [HumanMessage(content=prompt)], None, inputs={"task": task})
        return ai.content if isinstance(ai.content, str) else json.dumps(ai.content)

    def _keep(self, path: Path | None, entry: dict[str, Any]) -> None:
        if path is None:
            return
        try:  # renamed over the old entry: a damaged one (even a FIFO or a symlink) is replaced, never opened
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(path, json.dumps({**entry, "evaluator": self.identity}).encode("utf-8"))
        except OSError as exc:
            log.warning("evaluator cache %s: the verdict is not kept (%s)", path, exc.strerror or exc)

    def judge(self, task: int, prompt: str, prompts_key: str = "") -> Verdict:
        """The verdict on `prompt` (built by `oppo_prompts.evaluator_prompt`). `prompts_key`: the fingerprint of the
        authors' prompt files when the prompt is theirs (`PromptBook.key`), part of the cache key (our prompts keep
        the key they always had)."""
        parts: list[Any] = [self.identity, task, prompt]
        if prompts_key:
            parts.insert(1, f"prompts:{prompts_key}")
        path, reply = self._entry(parts)
        found = read_verdict(task, reply, json_verdicts=self.json_verdicts) if reply is not None else None
        if found is not None:
            self.hits += 1
            return Verdict(found.passed, found.reason, cached=True)
        text = self._ask(task, prompt)
        verdict = read_verdict(task, text, json_verdicts=self.json_verdicts)
        if verdict is None:  # not cached: a retry may get a usable reply
            return Verdict(False, f"unusable evaluator reply: {shorten(text, 200)!r}")
        self._keep(path, {"reply": text, "passed": verdict.passed, "reason": verdict.reason, "task": task})
        return verdict

    def reply(self, task: int, purpose: str, prompt: str, prompts_key: str = "", draw: int = 0) -> str:
        """The evaluator's reply to `prompt`, as text (a request that is no verdict: task 7's tool extraction,
        `purpose` "extract_tools"), cached like a verdict; `draw` counts the asks of the same prompt the authors'
        code repeats (each a new sample there, so each its own entry here). An empty reply is not cached."""
        parts: list[Any] = [self.identity, task, purpose, draw, prompt]
        if prompts_key:
            parts.insert(1, f"prompts:{prompts_key}")
        path, cached = self._entry(parts)
        if cached is not None and cached.strip():
            self.hits += 1
            return cached
        text = self._ask(task, prompt)
        if text.strip():
            self._keep(path, {"reply": text, "task": task, "purpose": purpose})
        return text
