"""`anytool index train` pins torch's intra-op thread count (issue 37): the count changes the order of the sums, so
a seed reproduces a model only with the same count. Without `--threads` training uses `train_defaults.THREADS`
whatever the machine or the caller set; the manifest records the count used and torch's version; the caller's count
is restored afterwards. Hand-made catalog and query files only."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from langgraph_anytool.cli.app import main
from langgraph_anytool.eval import train_defaults, training
from tests.tiny_encoder import write_tiny_encoder

torch = pytest.importorskip("torch")


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Path]:
    folder = tmp_path / "tools" / "Data"
    folder.mkdir(parents=True)
    for name, topic in (("Tides", "tide heights"), ("Rails", "train delays"), ("Wines", "wine pairings")):
        doc = {"tool_name": name, "tool_description": f"{name} service.",
               "api_list": [{"name": "lookup", "description": f"Look up {topic}.", "method": "GET",
                             "required_parameters": [], "optional_parameters": []}]}
        (folder / f"{name.lower()}.json").write_text(json.dumps(doc), encoding="utf-8")
    train = tmp_path / "train.json"
    train.write_text(json.dumps([
        {"query_id": 1, "query": "How high is the tide today?", "relevant APIs": [["Tides", "lookup"]]},
        {"query_id": 2, "query": "Is my train late?", "relevant APIs": [["Rails", "lookup"]]},
        {"query_id": 3, "query": "A wine for my fish, please.", "relevant APIs": [["Wines", "lookup"]]},
    ]), encoding="utf-8")
    return {"base": tmp_path, "tools": tmp_path / "tools", "train": train}


@pytest.fixture
def caller_threads() -> Any:
    """The process's count before the test, restored after; the test's "caller" sets 3."""
    before = torch.get_num_threads()
    torch.set_num_threads(3)
    yield 3
    torch.set_num_threads(before)


class _TinyModel:
    def save(self, path: str, create_model_card: bool = False) -> None:
        write_tiny_encoder(Path(path), seed=5)


@pytest.mark.parametrize("flags, expected", [([], train_defaults.THREADS), (["--threads", "2"], 2)])
def test_training_runs_with_the_pinned_count_and_the_manifest_records_it(
        flags: list[str], expected: int, world: dict[str, Path], caller_threads: int,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Training sees the pinned count, not the caller's 3 (nor torch's one-per-core default); the manifest's settings
    and environment name it, with torch's version; the caller gets its 3 back."""
    for mod in ("onnx", "sentence_transformers"):
        pytest.importorskip(mod)
    seen: list[int] = []

    def fake_fine_tune(*_: Any, **__: Any) -> _TinyModel:
        seen.append(torch.get_num_threads())
        return _TinyModel()

    monkeypatch.setattr(training, "fine_tune", fake_fine_tune)
    out = world["base"] / "model"
    rc = main(["index", "train", "--catalog", str(world["tools"]), "--queries", str(world["train"]), "--out",
               str(out), "--quiet", "--index-dir", str(world["base"] / "index"), *flags])
    assert rc == 0, capsys.readouterr().err
    assert seen == [expected]
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["settings"]["threads"] == expected
    assert manifest["environment"]["torch_threads"] == expected
    assert manifest["environment"]["torch"] == torch.__version__
    assert torch.get_num_threads() == caller_threads


def test_fine_tune_itself_pins_the_count_and_restores_the_callers(caller_threads: int,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """`fine_tune` called directly (as the benchmarks do) pins too, and restores the caller's count even when
    training fails."""
    seen: list[int] = []

    def fake_inner(*_: Any, **__: Any) -> None:
        seen.append(torch.get_num_threads())
        raise RuntimeError("diverged")

    monkeypatch.setattr(training, "_fine_tune", fake_inner, raising=False)
    data = training.TrainingData(examples=[training.Example("q", "h", "a", frozenset({"a"}))], queries=[],
                                 used_queries=[])
    for count in (train_defaults.THREADS, 2):
        with pytest.raises(RuntimeError, match="diverged"):
            training.fine_tune(data, None, training.TrainSettings(threads=count), progress=False)  # type: ignore[arg-type]
        assert torch.get_num_threads() == caller_threads
    assert seen == [train_defaults.THREADS, 2]


def test_the_default_count_is_fixed_not_the_machines() -> None:
    """The default is a constant (the same on every machine), not None (torch's one per core)."""
    assert isinstance(train_defaults.THREADS, int) and train_defaults.THREADS >= 1
    assert training.TrainSettings().threads == train_defaults.THREADS


@pytest.mark.slow
def test_the_same_seed_gives_the_same_weights_whatever_the_callers_count(world: dict[str, Path],
                                                                         caller_threads: int) -> None:
    """Real training (packaged MiniLM, 3 pairs, 1 epoch) twice from callers with 1 and 3 threads and no
    `--threads`: byte-identical weights, both trained with the pinned count."""
    for mod in ("onnx", "sentence_transformers"):
        pytest.importorskip(mod)
    manifests = []
    for n, caller in enumerate((1, caller_threads)):
        torch.set_num_threads(caller)
        out = world["base"] / f"model-{n}"
        rc = main(["index", "train", "--catalog", str(world["tools"]), "--queries", str(world["train"]), "--out",
                   str(out), "--quiet", "--epochs", "1", "--batch-size", "3", "--index-dir",
                   str(world["base"] / "index")])
        assert rc == 0
        assert torch.get_num_threads() == caller
        manifests.append(json.loads((out / "manifest.json").read_text(encoding="utf-8")))
    assert [m["environment"]["torch_threads"] for m in manifests] == [train_defaults.THREADS] * 2
    assert manifests[0]["weights_sha256"] == manifests[1]["weights_sha256"]
