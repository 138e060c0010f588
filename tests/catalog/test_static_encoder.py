"""Static encoders (`catalog/static_encoder.py`): the MiniLM distillation (deterministic, cached, MiniLM's own
pooled vectors), the ``minilm:static`` spec (offline, keyed apart from MiniLM, refused in one line when wrong) and
the packaged ``wordllama`` table (loaded offline from its wheel, the same vectors as WordLlama's own code)."""

from __future__ import annotations

import json
import logging
import shutil
import socket
from pathlib import Path

import numpy as np
import pytest

from langgraph_anytool.catalog import Catalog
from langgraph_anytool.catalog.encoders import embeddings_id, resolve_encoder
from langgraph_anytool.catalog.search import CatalogSearcher
from langgraph_anytool.cli import main

for _mod in ("onnxruntime", "onnx", "tokenizers", "safetensors"):
    pytest.importorskip(_mod)


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any attempt to open a connection fails the test: the encoders load from installed files only."""
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"network access attempted: {args[1:]}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


@pytest.fixture
def model_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "models"
    monkeypatch.setenv("ANYTOOL_MODEL_DIR", str(cache))
    return cache


def _tiny(tmp_path: Path, name: str = "tiny", seed: int = 0) -> Path:
    from tests.tiny_encoder import write_tiny_encoder

    return write_tiny_encoder(tmp_path / name, seed=seed)


def test_the_distilled_table_is_minilms_own_pooled_vector_of_each_word_piece(tmp_path: Path, model_dir: Path) -> None:
    """Row t of the table is what the MiniLM encoder gives the one-piece text t ([CLS] t [SEP], mean-pooled): for
    every whole word of the vocabulary, against `OnnxMiniLMEncoder(fp32).encode` of the word itself."""
    from langgraph_anytool.catalog.onnx_encoder import OnnxMiniLMEncoder
    from langgraph_anytool.catalog.static_encoder import distil_table
    from tests.tiny_encoder import WORDS, vocabulary

    folder = _tiny(tmp_path)
    table = distil_table(folder, model_dir)
    assert table.shape == (len(vocabulary()), 384) and table.dtype == np.float32
    expected = OnnxMiniLMEncoder(precision="fp32", model_path=folder, cache_dir=model_dir).encode(WORDS)
    rows = table[[vocabulary().index(w) for w in WORDS]]
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    assert np.allclose(rows, expected, atol=1e-5)


def test_the_distillation_is_deterministic_and_follows_the_weights(tmp_path: Path) -> None:
    """The same weights give the same cached bytes (two fresh caches); other weights give another file name and
    other bytes; a damaged cached table is distilled again."""
    from langgraph_anytool.catalog.static_encoder import distil_table, distilled_table_path

    folder = _tiny(tmp_path)
    other = _tiny(tmp_path, "other", seed=1)
    first, second, third = (tmp_path / n for n in ("c1", "c2", "c3"))
    distil_table(folder, first)
    distil_table(shutil.copytree(folder, tmp_path / "copy"), second)
    distil_table(other, third)
    a, b, c = distilled_table_path(folder, first), distilled_table_path(tmp_path / "copy", second), \
        distilled_table_path(other, third)
    assert a.name == b.name != c.name
    assert a.read_bytes() == b.read_bytes() != c.read_bytes()
    good = a.read_bytes()
    a.write_bytes(good[:200])  # truncated
    assert np.array_equal(distil_table(folder, first), np.load(b))
    assert a.read_bytes() == good


def test_the_static_spec_resolves_offline_and_searches(tmp_path: Path, model_dir: Path, no_network: None) -> None:
    """``minilm:static:<DIR>`` needs nothing from the network; its vectors are unit length, of the PCA width, and
    the whole query's vector from `token_means` is the mean over its sentences' word pieces."""
    from langgraph_anytool.catalog.embeddings import StaticEmbeddings, resolve_embeddings
    from langgraph_anytool.catalog.static_encoder import DEFAULT_DIMS, StaticEncoder

    folder = _tiny(tmp_path)
    enc = resolve_encoder(f"minilm:static:{folder}")
    assert isinstance(enc, StaticEncoder)
    vectors = np.asarray(enc.embed_documents(["convert miles to kilometers", "the weather of the week"]))
    assert vectors.shape == (2, DEFAULT_DIMS) and np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    means, counts = enc.token_means(["convert miles", "to kilometers"])
    whole, n = enc.token_means(["convert miles to kilometers"])
    assert counts.tolist() == [2, 2] and n.tolist() == [4]
    assert np.allclose((means * counts[:, None]).sum(axis=0) / counts.sum(), whole[0], atol=1e-6)
    lc = resolve_embeddings(f"minilm:static:{folder}")
    assert isinstance(lc, StaticEmbeddings) and embeddings_id(lc) == embeddings_id(enc)
    assert np.allclose(lc.embed_query("weather"), enc.embed_query("weather"))


def _catalog(root: Path) -> Catalog:
    folder = root / "tools" / "Weather"
    folder.mkdir(parents=True)
    for key, desc, api in (("weatherly", "The weather forecast of the week.", "forecast"),
                           ("unitconv", "Convert miles to kilometers.", "convert")):
        doc = {"tool_name": key, "tool_description": desc,
               "api_list": [{"name": api, "description": desc, "method": "GET", "required_parameters": [],
                             "optional_parameters": []}]}
        (folder / f"{key}.json").write_text(json.dumps(doc), encoding="utf-8")
    return Catalog.from_toolbench(root / "tools")


def test_the_static_index_is_keyed_apart_from_minilms(tmp_path: Path, model_dir: Path,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    """MiniLM and its static table over the same weights have different `embeddings_id`s, so different index
    folders: switching builds the static one with the existing one line (the other kept, never mixed), switching
    back loads MiniLM's as built (nothing re-embedded); a MiniLM folder put where the static index belongs is
    rebuilt with a line naming both encoders, never loaded."""
    pytest.importorskip("faiss")
    folder = _tiny(tmp_path)
    catalog = _catalog(tmp_path)
    index_dir = tmp_path / "index"
    minilm = resolve_encoder(f"minilm:fp32:{folder}")
    static = resolve_encoder(f"minilm:static:{folder}")
    assert embeddings_id(minilm) != embeddings_id(static)
    assert embeddings_id(static) != embeddings_id(resolve_encoder(f"minilm:static:{_tiny(tmp_path, 'b', seed=3)}"))
    first = CatalogSearcher(catalog, embeddings=minilm, index_dir=index_dir, progress=False)
    first.build()
    second = CatalogSearcher(catalog, embeddings=static, index_dir=index_dir, progress=False)
    with caplog.at_level(logging.WARNING, logger="langgraph_anytool.catalog"):
        second.build()
    lines = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert first.index_path() != second.index_path() and not second.stats.dense_loaded
    assert len(lines) == 1 and f"for encoder {embeddings_id(static)}" in lines[0], lines
    assert f"built by {embeddings_id(minilm)} (kept, never mixed)" in lines[0]
    caplog.clear()
    again = CatalogSearcher(catalog, embeddings=resolve_encoder(f"minilm:fp32:{folder}"), index_dir=index_dir,
                            progress=False)
    again.build()
    assert again.stats.dense_loaded and again.stats.embedded_documents == 0
    static_path = second.index_path()
    assert static_path is not None and first.index_path() is not None
    shutil.rmtree(static_path)
    shutil.copytree(first.index_path(), static_path)
    with caplog.at_level(logging.WARNING, logger="langgraph_anytool.catalog"):
        mixed = CatalogSearcher(catalog, embeddings=resolve_encoder(f"minilm:static:{folder}"), index_dir=index_dir,
                                progress=False)
        mixed.build()
    lines = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    damaged = [line for line in lines if "names encoder" in line]
    assert not mixed.stats.dense_loaded and len(damaged) == 1, lines
    assert f"'{embeddings_id(minilm)}', not '{embeddings_id(static)}'" in damaged[0]


@pytest.mark.parametrize(("spec", "needle"), [
    ("minilm:static:{missing}", "is not a model folder (no config.json and model.safetensors; expected "
                                "'minilm:static' or 'minilm:static:<DIR>')"),
    ("minilm:static:{empty}", "is not a model folder (no config.json"),
    ("minilm:statics", "'minilm:torch', 'minilm:static' or 'minilm:<DIR>'"),
])
def test_a_bad_static_spec_is_refused_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                  spec: str, needle: str) -> None:
    (tmp_path / "empty").mkdir()
    text = spec.format(missing=tmp_path / "missing", empty=tmp_path / "empty")
    with pytest.raises(ValueError) as caught:
        resolve_encoder(text)
    assert needle in str(caught.value)
    code = main(["search", "convert miles", "--embeddings", text, "--index-dir", str(tmp_path / "index")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and needle in err and "Traceback" not in err, err


def test_wordllama_without_its_package_is_refused_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "wordllama" else real(name, *a))
    with pytest.raises(ImportError, match=r"^the 'wordllama' encoder needs the package 'wordllama': pip install"):
        resolve_encoder("wordllama")


def test_wordllama_loads_offline_from_its_wheel(no_network: None) -> None:
    """The table and tokenizer come from the installed wheel's files; the vectors are WordLlama's own (its
    `embed(..., norm=True)`), 256-d; a paraphrase is nearer than an unrelated text."""
    pytest.importorskip("wordllama")
    from langgraph_anytool.catalog.static_encoder import StaticEncoder, wordllama_dir

    enc = resolve_encoder("wordllama")
    assert isinstance(enc, StaticEncoder) and enc.model_id.startswith("wordllama:l2_supercat_256@")
    assert (wordllama_dir() / "weights" / "l2_supercat_256.safetensors").is_file()
    texts = ["convert miles to kilometers", "turn a distance in miles into km", "latest football scores"]
    ours = np.asarray(enc.embed_documents(texts))
    assert ours.shape == (3, 256)
    assert ours[0] @ ours[1] > ours[0] @ ours[2]
    from safetensors.numpy import load_file
    from wordllama.inference import WordLlamaInference
    from wordllama.tokenizers import tokenizer_from_file

    # WordLlama's own inference on the same files (its `WordLlama.load` looks for the tokenizer under
    # "tokenizer/", not the wheel's "tokenizers/", and would then try to download it)
    table = load_file(str(wordllama_dir() / "weights" / "l2_supercat_256.safetensors"))["embedding.weight"]
    theirs = np.asarray(WordLlamaInference(table, tokenizer_from_file("l2_supercat_tokenizer_config.json"))
                        .embed(texts, norm=True))
    assert np.allclose(ours, theirs, atol=1e-5)
