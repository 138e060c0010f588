"""The default training knobs of `anytool index train`, as plain constants: `eval.training.TrainSettings` takes its
defaults from here, and the command's parser shows them without importing the training module (pydantic, the
model folders), so `anytool --help` stays fast."""

from __future__ import annotations

EPOCHS = 3  # 1 → 3: held-out Recall@10 / NDCG@5 89.1 / 77.4 → 90.2 / 78.0 (3-fold CV, docs/benchmarks.md)
SEED = 0
BATCH_SIZE = 32  # ≥ 2: the other pairs of a batch are its negatives
SCALE = 20.0  # MultipleNegativesRankingLoss scale (1 / temperature); sentence-transformers' default
LEARNING_RATE = 1e-4  # chosen by 3-fold CV on the dev queries over 2e-5 (benchmarks/retriever_training.py)
# share of the pairs whose anchor is, in each epoch, the query sentence that matches the API best (BM25) instead
# of the whole query (0 → 0.5: held-out NDCG@5 78.0 → 78.7 at 3 epochs, Recall@10 unchanged)
SENTENCE_PAIRS = 0.5
# shares of the pairs whose hard negative comes from the relevant API's own tool / its category (the rest: BM25's
# best anywhere); 0.25 / 0.25 at 1 epoch on the tuning part: fold 2 Recall@10 / NDCG@5 88.8 / 76.3, against 88.6 /
# 76.0 and 90.1 / 77.2 for two runs without them: no win (docs/benchmarks.md, "Training levers (issue 37, round 3)")
TOOL_NEGATIVES = 0.0
CATEGORY_NEGATIVES = 0.0
# torch's intra-op threads while training: pinned, so that a seed gives the same model on every machine (a
# different count sums in another order: the same settings and seed gave fold-2 Recall@10 / NDCG@5 90.1 / 77.2 with
# 2 threads and 88.6 / 76.0 with 1; docs/benchmarks.md, "Training levers (issue 37, round 4)"). More threads train
# faster on idle cores (`--threads N`); the manifest records the count used. torch's own default is one per core.
THREADS = 1
# template pseudo-query pairs added to the training pairs (`TrainSettings.pseudo_pairs`; 0: none)
PSEUDO_PAIRS = 0
# share of the (query, relevant tool) pairs trained on each epoch besides the API pairs (`TrainSettings.tool_pairs`;
# 0: API pairs only). 0.5 won the tuning part (train fold 0, score fold 1, 1 epoch: Recall@10 / NDCG@5 87.3 / 73.6 →
# 88.6 / 76.0) but did not hold on fold 2 (folds 0-1, 3 epochs: 92.2 / 80.5 → 91.8 / 80.1): 0 (docs/benchmarks.md,
# "Training schedule and tool pairs (issue 37, round 5)")
TOOL_PAIRS = 0.0
# where each pair's hard negatives are mined, once before training (`TrainSettings.negative_source`): "bm25" (our
# BM25 search), "hybrid" (the default untrained hybrid search: packaged MiniLM int8 + BM25, z-score fusion) or
# "dense" (that search's dense terms alone); docs/benchmarks.md, "Harder negatives (issue 37, round 5)"
NEGATIVE_SOURCE = "bm25"
NEGATIVE_SKIP = 0  # the mined ranking's first N non-relevant APIs are skipped (probable unlabelled positives)
HARD_NEGATIVES_PER_PAIR = 1  # hard negatives drawn per pair each epoch (extra MNRL columns)
