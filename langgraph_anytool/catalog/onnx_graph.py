"""What an ONNX encoder file may hold before ONNX Runtime runs it: the encoder's graph and nothing else.

An ONNX file is a program: a `Loop` of 2⁴⁰ trips, a custom-domain kernel, a tensor read from an external file or
a product of two large constants would all run (or read, or allocate) without limit. `check_encoder_onnx`
accepts a file only when

- it parses, is at most `MAX_ONNX_BYTES`, and holds at most `MAX_NODES` nodes, no model-local functions, no
  sparse or external-data tensors;
- every node is one of `ENCODER_OPS` (the op types of the graph `onnx_encoder.build_bert_onnx` writes and of its
  int8 quantization), of the default domain, with attributes that are numbers only (no subgraphs, so no
  `Loop` / `Scan` / `If` even under another name);
- its inputs are `input_ids`, `attention_mask` and `position_ids` (int64, shape batch × seq) and its one output
  `last_hidden_state` (float, batch × seq × dimension);
- ONNX shape inference gives every tensor a shape made of numbers and at most one `batch` and two `seq`
  dimensions, the numbers multiplying to at most `MAX_CELLS_PER_POSITION` (so a batch's memory is bounded by the
  batch itself), and the embedding tables that `input_ids` / `position_ids` index are constants (their row
  counts bound the ids the encoder may be given).

A fault is one `DataFileError` line naming the file.

The check parses the file with the `onnx` package and runs its shape inference: about a fifth of a second (the
import of `onnx`, protobuf and ml_dtypes, most of it) before every run's first search. A file this project wrote
itself (the conversion cache) is therefore checked once: `remember=True` keeps the verdict beside it, bound to
the file's SHA-256 and to these rules, and a later check of the same bytes under the same rules reads the verdict
instead; other bytes, other rules or an unreadable verdict mean the full check again. A folder's own export
(`trained:DIR`, `minilm:PATH`) is always checked in full.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import Field

from ..sanitize.files import DataFileError, load_json_file, read_bytes
from ..sanitize.schema import FileModel, check_model
from ..sanitize.writes import atomic_write

MAX_ONNX_BYTES = (2 << 30) - 1  # protobuf's own limit; MiniLM int8 is 23 MB, fp32 90 MB
MAX_NODES = 20_000  # MiniLM int8: 346
MAX_CELLS_PER_POSITION = 1 << 16  # numbers per (batch, seq) position of one tensor; MiniLM's largest: 1,536
ENCODER_OPS = frozenset({"Add", "Cast", "DequantizeLinear", "Div", "DynamicQuantizeLinear", "Erf", "Gather",
                         "Identity", "LayerNormalization", "MatMul", "MatMulInteger", "Mul", "Reshape", "Softmax",
                         "Sub", "Transpose", "Unsqueeze"})
INPUTS = ("input_ids", "attention_mask", "position_ids")
OUTPUT = "last_hidden_state"
_DIMS = ("batch", "seq")
_RULES_VERSION = 1  # raise when the check changes in a way the constants above do not show
VERDICT_SUFFIX = ".checked.json"
MAX_VERDICT_BYTES = 4096


def rules_digest() -> str:
    """What the check accepts, as a digest: a verdict made under other rules is not reused."""
    rules = [_RULES_VERSION, MAX_ONNX_BYTES, MAX_NODES, MAX_CELLS_PER_POSITION, sorted(ENCODER_OPS), INPUTS, OUTPUT,
             _DIMS]
    return hashlib.sha256(json.dumps(rules).encode()).hexdigest()


class _Verdict(FileModel):
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    rules: str = Field(pattern=r"^[0-9a-f]{64}$")
    dimension: int = Field(ge=1, le=MAX_CELLS_PER_POSITION)
    vocab_rows: int = Field(ge=1)
    position_rows: int = Field(ge=1)


@dataclass(frozen=True)
class EncoderGraph:
    """A checked encoder file: its bytes (what ONNX Runtime loads, read once) and what bounds its inputs."""

    path: Path
    data: bytes
    dimension: int  # the last dimension of `last_hidden_state`
    vocab_rows: int  # rows of the table `input_ids` index
    position_rows: int  # rows of the table `position_ids` index


def check_encoder_onnx(path: Path, *, remember: bool = False) -> EncoderGraph:
    """The file at `path` checked as described in the module docstring; `remember`: reuse and keep the verdict
    beside the file (for files this project wrote itself)."""
    data = read_bytes(path, max_bytes=MAX_ONNX_BYTES, what="ONNX model")
    if not remember:
        return _checked(path, data)
    verdict = path.with_name(path.name + VERDICT_SUFFIX)
    digest = hashlib.sha256(data).hexdigest()
    known = _recalled(verdict, digest)
    if known is not None:
        return EncoderGraph(path=path, data=data, dimension=known.dimension, vocab_rows=known.vocab_rows,
                            position_rows=known.position_rows)
    graph = _checked(path, data)
    record = {"sha256": digest, "rules": rules_digest(), "dimension": graph.dimension,
              "vocab_rows": graph.vocab_rows, "position_rows": graph.position_rows}
    with contextlib.suppress(OSError):  # a read-only cache: the file is checked in full next time too
        atomic_write(verdict, json.dumps(record).encode(), mode=0o644)
    return graph


def _recalled(verdict: Path, digest: str) -> _Verdict | None:
    """The verdict kept for the bytes whose SHA-256 is `digest` under today's rules (None: none, or not usable)."""
    if not verdict.is_file():
        return None
    try:
        known = check_model(_Verdict, load_json_file(verdict, max_bytes=MAX_VERDICT_BYTES, what="ONNX check verdict"),
                            source=str(verdict))
    except (OSError, ValueError):  # unreadable or not a verdict: the full check decides
        return None
    return known if known.sha256 == digest and known.rules == rules_digest() else None


