"""`embeddings="trained:DIR"` (issue 37): a folder written by `anytool index train` loads through one spec whatever
encoder it fine-tuned (its manifest names it), `minilm:DIR` keeps working, and a folder whose encoder is unknown, a
folder without a manifest, or an unknown spec is refused in one line naming the setting."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from langgraph_anytool.catalog.encoders import ENV_EMBEDDINGS, resolve_encoder, trained_encoder_name
from langgraph_anytool.cli.app import main
from tests.tiny_encoder import write_tiny_encoder

for _mod in ("onnxruntime", "onnx", "tokenizers", "safetensors"):
    pytest.importorskip(_mod)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tiny_encoder(tmp_path_factory.mktemp("trained") / "model", onnx=True, manifest=True,
                              fusion={"bm25": 1.5, "dense": 2.0, "tool": 0.5, "whole": 1.0, "rrf_k": 2})


def _with_manifest(tmp_path: Path, folder: Path, **fields: object) -> Path:
    """A copy of `folder` whose manifest.json has `fields` set (None removes one)."""
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    manifest = json.loads((copy / "manifest.json").read_text(encoding="utf-8"))
    for key, value in fields.items():
        if value is None:
            manifest.pop(key, None)
        else:
            manifest[key] = value
    (copy / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return copy


def test_trained_dir_loads_the_folder_its_manifest_names(folder: Path, tmp_path: Path) -> None:
    """`trained:DIR` of a folder whose manifest names encoder "minilm" gives the same encoder as `minilm:DIR`
    (same id, so the same persisted index; same vectors; the fusion weights beside it); a manifest written before
    the `encoder` field (base model all-MiniLM-L6-v2) loads too; precision forms work."""
    named = _with_manifest(tmp_path, folder, encoder="minilm")
    by_trained = resolve_encoder(f"trained:{named}")
    by_minilm = resolve_encoder(f"minilm:{named}")
    assert by_trained.model_id == by_minilm.model_id and by_trained.trained is not None
    assert by_trained.fusion_weights == {"bm25": 1.5, "dense": 2.0, "tool": 0.5, "whole": 1.0, "rrf_k": 2}
    assert by_trained.embed_query("convert miles") == pytest.approx(by_minilm.embed_query("convert miles"))
    assert resolve_encoder(f"trained:fp32:{named}").precision == "fp32"
    legacy = tmp_path / "legacy"
    legacy_folder = _with_manifest(legacy, folder, encoder=None,
                                   base_model={"name": "sentence-transformers/all-MiniLM-L6-v2"})
    assert trained_encoder_name(json.loads((legacy_folder / "manifest.json").read_text(encoding="utf-8"))) == "minilm"
    assert resolve_encoder(f"trained:{legacy_folder}").model_id == by_minilm.model_id


def test_a_folder_of_an_unknown_encoder_is_refused_in_one_line(folder: Path, tmp_path: Path) -> None:
    unknown = _with_manifest(tmp_path, folder, encoder="bge-base")
    with pytest.raises(ValueError) as info:
        resolve_encoder(f"trained:{unknown}")
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"embeddings 'trained:{unknown}': {unknown}/manifest.json names encoder 'bge-base'")
    assert "known: minilm" in message
    nameless = _with_manifest(tmp_path / "n", folder, encoder=None)  # no encoder, no base model
    with pytest.raises(ValueError, match="names no encoder, which this version cannot load"):
        resolve_encoder(f"trained:{nameless}")


def test_a_folder_without_a_manifest_or_absent_is_refused(tmp_path: Path) -> None:
    plain = write_tiny_encoder(tmp_path / "plain")
    with pytest.raises(ValueError, match=r"has no manifest\.json, so it was not written by `anytool index train`"):
        resolve_encoder(f"trained:{plain}")
    assert resolve_encoder(f"minilm:{plain}").trained is None  # minilm:DIR still takes a plain folder
    with pytest.raises(ValueError, match="is not a folder"):
        resolve_encoder(f"trained:{tmp_path / 'nowhere'}")


def test_the_environment_setting_is_named(folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    unknown = _with_manifest(tmp_path, folder, encoder="bge-base")
    monkeypatch.setenv(ENV_EMBEDDINGS, f"trained:{unknown}")
    with pytest.raises(ValueError, match=rf"^{ENV_EMBEDDINGS}: embeddings 'trained:"):
        resolve_encoder(None)
    monkeypatch.setenv(ENV_EMBEDDINGS, "word2vec")
    with pytest.raises(ValueError, match=rf"^{ENV_EMBEDDINGS}: unknown embeddings spec 'word2vec'"):
        resolve_encoder(None)


def test_the_cli_refuses_an_unknown_encoder_folder_in_one_line(folder: Path, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    unknown = _with_manifest(tmp_path, folder, encoder="bge-base")
    code = main(["search", "convert miles", "--embeddings", f"trained:{unknown}", "--index-dir",
                 str(tmp_path / "index")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1, err
    assert "names encoder 'bge-base'" in err and "Traceback" not in err
