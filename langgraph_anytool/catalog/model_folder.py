"""A local encoder folder (``minilm:DIR``, ``anytool index train --out``) read as untrusted input.

Every file is taken from inside the folder (`inside`: no ``..``, no symbolic link leading out of it), read with a
size cap, and every field we use is checked (`sanitize.files.Field`): a fault is one `ValueError` line naming the
file and the field, never a traceback from a parser deep inside onnx, safetensors or tokenizers.

- `read_config`: ``config.json`` of a BERT encoder (sizes within bounds, heads dividing the hidden size).
- `load_weights`: ``model.safetensors``, its header checked before the library parses it, then every tensor the
  encoder needs present with the shape the config implies, of a float type and finite.
- `load_tokenizer`: ``tokenizer.json`` (bounded JSON first, then `tokenizers`), its token ids inside the
  embedding table.
- `check_st_modules`: ``modules.json`` may only name sentence-transformers' own modules (nothing imported from
  the folder or the current directory).
- `folder_digest`: the identity of a folder's files from their bytes (`sanitize.files.file_digest`; a digest a
  folder claims is never used).
"""

from __future__ import annotations

import hashlib
import json
import struct
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..sanitize.files import (
    DataFileError,
    Field,
    check_object,
    check_value,
    file_digest,
    inside,
    load_json_file,
    loads_json,
)

MAX_CONFIG_BYTES = 1 << 20  # config.json, modules.json, fusion.json and the like: a few hundred bytes each
MAX_TOKENIZER_BYTES = 32 << 20  # all-MiniLM-L6-v2's tokenizer.json is 466 KB
MAX_WEIGHTS_BYTES = 2 << 30  # model.safetensors: MiniLM 91 MB, BERT-large 1.3 GB
MAX_SAFETENSORS_HEADER = 16 << 20  # MiniLM's header is 14 KB
HEX64 = "[0-9a-f]{64}"
_FLOAT_DTYPES = {"F32": 4, "F16": 2}
TOKEN_TYPES = "embeddings.token_type_embeddings.weight"
_ALL_DTYPES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1, "U8": 1, "BOOL": 1,
               "F8_E4M3": 1, "F8_E5M2": 1, "U16": 2, "U32": 4, "U64": 8}

BERT_CONFIG: dict[str, Field] = {
    "model_type": Field("str", required=True, choices=("bert",)),
    "hidden_act": Field("str", default="gelu", choices=("gelu",)),
    "hidden_size": Field("int", required=True, low=1, high=4096),
    "num_attention_heads": Field("int", required=True, low=1, high=128),
    "num_hidden_layers": Field("int", required=True, low=1, high=48),
    "intermediate_size": Field("int", low=1, high=16384),
    "vocab_size": Field("int", low=1, high=1_000_000),
    "max_position_embeddings": Field("int", low=1, high=8192),
    "type_vocab_size": Field("int", low=1, high=16),
    "layer_norm_eps": Field("float", default=1e-12, low=1e-30, high=1.0),
}
ST_MODULES = Field("list", max_len=16, items=Field("object", fields={
    "idx": Field("int", low=0, high=64), "name": Field("str", max_len=64),
    "path": Field("str", max_len=256, pattern=r"(?!.*\.\.)[A-Za-z0-9_][A-Za-z0-9_./-]*|"),
    "type": Field("str", required=True, max_len=200, pattern=r"sentence_transformers(\.[A-Za-z_][A-Za-z0-9_]*)+"),
}))
# the other small JSON files sentence-transformers reads, with the fields it uses that we know the type of
ST_JSON: dict[str, dict[str, Field]] = {
    "sentence_bert_config.json": {"max_seq_length": Field("int", low=1, high=8192),
                                  "do_lower_case": Field("bool")},
    "config_sentence_transformers.json": {"similarity_fn_name": Field("str", nullable=True, max_len=40)},
    "tokenizer_config.json": {"do_lower_case": Field("bool"), "model_max_length": Field("int", low=1)},
    "special_tokens_map.json": {},
    "1_Pooling/config.json": {"word_embedding_dimension": Field("int", low=1, high=4096)},
}


def model_file(root: Path, name: str) -> Path:
    """`name` inside the model folder `root` (see `sanitize.files.inside`)."""
    return inside(root, name, what="model folder")


def read_model_json(root: Path, name: str, fields: Mapping[str, Field], *, max_bytes: int = MAX_CONFIG_BYTES,
                    what: str | None = None) -> dict[str, Any]:
    """A JSON object file of the folder, bounded and checked field by field."""
    path = model_file(root, name)
    data = load_json_file(path, max_bytes=max_bytes, what=what or name)
    return check_object(data, fields, source=str(path))