def _checked(path: Path, data: bytes) -> EncoderGraph:
    import onnx

    source = str(path)
    try:
        model = onnx.load_model_from_string(data)
    except Exception as exc:  # protobuf's DecodeError and friends: one line naming the file
        raise DataFileError(f"not an ONNX model ({type(exc).__name__})", source=source) from None

    def fault(message: str) -> DataFileError:
        return DataFileError(message, source=source)

    graph = model.graph
    if not graph.node:
        raise fault("not an ONNX encoder (the graph has no nodes)")
    if len(graph.node) > MAX_NODES:
        raise fault(f"the graph has {len(graph.node):,} nodes; at most {MAX_NODES:,} allowed")
    if len(model.functions) or len(graph.sparse_initializer):
        raise fault("model-local functions and sparse tensors are not part of an encoder; refused")
    for opset in model.opset_import:
        if opset.domain not in ("", "ai.onnx"):
            raise fault(f"operator domain {opset.domain[:60]!r} is not the standard one; refused")
    allowed_attrs = {onnx.AttributeProto.FLOAT, onnx.AttributeProto.INT, onnx.AttributeProto.FLOATS,
                     onnx.AttributeProto.INTS}
    for node in graph.node:
        if node.domain not in ("", "ai.onnx") or node.op_type not in ENCODER_OPS:
            raise fault(f"operator {node.op_type[:60]!r}{' of domain ' + repr(node.domain[:60]) if node.domain else ''}"
                        f" is not one of the encoder's ({', '.join(sorted(ENCODER_OPS))}); refused")
        for attr in node.attribute:
            if attr.type not in allowed_attrs or attr.ref_attr_name:
                raise fault(f"operator {node.op_type!r} has attribute {attr.name[:40]!r} of a kind an encoder "
                            "never uses (a subgraph, a tensor or a string); refused")
    initializers = {t.name: t for t in graph.initializer}
    for t in graph.initializer:
        if t.data_location == onnx.TensorProto.EXTERNAL or len(t.external_data):
            raise fault(f"tensor {t.name[:60]!r} reads its data from another file; refused")
    _check_signature(graph, initializers, fault)
    dimension = _check_shapes(model, fault)
    rows: dict[str, int] = {}
    for node in graph.node:
        if node.op_type == "Gather" and len(node.input) == 2 and node.input[1] in ("input_ids", "position_ids"):
            table = initializers.get(node.input[0])
            if table is None or len(table.dims) != 2 or table.dims[0] < 1:
                raise fault(f"{node.input[1]} must index a constant embedding table")
            rows[node.input[1]] = min(rows.get(node.input[1], table.dims[0]), table.dims[0])
    if set(rows) != {"input_ids", "position_ids"}:
        raise fault("input_ids and position_ids must each index a constant embedding table")
    return EncoderGraph(path=path, data=data, dimension=dimension, vocab_rows=int(rows["input_ids"]),
                        position_rows=int(rows["position_ids"]))


