"""A tiny BERT encoder folder for tests and the hardening benchmark: MiniLM's widths (384-d vectors) but one layer
and a ~130-word WordPiece vocabulary (8 MB), every file a `minilm:<DIR>` folder holds, converted to ONNX in about a
second, with seeded random weights (so two seeds are two encoders)."""

from __future__ import annotations

import hashlib
import json
import string
from pathlib import Path

import numpy as np

HIDDEN, HEADS, LAYERS, INTER, POSITIONS = 384, 12, 1, 1536, 128  # MiniLM's widths, one layer
SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
WORDS = ["convert", "miles", "to", "kilometers", "day", "week", "date", "weather", "colour", "json", "the", "of"]


def vocabulary() -> list[str]:
    """Special tokens, a few words, then every letter and digit alone and as a word piece (any text tokenises)."""
    chars = list(string.ascii_lowercase + string.digits)
    return SPECIAL + WORDS + chars + [f"##{c}" for c in chars] + list(".,:;!?-'\"()/")


def config(vocab_size: int) -> dict[str, object]:
    return {"model_type": "bert", "architectures": ["BertModel"], "hidden_act": "gelu", "hidden_size": HIDDEN,
            "num_attention_heads": HEADS, "num_hidden_layers": LAYERS, "intermediate_size": INTER,
            "vocab_size": vocab_size, "max_position_embeddings": POSITIONS, "type_vocab_size": 2,
            "layer_norm_eps": 1e-12}


def weights(vocab_size: int, seed: int) -> dict[str, np.ndarray]:
    """BERT tensors (names as sentence-transformers saves them) with seeded random values."""
    rng = np.random.default_rng(seed)
    shapes: dict[str, tuple[int, ...]] = {
        "embeddings.word_embeddings.weight": (vocab_size, HIDDEN),
        "embeddings.position_embeddings.weight": (POSITIONS, HIDDEN),
        "embeddings.token_type_embeddings.weight": (2, HIDDEN),
        "embeddings.LayerNorm.weight": (HIDDEN,), "embeddings.LayerNorm.bias": (HIDDEN,)}
    for i in range(LAYERS):
        for name, (rows, cols) in {"attention.self.query": (HIDDEN, HIDDEN), "attention.self.key": (HIDDEN, HIDDEN),
                                   "attention.self.value": (HIDDEN, HIDDEN),
                                   "attention.output.dense": (HIDDEN, HIDDEN), "intermediate.dense": (INTER, HIDDEN),
                                   "output.dense": (HIDDEN, INTER)}.items():
            shapes[f"encoder.layer.{i}.{name}.weight"] = (rows, cols)
            shapes[f"encoder.layer.{i}.{name}.bias"] = (rows,)
        for ln in ("attention.output.LayerNorm", "output.LayerNorm"):
            shapes[f"encoder.layer.{i}.{ln}.weight"] = (HIDDEN,)
            shapes[f"encoder.layer.{i}.{ln}.bias"] = (HIDDEN,)
    out: dict[str, np.ndarray] = {}
    for name, shape in shapes.items():
        if name.endswith("LayerNorm.weight"):
            out[name] = np.ones(shape, dtype=np.float32)
        elif name.endswith("LayerNorm.bias"):
            out[name] = np.zeros(shape, dtype=np.float32)
        else:
            out[name] = rng.normal(0.0, 0.5, size=shape).astype(np.float32)
    return out


def tokenizer_json(vocab: list[str]) -> str:
    """A BERT-style WordPiece tokenizer (lower-cased, [CLS] … [SEP]) as `tokenizer.json` text."""
    from tokenizers import Tokenizer, normalizers, pre_tokenizers, processors
    from tokenizers.models import WordPiece

    tok = Tokenizer(WordPiece({w: i for i, w in enumerate(vocab)}, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", vocab.index("[CLS]")), ("[SEP]", vocab.index("[SEP]"))])
    return str(tok.to_str())


def write_tiny_encoder(folder: Path, *, seed: int = 0, onnx: bool = False, manifest: bool = False,
                       fusion: dict[str, object] | None = None) -> Path:
    """A model folder at `folder`: config, safetensors weights, tokenizer; with `onnx` its own int8 export
    (`model-int8.onnx`), with `manifest` a trained-encoder manifest (its `weights_sha256` the true digest),
    with `fusion` a `fusion.json` holding these weights."""
    from safetensors.numpy import save_file

    from langgraph_anytool.catalog.trained_model import MANIFEST_FORMAT

    folder.mkdir(parents=True, exist_ok=True)
    vocab = vocabulary()
    (folder / "config.json").write_text(json.dumps(config(len(vocab))), encoding="utf-8")
    save_file(weights(len(vocab), seed), str(folder / "model.safetensors"))
    (folder / "tokenizer.json").write_text(tokenizer_json(vocab), encoding="utf-8")
    if onnx:
        from langgraph_anytool.catalog.onnx_encoder import export_onnx

        export_onnx(folder, folder / "model-int8.onnx", "int8")
    if manifest:
        doc = {"format": MANIFEST_FORMAT, "weights_sha256": hashlib.sha256((folder / "model.safetensors").read_bytes()).hexdigest(),
               "query_hashes": [], "fusion": "fusion.json" if fusion is not None else None}
        (folder / "manifest.json").write_text(json.dumps(doc), encoding="utf-8")
    if fusion is not None:
        (folder / "fusion.json").write_text(json.dumps({"weights": fusion}), encoding="utf-8")
    return folder
