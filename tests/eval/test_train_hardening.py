"""`anytool index train` against bad arguments and failures (issue 28, points 10 and 12).

Every setting is checked before the catalog is searched or a model loaded (`--lr inf` used to train for 49 s and
leave a half-written folder; `--epochs` and the others had no upper bound), and a model folder is written whole:
into a temporary folder beside it, renamed at the end. Training itself is replaced by a tiny stand-in model
(`tests/tiny_encoder.py`), so these tests need no torch training.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from langgraph_anytool.cli.app import main
from langgraph_anytool.eval import training
from tests.tiny_encoder import write_tiny_encoder


@pytest.fixture
def queries(tmp_path: Path) -> Path:
    path = tmp_path / "train.json"
    path.write_text(json.dumps([
        {"query_id": 1, "query": "Convert 26.2 miles to kilometers.",
         "relevant APIs": [["universal_unit_converter", "convert_units"]]},
        {"query_id": 2, "query": "How far is Paris from Berlin?",
         "relevant APIs": [["geo_distance_calculator", "distance_between_cities"]]},
    ]), encoding="utf-8")
    return path


def _train(queries: Path, out: Path, *extra: str) -> int:
    return main(["index", "train", "--queries", str(queries), "--out", str(out), "--quiet", *extra])


BAD_ARGUMENTS = [(["--epochs", "1000000"], "--epochs"), (["--epochs", "0"], "--epochs"),
                 (["--threads", "-1"], "--threads"), (["--threads", "0"], "--threads"),
                 (["--threads", "100000"], "--threads"), (["--lr", "inf"], "--lr"), (["--lr", "nan"], "--lr"),
                 (["--lr", "-0.001"], "--lr"), (["--lr", "10"], "--lr"), (["--batch-size", "1"], "--batch-size"),
                 (["--batch-size", "10000000"], "--batch-size"), (["--sentence-pairs", "2"], "--sentence-pairs"),
                 (["--sentence-pairs", "nan"], "--sentence-pairs"), (["--seed", "-1"], "--seed")]


@pytest.mark.parametrize("args, flag", BAD_ARGUMENTS)
def test_train_arguments_are_checked_before_anything_runs(args: list[str], flag: str, queries: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """Points 10 and 12: an out-of-range or non-finite setting is one line naming the flag, before the queries
    are mined or a model trained, and nothing is written."""
    def reached(*_: Any, **__: Any) -> Any:
        pytest.fail("training started with a bad setting")

    monkeypatch.setattr(training, "prepare_training_data", reached)
    monkeypatch.setattr(training, "fine_tune", reached)
    out = tmp_path / "model"
    rc = _train(queries, out, *args)
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and err[0].startswith("anytool: error:"), err
    assert flag in err[0], err
    assert not out.exists()


def test_settings_in_code_are_bounded_too() -> None:
    for bad in ({"epochs": 10**6}, {"learning_rate": float("inf")}, {"threads": -1}, {"batch_size": 10**7},
                {"scale": float("nan")}, {"max_seq_length": 10**6}, {"warmup": 2.0}, {"epochs": True}):
        with pytest.raises(ValueError, match="training settings"):
            training.TrainSettings(**bad)  # type: ignore[arg-type]


class _TinyModel:
    """Stands in for the fine-tuned SentenceTransformer: `save` writes a tiny BERT folder."""

    def save(self, path: str, create_model_card: bool = False) -> None:
        write_tiny_encoder(Path(path), seed=11)


def _fake_training(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(training, "fine_tune", lambda *a, **k: _TinyModel())


def test_a_model_folder_is_written_whole(queries: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """Point 10: a run that fails after training (here: the ONNX export) leaves no half-written folder, and an
    existing model folder it was to replace stays exactly as it was; no temporary folder stays behind."""
    pytest.importorskip("onnx")
    pytest.importorskip("torch")
    pytest.importorskip("sentence_transformers")
    _fake_training(monkeypatch)
    out = tmp_path / "models" / "model"
    assert _train(queries, out) == 0, capsys.readouterr().err
    names = sorted(p.name for p in out.iterdir())
    assert {"config.json", "model.safetensors", "tokenizer.json", "model-int8.onnx", "manifest.json",
            "fusion.json"} <= set(names)
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    from langgraph_anytool.catalog import onnx_encoder

    def broken_export(model_dir: Path, target: Path, precision: str = "int8") -> Path:
        target.write_bytes(b"half an ONNX file")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(onnx_encoder, "export_onnx", broken_export)
    capsys.readouterr()
    assert _train(queries, out) == 2
    assert "No space left on device" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert sorted(p.name for p in out.parent.iterdir()) == ["model"]
    fresh = tmp_path / "models" / "fresh"
    assert _train(queries, fresh) == 2
    assert not fresh.exists() and sorted(p.name for p in out.parent.iterdir()) == ["model"]
