"""`anytool index build`: build (or refresh) every search index of a catalog ahead of time, with progress.
`anytool index train`: fine-tune the dense encoder on the catalog's queries (`training.train_encoder`).

A server or notebook started afterwards on the same catalog, embedding model and index directory loads the
indexes from disk instead of building them (see `search.CatalogSearcher`).
"""

from __future__ import annotations

import argparse
import json
import time
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from ..catalog.catalog import Catalog


_TRAIN_FLAGS = {"epochs": "epochs", "seed": "seed", "batch_size": "batch-size", "learning_rate": "lr",
                "threads": "threads", "sentence_pairs": "sentence-pairs", "tool_negatives": "tool-negatives",
                "category_negatives": "category-negatives", "extra_pairs": "extra-pairs",
                "pseudo_pairs": "pseudo-pairs", "scale": "scale", "tool_pairs": "tool-pairs",
                "negative_source": "negative-source", "negative_skip": "negative-skip",
                "hard_negatives_per_pair": "negatives-per-pair"}


def configure(p: argparse.ArgumentParser) -> None:
    """Arguments of `anytool index build` (the catalog and search options are added by the caller)."""
    p.add_argument("--json", action="store_true", help="print the build statistics as JSON")


def configure_train(p: argparse.ArgumentParser) -> None:
    """Arguments of `anytool index train` (the catalog option is added by the caller)."""
    from ..eval import train_defaults as d  # not eval.training: `anytool --help` imports no pydantic

    p.add_argument("--queries", nargs="+", required=True, metavar="FILE",
                   help="query files with relevant APIs (any format `anytool eval retrieval` reads)")
    p.add_argument("--out", required=True, metavar="MODEL_DIR",
                   help="folder for the trained model (use it with --embeddings trained:MODEL_DIR)")
    p.add_argument("--epochs", type=int, default=d.EPOCHS, metavar="N", help=f"passes over the pairs (default {d.EPOCHS})")
    p.add_argument("--seed", type=int, default=d.SEED, metavar="S", help=f"random seed (default {d.SEED})")
    p.add_argument("--batch-size", type=int, default=d.BATCH_SIZE, metavar="B",
                   help=f"pairs per batch; the others in a batch are its negatives (default {d.BATCH_SIZE})")
    p.add_argument("--lr", type=float, default=d.LEARNING_RATE, metavar="LR",
                   help=f"peak learning rate (default {d.LEARNING_RATE})")
    p.add_argument("--scale", type=float, default=d.SCALE, metavar="S",
                   help=f"MultipleNegativesRankingLoss scale, 1 / temperature of its softmax (default {d.SCALE})")
    p.add_argument("--no-hard-negatives", action="store_true", help="in-batch negatives only (no BM25 negatives)")
    p.add_argument("--sentence-pairs", type=float, default=d.SENTENCE_PAIRS, metavar="P",
                   help="share of the pairs trained, each epoch, on the query sentence that matches the API best "
                        f"instead of the whole query (default {d.SENTENCE_PAIRS})")
    p.add_argument("--tool-negatives", type=float, default=d.TOOL_NEGATIVES, metavar="P",
                   help="share of the pairs whose hard negative, each epoch, is another API of the relevant API's own "
                        f"tool (default {d.TOOL_NEGATIVES})")
    p.add_argument("--category-negatives", type=float, default=d.CATEGORY_NEGATIVES, metavar="P",
                   help="share of the pairs whose hard negative is one of the best BM25 APIs of the relevant API's "
                        f"category (default {d.CATEGORY_NEGATIVES})")
    p.add_argument("--tool-pairs", type=float, default=d.TOOL_PAIRS, metavar="P",
                   help="share of the (query, relevant tool) pairs also trained each epoch, the tool's text as the "
                        "dense index embeds it, other tools as negatives; search scores tools with the same encoder "
                        f"(default {d.TOOL_PAIRS}; 0: API pairs only)")
    p.add_argument("--negative-source", default=d.NEGATIVE_SOURCE, metavar="SOURCE",
                   help="where the hard negatives are mined, once before training: bm25 (BM25 search), hybrid (the "
                        "default untrained hybrid search: packaged MiniLM int8 + BM25) or dense (its dense terms "
                        f"alone) (default {d.NEGATIVE_SOURCE})")
    p.add_argument("--negative-skip", type=int, default=d.NEGATIVE_SKIP, metavar="N",
                   help="leave out the first N non-relevant APIs of the mined ranking, probable unlabelled positives "
                        f"(default {d.NEGATIVE_SKIP})")
    p.add_argument("--negatives-per-pair", type=int, default=d.HARD_NEGATIVES_PER_PAIR, metavar="N",
                   help=f"hard negatives per pair and epoch (default {d.HARD_NEGATIVES_PER_PAIR})")
    p.add_argument("--extra-pairs", action="append", default=[], metavar="KIND:PATH",
                   help="more training pairs, repeatable: anytoolbench:FILE takes AnyToolBench's entries whose "
                        "ground-truth APIs are in the catalog (the others are skipped and counted)")
    p.add_argument("--pseudo-pairs", type=int, default=d.PSEUDO_PAIRS, metavar="N",
                   help="add N template pseudo-query pairs (N APIs drawn with the seed, one pseudo-query made from "
                        f"each API's own fields; default {d.PSEUDO_PAIRS})")
    p.add_argument("--held-out", nargs="+", default=[], metavar="FILE",
                   help="query files kept for evaluation: training refuses, before it starts, any training query "
                        "(extra pairs included) whose text equals one of theirs")
    p.add_argument("--threads", type=int, default=d.THREADS, metavar="N",
                   help=f"torch intra-op threads while training (default {d.THREADS}, on any machine: the count "
                        "changes the order of the sums, so the same seed gives the same model only with the same "
                        "count; more train faster on idle cores; the manifest records the count used)")
    p.add_argument("--fit-fusion", action="store_true",
                   help="fit the fusion weights on the training queries (default: the fixed weights for a trained "
                        "encoder, chosen by cross-validation); stored beside the model as fusion.json")
    p.add_argument("--index-dir", metavar="DIR", default=None,
                   help="where search indexes persist (default: $ANYTOOL_INDEX_DIR or ~/.cache/langgraph-anytool/index)")
    p.add_argument("--quiet", action="store_true", help="no progress bars")