# ---------------------------------------------------------------------- config and weights
def read_config(root: Path) -> dict[str, Any]:
    """``config.json`` of a BERT encoder with GELU, every size within bounds."""
    cfg = read_model_json(root, "config.json", BERT_CONFIG, what="model config")
    if cfg["hidden_size"] % cfg["num_attention_heads"]:
        raise DataFileError(f"hidden_size {cfg['hidden_size']} is not a multiple of num_attention_heads "
                            f"{cfg['num_attention_heads']}", source=str(model_file(root, "config.json")),
                            field="num_attention_heads")
    return cfg


def _safetensors_header(path: Path) -> dict[str, tuple[str, list[int]]]:
    """The tensors a safetensors file declares (dtype, shape), its header checked against the file's size."""
    source = str(path)
    size = path.stat().st_size
    if size > MAX_WEIGHTS_BYTES:
        raise DataFileError(f"the weights file is {size:,} bytes; at most {MAX_WEIGHTS_BYTES:,} allowed", source=source)
    with path.open("rb") as fh:
        head = fh.read(8)
        if len(head) < 8:
            raise DataFileError("not a safetensors file (shorter than its 8-byte header length)", source=source)
        (n,) = struct.unpack("<Q", head)
        if n > min(MAX_SAFETENSORS_HEADER, size - 8):
            raise DataFileError(f"not a safetensors file (header length {n:,} for a file of {size:,} bytes)",
                                source=source)
        raw = fh.read(n)
    header = check_value(loads_json(raw, source=source), Field("object", max_len=100_000), source=source,
                         field="header")
    data_len = size - 8 - n
    entry = Field("object", fields={"dtype": Field("str", required=True, choices=tuple(_ALL_DTYPES)),
                                    "shape": Field("list", required=True, max_len=8,
                                                   items=Field("int", low=0, high=1 << 40)),
                                    "data_offsets": Field("list", required=True, max_len=2,
                                                          items=Field("int", low=0, high=data_len))})
    out: dict[str, tuple[str, list[int]]] = {}
    for name, spec in header.items():
        if name == "__metadata__":
            check_value(spec, Field("object", items=Field("str", max_len=10_000)), source=source, field=name)
            continue
        spec = check_value(spec, entry, source=source, field=f"header.{name}")
        offsets = spec["data_offsets"]
        nbytes = int(np.prod(spec["shape"], dtype=np.float64)) * _ALL_DTYPES[spec["dtype"]]
        if len(offsets) != 2 or not offsets[0] <= offsets[1] or offsets[1] - offsets[0] != nbytes:
            raise DataFileError(f"tensor {name[:80]!r}: data offsets do not match its shape and type", source=source)
        out[name] = (spec["dtype"], spec["shape"])
    return out


def bert_tensor_shapes(cfg: Mapping[str, Any], vocab_rows: int, position_rows: int) -> dict[str, tuple[int, ...]]:
    """The tensors (names without the ``bert.`` prefix) and shapes a BERT encoder of `cfg` needs."""
    h = int(cfg["hidden_size"])
    inter = int(cfg.get("intermediate_size") or 4 * h)
    shapes: dict[str, tuple[int, ...]] = {
        "embeddings.word_embeddings.weight": (vocab_rows, h),
        "embeddings.position_embeddings.weight": (position_rows, h),
        "embeddings.LayerNorm.weight": (h,), "embeddings.LayerNorm.bias": (h,)}
    for i in range(int(cfg["num_hidden_layers"])):
        p = f"encoder.layer.{i}"
        for name, (rows, cols) in {"attention.self.query": (h, h), "attention.self.key": (h, h),
                                   "attention.self.value": (h, h), "attention.output.dense": (h, h),
                                   "intermediate.dense": (inter, h), "output.dense": (h, inter)}.items():
            shapes[f"{p}.{name}.weight"] = (rows, cols)
            shapes[f"{p}.{name}.bias"] = (rows,)
        for ln in ("attention.output.LayerNorm", "output.LayerNorm"):
            shapes[f"{p}.{ln}.weight"] = (h,)
            shapes[f"{p}.{ln}.bias"] = (h,)
    return shapes


def _weights_plan(root: Path, cfg: Mapping[str, Any]) -> tuple[Path, dict[str, tuple[int, ...]], int]:
    """The weights file, the tensors the encoder needs with their shapes, and the vocabulary rows; the header
    checked against both the file and the config."""
    path = model_file(root, "model.safetensors")
    source = str(path)
    if not path.is_file():
        raise DataFileError("the weights file does not exist", source=source)
    declared = {k.removeprefix("bert."): v for k, v in _safetensors_header(path).items()}
    word = declared.get("embeddings.word_embeddings.weight", ("", [0, 0]))[1]
    pos = declared.get("embeddings.position_embeddings.weight", ("", [0, 0]))[1]
    vocab_rows = int(cfg.get("vocab_size") or word[0])
    position_rows = int(cfg.get("max_position_embeddings") or pos[0])
    needed = bert_tensor_shapes(cfg, vocab_rows, position_rows)
    needed[TOKEN_TYPES] = (-1, int(cfg["hidden_size"]))
    for name, shape in needed.items():
        if name not in declared:
            raise DataFileError(f"tensor {name!r} is missing", source=source)
        dtype, got = declared[name]
        if dtype not in _FLOAT_DTYPES:
            raise DataFileError(f"tensor {name!r} is {dtype}; expected F32 or F16", source=source)
        if len(got) != len(shape) or any(want not in (-1, g) for want, g in zip(shape, got, strict=True)) or 0 in got:
            raise DataFileError(f"tensor {name!r} has shape {got}; the config implies {list(shape)}", source=source)
    return path, needed, vocab_rows