def _dims(value_info: Any) -> list[int | str] | None:
    t = value_info.type.tensor_type
    if not t.HasField("shape"):
        return None
    out: list[int | str] = []
    for d in t.shape.dim:
        if d.HasField("dim_value"):
            out.append(int(d.dim_value))
        elif d.HasField("dim_param"):
            out.append(d.dim_param)
        else:
            return None
    return out


def _elements(dims: Any) -> int:
    n = 1
    for d in dims:
        n *= int(d)
    return n


def _check_signature(graph: Any, initializers: dict[str, Any], fault: Any) -> None:
    import onnx

    inputs = [i for i in graph.input if i.name not in initializers]
    if sorted(i.name for i in inputs) != sorted(INPUTS):
        raise fault(f"the encoder's inputs must be {', '.join(INPUTS)}; got "
                    f"{', '.join(i.name[:40] for i in inputs[:5]) or 'none'}")
    for i in inputs:
        if i.type.tensor_type.elem_type != onnx.TensorProto.INT64 or _dims(i) != list(_DIMS):
            raise fault(f"input {i.name} must be int64 of shape (batch, seq)")
    if [o.name for o in graph.output] != [OUTPUT]:
        raise fault(f"the encoder's one output must be {OUTPUT}")


def _check_shapes(model: Any, fault: Any) -> int:
    """Shape inference over a copy of the graph (its own value_info dropped); the output's last dimension."""
    import onnx
    from onnx import helper, shape_inference

    graph = model.graph
    small = [t for t in graph.initializer if _elements(t.dims) <= 64]  # shapes, axes, scalars: inference reads them
    big = [helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)) for t in graph.initializer
           if _elements(t.dims) > 64]  # weights: only their types and shapes matter here (and copying them is slow)
    known = {t.name for t in graph.initializer}
    probe = helper.make_model(
        helper.make_graph(list(graph.node), "probe", [i for i in graph.input if i.name not in known] + big,
                          list(graph.output), initializer=small),
        opset_imports=list(model.opset_import))
    probe.ir_version = model.ir_version
    try:
        inferred = shape_inference.infer_shapes(probe, strict_mode=True)
    except Exception as exc:  # onnx's InferenceError / ValidationError: one line
        raise fault(f"the graph does not type-check ({str(exc).splitlines()[0][:160] if str(exc) else exc})"
                    ) from None
    dimension = 0
    for vi in [*inferred.graph.value_info, *inferred.graph.output]:
        dims = _dims(vi)
        if dims is None or any(isinstance(d, str) and d not in _DIMS for d in dims):
            raise fault(f"tensor {vi.name[:60]!r} has a shape that does not follow from the inputs' (batch, seq)")
        cells = 1
        for d in dims:
            cells *= d if isinstance(d, int) else 1
        if dims.count("batch") > 1 or dims.count("seq") > 2 or cells > MAX_CELLS_PER_POSITION:
            raise fault(f"tensor {vi.name[:60]!r} of shape {dims} is larger than an encoder's "
                        f"(at most {MAX_CELLS_PER_POSITION:,} numbers per position); refused")
        if vi.name == OUTPUT:
            if dims[:2] != list(_DIMS) or len(dims) != 3 or not isinstance(dims[2], int) or dims[2] < 1:
                raise fault(f"output {OUTPUT} must be float of shape (batch, seq, dimension)")
            if vi.type.tensor_type.elem_type != onnx.TensorProto.FLOAT:
                raise fault(f"output {OUTPUT} must be float")
            dimension = int(dims[2])
    if not dimension:
        raise fault(f"output {OUTPUT} has no inferred shape")
    return dimension
