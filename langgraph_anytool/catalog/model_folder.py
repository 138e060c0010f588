"""A local encoder folder (``minilm:DIR``, ``anytool index train --out``) read as untrusted input.

Every file is taken from inside the folder (`sanitize.paths.path_inside`: no ``..``, no symbolic link leading out
of it), read with a size cap, and every field we use is checked (`sanitize.schema`, the models below): a fault is
one `ValueError` line naming the file and the field, never a traceback from a parser deep inside onnx, safetensors
or tokenizers.

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
import math
import struct
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, RootModel

from ..sanitize.files import DataFileError, brief, file_digest, load_json_file, loads_json, read_text
from ..sanitize.paths import path_inside
from ..sanitize.schema import FileModel, check_model

if TYPE_CHECKING:  # numpy is imported where weights are read: `anytool --help` builds its parser from this package
    import numpy as np

MAX_CONFIG_BYTES = 1 << 20  # config.json, modules.json, fusion.json and the like: a few hundred bytes each
MAX_TOKENIZER_BYTES = 32 << 20  # all-MiniLM-L6-v2's tokenizer.json is 466 KB
MAX_WEIGHTS_BYTES = 2 << 30  # model.safetensors: MiniLM 91 MB, BERT-large 1.3 GB
MAX_SAFETENSORS_HEADER = 16 << 20  # MiniLM's header is 14 KB
Sha256Hex = Annotated[str, Field(pattern="^[0-9a-f]{64}$")]
_FLOAT_DTYPES = {"F32": 4, "F16": 2}
TOKEN_TYPES = "embeddings.token_type_embeddings.weight"
_ALL_DTYPES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1, "U8": 1, "BOOL": 1,
               "F8_E4M3": 1, "F8_E5M2": 1, "U16": 2, "U32": 4, "U64": 8}
_DType = Literal["F64", "F32", "F16", "BF16", "I64", "I32", "I16", "I8", "U8", "BOOL", "F8_E4M3", "F8_E5M2", "U16",
                 "U32", "U64"]


class BertConfig(FileModel):
    """``config.json`` of a BERT encoder with GELU, every size within bounds."""

    model_type: Literal["bert"]
    hidden_act: Literal["gelu"] = "gelu"
    hidden_size: Annotated[int, Field(ge=1, le=4096)]
    num_attention_heads: Annotated[int, Field(ge=1, le=128)]
    num_hidden_layers: Annotated[int, Field(ge=1, le=48)]
    intermediate_size: Annotated[int, Field(ge=1, le=16384)] | None = None
    vocab_size: Annotated[int, Field(ge=1, le=1_000_000)] | None = None
    max_position_embeddings: Annotated[int, Field(ge=1, le=8192)] | None = None
    type_vocab_size: Annotated[int, Field(ge=1, le=16)] | None = None
    layer_norm_eps: Annotated[float, Field(ge=1e-30, le=1.0)] = 1e-12


class _TensorEntry(FileModel):
    dtype: _DType
    shape: Annotated[list[Annotated[int, Field(ge=0, le=1 << 40)]], Field(max_length=8)]
    data_offsets: Annotated[list[Annotated[int, Field(ge=0)]], Field(min_length=2, max_length=2)]


class _SafetensorsHeader(FileModel):
    """A safetensors header: its tensors by name, and free-form string metadata."""

    header: Annotated[dict[str, _TensorEntry], Field(max_length=100_000)]
    metadata: dict[str, Annotated[str, Field(max_length=10_000)]] = Field(default_factory=dict, alias="__metadata__")


class _AddedToken(FileModel):
    id: Annotated[int, Field(ge=0)]


class _TokenizerModel(FileModel):
    vocab: Any = None


class _Tokenizer(FileModel):
    model: _TokenizerModel
    added_tokens: Annotated[list[_AddedToken], Field(max_length=100_000)] = Field(default_factory=list)


# a path inside the folder: segments of letters, digits, `_.-` that never start with a dot ("" is the folder)
_MODULE_PATH = r"^([A-Za-z0-9_][A-Za-z0-9_.-]*(/[A-Za-z0-9_][A-Za-z0-9_.-]*)*)?$"


class _StModule(FileModel):
    idx: Annotated[int, Field(ge=0, le=64)] | None = None
    name: Annotated[str, Field(max_length=64)] | None = None
    path: Annotated[str, Field(max_length=256, pattern=_MODULE_PATH)] | None = None
    type: Annotated[str, Field(max_length=200, pattern=r"^sentence_transformers(\.[A-Za-z_][A-Za-z0-9_]*)+$")]


class _StModules(RootModel[Annotated[list[_StModule], Field(max_length=16)]]):
    """``modules.json``: a list of modules."""

    model_config = ConfigDict(strict=True)


M = TypeVar("M", bound=BaseModel)
# the other small JSON files sentence-transformers reads, with the fields it uses that we know the type of
class _SentenceBertConfig(FileModel):
    max_seq_length: Annotated[int, Field(ge=1, le=8192)] | None = None
    do_lower_case: bool | None = None


class _StConfig(FileModel):
    similarity_fn_name: Annotated[str, Field(max_length=40)] | None = None


class _TokenizerConfig(FileModel):
    do_lower_case: bool | None = None
    model_max_length: Annotated[int, Field(ge=1)] | None = None


class _PoolingConfig(FileModel):
    word_embedding_dimension: Annotated[int, Field(ge=1, le=4096)] | None = None


ST_JSON: dict[str, type[FileModel]] = {
    "sentence_bert_config.json": _SentenceBertConfig, "config_sentence_transformers.json": _StConfig,
    "tokenizer_config.json": _TokenizerConfig, "special_tokens_map.json": FileModel,
    "1_Pooling/config.json": _PoolingConfig,
}


def model_file(root: Path, name: str) -> Path:
    """`name` inside the model folder `root` (see `sanitize.paths.path_inside`)."""
    return path_inside(root, name, what="file of the model folder")


def read_model_json(root: Path, name: str, model: type[M], *, max_bytes: int = MAX_CONFIG_BYTES,
                    what: str | None = None) -> M:
    """A JSON object file of the folder, bounded and checked field by field against `model`."""
    path = model_file(root, name)
    data = load_json_file(path, max_bytes=max_bytes, what=what or name)
    return check_model(model, data, source=str(path))


# ---------------------------------------------------------------------- config and weights
def read_config(root: Path) -> BertConfig:
    """``config.json`` of a BERT encoder with GELU, every size within bounds."""
    cfg = read_model_json(root, "config.json", BertConfig, what="model config")
    if cfg.hidden_size % cfg.num_attention_heads:
        raise DataFileError(f"hidden_size {cfg.hidden_size} is not a multiple of num_attention_heads "
                            f"{cfg.num_attention_heads}", source=str(model_file(root, "config.json")),
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
    header = loads_json(raw, source=source)
    if not isinstance(header, dict):
        raise DataFileError(f"expected a JSON object, got {brief(header)}", source=source, field="header")
    tensors = {k: v for k, v in header.items() if k != "__metadata__"}
    check_model(_SafetensorsHeader, {"header": tensors, "__metadata__": header.get("__metadata__", {})},
                source=source)
    data_len = size - 8 - n
    out: dict[str, tuple[str, list[int]]] = {}
    for name, spec in tensors.items():
        (begin, end), shape, dtype = spec["data_offsets"], spec["shape"], spec["dtype"]
        nbytes = math.prod(shape) * _ALL_DTYPES[dtype]  # exact integers: no numpy here (`anytool --help`)
        if not begin <= end <= data_len or end - begin != nbytes:
            raise DataFileError(f"tensor {name[:80]!r}: data offsets do not match its shape and type (or lie past "
                                f"the file's {data_len:,} data bytes)", source=source)
        out[name] = (dtype, shape)
    return out


def bert_tensor_shapes(cfg: BertConfig, vocab_rows: int, position_rows: int) -> dict[str, tuple[int, ...]]:
    """The tensors (names without the ``bert.`` prefix) and shapes a BERT encoder of `cfg` needs."""
    h = cfg.hidden_size
    inter = cfg.intermediate_size or 4 * h
    shapes: dict[str, tuple[int, ...]] = {
        "embeddings.word_embeddings.weight": (vocab_rows, h),
        "embeddings.position_embeddings.weight": (position_rows, h),
        "embeddings.LayerNorm.weight": (h,), "embeddings.LayerNorm.bias": (h,)}
    for i in range(cfg.num_hidden_layers):
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


def _weights_plan(root: Path, cfg: BertConfig) -> tuple[Path, dict[str, tuple[int, ...]], int]:
    """The weights file, the tensors the encoder needs with their shapes, and the vocabulary rows; the header
    checked against both the file and the config."""
    path = model_file(root, "model.safetensors")
    source = str(path)
    if not path.is_file():
        raise DataFileError("the weights file does not exist", source=source)
    declared = {k.removeprefix("bert."): v for k, v in _safetensors_header(path).items()}
    word = declared.get("embeddings.word_embeddings.weight", ("", [0, 0]))[1]
    pos = declared.get("embeddings.position_embeddings.weight", ("", [0, 0]))[1]
    vocab_rows = cfg.vocab_size or int(word[0])
    position_rows = cfg.max_position_embeddings or int(pos[0])
    needed = bert_tensor_shapes(cfg, vocab_rows, position_rows)
    needed[TOKEN_TYPES] = (-1, cfg.hidden_size)
    for name, shape in needed.items():
        if name not in declared:
            raise DataFileError(f"tensor {name!r} is missing", source=source)
        dtype, got = declared[name]
        if dtype not in _FLOAT_DTYPES:
            raise DataFileError(f"tensor {name!r} is {dtype}; expected F32 or F16", source=source)
        if len(got) != len(shape) or any(want not in (-1, g) for want, g in zip(shape, got, strict=True)) or 0 in got:
            raise DataFileError(f"tensor {name!r} has shape {got}; the config implies {list(shape)}", source=source)
    return path, needed, vocab_rows


def load_weights_header(root: Path, cfg: BertConfig) -> int:
    """``model.safetensors``'s header checked (see `load_weights`) without reading the tensors; the vocabulary
    rows."""
    return _weights_plan(root, cfg)[2]


def load_weights(root: Path, cfg: BertConfig) -> dict[str, np.ndarray]:
    """The encoder's tensors of ``model.safetensors`` (``bert.`` prefix dropped), as float32, each checked."""
    import numpy as np

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
    text = read_text(path, max_bytes=MAX_TOKENIZER_BYTES, what="tokenizer")  # read once: checked, then loaded
    data = loads_json(text, source=source)
    doc = check_model(_Tokenizer, data, source=source)
    for i, token in enumerate(doc.added_tokens):
        if token.id >= vocab_rows:
            raise DataFileError(f"must be a token id below {vocab_rows:,} (the rows of the embedding table), got "
                                f"{token.id}", source=source, field=f"added_tokens[{i}].id")
    vocab = doc.model.vocab
    ids: Iterable[Any] = vocab.values() if isinstance(vocab, dict) else ()
    for token_id in ids:
        if isinstance(token_id, bool) or not isinstance(token_id, int) or not 0 <= token_id < vocab_rows:
            raise DataFileError(f"a token id ({str(token_id)[:20]}) outside the embedding table of {vocab_rows:,} "
                                "rows", source=source, field="model.vocab")
    try:
        tok = Tokenizer.from_str(text)  # the text checked above, not `data` serialised again
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
        for module in check_model(_StModules, data, source=str(path)).root:
            if module.path:
                model_file(root, module.path)
    for name, model in ST_JSON.items():
        if model_file(root, name).is_file():
            read_model_json(root, name, model)


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