def load_weights_header(root: Path, cfg: Mapping[str, Any]) -> int:
    """``model.safetensors``'s header checked (see `load_weights`) without reading the tensors; the vocabulary
    rows."""
    return _weights_plan(root, cfg)[2]


def load_weights(root: Path, cfg: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """The encoder's tensors of ``model.safetensors`` (``bert.`` prefix dropped), as float32, each checked."""
    path, needed, _ = _weights_plan(root, cfg)
    source = str(path)
    try:
        from safetensors.numpy import load_file

        raw = load_file(source)
    except Exception as exc:  # safetensors raises its own error types; one line names the file
        raise DataFileError(f"not a valid safetensors file ({str(exc).splitlines()[0][:120] if str(exc) else exc})",
                            source=source) from None
    out: dict[str, np.ndarray] = {}
    for key, value in raw.items():
        name = key.removeprefix("bert.")
        if name in needed:
            arr = np.asarray(value, dtype=np.float32)
            if not np.isfinite(arr).all():
                raise DataFileError(f"tensor {name!r} holds NaN or infinite values", source=source)
            out[name] = arr
    return out


# ---------------------------------------------------------------------- tokenizer
def load_tokenizer(root: Path, vocab_rows: int) -> Any:
    """``tokenizer.json`` as a `tokenizers.Tokenizer`, every token id it can produce below `vocab_rows`."""
    from tokenizers import Tokenizer

    path = model_file(root, "tokenizer.json")
    source = str(path)
    data = load_json_file(path, max_bytes=MAX_TOKENIZER_BYTES, what="tokenizer")
    data = check_object(data, {
        "model": Field("object", required=True, fields={"vocab": Field("any")}),
        "added_tokens": Field("list", max_len=100_000, items=Field("object", fields={
            "id": Field("int", required=True, low=0, high=vocab_rows - 1)})),
    }, source=source)
    vocab = data["model"].get("vocab")
    ids: Iterable[Any] = vocab.values() if isinstance(vocab, dict) else ()
    for token_id in ids:
        if isinstance(token_id, bool) or not isinstance(token_id, int) or not 0 <= token_id < vocab_rows:
            raise DataFileError(f"a token id ({str(token_id)[:20]}) outside the embedding table of {vocab_rows:,} "
                                "rows", source=source, field="model.vocab")
    try:
        tok = Tokenizer.from_str(json.dumps(data))
        probe = tok.encode("a probe text").ids
    except Exception as exc:  # tokenizers raises plain Exception; one line names the file
        raise DataFileError(f"not a tokenizer `tokenizers` can load ({str(exc).splitlines()[0][:160]})",
                            source=source) from None
    if probe and max(probe) >= vocab_rows:
        raise DataFileError(f"produces token id {max(probe)}, outside the embedding table of {vocab_rows:,} rows",
                            source=source)
    return tok


# ---------------------------------------------------------------------- sentence-transformers
def check_st_modules(root: Path) -> None:
    """``modules.json`` (when present) names only sentence-transformers' own module classes.

    sentence-transformers imports the class path each entry names; before 6.0 it did so without asking for
    `trust_remote_code`, so a folder could run code from itself or the current directory.
    """
    path = model_file(root, "modules.json")
    if path.is_file():
        data = load_json_file(path, max_bytes=MAX_CONFIG_BYTES, what="sentence-transformers modules list")
        for module in check_value(data, ST_MODULES, source=str(path)):
            if module.get("path"):
                model_file(root, module["path"])
    for name, fields in ST_JSON.items():
        if model_file(root, name).is_file():
            read_model_json(root, name, fields)


# ---------------------------------------------------------------------- identity
def folder_digest(root: Path, names: Iterable[str], *extra: str) -> str:
    """sha256 (hex) over the named files' contents (absent ones count as absent) and `extra` strings."""
    h = hashlib.sha256()
    for name in sorted(names):
        path = model_file(root, name)
        h.update(f"{name}\0{file_digest(path) if path.is_file() else '-'}\n".encode())
    for item in extra:
        h.update(f"{item}\n".encode())
    return h.hexdigest()

