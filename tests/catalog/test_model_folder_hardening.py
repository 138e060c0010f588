"""Model folders (`minilm:<DIR>`) as untrusted input (issue 28, points 6, 10, 12, 14 and 16).

Every fault of a folder is one `anytool: error:` line naming the file (and field), never a traceback; the
encoder's identity (which keys its dense index and its ONNX conversion) comes from the files' bytes, never from
the manifest's claim; an ONNX graph runs only when it is the encoder's; no file is read through a symbolic link
that leads out of the folder; sentence-transformers reads a folder only when it is ≥ 6.0 and the folder's
`modules.json` names its own classes only. The folders are tiny BERT encoders (`tests/tiny_encoder.py`).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import struct
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")
pytest.importorskip("tokenizers")
pytest.importorskip("safetensors")

from langgraph_anytool.catalog.embeddings import MiniLMEmbeddings, resolve_embeddings
from langgraph_anytool.catalog.search import CatalogSearcher, FusionWeights
from langgraph_anytool.cli.app import main
from tests.tiny_encoder import write_tiny_encoder

ROOT = Path(__file__).resolve().parents[2]
FUSION = {"bm25": 1.5, "dense": 2.0, "tool": 0.5, "whole": 1.0, "rrf_k": 2, "depth": 200}
QUERY = "convert miles to kilometers"


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("tiny-encoders")
    return {"trained": write_tiny_encoder(base / "trained", seed=1, onnx=True, manifest=True, fusion=FUSION),
            "plain": write_tiny_encoder(base / "plain", seed=2),
            "other": write_tiny_encoder(base / "other", seed=3, onnx=True, manifest=True, fusion=FUSION)}


@pytest.fixture(autouse=True)
def _conversions_in_tmp(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    monkeypatch.setenv("ANYTOOL_MODEL_DIR", str(tmp_path_factory.getbasetemp() / "onnx-cache"))


def _copy(folders: dict[str, Path], kind: str, tmp_path: Path) -> Path:
    target = tmp_path / kind
    shutil.copytree(folders[kind], target)
    return target


def _search(spec: str, index_dir: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    rc = main(["search", QUERY, "--embeddings", spec, "--index-dir", str(index_dir), "--json", "--k", "5"])
    got = capsys.readouterr()
    return rc, got.out, got.err


def _one_line(rc: int, err: str, *needles: str) -> None:
    lines = err.strip().splitlines()
    assert rc == 2, err
    assert len(lines) == 1 and lines[0].startswith("anytool: error:"), err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


def _edit_json(name: str, change: Callable[[dict], object]) -> Callable[[Path], None]:
    def apply(folder: Path) -> None:
        data = json.loads((folder / name).read_text(encoding="utf-8"))
        result = change(data)
        (folder / name).write_text(json.dumps(data if result is None else result), encoding="utf-8")
    return apply


def _write(name: str, text: str | bytes) -> Callable[[Path], None]:
    def apply(folder: Path) -> None:
        if isinstance(text, bytes):
            (folder / name).write_bytes(text)
        else:
            (folder / name).write_text(text, encoding="utf-8")
    return apply


def _deep(prefix: str, suffix: str = "}") -> str:
    return prefix + "[" * 100_000 + "]" * 100_000 + suffix


def _set(path: list[str | int], value: object) -> Callable[[dict], None]:
    def change(doc: dict) -> None:
        node: object = doc
        for key in path[:-1]:
            node = node[key]  # type: ignore[index]
        node[path[-1]] = value  # type: ignore[index]
    return change


def _safetensors(change: Callable[[dict, bytes], tuple[dict, bytes] | bytes]) -> Callable[[Path], None]:
    """Rewrite model.safetensors from its parsed header and data (`change` returns both, or raw bytes)."""
    def apply(folder: Path) -> None:
        raw = (folder / "model.safetensors").read_bytes()
        (n,) = struct.unpack("<Q", raw[:8])
        header, data = json.loads(raw[8:8 + n]), raw[8 + n:]
        result = change(header, data)
        if isinstance(result, bytes):
            (folder / "model.safetensors").write_bytes(result)
            return
        header, data = result
        text = json.dumps(header).encode()
        (folder / "model.safetensors").write_bytes(struct.pack("<Q", len(text)) + text + data)
    return apply


def _nan_weights(header: dict, data: bytes) -> tuple[dict, bytes]:
    begin, _ = header["embeddings.word_embeddings.weight"]["data_offsets"]
    return header, data[:begin] + np.float32("nan").tobytes() + data[begin + 4:]


def _drop_tensor(header: dict, data: bytes) -> tuple[dict, bytes]:
    del header["encoder.layer.0.output.dense.weight"]
    return header, data


def _reshape(header: dict, data: bytes) -> tuple[dict, bytes]:
    entry = header["encoder.layer.0.attention.self.query.weight"]
    rows, cols = entry["shape"]
    entry["shape"] = [rows // 2, cols * 2]  # as many numbers, not the shape the config implies
    return header, data


def _offsets(header: dict, data: bytes) -> tuple[dict, bytes]:
    header["embeddings.LayerNorm.bias"]["data_offsets"][1] += 4
    return header, data


def _dtype(header: dict, data: bytes) -> tuple[dict, bytes]:
    header["embeddings.LayerNorm.bias"]["dtype"] = "I32"
    return header, data


# (folder kind, case id, change, words the one line must hold)
BAD_FOLDERS: list[tuple[str, str, Callable[[Path], None], tuple[str, ...]]] = [
    # manifest.json
    ("trained", "manifest-deep", _write("manifest.json", _deep('{"format": ')), ("manifest.json", "nesting too deep")),
    ("trained", "manifest-list", _write("manifest.json", "[]"), ("manifest.json", "not a trained-encoder manifest")),
    ("trained", "manifest-hashes-type", _edit_json("manifest.json", _set(["query_hashes"], "abc")),
     ("manifest.json", "query_hashes")),
    ("trained", "manifest-hash-form", _edit_json("manifest.json", _set(["query_hashes"], ["zz"])),
     ("manifest.json", "query_hashes[0]")),
    ("trained", "manifest-nan", _write("manifest.json", '{"format": "anytool-trained-encoder/1", "pairs": NaN}'),
     ("manifest.json", "NaN")),
    ("trained", "manifest-1e999", _write("manifest.json", '{"format": "anytool-trained-encoder/1", "pairs": 1e999}'),
     ("manifest.json", "overflows")),
    ("trained", "manifest-pairs-negative", _edit_json("manifest.json", _set(["pairs"], -3)), ("manifest.json", "pairs")),
    ("trained", "manifest-onnx-type", _edit_json("manifest.json", _set(["onnx"], [1, 2])), ("manifest.json", "onnx")),
    # fusion.json
    ("trained", "fusion-deep", _write("fusion.json", _deep('{"weights": ')), ("fusion.json", "nesting too deep")),
    ("trained", "fusion-weights-type", _write("fusion.json", '{"weights": "x"}'), ("fusion.json", "weights")),
    ("trained", "fusion-rrf-string", _edit_json("fusion.json", _set(["weights", "rrf_k"], "60")),
     ("fusion.json", "weights.rrf_k")),
    ("trained", "fusion-unknown-field", _edit_json("fusion.json", _set(["weights", "boost"], 2)),
     ("fusion.json", "weights.boost")),
    # config.json (read when the folder's weights are converted)
    ("plain", "config-deep", _write("config.json", _deep('{"model_type": "bert", "x": ')), ("config.json", "nesting")),
    ("plain", "config-list", _write("config.json", "[1]"), ("config.json", "expected a JSON object")),
    ("plain", "config-hidden-string", _edit_json("config.json", _set(["hidden_size"], "8")), ("config.json", "hidden_size")),
    ("plain", "config-hidden-zero", _edit_json("config.json", _set(["hidden_size"], 0)), ("config.json", "hidden_size")),
    ("plain", "config-hidden-huge", _edit_json("config.json", _set(["hidden_size"], 10**9)), ("config.json", "hidden_size")),
    ("plain", "config-heads", _edit_json("config.json", _set(["num_attention_heads"], 7)),
     ("config.json", "num_attention_heads")),
    ("plain", "config-eps-nan", _write("config.json", json.dumps({"model_type": "bert"})[:-1] + ', "layer_norm_eps": NaN}'),
     ("config.json", "NaN")),
    ("plain", "config-eps-infinite", _edit_json("config.json", _set(["layer_norm_eps"], 1e300)),
     ("config.json", "layer_norm_eps")),
    ("plain", "config-model-type", _edit_json("config.json", _set(["model_type"], "gpt2")), ("config.json", "model_type")),
    # tokenizer.json
    ("trained", "tokenizer-deep", _write("tokenizer.json", _deep('{"model": ')), ("tokenizer.json", "nesting too deep")),
    ("trained", "tokenizer-model-type", _edit_json("tokenizer.json", _set(["model"], "x")), ("tokenizer.json", "model")),
    ("trained", "tokenizer-truncated", lambda f: (f / "tokenizer.json").write_text(
        (f / "tokenizer.json").read_text(encoding="utf-8")[:500], encoding="utf-8"), ("tokenizer.json", "invalid JSON")),
    ("trained", "tokenizer-id-past-table", _edit_json("tokenizer.json", _set(["model", "vocab", "convert"], 10**6)),
     ("tokenizer.json", "outside the embedding table")),
    ("plain", "tokenizer-id-past-table-plain", _edit_json("tokenizer.json", _set(["model", "vocab", "miles"], 5000)),
     ("tokenizer.json", "outside the embedding table")),
    ("trained", "tokenizer-added-id", _edit_json("tokenizer.json", lambda d: d["added_tokens"].append(
        {"id": 10**9, "content": "[X]", "special": True})), ("tokenizer.json", "added_tokens[0].id")),
    ("trained", "tokenizer-unknown-kind", _edit_json("tokenizer.json", _set(["model", "type"], "Nonsense")),
     ("tokenizer.json", "tokenizers")),
    # model-int8.onnx (a trained folder's own export)
    ("trained", "onnx-random", _write("model-int8.onnx", os.urandom(4096)), ("model-int8.onnx",)),
    ("trained", "onnx-empty", _write("model-int8.onnx", b""), ("model-int8.onnx",)),
    ("trained", "onnx-truncated", lambda f: (f / "model-int8.onnx").write_bytes(
        (f / "model-int8.onnx").read_bytes()[:3000]), ("model-int8.onnx",)),
    # model.safetensors (read when converted)
    ("plain", "weights-header-length", _safetensors(lambda h, d: struct.pack("<Q", 2**60) + b"{}"),
     ("model.safetensors", "header length")),
    ("plain", "weights-header-json", _safetensors(lambda h, d: struct.pack("<Q", 4) + b"{{{{" + d),
     ("model.safetensors", "invalid JSON")),
    ("plain", "weights-header-deep", _safetensors(
        lambda h, d: struct.pack("<Q", 200_002) + b"[" * 100_001 + b"]" * 100_001 + d),
     ("model.safetensors", "nesting too deep")),
    ("plain", "weights-empty", _write("model.safetensors", b""), ("model.safetensors",)),
    ("plain", "weights-offsets", _safetensors(_offsets), ("model.safetensors", "data offsets")),
    ("plain", "weights-missing", _safetensors(_drop_tensor), ("model.safetensors", "is missing")),
    ("plain", "weights-shape", _safetensors(_reshape), ("model.safetensors", "the config implies")),
    ("plain", "weights-dtype", _safetensors(_dtype), ("model.safetensors", "expected F32")),
    ("plain", "weights-nan", _safetensors(_nan_weights), ("model.safetensors", "NaN")),
    ("plain", "weights-truncated", lambda f: (f / "model.safetensors").write_bytes(
        (f / "model.safetensors").read_bytes()[:-100]), ("model.safetensors",)),
]


@pytest.mark.parametrize("kind, change, words", [pytest.param(k, c, w, id=i) for k, i, c, w in BAD_FOLDERS])
def test_a_bad_model_folder_is_one_line(kind: str, change: Callable[[Path], None], words: tuple[str, ...],
                                        folders: dict[str, Path], tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    """Point 10: a deep, wrongly typed, non-finite, out-of-range or broken file of a model folder is refused in
    one line naming the file (and the field), for any file the folder holds."""
    folder = _copy(folders, kind, tmp_path)
    change(folder)
    rc, _, err = _search(f"minilm:{folder}", tmp_path / "index", capsys)
    _one_line(rc, err, *words)


def test_the_tiny_folders_themselves_search(folders: dict[str, Path], tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """The unchanged folders load and search (the cases above fail for their change, not for the fixture)."""
    for kind in ("trained", "plain"):
        rc, out, err = _search(f"minilm:{folders[kind]}", tmp_path / "index", capsys)
        assert rc == 0, err
        assert len(json.loads(out)) == 5


# ---------------------------------------------------------------- point 6: identity from bytes
def _claim(folder: Path, digest: str) -> None:
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    manifest["weights_sha256"] = digest
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")


def _poison_claim(victim: Path, folder: Path) -> None:
    """The attacker's folder claims the victim's weights digest."""
    _claim(folder, json.loads((victim / "manifest.json").read_text(encoding="utf-8"))["weights_sha256"])


def _poison_onnx(victim: Path, folder: Path) -> None:
    """Same weights, manifest and tokenizer as the victim; another ONNX export (what search actually runs)."""
    for name in ("model.safetensors", "manifest.json", "tokenizer.json", "config.json"):
        shutil.copy(victim / name, folder / name)


def _poison_tokenizer(victim: Path, folder: Path) -> None:
    """Same weights and ONNX export as the victim; another tokenizer (other ids, so other vectors)."""
    for name in ("model.safetensors", "manifest.json", "model-int8.onnx", "config.json"):
        shutil.copy(victim / name, folder / name)
    tok = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    vocab = tok["model"]["vocab"]
    vocab["convert"], vocab["miles"] = vocab["miles"], vocab["convert"]
    (folder / "tokenizer.json").write_text(json.dumps(tok), encoding="utf-8")


@pytest.mark.parametrize("poison", [_poison_claim, _poison_onnx, _poison_tokenizer])
def test_a_folder_cannot_take_another_folders_identity(poison: Callable[[Path, Path], None],
                                                        folders: dict[str, Path], tmp_path: Path) -> None:
    """Point 6: a folder whose vectors differ never shares the victim's encoder id, so never its dense index,
    whatever its manifest claims (and the victim's search is unchanged after the other folder built its index)."""
    from langgraph_anytool.catalog.catalog import Catalog

    victim = _copy(folders, "trained", tmp_path)
    attacker = _copy(folders, "other", tmp_path)
    poison(victim, attacker)
    catalog = Catalog.builtin()
    index = tmp_path / "index"
    before = CatalogSearcher(catalog, embeddings=f"minilm:{victim}", index_dir=index, progress=False)
    expected = [h.api_id for h in before.search_apis(QUERY, 5)]
    evil = CatalogSearcher(catalog, embeddings=f"minilm:{attacker}", index_dir=index, progress=False)
    assert evil.embeddings.model_id != before.embeddings.model_id  # type: ignore[union-attr]
    assert evil.index_path() != before.index_path()
    evil.build()
    assert not evil.stats.dense_loaded  # its own index, built from its own vectors
    after = CatalogSearcher(catalog, embeddings=f"minilm:{victim}", index_dir=index, progress=False)
    assert [h.api_id for h in after.search_apis(QUERY, 5)] == expected
    assert after.stats.dense_loaded


def test_the_torch_path_names_a_folder_by_its_bytes(folders: dict[str, Path], tmp_path: Path) -> None:
    """Point 6 on the sentence-transformers path: the encoder id is a digest of the files it reads."""
    victim = _copy(folders, "trained", tmp_path)
    attacker = _copy(folders, "other", tmp_path)
    _poison_claim(victim, attacker)
    assert MiniLMEmbeddings(model_path=victim).model_id != MiniLMEmbeddings(model_path=attacker).model_id
    twin = tmp_path / "twin"
    shutil.copytree(victim, twin)
    _claim(twin, "0" * 64)  # the manifest's claim does not matter: same bytes, same id
    assert MiniLMEmbeddings(model_path=victim).model_id == MiniLMEmbeddings(model_path=twin).model_id


def test_conversion_cache_names_come_from_the_weights_bytes(folders: dict[str, Path], tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """Point 6: a claimed digest never names a file: `"/../../x00000000"` in the manifest writes nothing outside
    the conversion cache, and two folders share a converted file only when their weights are the same bytes."""
    cache = tmp_path / "deep" / "er" / "cache"
    monkeypatch.setenv("ANYTOOL_MODEL_DIR", str(cache))
    (cache / "minilm-t").mkdir(parents=True)  # the claim below once made `cache/minilm-t/../../x…` a path
    folder = _copy(folders, "plain", tmp_path)
    (folder / "manifest.json").write_text(json.dumps({"format": "anytool-trained-encoder/1",
                                                      "weights_sha256": "/../../x00000000"}), encoding="utf-8")
    before = {p for p in tmp_path.rglob("*")}
    rc, _, err = _search(f"minilm:{folder}", tmp_path / "index", capsys)
    created = {p for p in tmp_path.rglob("*")} - before
    outside = [p for p in created if cache not in p.parents and p != cache and (tmp_path / "index") not in p.parents
               and p != tmp_path / "index" and not p.is_dir()]
    assert outside == []
    assert rc == 2 and "weights_sha256" in err  # the claim is not a digest: refused, by field
    # a folder with a well-formed but false claim: the conversion follows the bytes
    from langgraph_anytool.catalog.onnx_encoder import conversion_key

    (folder / "manifest.json").unlink()
    same = _copy(folders, "trained", tmp_path)
    for name in ("model.safetensors", "config.json"):
        shutil.copy(folder / name, same / name)
    _poison_claim(folders["other"], same)
    assert conversion_key(same) == conversion_key(folder)
    assert conversion_key(folders["other"]) != conversion_key(folder)


# ---------------------------------------------------------------- point 12: the encoder's graph only
def _graph_case(name: str) -> Callable[[Path], None]:
    """Rewrite the trained folder's model-int8.onnx with one addition an encoder never has."""
    def apply(folder: Path) -> None:
        import onnx
        from onnx import TensorProto, helper, numpy_helper

        model = onnx.load(str(folder / "model-int8.onnx"))
        g = model.graph
        last = g.node[-1]  # Identity → last_hidden_state
        src = last.input[0]
        if name == "loop":  # 2^40 trips of a body that does nothing; its result feeds the output
            body = helper.make_graph(
                [helper.make_node("Identity", ["c_in"], ["c_out"]), helper.make_node("Identity", ["v_in"], ["v_out"])],
                "body", [helper.make_tensor_value_info("i", TensorProto.INT64, []),
                         helper.make_tensor_value_info("c_in", TensorProto.BOOL, []),
                         helper.make_tensor_value_info("v_in", TensorProto.FLOAT, [])],
                [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []),
                 helper.make_tensor_value_info("v_out", TensorProto.FLOAT, [])])
            g.initializer.extend([numpy_helper.from_array(np.array(2**40, dtype=np.int64), "trips"),
                                  numpy_helper.from_array(np.array(True), "go"),
                                  numpy_helper.from_array(np.array(0.0, dtype=np.float32), "v0")])
            g.node.insert(len(g.node) - 1, helper.make_node("Loop", ["trips", "go", "v0"], ["v_end"], body=body))
            g.node.insert(len(g.node) - 1, helper.make_node("Add", [src, "v_end"], ["looped"]))
            last.input[0] = "looped"
        elif name == "custom-domain":
            g.node.insert(len(g.node) - 1, helper.make_node("Gelu", [src], ["custom"], domain="com.example"))
            last.input[0] = "custom"
            model.opset_import.append(helper.make_opsetid("com.example", 1))
        elif name == "if-subgraph":
            branch = helper.make_graph([helper.make_node("Identity", ["v0"], ["b_out"])], "branch", [],
                                       [helper.make_tensor_value_info("b_out", TensorProto.FLOAT, [])])
            g.initializer.extend([numpy_helper.from_array(np.array(True), "go"),
                                  numpy_helper.from_array(np.array(0.0, dtype=np.float32), "v0")])
            g.node.insert(len(g.node) - 1, helper.make_node("If", ["go"], ["chosen"], then_branch=branch,
                                                            else_branch=branch))
            g.node.insert(len(g.node) - 1, helper.make_node("Add", [src, "chosen"], ["branched"]))
            last.input[0] = "branched"
        elif name == "graph-attribute":
            branch = helper.make_graph([], "hidden", [], [])
            last.attribute.append(helper.make_attribute("payload", branch))
        elif name == "external-data":
            t = numpy_helper.from_array(np.zeros(8, dtype=np.float32), "outside")
            t.ClearField("raw_data")
            t.data_location = TensorProto.EXTERNAL
            t.external_data.add(key="location", value="../../../etc/passwd")
            g.initializer.append(t)
            g.node.insert(len(g.node) - 1, helper.make_node("Add", [src, "outside"], ["read"]))
            last.input[0] = "read"
        elif name == "amplifier":  # (20000 × 1) · (1 × 20000): 1.6 GB from 160 KB of constants
            g.initializer.extend([numpy_helper.from_array(np.ones((20000, 1), dtype=np.float32), "col"),
                                  numpy_helper.from_array(np.ones((1, 20000), dtype=np.float32), "row")])
            g.node.insert(len(g.node) - 1, helper.make_node("MatMul", ["col", "row"], ["square"]))
            g.output.append(helper.make_tensor_value_info("square", TensorProto.FLOAT, [20000, 20000]))
        elif name == "extra-input":
            g.input.append(helper.make_tensor_value_info("token_type_ids", TensorProto.INT64, ["batch", "seq"]))
        elif name == "renamed-output":
            last.output[0] = "pooled"
            g.output[0].name = "pooled"
        onnx.save(model, str(folder / "model-int8.onnx"))
    return apply


GRAPH_CASES = [("custom-domain", ("not the standard one",)), ("if-subgraph", ("'If'",)),
               ("graph-attribute", ("attribute",)), ("external-data", ("reads its data from another file",)),
               ("amplifier", ("one output",)), ("extra-input", ("inputs must be",)),
               ("renamed-output", ("one output must be",))]


@pytest.mark.parametrize("case, words", GRAPH_CASES)
def test_onnx_graphs_other_than_the_encoders_are_refused(case: str, words: tuple[str, ...],
                                                         folders: dict[str, Path], tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """Point 12: a folder's ONNX export runs only when every op is one of the encoder's, without subgraphs,
    custom domains or external data, with the encoder's inputs and output."""
    folder = _copy(folders, "trained", tmp_path)
    _graph_case(case)(folder)
    rc, _, err = _search(f"minilm:{folder}", tmp_path / "index", capsys)
    _one_line(rc, err, "model-int8.onnx", *words)


def test_a_large_intermediate_tensor_is_refused(folders: dict[str, Path], tmp_path: Path) -> None:
    """Point 12: allowed ops whose tensors grow past an encoder's per-position size are refused before running."""
    import onnx
    from onnx import helper, numpy_helper

    from langgraph_anytool.catalog.onnx_graph import check_encoder_onnx
    from langgraph_anytool.sanitize.files import DataFileError

    folder = _copy(folders, "trained", tmp_path)
    model = onnx.load(str(folder / "model-int8.onnx"))
    g = model.graph
    last = g.node[-1]
    g.initializer.extend([numpy_helper.from_array(np.ones((20000, 1), dtype=np.float32), "col"),
                          numpy_helper.from_array(np.ones((1, 20000), dtype=np.float32), "row")])
    g.node.insert(len(g.node) - 1, helper.make_node("MatMul", ["col", "row"], ["square"]))
    onnx.save(model, str(folder / "model-int8.onnx"))
    assert last.op_type == "Identity"
    with pytest.raises(DataFileError, match=r"tensor 'square' of shape \[20000, 20000\] is larger than an encoder"):
        check_encoder_onnx(folder / "model-int8.onnx")


def test_an_onnx_loop_of_2_40_trips_is_refused_before_it_runs(folders: dict[str, Path], tmp_path: Path) -> None:
    """Point 12: a `Loop` of 2^40 trips in a folder's export is refused at once (run in a child process with a
    deadline: before the fix it ran without limit)."""
    folder = _copy(folders, "trained", tmp_path)
    _graph_case("loop")(folder)
    import langgraph_anytool

    package_root = str(Path(langgraph_anytool.__file__).resolve().parents[1])  # the code under test
    boot = f"import sys; sys.path.insert(0, {package_root!r}); from langgraph_anytool.cli.app import main; " \
           "sys.exit(main(sys.argv[1:]))"
    env = {**os.environ, "ANYTOOL_MODEL_DIR": str(tmp_path / "cache"), "ANYTOOL_CACHE": "off"}
    try:
        proc = subprocess.run([sys.executable, "-I", "-c", boot, "search", QUERY, "--embeddings", f"minilm:{folder}",
                               "--index-dir", str(tmp_path / "index")],
                              capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
    except subprocess.TimeoutExpired:
        pytest.fail("the Loop ran: the search did not end within 120 s")
    _one_line(proc.returncode, proc.stderr, "model-int8.onnx", "'Loop'")


def test_the_manifest_size_is_capped(folders: dict[str, Path], tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    """Point 12: a manifest larger than the cap is refused from its size, without reading it."""
    folder = _copy(folders, "trained", tmp_path)
    with (folder / "manifest.json").open("r+b") as fh:
        fh.truncate(65 << 20)  # sparse: 65 MiB that cost nothing to make
    rc, _, err = _search(f"minilm:{folder}", tmp_path / "index", capsys)
    _one_line(rc, err, "manifest.json", "at most 67,108,864")


# ---------------------------------------------------------------- point 11: fusion weights
FUSION_CASES = [('{"weights": {"bm25": NaN}}', "NaN"), ('{"weights": {"dense": Infinity}}', "Infinity"),
                ('{"weights": {"rrf_k": 1e308}}', "weights.rrf_k"),
                ('{"weights": {"rrf_k": 1000000000}}', "weights.rrf_k"), ('{"weights": {"bm25": -1}}', "weights.bm25"),
                ('{"weights": {"depth": 0}}', "weights.depth"), ('{"weights": {"bm25": 0, "dense": 0}}', "both 0"),
                ('{"weights": {"method": "borda"}}', "weights.method"),  # issue 37 round 4: rrf or zscore only
                ('{"weights": {"method": "zscore", "offset": -2}}', "weights.offset")]


@pytest.mark.parametrize("text, field", FUSION_CASES)
def test_fusion_weights_that_would_break_the_ranking_are_refused(text: str, field: str, folders: dict[str, Path],
                                                                 tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Point 11: NaN, infinite, huge or zero fusion weights gave empty results or null scores with exit 0; now
    the file is refused in one line naming it and the field."""
    folder = _copy(folders, "trained", tmp_path)
    (folder / "fusion.json").write_text(text, encoding="utf-8")
    rc, out, err = _search(f"minilm:{folder}", tmp_path / "index", capsys)
    _one_line(rc, err, "fusion.json", field)
    assert out == ""


@pytest.mark.parametrize("kwargs", [{"rrf_k": 10**308}, {"rrf_k": 1e308}, {"bm25": float("nan")},
                                    {"dense": float("inf")}, {"bm25": 0.0, "dense": 0.0}, {"depth": 0},
                                    {"tool": True}])
def test_fusion_weights_in_code_are_bounded_too(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="fusion weights"):
        FusionWeights(**kwargs)  # type: ignore[arg-type]


# ---------------------------------------------------------------- point 14: symbolic links out of the folder
LINK_CASES = [("trained", "manifest.json"), ("trained", "fusion.json"), ("trained", "tokenizer.json"),
              ("trained", "model-int8.onnx"), ("plain", "config.json"), ("plain", "model.safetensors")]


def link_out(folder: Path, name: str, elsewhere: Path) -> None:
    """Replace `name` by a link to a JSON file outside the folder holding a secret in every field we read."""
    secret = elsewhere / "secret.json"
    elsewhere.mkdir(exist_ok=True)
    secret.write_text(json.dumps({"format": "SECRET-VALUE-4711", "weights": {"bm25": "SECRET-VALUE-4711"},
                                  "model_type": "SECRET-VALUE-4711"}), encoding="utf-8")
    (folder / name).unlink()
    (folder / name).symlink_to(secret)


@pytest.mark.parametrize("kind, name", LINK_CASES)
def test_a_symlink_out_of_a_model_folder_is_refused(kind: str, name: str, folders: dict[str, Path], tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """Point 14: a file of the folder that is a link to a file outside it is refused in one line, and nothing of
    the outside file reaches the message."""
    folder = _copy(folders, kind, tmp_path)
    link_out(folder, name, tmp_path / "elsewhere")
    rc, out, err = _search(f"minilm:{folder}", tmp_path / "index", capsys)
    _one_line(rc, err, name, "symbolic link")
    assert "SECRET-VALUE" not in err + out


def test_links_inside_the_folder_and_a_linked_folder_are_fine(folders: dict[str, Path], tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """A link that stays inside the folder is followed, and so is a link to the folder itself (the user's
    choice of path)."""
    folder = _copy(folders, "trained", tmp_path)
    (folder / "keep").mkdir()
    shutil.move(folder / "fusion.json", folder / "keep" / "fusion.json")
    (folder / "fusion.json").symlink_to(Path("keep") / "fusion.json")
    link = tmp_path / "model-link"
    link.symlink_to(folder)
    rc, _, err = _search(f"minilm:{link}", tmp_path / "index", capsys)
    assert rc == 0, err


# ---------------------------------------------------------------- point 16: sentence-transformers
def test_sentence_transformers_6_is_required() -> None:
    """Point 16: every extra that installs sentence-transformers asks for >= 6.0 (PyPI has 6.2.0)."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    requirements = [r for reqs in project.get("optional-dependencies", {}).values() for r in reqs]
    requirements += project.get("dependencies", [])
    found = [r for r in requirements if r.lower().replace("_", "-").startswith("sentence-transformers")]
    assert found
    for requirement in found:
        assert ">=6" in requirement.replace(" ", ""), requirement


def test_an_older_sentence_transformers_never_reads_a_folder(folders: dict[str, Path], tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Point 16: with sentence-transformers < 6.0 installed, a user's folder is refused before it is loaded."""
    st = pytest.importorskip("sentence_transformers")
    monkeypatch.setattr(st, "__version__", "5.1.0")
    monkeypatch.setattr(st, "SentenceTransformer", lambda *a, **k: pytest.fail("the folder was loaded"))
    folder = _copy(folders, "plain", tmp_path)
    with pytest.raises(ImportError, match=r"sentence-transformers >= 6\.0 \(found 5\.1\.0"):
        resolve_embeddings(f"minilm:torch:{folder}").embed_query("x")


def test_modules_json_may_name_sentence_transformers_classes_only(folders: dict[str, Path], tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Point 16: a `modules.json` naming a class outside sentence-transformers is refused by its field, and the
    module it names (placed in the folder and in the current directory) is never imported."""
    pytest.importorskip("sentence_transformers")
    folder = _copy(folders, "plain", tmp_path)
    canary = tmp_path / "IMPORTED"
    code = f"open({str(canary)!r}, 'w').write('x')\nclass Evil:\n    pass\n"
    (folder / "evilmod.py").write_text(code, encoding="utf-8")
    (tmp_path / "evilmod.py").write_text(code, encoding="utf-8")
    (folder / "modules.json").write_text(json.dumps([
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "evilmod.Evil"}]), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ValueError) as info:
        resolve_embeddings(f"minilm:torch:{folder}").embed_query("x")
    assert "modules.json" in str(info.value) and "[1].type" in str(info.value)
    assert not canary.exists()
    (folder / "modules.json").write_text(json.dumps([
        {"idx": 0, "name": "0", "path": "../../elsewhere", "type": "sentence_transformers.models.Transformer"}]),
        encoding="utf-8")
    with pytest.raises(ValueError, match=r"modules\.json.*\[0\]\.path"):
        resolve_embeddings(f"minilm:torch:{folder}").embed_query("x")



def test_a_damaged_conversion_is_converted_again(folders: dict[str, Path], tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch,
                                                 caplog: pytest.LogCaptureFixture) -> None:
    """Points 10 and 12: the conversion cache is checked like a folder's export; a damaged or foreign file there
    is converted again with one warning (a link in its place is replaced, its target untouched)."""
    import logging

    cache = tmp_path / "cache"
    monkeypatch.setenv("ANYTOOL_MODEL_DIR", str(cache))
    spec = f"minilm:{folders['plain']}"
    expected = resolve_embeddings(spec).embed_query(QUERY)  # type: ignore[union-attr]
    (converted,) = cache.glob("*-int8.onnx")
    converted.write_bytes(b"not an ONNX file")
    with caplog.at_level(logging.WARNING):
        again = resolve_embeddings(spec).embed_query(QUERY)  # type: ignore[union-attr]
    assert np.allclose(again, expected, atol=1e-6)
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and "converting again" in warnings[0]
    outside = tmp_path / "outside.onnx"
    outside.write_bytes(b"keep me")
    converted.unlink()
    converted.symlink_to(outside)
    assert np.allclose(resolve_embeddings(spec).embed_query(QUERY), expected, atol=1e-6)  # type: ignore[union-attr]
    assert outside.read_bytes() == b"keep me" and not converted.is_symlink()


@pytest.mark.parametrize("kwargs", [{"max_seq_length": 0}, {"batch_size": -1}, {"threads": 0},
                                    {"cache_size": -5}, {"max_seq_length": 10**9}])
def test_encoder_settings_are_bounded(kwargs: dict[str, int]) -> None:
    from langgraph_anytool.catalog.embeddings import OnnxMiniLMEmbeddings

    with pytest.raises(ValueError, match="ONNX MiniLM settings"):
        OnnxMiniLMEmbeddings(**kwargs)  # type: ignore[arg-type]


def test_a_kept_onnx_verdict_serves_only_the_same_bytes_under_the_same_rules(
        folders: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 38 §4: our own conversion is checked once (the `onnx` import and shape inference cost a fifth of a
    second per run); the verdict kept beside it serves only the same bytes under the same rules, and a file of
    other bytes — a damaged or replaced conversion — is checked in full and refused as before."""
    from langgraph_anytool.catalog import onnx_graph
    from langgraph_anytool.catalog.onnx_graph import VERDICT_SUFFIX, check_encoder_onnx
    from langgraph_anytool.sanitize.files import DataFileError

    good = _copy(folders, "trained", tmp_path / "a")
    bad = _copy(folders, "trained", tmp_path / "b")
    _graph_case("loop")(bad)
    target = tmp_path / "minilm-conversion.onnx"
    verdict = target.with_name(target.name + VERDICT_SUFFIX)
    shutil.copy(good / "model-int8.onnx", target)
    assert check_encoder_onnx(target).dimension > 0 and not verdict.exists()  # a folder's own file: never kept
    first = check_encoder_onnx(target, remember=True)
    assert verdict.is_file()
    with monkeypatch.context() as m:
        m.setitem(sys.modules, "onnx", None)  # the kept verdict: the same answer without the onnx package
        again = check_encoder_onnx(target, remember=True)
        assert (again.dimension, again.vocab_rows, again.position_rows, again.data) == \
               (first.dimension, first.vocab_rows, first.position_rows, first.data)
        assert again.data == target.read_bytes()
        with pytest.raises(ImportError):  # no verdict is used without `remember`
            check_encoder_onnx(target)
    kept = verdict.read_text()
    shutil.copy(bad / "model-int8.onnx", target)  # other bytes under the kept verdict: checked in full, refused
    with pytest.raises(DataFileError, match="Loop"):
        check_encoder_onnx(target, remember=True)
    forged = json.loads(kept)
    forged["sha256"] = hashlib.sha256(target.read_bytes()).hexdigest()
    for rules, text in (("0" * 64, json.dumps(forged)), (None, "not json"), (None, json.dumps({**forged, "dimension": -1}))):
        if rules:
            forged["rules"] = rules  # a verdict made under other rules
            text = json.dumps(forged)
        verdict.write_text(text)
        with pytest.raises(DataFileError, match="Loop"):
            check_encoder_onnx(target, remember=True)
    monkeypatch.setattr(onnx_graph, "MAX_NODES", 10)  # stricter rules: the good file's verdict no longer holds
    shutil.copy(good / "model-int8.onnx", target)
    verdict.write_text(kept)
    with pytest.raises(DataFileError, match="nodes; at most 10 allowed"):
        check_encoder_onnx(target, remember=True)