def run_train(catalog: Catalog, args: argparse.Namespace, *, out: TextIO) -> int:
    """Train, export and describe an encoder for `catalog` (arguments of `configure_train`)."""
    from ..eval.retrieval import load_queries
    from ..eval.training import TrainSettings, train_encoder
    from ..sanitize.files import DataFileError

    try:  # every setting is checked here, before the catalog is searched or a model loaded
        settings = TrainSettings(epochs=args.epochs, seed=args.seed, batch_size=args.batch_size,
                                 learning_rate=args.lr, hard_negatives=not args.no_hard_negatives,
                                 threads=args.threads, sentence_pairs=args.sentence_pairs,
                                 tool_negatives=args.tool_negatives, category_negatives=args.category_negatives,
                                 extra_pairs=tuple(args.extra_pairs), pseudo_pairs=args.pseudo_pairs,
                                 scale=args.scale, tool_pairs=args.tool_pairs,
                                 negative_source=args.negative_source, negative_skip=args.negative_skip,
                                 hard_negatives_per_pair=args.negatives_per_pair)
    except DataFileError as exc:
        flag = _TRAIN_FLAGS.get((exc.field or "").split(".")[0].split("[")[0], exc.field)
        raise ValueError(f"index train --{flag}: {exc.message}") from None
    held_out = [q.query for q in load_queries(args.held_out, catalog)] if args.held_out else []
    train_encoder(catalog, args.queries, args.out, settings, fit_fusion_weights=args.fit_fusion,
                  index_dir=args.index_dir, progress=not args.quiet, out=out, held_out=held_out)
    return 0


def run_build(catalog: Catalog, *, embeddings: str | None, index_dir: str | None, as_json: bool, out: TextIO) -> int:
    """Build the BM25 and dense indexes of `catalog` and print what was built or loaded, and where."""
    from ..catalog.encoders import embeddings_id
    from ..catalog.search import CatalogSearcher

    searcher = CatalogSearcher(catalog, embeddings=embeddings, index_dir=index_dir, progress=True)
    t0 = time.perf_counter()
    stats = searcher.build()
    seconds = time.perf_counter() - t0
    model = embeddings_id(searcher.embeddings) if searcher.embeddings is not None else None
    info = {"catalog": catalog.name, "apis": len(catalog), "tools": catalog.num_tools, "embeddings": model,
            "seconds": round(seconds, 3), "bm25_path": stats.bm25_path, "bm25_loaded": stats.bm25_loaded,
            "bm25_seconds": round(stats.bm25_seconds, 3), "dense_path": stats.index_path,
            "dense_loaded": stats.dense_loaded, "dense_seconds": round(stats.dense_seconds, 3),
            "embedded_documents": stats.embedded_documents, "dense_index": stats.dense_kind or None}
    if as_json:
        out.write(json.dumps(info, indent=1) + "\n")
        return 0
    out.write(f"catalog {catalog.name}: {len(catalog):,} APIs, {catalog.num_tools:,} tools\n")
    bm25 = "loaded" if stats.bm25_loaded else "built"
    out.write(f"BM25   {bm25} in {stats.bm25_seconds:.2f} s  → {stats.bm25_path}\n")
    if model is None:
        out.write("dense  none (BM25 only)\n")
    else:
        dense = "loaded" if stats.dense_loaded else f"built ({stats.embedded_documents:,} documents embedded)"
        out.write(f"dense  {dense} in {stats.dense_seconds:.2f} s, {model}, {stats.dense_kind}  → {stats.index_path}\n")
    out.write(f"total  {seconds:.2f} s\n")
    return 0
